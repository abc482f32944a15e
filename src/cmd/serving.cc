#include "cmd/serving.h"

#include <pthread.h>

#include <fmt/format.h>

#include "client/kubeconfig.h"
#include "cmd/plugin_registry.h"
#include "cmd/version.h"
#include "config/load.h"
#include "util/log.h"

namespace kubesched::cmd {

std::expected<std::unique_ptr<SchedulerSetup>, std::string> LoadSchedulerSetup(
    const std::vector<std::string>& plugin_paths, const std::string& config_path) {
  auto registry = MakeRegistry(plugin_paths);
  if (!registry) return std::unexpected(registry.error());
  auto setup = std::make_unique<SchedulerSetup>();
  setup->registry = std::move(*registry);
  if (config_path.empty()) {
    setup->config = config::DefaultConfiguration(setup->registry);
    return setup;
  }
  auto loaded = config::LoadConfigFile(config_path, setup->registry);
  if (!loaded) return std::unexpected(loaded.error());
  setup->config = std::move(*loaded);
  return setup;
}

std::expected<std::pair<std::string, int>, std::string> SplitListen(const std::string& listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size()) {
    return std::unexpected(
        fmt::format("--listen: invalid value \"{}\" (expected host:port, e.g. 127.0.0.1:8080)", listen));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  int port = -1;
  try {
    size_t used = 0;
    port = std::stoi(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1) port = -1;
  } catch (const std::exception&) {
  }
  if (host.empty() || port < 0 || port > 65535) {
    return std::unexpected(
        fmt::format("--listen: invalid value \"{}\" (expected host:port with a port from 0 to 65535)", listen));
  }
  return std::make_pair(host, port);
}

std::expected<std::shared_ptr<const server::TlsIdentity>, std::string> ServingIdentity(
    const std::string& cert_file, const std::string& private_key_file) {
  if (!cert_file.empty()) {
    auto loaded = server::LoadIdentity(cert_file, private_key_file);
    if (!loaded) return std::unexpected(loaded.error());
    return std::make_shared<const server::TlsIdentity>(std::move(*loaded));
  }
  auto generated = server::GenerateSelfSignedIdentity();
  if (!generated) return std::unexpected(fmt::format("generating a self-signed certificate: {}", generated.error()));
  return std::make_shared<const server::TlsIdentity>(std::move(*generated));
}

std::expected<std::unique_ptr<client::RestClient>, RestClientError> ConnectRestClient(
    const std::string& kubeconfig, const std::string& master, const config::Configuration& cfg) {
  const std::string path = kubeconfig.empty() ? cfg.client_connection.kubeconfig : kubeconfig;
  auto rest = client::ResolveRestConfig(path, master);
  if (!rest) return std::unexpected(RestClientError{rest.error(), true});
  rest->qps = cfg.client_connection.qps;
  rest->burst = cfg.client_connection.burst;
  rest->user_agent = fmt::format("kubesched/{}", kVersion);
  auto created = client::RestClient::Create(*rest);
  if (!created) return std::unexpected(RestClientError{created.error(), false});
  return std::move(*created);
}

SignalWatcher::SignalWatcher() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGTERM);
  sigaddset(&signals_, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
  thread_ = std::jthread([this](std::stop_token own) {
    // Polled, so that the watcher itself can be stopped when the command ends on its own.
    const timespec step{0, 200'000'000};
    while (!own.stop_requested()) {
      int sig = sigtimedwait(&signals_, nullptr, &step);
      if (sig == SIGTERM || sig == SIGINT) {
        KS_LOG.InfoS("Received signal, shutting down", "signal", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        stop_.request_stop();
        return;
      }
    }
  });
}

SignalWatcher::~SignalWatcher() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace kubesched::cmd
