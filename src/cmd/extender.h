#pragma once
// `kubesched extender`: kubesched's scheduling decisions served to an upstream kube-scheduler as
// a scheduler extender (its filter, prioritize, preempt and bind verbs over HTTP or HTTPS). With
// a cluster (--kubeconfig, --master or clientConnection.kubeconfig) a watch keeps its own view
// of the nodes and the pods running on them, and bind goes to the API; without one, the nodes
// requests carry make up the view and bind fails with a reason.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kubesched::cmd {

struct ExtenderFlags {
  std::string listen = "127.0.0.1:8888";  //!< --listen host:port (port 0: a free one)
  std::string config;                     //!< --config: KubeSchedulerConfiguration
  std::string kubeconfig;                 //!< --kubeconfig
  std::string master;                     //!< --master
  std::string profile;                    //!< --profile: schedulerName (default: the first profile)
  bool tls = false;                       //!< --tls: HTTPS with a self-signed certificate
  std::string tls_cert_file, tls_private_key_file;
  std::vector<std::string> plugins;  //!< --plugin
};

//! Registers the `extender` subcommand on `app`, filling `args` when parsed.
CLI::App* AddExtenderSubcommand(CLI::App& app, ExtenderFlags& args);

//! Serves until SIGTERM or SIGINT (0); 1 when it cannot start or serve; 2 for bad flags or a bad
//! configuration.
int ExtenderCommand(const ExtenderFlags& args);

}  // namespace kubesched::cmd
