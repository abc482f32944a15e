#include "cmd/run.h"

#include <atomic>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stop_token>
#include <thread>

#include <fmt/format.h>

#include "client/delegated_auth.h"
#include "client/kubeconfig.h"
#include "client/leader_elector.h"
#include "client/remote_store.h"
#include "client/rest_client.h"
#include "cluster/async_client.h"
#include "cluster/event_recorder.h"
#include "cluster/store_client.h"
#include "cluster/store_informer.h"
#include "cmd/cli.h"
#include "cmd/plugin_registry.h"
#include "cmd/plugin_results_publisher.h"
#include "cmd/serving.h"
#include "cmd/version.h"
#include "config/load.h"
#include "extender/http_extender.h"
#include "metrics/scheduler_metrics.h"
#include "scheduler/run_loop.h"
#include "scheduler/scheduler.h"
#include "server/healthz_handler.h"
#include "server/http_server.h"
#include "server/tls.h"
#include "store/resources.h"
#include "util/clock.h"
#include "util/duration.h"
#include "util/log.h"

namespace kubesched::cmd {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;

// The flags' overrides of the configuration's leaderElection and clientConnection, as
// kube-scheduler applies its deprecated flags over the file.
std::expected<void, std::string> ApplyFlags(const RunFlags& args, config::Configuration& cfg) {
  config::LeaderElection& le = cfg.leader_election;
  if (args.leader_elect) le.leader_elect = *args.leader_elect;
  auto duration = [](const std::optional<std::string>& flag, std::string_view name,
                     int64_t& out) -> std::expected<void, std::string> {
    if (!flag) return {};
    auto ns = util::ParseDuration(*flag);
    if (!ns) return std::unexpected(fmt::format("--{}: {}", name, ns.error()));
    out = *ns;
    return {};
  };
  if (auto ok = duration(args.lease_duration, "leader-elect-lease-duration", le.lease_duration_ns); !ok) return ok;
  if (auto ok = duration(args.renew_deadline, "leader-elect-renew-deadline", le.renew_deadline_ns); !ok) return ok;
  if (auto ok = duration(args.retry_period, "leader-elect-retry-period", le.retry_period_ns); !ok) return ok;
  if (args.resource_lock) le.resource_lock = *args.resource_lock;
  if (args.resource_name) le.resource_name = *args.resource_name;
  if (args.resource_namespace) le.resource_namespace = *args.resource_namespace;
  if (args.kube_api_qps) cfg.client_connection.qps = *args.kube_api_qps;
  if (args.kube_api_burst) cfg.client_connection.burst = *args.kube_api_burst;
  if (le.leader_elect) {
    if (le.resource_lock != "leases") {
      return std::unexpected(fmt::format(
          "--leader-elect-resource-lock: unsupported value \"{}\" (only \"leases\" is supported)", le.resource_lock));
    }
    if (le.lease_duration_ns <= le.renew_deadline_ns) {
      return std::unexpected("leader election: the lease duration must be greater than the renew deadline");
    }
    if (le.renew_deadline_ns <= 0 || le.retry_period_ns <= 0) {
      return std::unexpected("leader election: the renew deadline and retry period must be greater than zero");
    }
  }
  return {};
}

// The secure port's server on its own thread: started before the caches sync, so that /healthz
// answers during start-up, and shut down when it goes out of scope (every exit of RunCommand).
class SecureServing {
 public:
  SecureServing() = default;
  SecureServing(const SecureServing&) = delete;
  SecureServing& operator=(const SecureServing&) = delete;
  ~SecureServing() {
    if (!server_) return;
    server_->Shutdown();
    if (thread_.joinable()) thread_.join();
  }

  std::expected<void, std::string> Start(const RunFlags& args, server::Handler& handler) {
    auto identity = ServingIdentity(args.tls_cert_file, args.tls_private_key_file);
    if (!identity) return std::unexpected(identity.error());
    server::HttpServerOptions options;
    options.host = args.bind_address;
    options.port = args.secure_port;
    options.threads = 2;  // probes and scrapes; slow or idle connections hold none
    options.tls = std::move(*identity);
    auto bound = server::HttpServer::Bind(handler, options);
    if (!bound) return std::unexpected(fmt::format("--secure-port: {}", bound.error()));
    server_ = std::move(*bound);
    const bool v6 = args.bind_address.find(':') != std::string::npos;
    const std::string address =
        fmt::format("{}{}{}:{}", v6 ? "[" : "", args.bind_address, v6 ? "]" : "", server_->Port());
    KS_LOG.InfoS("Serving securely on", "address", address);  // upstream's line; tests read the port here
    thread_ = std::thread([s = server_.get()] {
      if (!s->Run()) KS_LOG.ErrorS("serving failed", "Secure port stopped serving");
    });
    return {};
  }

