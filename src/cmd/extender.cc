#include "cmd/extender.h"

#include <algorithm>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "client/remote_store.h"
#include "cluster/store_client.h"
#include "cluster/store_informer.h"
#include "cmd/cli.h"
#include "cmd/plugin_registry.h"
#include "cmd/serving.h"
#include "extender/extender_handler.h"
#include "extender/http_extender.h"
#include "scheduler/scheduler.h"
#include "server/http_server.h"
#include "store/resources.h"
#include "util/clock.h"
#include "util/log.h"

namespace kubesched::cmd {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;

// Threads that serve requests: evaluations are serialized by the scheduler, so a few suffice;
// waiting connections (one per pod in flight of each kube-scheduler) hold none.
constexpr size_t kServingThreads = 4;

// The cluster the extender watches and binds in, when it has one: the API's objects mirrored by
// informers, the store client `kubesched run` binds with.
struct Cluster {
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<client::RemoteStore> store;
};

}  // namespace

CLI::App* AddExtenderSubcommand(CLI::App& app, ExtenderFlags& args) {
  CLI::App* cmd = app.add_subcommand(
      "extender",
      "serve kubesched's Filter, Score and preemption to an upstream kube-scheduler as a scheduler extender (POST "
      "/filter, /prioritize, /preempt, /bind); with a cluster (--kubeconfig) it watches the nodes and running pods "
      "and binds through the API");
  cmd->add_option("--listen", args.listen, "host:port to listen on; port 0 picks a free port (printed on stdout)")
      ->capture_default_str();
  cmd->add_option("--config", args.config, "KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--kubeconfig", args.kubeconfig,
                  "kubeconfig of the cluster to watch and bind in (overrides clientConnection.kubeconfig); without a "
                  "cluster the nodes requests carry are the extender's view and bind fails");
  cmd->add_option("--master", args.master, "the API server's address (overrides the kubeconfig's server)");
  cmd->add_option("--profile", args.profile,
                  "the profile (schedulerName) whose plugins answer (default: the configuration's first)");
  cmd->add_flag("--tls", args.tls, "serve HTTPS with a self-signed certificate made at start-up");
  cmd->add_option("--tls-cert-file", args.tls_cert_file, "PEM certificate to serve HTTPS with");
  cmd->add_option("--tls-private-key-file", args.tls_private_key_file, "PEM private key of --tls-cert-file");
  AddPluginOption(cmd, args.plugins);
  return cmd;
}

