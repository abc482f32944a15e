#pragma once
// `kubesched run`: schedules a real cluster's pods, as kube-scheduler does, with its flags where
// they apply. Informers (LIST and WATCH) mirror the cluster; the same Scheduler, cache, queue
// and plugins as `simulate` decide; binds, status patches and deletions go to the API server.

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kubesched::cmd {

struct RunFlags {
  std::string config;      //!< --config: KubeSchedulerConfiguration
  std::string kubeconfig;  //!< --kubeconfig (overrides clientConnection.kubeconfig)
  std::string master;      //!< --master: the API server's address, overriding the kubeconfig's
  std::optional<bool> leader_elect;
  std::optional<std::string> lease_duration, renew_deadline, retry_period;
  std::optional<std::string> resource_lock, resource_name, resource_namespace;
  std::optional<float> kube_api_qps;
  std::optional<int32_t> kube_api_burst;
  std::vector<std::string> plugins;  //!< --plugin
  //! --secure-port: /healthz, /livez, /readyz and /metrics over HTTPS (kube-scheduler's 10259);
  //! 0 picks a free port (logged), a negative port serves nothing.
  int secure_port = 10259;
  std::string bind_address = "0.0.0.0";  //!< --bind-address
  //! --tls-cert-file and --tls-private-key-file (PEM); neither: a self-signed certificate.
  std::string tls_cert_file, tls_private_key_file;
  //! Delegated authentication and authorization of the secure port (client/delegated_auth.h):
  //! the kubeconfigs TokenReviews and SubjectAccessReviews are posted with (empty: in-cluster
  //! credentials when running in a cluster, else none: tokens are not looked up and every path
  //! but the always-allowed ones is forbidden, as upstream), and the paths anyone may fetch.
  std::string authentication_kubeconfig, authorization_kubeconfig;
  std::vector<std::string> always_allow_paths{"/healthz", "/readyz", "/livez"};
  //! --record-plugin-results: every pod's last attempt as its scheduler.kubesched.io/plugin-results
  //! annotation, and the profiles in ConfigMap kube-system/kubesched-scheduler-config.
  bool record_plugin_results = false;
  //! kube-scheduler flags accepted for drop-in use and ignored (a warning each).
  std::vector<std::string> ignored;
};

//! Registers the `run` subcommand on `app`, filling `args` when parsed.
CLI::App* AddRunSubcommand(CLI::App& app, RunFlags& args);

//! Schedules until SIGTERM or SIGINT (0), or until leadership is lost or the scheduler cannot
//! start (1); 2 for a bad configuration or flags.
int RunCommand(const RunFlags& args);

}  // namespace kubesched::cmd
