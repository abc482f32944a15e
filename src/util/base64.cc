#include "util/base64.h"

#include <openssl/evp.h>

namespace kubesched::util {

std::string Base64Encode(std::string_view data) {
  // EVP_EncodeBlock writes a terminating NUL after the 4 * ceil(n / 3) characters.
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(data.data()), static_cast<int>(data.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  std::string clean;
  clean.reserve(text.size());
  for (char c : text) {
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') clean.push_back(c);
  }
  if (clean.size() % 4 != 0) return std::nullopt;
  // EVP_DecodeBlock decodes '=' as zero bits wherever it stands, so padding is checked here (the
  // last one or two characters only) and its zero bytes taken off the result below.
  size_t padding = 0;
  if (!clean.empty() && clean.back() == '=') ++padding;
  if (padding == 1 && clean.size() >= 2 && clean[clean.size() - 2] == '=') ++padding;
  if (clean.find('=') < clean.size() - padding) return std::nullopt;
  std::string out(clean.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(clean.data()), static_cast<int>(clean.size()));
  if (n < 0) return std::nullopt;
  out.resize(static_cast<size_t>(n) - padding);
  return out;
}

}  // namespace kubesched::util
