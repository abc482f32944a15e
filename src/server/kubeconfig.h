#pragma once
// The kubeconfig `kubesched apiserver --write-kubeconfig` writes: one cluster, one user, one
// context, current-context set, so that `kubectl --kubeconfig FILE` reaches the server with no
// further flags. The test bed does not authenticate, but the user carries a token all the same:
// with no credentials at all kubectl prompts for a user name and password over HTTPS.

#include <expected>
#include <string>

namespace kubesched::server {

struct KubeconfigOptions {
  std::string server;  //!< "http://127.0.0.1:8080" or "https://..."
  std::string ca_pem;  //!< the CA certificate for https (empty for http)
  std::string name = "kubesched";
  std::string namespace_ = "default";
};

//! The kubeconfig's YAML text.
std::string RenderKubeconfig(const KubeconfigOptions& options);
//! Writes it to `path` (mode 0600, replaced atomically); an error message on failure.
std::expected<void, std::string> WriteKubeconfig(const std::string& path, const KubeconfigOptions& options);

}  // namespace kubesched::server
