#include "server/kubeconfig.h"

#include <fmt/format.h>

#include "server/tls.h"
#include "util/atomic_file.h"
#include "util/base64.h"

namespace kubesched::server {

std::string RenderKubeconfig(const KubeconfigOptions& o) {
  std::string cluster = fmt::format("    server: {}\n", o.server);
  if (!o.ca_pem.empty()) cluster += fmt::format("    certificate-authority-data: {}\n", util::Base64Encode(o.ca_pem));
  return fmt::format(
      "apiVersion: v1\n"
      "kind: Config\n"
      "clusters:\n"
      "- name: {0}\n"
      "  cluster:\n"
      "{1}"
      "contexts:\n"
      "- name: {0}\n"
      "  context:\n"
      "    cluster: {0}\n"
      "    user: {0}\n"
      "    namespace: {2}\n"
      "current-context: {0}\n"
      "users:\n"
      "- name: {0}\n"
      "  user:\n"
      "    token: kubesched\n"
      "preferences: {{}}\n",
      o.name, cluster, o.namespace_);
}

std::expected<void, std::string> WriteKubeconfig(const std::string& path, const KubeconfigOptions& options) {
  // It holds the token: for its owner only.
  auto written = util::WriteFileAtomically(path, RenderKubeconfig(options), 0600);
  if (!written) return std::unexpected("cannot write the kubeconfig " + written.error());
  return {};
}

}  // namespace kubesched::server
