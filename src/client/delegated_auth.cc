#include "client/delegated_auth.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "api/json.h"
#include "util/log.h"

namespace kubesched::client {
namespace {

namespace json = api::json;
using Clock = std::chrono::steady_clock;

// The caches are bounded: past this many entries they start over (upstream's LRU holds 1,024).
constexpr size_t kMaxCached = 4096;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string MessageOf(const Response& r) {
  json::Document doc;
  if (json::Parse(r.body, doc).has_value() && doc.IsObject()) {
    if (std::string_view m = json::GetString(doc, "message"); !m.empty()) return std::string(m);
  }
  return fmt::format("HTTP {}", r.status);
}

}  // namespace

DelegatedAuth::DelegatedAuth(RestClient* authentication, RestClient* authorization, DelegatedAuthOptions options)
    : authentication_(authentication), authorization_(authorization), options_(std::move(options)) {}

bool DelegatedAuth::AlwaysAllowed(std::string_view path) const {
  return std::ranges::any_of(options_.always_allow_paths, [&](const std::string& p) {
    if (p.ends_with('*')) return path.starts_with(std::string_view(p).substr(0, p.size() - 1));
    return p == path;
  });
}

AuthDecision DelegatedAuth::Check(std::string_view authorization_header, std::string_view method,
                                  std::string_view path) {
  if (AlwaysAllowed(path)) return {};
  User user{"system:anonymous", {"system:unauthenticated"}};
  if (!authorization_header.empty() && authentication_ != nullptr) {
    // "Bearer <token>", the scheme in any case (bearertoken.go).
    const size_t space = authorization_header.find(' ');
    const std::string scheme = Lower(authorization_header.substr(0, space));
    std::string token =
        space == std::string_view::npos ? std::string() : std::string(authorization_header.substr(space + 1));
    token.erase(0, token.find_first_not_of(' '));
    if (scheme != "bearer" || token.empty()) return {401, "Unauthorized"};
    auto who = Authenticate(token);
    if (!who) {
      KS_LOG.ErrorS(who.error(), "Unable to authenticate the request");
      return {401, "Unauthorized"};
    }
    if (!*who) return {401, "Unauthorized"};
    user = std::move(**who);
  }
  const std::string verb = Lower(method);
  if (authorization_ == nullptr)
    return {403, fmt::format("forbidden: User \"{}\" cannot {} path \"{}\"", user.name, verb, path)};
  auto allowed = Authorize(user, verb, path);
  if (!allowed) {
    KS_LOG.ErrorS(allowed.error(), "Unable to authorize the request");
    return {500, "Internal Server Error: " + allowed.error()};
  }
  if (!*allowed) return {403, fmt::format("forbidden: User \"{}\" cannot {} path \"{}\"", user.name, verb, path)};
  return {};
}

std::expected<std::optional<DelegatedAuth::User>, std::string> DelegatedAuth::Authenticate(const std::string& token) {
  {
    std::lock_guard lock(mu_);
    if (auto it = tokens_.find(token); it != tokens_.end() && it->second.expires > Clock::now()) {
      if (!it->second.authenticated) return std::optional<User>();
      return std::optional<User>(it->second.user);
    }
  }
  json::Document body;
  body.SetObject();
  auto& a = body.GetAllocator();
  json::Set(body, "apiVersion", json::MakeString("authentication.k8s.io/v1", a), a);
  json::Set(body, "kind", json::MakeString("TokenReview", a), a);
  json::Set(json::Child(body, "spec", a), "token", json::MakeString(token, a), a);
  auto res = authentication_->Do("POST", "/apis/authentication.k8s.io/v1/tokenreviews", json::Encode(body));
  if (!res) return std::unexpected(res.error());
  if (res->status != 200 && res->status != 201) {
    return std::unexpected(fmt::format("TokenReview: {}", MessageOf(*res)));
  }
  json::Document review;
  if (!json::Parse(res->body, review).has_value() || !review.IsObject()) {
    return std::unexpected("TokenReview: the answer is not a JSON object");
  }
  CachedUser cached;
  if (const json::Value* status = json::Find(review, "status"); status != nullptr && status->IsObject()) {
    const json::Value* authenticated = json::Find(*status, "authenticated");
    cached.authenticated = authenticated != nullptr && authenticated->IsBool() && authenticated->GetBool();
    if (const json::Value* u = json::Find(*status, "user"); cached.authenticated && u != nullptr && u->IsObject()) {
      cached.user.name = json::GetString(*u, "username");
      if (const json::Value* groups = json::Find(*u, "groups"); groups != nullptr && groups->IsArray()) {
        for (const json::Value& g : groups->GetArray()) {
          if (g.IsString()) cached.user.groups.emplace_back(json::View(g));
        }
      }
    }
  }
  cached.expires = Clock::now() + options_.token_cache_ttl;
  std::lock_guard lock(mu_);
  if (tokens_.size() >= kMaxCached) tokens_.clear();
  tokens_[token] = cached;
  if (!cached.authenticated) return std::optional<User>();
  return std::optional<User>(cached.user);
}

std::expected<bool, std::string> DelegatedAuth::Authorize(const User& user, const std::string& verb,
                                                          std::string_view path) {
  std::string key = user.name + "\n" + verb + "\n" + std::string(path);
  for (const std::string& g : user.groups) key += "\n" + g;
  {
    std::lock_guard lock(mu_);
    if (auto it = access_.find(key); it != access_.end() && it->second.expires > Clock::now())
      return it->second.allowed;
  }
  json::Document body;
  body.SetObject();
  auto& a = body.GetAllocator();
  json::Set(body, "apiVersion", json::MakeString("authorization.k8s.io/v1", a), a);
  json::Set(body, "kind", json::MakeString("SubjectAccessReview", a), a);
  json::Value& spec = json::Child(body, "spec", a);
  json::Set(spec, "user", json::MakeString(user.name, a), a);
  json::Value groups(rapidjson::kArrayType);
  for (const std::string& g : user.groups) groups.PushBack(json::MakeString(g, a), a);
  json::Set(spec, "groups", std::move(groups), a);
  json::Value& attributes = json::Child(spec, "nonResourceAttributes", a);
  json::Set(attributes, "path", json::MakeString(path, a), a);
  json::Set(attributes, "verb", json::MakeString(verb, a), a);
  auto res = authorization_->Do("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", json::Encode(body));
  if (!res) return std::unexpected(res.error());
  if (res->status != 200 && res->status != 201) {
    return std::unexpected(fmt::format("SubjectAccessReview: {}", MessageOf(*res)));
  }
  json::Document review;
  if (!json::Parse(res->body, review).has_value() || !review.IsObject()) {
    return std::unexpected("SubjectAccessReview: the answer is not a JSON object");
  }
  bool allowed = false;
  if (const json::Value* status = json::Find(review, "status"); status != nullptr && status->IsObject()) {
    const json::Value* v = json::Find(*status, "allowed");
    allowed = v != nullptr && v->IsBool() && v->GetBool();
  }
  std::lock_guard lock(mu_);
  if (access_.size() >= kMaxCached) access_.clear();
  access_[key] =
      CachedAccess{allowed, Clock::now() + (allowed ? options_.authorized_cache_ttl : options_.unauthorized_cache_ttl)};
  return allowed;
}

}  // namespace kubesched::client
