#pragma once
// Go's strconv.Quote (fmt's %q of a string), the one quoting of kubesched's messages: the API
// server's field errors, kube-scheduler's configuration and args errors, klog's structured values.

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace kubesched::util {

//! Appends `s` quoted as Go's strconv.Quote: \" \\ \a \b \f \n \r \t \v escaped, other control
//! characters and bytes that are not UTF-8 as \xNN, C1 controls as \u00NN.
void AppendGoQuoted(fmt::memory_buffer& out, std::string_view s);
//! The same as a string: GoQuote("a\nb") is "\"a\\nb\"".
std::string GoQuote(std::string_view s);

}  // namespace kubesched::util