 private:
  std::unique_ptr<server::HttpServer> server_;
  std::thread thread_;
};

// The client a delegated review is posted with: `path`'s, else in-cluster credentials when
// running in a cluster, else none (null), as upstream's RemoteKubeConfigFileOptional.
std::expected<std::unique_ptr<client::RestClient>, std::string> DelegationClient(const std::string& path,
                                                                                 std::string_view flag,
                                                                                 const config::Configuration& cfg) {
  auto rest = client::ResolveRestConfig(path, "");
  if (!rest) {
    if (path.empty()) return std::unique_ptr<client::RestClient>();
    return std::unexpected(fmt::format("{}: {}", flag, rest.error()));
  }
  rest->qps = cfg.client_connection.qps;
  rest->burst = cfg.client_connection.burst;
  rest->user_agent = fmt::format("kubesched/{}", kVersion);
  auto created = client::RestClient::Create(*rest);
  if (!created) return std::unexpected(fmt::format("{}: {}", flag, created.error()));
  return std::move(*created);
}

}  // namespace

CLI::App* AddRunSubcommand(CLI::App& app, RunFlags& args) {
  CLI::App* cmd = app.add_subcommand(
      "run",
      "schedule a real cluster's pods (those whose spec.schedulerName is one of the configuration's profiles), as "
      "kube-scheduler does: from --kubeconfig, clientConnection.kubeconfig or in-cluster credentials");
  cmd->add_option("--config", args.config, "KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--kubeconfig", args.kubeconfig,
                  "kubeconfig with the API server's address and credentials (overrides clientConnection.kubeconfig)");
  cmd->add_option("--master", args.master, "the API server's address (overrides the kubeconfig's server)");
  cmd->add_option("--leader-elect", args.leader_elect,
                  "elect a leader on a Lease before scheduling (several replicas: one schedules); default true")
      ->expected(0, 1)
      ->default_str("true");
  cmd->add_option("--leader-elect-lease-duration", args.lease_duration,
                  "how long a candidate waits after the last renewal before taking the lease over (default 15s)");
  cmd->add_option("--leader-elect-renew-deadline", args.renew_deadline,
                  "how long the leader keeps trying to renew before it stops leading (default 10s)");
  cmd->add_option("--leader-elect-retry-period", args.retry_period,
                  "how long candidates wait between attempts to acquire or renew (default 2s)");
  cmd->add_option("--leader-elect-resource-lock", args.resource_lock, "the lock's kind: leases (the only one)");
  cmd->add_option("--leader-elect-resource-name", args.resource_name, "the Lease's name (default kube-scheduler)");
  cmd->add_option("--leader-elect-resource-namespace", args.resource_namespace,
                  "the Lease's namespace (default kube-system)");
  cmd->add_option("--kube-api-qps", args.kube_api_qps, "requests per second to the API server (default 50)");
  cmd->add_option("--kube-api-burst", args.kube_api_burst, "burst of requests to the API server (default 100)");
  AddPluginOption(cmd, args.plugins);
  cmd->add_option("--secure-port", args.secure_port,
                  "port for /healthz, /livez, /readyz and /metrics over HTTPS (0: a free port, logged; negative: "
                  "not served)")
      ->capture_default_str();
  cmd->add_option("--bind-address", args.bind_address, "address the secure port listens on")->capture_default_str();
  cmd->add_option("--tls-cert-file", args.tls_cert_file,
                  "PEM certificate for the secure port (default: a self-signed one made at start-up)");
  cmd->add_option("--tls-private-key-file", args.tls_private_key_file, "PEM private key of --tls-cert-file");
  cmd->add_option("--authentication-kubeconfig", args.authentication_kubeconfig,
                  "kubeconfig of the API server that reviews the secure port's bearer tokens (TokenReview); empty: "
                  "in-cluster credentials, else tokens are not looked up");
  cmd->add_option("--authorization-kubeconfig", args.authorization_kubeconfig,
                  "kubeconfig of the API server that authorizes the secure port's requests (SubjectAccessReview); "
                  "empty: in-cluster credentials, else every path not always allowed is forbidden");
  cmd->add_option("--authorization-always-allow-paths", args.always_allow_paths,
                  "paths of the secure port served without authorization (exact, or a prefix ending in *)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_flag("--record-plugin-results", args.record_plugin_results,
                "after each scheduling attempt, write the pod's per-node Filter and Score results as its "
                "scheduler.kubesched.io/plugin-results annotation (JSON), and publish the profiles in ConfigMap "
                "kube-system/kubesched-scheduler-config; costs an API write per attempt and a full Filter pass "
                "over all nodes");
  // kube-scheduler's client-certificate and profiling flags, which kubeadm's static pod passes:
  // accepted, so that kubesched can replace kube-scheduler's command, and ignored.
  for (const char* flag : {"--authentication-skip-lookup", "--profiling", "--contention-profiling"}) {
    cmd->add_option_function<std::string>(
           flag, [&args, flag](const std::string&) { args.ignored.emplace_back(flag); }, "ignored (kube-scheduler's)")
        ->expected(0, 1);
  }
  return cmd;
}

