#pragma once
// Delegated authentication and authorization for kubesched run's secure port, as kube-scheduler
// has them (k8s.io/apiserver's DelegatingAuthenticationOptions and
// DelegatingAuthorizationOptions): a bearer token is authenticated with a TokenReview, and the
// user it names (or system:anonymous, without a token) is authorized for the request's path with
// a SubjectAccessReview, both posted to the API server; the paths of
// --authorization-always-allow-paths (/healthz, /readyz, /livez) are served to anyone. Answers are
// cached for 10 s each, as upstream's webhook caches are by default.

#include <chrono>
#include <expected>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/rest_client.h"

namespace kubesched::client {

struct DelegatedAuthOptions {
  //! Exact paths, or prefixes ending in "*".
  std::vector<std::string> always_allow_paths{"/healthz", "/readyz", "/livez"};
  std::chrono::milliseconds token_cache_ttl{std::chrono::seconds(10)};
  std::chrono::milliseconds authorized_cache_ttl{std::chrono::seconds(10)};
  std::chrono::milliseconds unauthorized_cache_ttl{std::chrono::seconds(10)};
};

//! What a request may do: 0 (serve it), 401 (not authenticated), 403 (not allowed) or 500 (a
//! review could not be made), with upstream's message.
struct AuthDecision {
  int status = 0;
  std::string message{};
};

class DelegatedAuth {
 public:
  //! `authentication` posts the TokenReviews, `authorization` the SubjectAccessReviews; either may
  //! be null, as upstream's without --authentication-kubeconfig / --authorization-kubeconfig
  //! outside a cluster: then a bearer token is not looked up (the request is anonymous), and every
  //! path not always allowed is forbidden. They must outlive this.
  DelegatedAuth(RestClient* authentication, RestClient* authorization, DelegatedAuthOptions options = {});

  //! The decision for a request with this Authorization header, method and path. Thread-safe.
  AuthDecision Check(std::string_view authorization_header, std::string_view method, std::string_view path);

 private:
  struct User {
    std::string name;
    std::vector<std::string> groups;
  };
  struct CachedUser {
    bool authenticated = false;
    User user;
    std::chrono::steady_clock::time_point expires;
  };
  struct CachedAccess {
    bool allowed = false;
    std::chrono::steady_clock::time_point expires;
  };
  bool AlwaysAllowed(std::string_view path) const;
  //! The token's user; nullopt when it is not authenticated; an error when the review failed.
  std::expected<std::optional<User>, std::string> Authenticate(const std::string& token);
  std::expected<bool, std::string> Authorize(const User& user, const std::string& verb, std::string_view path);

  RestClient* const authentication_;
  RestClient* const authorization_;
  const DelegatedAuthOptions options_;
  std::mutex mu_;  // guards the caches
  std::map<std::string, CachedUser> tokens_;
  std::map<std::string, CachedAccess> access_;
};

}  // namespace kubesched::client
