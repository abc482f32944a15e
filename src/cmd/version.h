#pragma once
// kubesched's version (the one place it is kept), printed by `kubesched version` and
// `kubesched --version` with the upstream Kubernetes release whose kube-scheduler it follows.

#include <string>
#include <string_view>

#include "config/default_plugins.h"

namespace kubesched::cmd {

inline constexpr std::string_view kVersion = "0.1.0";

//! "kubesched 0.1.0\nkube-scheduler behaviour: Kubernetes v1.34\n".
inline std::string VersionText() {
  return "kubesched " + std::string(kVersion) + "\nkube-scheduler behaviour: Kubernetes " +
         std::string(config::kUpstreamKubernetesVersion) + "\n";
}

}  // namespace kubesched::cmd
