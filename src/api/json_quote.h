#pragma once
// JSON string quoting with lower-case \u00xx escapes, the one used where the bytes must be those of
// another encoder: Go's encoding/json (the extender wire) or nlohmann/json (the configuration's
// error messages and `-o json`, as they have always read). The codec's own writer
// (api::json::StringWriter) keeps RapidJSON's escapes.

#include <string>
#include <string_view>

namespace kubesched::api::json {

enum class Quoting {
  //! \" \\ \b \f \n \r \t short, other control characters as \u00xx; every other byte as it is.
  kPlain,
  //! kPlain and, as Go's encoding/json: <, > and & as \u003c-style escapes, U+2028 and U+2029
  //! escaped, and each byte that is not part of valid UTF-8 as \ufffd.
  kGo,
};

//! Appends `s` to `out` as a quoted JSON string.
void AppendQuoted(std::string& out, std::string_view s, Quoting quoting);

}  // namespace kubesched::api::json
