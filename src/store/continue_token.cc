#include "store/continue_token.h"

#include <fmt/format.h>

#include "api/json.h"
#include "store/errors.h"

namespace kubesched::store {

namespace json = api::json;

namespace {
constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int Sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

Error InvalidToken(std::string_view why) { return BadRequest(fmt::format("continue key is not valid: {}", why)); }
}  // namespace

std::string Base64Encode(std::string_view data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    uint32_t v = (uint8_t(data[i]) << 16) | (uint8_t(data[i + 1]) << 8) | uint8_t(data[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  if (i + 1 == data.size()) {
    uint32_t v = uint8_t(data[i]) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == data.size()) {
    uint32_t v = (uint8_t(data[i]) << 16) | (uint8_t(data[i + 1]) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v = Sextet(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += char((acc >> bits) & 0xff);
    }
  }
  return out;
}

std::string EncodeContinueToken(const ContinueToken& token) {
  json::Document doc;
  doc.SetObject();
  auto& a = doc.GetAllocator();
  json::Set(doc, "v", json::MakeString("meta.k8s.io/v1", a), a);
  json::Set(doc, "rv", json::Value(token.resource_version), a);
  std::string start = token.namespace_.empty() ? token.name : token.namespace_ + "/" + token.name;
  start.push_back('\0');
  json::Set(doc, "start", json::MakeString(start, a), a);
  return Base64Encode(json::Encode(doc));
}

Result<ContinueToken> DecodeContinueToken(std::string_view text) {
  auto raw = Base64Decode(text);
  if (!raw) return std::unexpected(InvalidToken("illegal base64 data"));
  json::Document doc;
  if (!json::Parse(*raw, doc) || !doc.IsObject()) return std::unexpected(InvalidToken("not a JSON object"));
  if (json::GetString(doc, "v") != "meta.k8s.io/v1") {
    return std::unexpected(InvalidToken("server does not recognize this encoded key"));
  }
  const json::Value* rv = json::Find(doc, "rv");
  if (rv == nullptr || !rv->IsUint64()) return std::unexpected(InvalidToken("no resourceVersion"));
  std::string_view start = json::GetString(doc, "start");
  if (start.empty() || start.back() != '\0') return std::unexpected(InvalidToken("no start key"));
  start.remove_suffix(1);
  ContinueToken token;
  token.resource_version = rv->GetUint64();
  if (size_t slash = start.find('/'); slash != std::string_view::npos) {
    token.namespace_ = std::string(start.substr(0, slash));
    token.name = std::string(start.substr(slash + 1));
  } else {
    token.name = std::string(start);
  }
  return token;
}

}  // namespace kubesched::store
