#include "server/kubeconfig.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "server/tls.h"

namespace kubesched::server {

std::string RenderKubeconfig(const KubeconfigOptions& o) {
  std::string cluster = fmt::format("    server: {}\n", o.server);
  if (!o.ca_pem.empty()) cluster += fmt::format("    certificate-authority-data: {}\n", Base64(o.ca_pem));
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
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return std::unexpected(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
    out << RenderKubeconfig(options);
    if (!out.flush()) return std::unexpected(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
  }
  ::chmod(tmp.c_str(), 0600);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return std::unexpected(fmt::format("cannot replace {}: {}", path, std::strerror(errno)));
  }
  return {};
}

}  // namespace kubesched::server
