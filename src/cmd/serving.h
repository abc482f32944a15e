#pragma once
// What the long-running commands (`run`, `apiserver`, `extender`) share: their listen address,
// their TLS identity, the API client they build from a kubeconfig, and the way SIGTERM and SIGINT
// reach their shutdown code.

#include <csignal>
#include <expected>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "client/rest_client.h"
#include "config/types.h"
#include "framework/registry.h"
#include "server/tls.h"

namespace kubesched::cmd {

//! The plugins a command schedules with (the in-tree ones and those of --plugin libraries) and the
//! configuration (`config_path`, or the default one when empty). Held together and in place: the
//! configuration was validated against this registry.
struct SchedulerSetup {
  framework::Registry registry;
  config::Configuration config;
};
std::expected<std::unique_ptr<SchedulerSetup>, std::string> LoadSchedulerSetup(
    const std::vector<std::string>& plugin_paths, const std::string& config_path);

//! "127.0.0.1:8080" -> host, port; "[::1]:0" for IPv6. The error names --listen.
std::expected<std::pair<std::string, int>, std::string> SplitListen(const std::string& listen);

//! The identity from --tls-cert-file and --tls-private-key-file when given, else a self-signed
//! one made now (as kube-scheduler without certificate flags).
std::expected<std::shared_ptr<const server::TlsIdentity>, std::string> ServingIdentity(
    const std::string& cert_file, const std::string& private_key_file);

//! The API client for the cluster: `kubeconfig` (or, empty, the configuration's
//! clientConnection.kubeconfig, or in-cluster credentials) with `master` overriding its server,
//! at the configuration's QPS and burst. `usage` tells a bad kubeconfig (exit 2) from a client
//! that cannot be made (exit 1).
struct RestClientError {
  std::string message;
  bool usage = false;
};
std::expected<std::unique_ptr<client::RestClient>, RestClientError> ConnectRestClient(const std::string& kubeconfig,
                                                                                      const std::string& master,
                                                                                      const config::Configuration& cfg);

//! Waits for SIGTERM or SIGINT on a thread of its own and then requests its stop. They are
//! blocked from construction on, so construct it before starting any thread (threads inherit the
//! mask): the shutdown then runs as ordinary code (a std::stop_callback on token()), not in a
//! signal handler.
class SignalWatcher {
 public:
  SignalWatcher();
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  //! Stopped once a signal came.
  std::stop_token token() const { return stop_.get_token(); }

 private:
  sigset_t signals_;
  std::stop_source stop_;
  std::jthread thread_;
};

}  // namespace kubesched::cmd
