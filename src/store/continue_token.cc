#include "store/continue_token.h"

#include <fmt/format.h>

#include "api/json.h"
#include "store/errors.h"
#include "util/base64.h"

namespace kubesched::store {

namespace json = api::json;

namespace {
Error InvalidToken(std::string_view why) { return BadRequest(fmt::format("continue key is not valid: {}", why)); }
}  // namespace

std::string EncodeContinueToken(const ContinueToken& token) {
  json::Document doc;
  doc.SetObject();
  auto& a = doc.GetAllocator();
  json::Set(doc, "v", json::MakeString("meta.k8s.io/v1", a), a);
  json::Set(doc, "rv", json::Value(token.resource_version), a);
  std::string start = token.namespace_.empty() ? token.name : token.namespace_ + "/" + token.name;
  start.push_back('\0');
  json::Set(doc, "start", json::MakeString(start, a), a);
  return util::Base64Encode(json::Encode(doc));
}

Result<ContinueToken> DecodeContinueToken(std::string_view text) {
  auto raw = util::Base64Decode(text);
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