int ExtenderCommand(const ExtenderFlags& args) {
  auto listen = SplitListen(args.listen);
  if (!listen) {
    std::cerr << "error: " << listen.error() << "\n";
    return kExitUsage;
  }
  if (args.tls_cert_file.empty() != args.tls_private_key_file.empty()) {
    std::cerr << "error: --tls-cert-file and --tls-private-key-file must be given together\n";
    return kExitUsage;
  }
  auto setup = LoadSchedulerSetup(args.plugins, args.config);
  if (!setup) {
    std::cerr << "error: " << setup.error() << "\n";
    return kExitUsage;
  }
  const framework::Registry* registry = &(*setup)->registry;
  const config::Configuration* cfg = &(*setup)->config;
  const std::string profile =
      !args.profile.empty() || cfg->profiles.empty() ? args.profile : cfg->profiles.front().scheduler_name;
  if (std::ranges::none_of(cfg->profiles, [&](const config::Profile& p) { return p.scheduler_name == profile; })) {
    std::cerr << "error: --profile: no profile \"" << profile << "\" in the configuration\n";
    return kExitUsage;
  }
  std::shared_ptr<const server::TlsIdentity> identity;
  if (args.tls || !args.tls_cert_file.empty()) {
    auto made = ServingIdentity(args.tls_cert_file, args.tls_private_key_file);
    if (!made) {
      std::cerr << "error: " << made.error() << "\n";
      return kExitFailure;
    }
    identity = std::move(*made);
  }

  const bool watch = !args.kubeconfig.empty() || !args.master.empty() || !cfg->client_connection.kubeconfig.empty();
  Cluster cluster;
  if (watch) {
    auto rest = ConnectRestClient(args.kubeconfig, args.master, *cfg);
    if (!rest) {
      std::cerr << "error: " << rest.error().message << "\n";
      return rest.error().usage ? kExitUsage : kExitFailure;
    }
    cluster.rest = std::move(*rest);
  }

  SignalWatcher signals;  // before any thread starts
  static const util::SystemClock clock;
  std::unique_ptr<store::Store> local;  // without a cluster: an empty store for the client's lookups
  store::Store* store = nullptr;
  if (watch) {
    client::RemoteStoreOptions store_options;
    store_options.informed = client::SchedulerInformedResources();
    store_options.optional = client::SchedulerOptionalResources();
    cluster.store = std::make_unique<client::RemoteStore>(*cluster.rest, store::SchedulerResources(), store_options);
    cluster.store->Start();
    KS_LOG.InfoS("Waiting for caches to sync", "server", cluster.rest->config().server);
    if (!cluster.store->WaitForCacheSync(signals.token())) return kExitOk;
    KS_LOG.InfoS("Caches are synced");
    store = cluster.store.get();
  } else {
    local = store::NewMemoryStore(store::SchedulerResources(), clock);
    store = local.get();
  }
  cluster::StoreClient store_client(*store, clock);

  scheduler::SchedulerOptions sopts;
  sopts.config = *cfg;
  sopts.queue_pods = false;  // the kube-scheduler schedules; kubesched only answers
  auto extenders = extender::BuildExtenders(sopts.config.extenders);
  if (!extenders) {
    std::cerr << "error: " << extenders.error() << "\n";
    return kExitFailure;
  }
  sopts.extenders = std::move(*extenders);
  auto created = scheduler::Scheduler::Create(sopts, store_client, clock, *registry);
  if (!created) {
    std::cerr << "error: " << created.error() << "\n";
    return kExitFailure;
  }
  scheduler::Scheduler& sched = **created;
  std::unique_ptr<cluster::StoreInformer> informer;
  if (watch) {
    informer = std::make_unique<cluster::StoreInformer>(*store);
    informer->Subscribe(&sched);
  }

  extender::ExtenderHandlerOptions hopts;
  hopts.profile = profile;
  hopts.learn_nodes = !watch;
  if (watch) {
    hopts.bind = [&store_client](const extender::ExtenderBindingArgs& b) -> std::expected<void, std::string> {
      api::Pod pod;
      pod.metadata.name = b.pod_name;
      pod.metadata.namespace_ = b.pod_namespace;
      pod.metadata.uid = b.pod_uid;
      framework::Status s = store_client.Bind(pod, b.node);
      if (!s.IsSuccess()) return std::unexpected(s.Message());
      return {};
    };
  }
  extender::ExtenderHandler handler(sched, hopts);
  server::HttpServerOptions http;
  http.host = listen->first;
  http.port = listen->second;
  http.threads = kServingThreads;
  http.tls = identity;
  auto bound = server::HttpServer::Bind(handler, http);
  if (!bound) {
    std::cerr << "error: --listen: " << bound.error() << "\n";
    return kExitFailure;
  }
  server::HttpServer& srv = **bound;
  std::stop_callback shutdown(signals.token(), [&srv] { srv.Shutdown(); });
  KS_LOG.Info("Serving the scheduler extender on {}", srv.Url());
  std::cout << "Serving the scheduler extender on " << srv.Url() << std::endl;  // tests read the port here
  const bool served = srv.Run();
  informer.reset();
  if (cluster.store) cluster.store->Stop();
  if (!served) {
    std::cerr << "error: the server stopped unexpectedly\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace kubesched::cmd