namespace {

// The secure port's parts (kube-scheduler's /healthz, /readyz, /metrics behind delegated
// authentication and authorization), alive while `run` runs; destroyed in reverse order.
struct SecurePort {
  std::unique_ptr<metrics::SchedulerMetrics> scheduler_metrics;
  std::unique_ptr<client::RestClient> authentication_client, authorization_client;
  std::unique_ptr<client::DelegatedAuth> delegated_auth;
  std::unique_ptr<server::HealthzHandler> healthz;
  SecureServing secure_serving;
};

// An exit code with the message to print before it.
struct Failure {
  int code;
  std::string message;
};

std::expected<void, Failure> CheckServingFlags(const RunFlags& args) {
  if (args.tls_cert_file.empty() != args.tls_private_key_file.empty()) {
    return std::unexpected(Failure{kExitUsage, "--tls-cert-file and --tls-private-key-file must be given together"});
  }
  if (args.secure_port > 65535) {
    return std::unexpected(
        Failure{kExitUsage, fmt::format("--secure-port: {} must be between 0 and 65535", args.secure_port)});
  }
  return {};
}

// Starts the secure port. Readiness as kube-scheduler's /readyz: the informers have synced
// ("sched-handler-sync") and, with leader election, the elector runs ("leaderElection").
std::expected<void, Failure> StartSecurePort(const RunFlags& args, const config::Configuration& cfg,
                                             const std::atomic<bool>& synced, const std::atomic<bool>& electing,
                                             SecurePort& port) {
  port.scheduler_metrics = std::make_unique<metrics::SchedulerMetrics>();
  server::HealthzOptions ho;
  ho.readyz.push_back({"sched-handler-sync", [&synced]() -> std::expected<void, std::string> {
                         if (synced.load()) return {};
                         return std::unexpected("waiting for handlers to sync");
                       }});
  if (cfg.leader_election.leader_elect) {
    ho.readyz.push_back({"leaderElection", [&electing]() -> std::expected<void, std::string> {
                           if (electing.load()) return {};
                           return std::unexpected("leader election has not started");
                         }});
  }
  ho.metrics = [m = port.scheduler_metrics.get()] { return m->Serialize(); };
  // Delegated authentication and authorization, as kube-scheduler's secure port has them.
  auto authentication = DelegationClient(args.authentication_kubeconfig, "--authentication-kubeconfig", cfg);
  auto authorization = DelegationClient(args.authorization_kubeconfig, "--authorization-kubeconfig", cfg);
  if (!authentication || !authorization) {
    return std::unexpected(Failure{kExitUsage, !authentication ? authentication.error() : authorization.error()});
  }
  if (*authentication == nullptr) {
    KS_LOG.Warning("No authentication-kubeconfig provided: token reviews won't work, requests are anonymous");
  }
  if (*authorization == nullptr) {
    KS_LOG.Warning("No authorization-kubeconfig provided, so SubjectAccessReview of authorization tokens won't work");
  }
  port.authentication_client = std::move(*authentication);
  port.authorization_client = std::move(*authorization);
  client::DelegatedAuthOptions ao;
  ao.always_allow_paths = args.always_allow_paths;
  port.delegated_auth = std::make_unique<client::DelegatedAuth>(port.authentication_client.get(),
                                                                port.authorization_client.get(), std::move(ao));
  ho.authorize = [auth = port.delegated_auth.get()](const server::HttpRequest& r) -> std::pair<int, std::string> {
    client::AuthDecision d = auth->Check(r.authorization, r.method, r.path);
    return {d.status, std::move(d.message)};
  };
  port.healthz = std::make_unique<server::HealthzHandler>(std::move(ho));
  if (auto ok = port.secure_serving.Start(args, *port.healthz); !ok) {
    return std::unexpected(Failure{kExitFailure, ok.error()});
  }
  return {};
}

// The scheduler `run` drives: the configuration's profiles and extenders, binding on workers
// (binds wait on the API server).
std::expected<std::unique_ptr<scheduler::Scheduler>, std::string> CreateScheduler(
    const config::Configuration& cfg, const framework::Registry& registry, framework::ClusterClient& client,
    const util::Clock& clock, metrics::SchedulerMetrics* scheduler_metrics, PluginResultsPublisher* publisher) {
  scheduler::SchedulerOptions sopts;
  sopts.config = cfg;
  if (publisher) {
    sopts.explain_all = true;
    sopts.on_explained = [publisher](const api::Pod& pod, const scheduler::AttemptExplanation& e) {
      publisher->Record(pod, e);
    };
  }
  sopts.async_binding = true;
  sopts.binding_threads = 16;  // binds wait on the API server
  sopts.seed = std::random_device{}();
  sopts.metrics = scheduler_metrics;
  auto extenders = extender::BuildExtenders(sopts.config.extenders);
  if (!extenders) return std::unexpected(extenders.error());
  sopts.extenders = std::move(*extenders);
  return scheduler::Scheduler::Create(sopts, client, clock, registry);
}

// The publisher of --record-plugin-results, or null without the flag; Start()ed with what
// StartPublishing gives once the scheduler exists.
std::unique_ptr<PluginResultsPublisher> MakePublisher(const RunFlags& args, store::Store& store) {
  if (!args.record_plugin_results) return nullptr;
  return std::make_unique<PluginResultsPublisher>(store);
}

// Starts `publisher` (if any) with the profiles as `sched` built them and the --config file's text.
void StartPublishing(PluginResultsPublisher* publisher, const RunFlags& args, const config::Configuration& cfg,
                     scheduler::Scheduler& sched) {
  if (!publisher) return;
  std::vector<profile::ProfileConfig> profiles;
  for (const config::Profile& p : cfg.profiles) {
    if (const auto* fwk = sched.FrameworkFor(p.scheduler_name))
      profiles.push_back(profile::DescribeProfile(*fwk, p, cfg));
  }
  std::string text;
  if (!args.config.empty()) {
    std::ifstream in(args.config, std::ios::binary);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
  }
  publisher->Start(std::move(profiles), std::move(text));
}

// Runs `start_scheduling` once this replica leads the configuration's lease, until `stop` (then
// `stop_scheduling` before the lease is released) or the lease is lost (an error, as upstream
// exits then). `electing` is set once the elector runs.
int LeadAndSchedule(const config::Configuration& cfg, client::RemoteStore& store, const util::Clock& clock,
                    std::stop_token stop, std::atomic<bool>& electing, const std::function<void()>& start_scheduling,
                    const std::function<void()>& stop_scheduling) {
  client::LeaderElectionOptions le;
  le.lease_namespace = cfg.leader_election.resource_namespace;
  le.lease_name = cfg.leader_election.resource_name;
  le.lease_duration_ns = cfg.leader_election.lease_duration_ns;
  le.renew_deadline_ns = cfg.leader_election.renew_deadline_ns;
  le.retry_period_ns = cfg.leader_election.retry_period_ns;
  client::LeaderElector elector(store, clock, le);
  // The lease is released only once scheduling has stopped: the elector's own stop comes after.
  std::stop_source election;
  std::stop_callback stop_election(stop, [&] {
    stop_scheduling();
    election.request_stop();
  });
  electing.store(true);
  const bool clean = elector.Run(election.get_token(), start_scheduling);
  if (!clean && !stop.stop_requested()) {
    // Upstream exits when it loses the lease: another replica leads now.
    std::cerr << "error: leader election lost\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

int RunCommand(const RunFlags& args) {
  for (const std::string& flag : args.ignored) {
    std::cerr << "warning: " << flag << " is kube-scheduler's and has no effect in kubesched run\n";
  }
  auto setup = LoadSchedulerSetup(args.plugins, args.config);
  if (!setup) {
    std::cerr << "error: " << setup.error() << "\n";
    return kExitUsage;
  }
  const framework::Registry* registry = &(*setup)->registry;
  config::Configuration& cfg = (*setup)->config;
  if (auto ok = ApplyFlags(args, cfg); !ok) {
    std::cerr << "error: " << ok.error() << "\n";
    return kExitUsage;
  }
  if (auto ok = CheckServingFlags(args); !ok) {
    std::cerr << "error: " << ok.error().message << "\n";
    return ok.error().code;
  }
  auto rest_client = ConnectRestClient(args.kubeconfig, args.master, cfg);
  if (!rest_client) {
    std::cerr << "error: " << rest_client.error().message << "\n";
    return rest_client.error().usage ? kExitUsage : kExitFailure;
  }

  SignalWatcher signals;
  const std::stop_token stop = signals.token();
  std::atomic<bool> synced{false};
  std::atomic<bool> electing{false};
  SecurePort secure_port;
  if (args.secure_port >= 0) {
    if (auto ok = StartSecurePort(args, cfg, synced, electing, secure_port); !ok) {
      std::cerr << "error: " << ok.error().message << "\n";
      return ok.error().code;
    }
  }
  metrics::SchedulerMetrics* scheduler_metrics = secure_port.scheduler_metrics.get();

  static const util::SystemClock clock;
  client::RemoteStoreOptions store_options;
  store_options.informed = client::SchedulerInformedResources();
  store_options.optional = client::SchedulerOptionalResources();
  client::RemoteStore store(**rest_client, store::SchedulerResources(), store_options);
  store.Start();
  KS_LOG.InfoS("Waiting for caches to sync", "server", (*rest_client)->config().server);
  if (!store.WaitForCacheSync(stop)) return kExitOk;
  KS_LOG.InfoS("Caches are synced");
  synced.store(true);

  // Scheduled, FailedScheduling and Preempted Events, aggregated as upstream's broadcaster.
  cluster::EventRecorder recorder(store, clock);
  recorder.Start();
  cluster::StoreClient store_client(store, clock);
  store_client.SetEventRecorder(&recorder);
  // Status patches and deletions on workers: an API round trip never holds up a cycle.
  cluster::AsyncClient cluster_client(store_client);
  const std::unique_ptr<PluginResultsPublisher> publisher = MakePublisher(args, store);
  auto created = CreateScheduler(cfg, *registry, cluster_client, clock, scheduler_metrics, publisher.get());
  if (!created) {
    std::cerr << "error: " << created.error() << "\n";
    return kExitFailure;
  }
  scheduler::Scheduler& sched = **created;
  // The queue's and cache's gauges are read from the scheduler at each scrape, until it goes.
  struct MetricsSource {
    metrics::SchedulerMetrics* m;
    ~MetricsSource() {
      if (m) m->SetStateSource(nullptr);
    }
  } metrics_source{scheduler_metrics};
  if (scheduler_metrics) scheduler_metrics->SetStateSource([&sched] { return sched.MetricsState(); });

  // Scheduling starts once this replica leads (at once without leader election); it stops
  // when `scheduling` is stopped.
  std::stop_source scheduling;
  std::stop_callback forward(stop, [&scheduling] { scheduling.request_stop(); });
  std::unique_ptr<cluster::StoreInformer> informer;
  std::mutex loop_mu;  // guards loop: started by the elector's thread, stopped from any
  std::jthread loop;
  auto start_scheduling = [&] {
    std::lock_guard lock(loop_mu);
    if (scheduling.stop_requested()) return;
    StartPublishing(publisher.get(), args, cfg, sched);  // once leading: one replica writes
    informer = std::make_unique<cluster::StoreInformer>(store);
    informer->Subscribe(&sched);
    loop = std::jthread([&sched, token = scheduling.get_token()] { scheduler::RunOnRealTime(sched, clock, token); });
  };
  // Stops scheduling and waits for the cycle under way and the binds in flight.
  auto stop_scheduling = [&] {
    scheduling.request_stop();
    std::lock_guard lock(loop_mu);
    if (loop.joinable()) loop.join();
  };

  int code = kExitOk;
  if (cfg.leader_election.leader_elect) {
    code = LeadAndSchedule(cfg, store, clock, stop, electing, start_scheduling, stop_scheduling);
  } else {
    start_scheduling();
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock lock(mu);
    cv.wait(lock, stop, [] { return false; });
  }
  stop_scheduling();
  recorder.Stop();
  informer.reset();
  store.Stop();
  return code;
}

}  // namespace kubesched::cmd
