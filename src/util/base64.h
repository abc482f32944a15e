#pragma once
// Standard base64 (RFC 4648 section 4, padded), as Go's base64.StdEncoding and encoding/json's
// []byte fields: certificate data in kubeconfigs and extender configurations, Basic credentials,
// list continue tokens. One implementation for all of them, on OpenSSL's (already linked).

#include <optional>
#include <string>
#include <string_view>

namespace kubesched::util {

//! Encodes with padding: "ab" -> "YWI=".
std::string Base64Encode(std::string_view data);

//! Decodes padded standard base64. Line breaks, spaces and tabs are skipped (Go's decoder skips
//! line breaks; PEM-sized values are often wrapped). Returns nullopt on any other character outside
//! the alphabet, on a length that is not a multiple of 4 once they are skipped, or on padding
//! anywhere but at the end.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace kubesched::util
