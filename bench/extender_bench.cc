// Load benchmark of `kubesched extender` (README "Running kubesched as a scheduler extender"): the
// extender runs as a child process on loopback, as an upstream kube-scheduler would reach it, and
// concurrent clients fire filter and prioritize requests about 1,000 nodes at it:
//
//   - names:   nodeCacheCapable requests (NodeNames), the nodes already in the extender's view
//              (loaded by one full-object request first);
//   - objects: requests carrying the 1,000 full Node objects (as kube-scheduler sends them to
//              an extender without a node cache), answered with the passing Node objects.
//
// Each mode runs until --requests requests are answered or --seconds pass, whichever is first,
// and reports requests/s and the per-request latency (sent → answer read) at p50/p99/max. Then
// the extender must still answer after an oversized body and a burst of malformed ones.
//
//   cmake --build --preset release --target kubesched kubesched_extender_bench
//   build/release/bench/kubesched_extender_bench                       # ~30 seconds
//   build/release/bench/kubesched_extender_bench --requests=500 --clients=2

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>

#include "apiserver_client.h"
#include "util/percentile.h"

namespace {

using kubesched::bench::Clock;

int g_nodes = 1000;
int g_clients = 4;
int g_requests = 3000;  // per mode and verb
int g_seconds = 8;      // per mode and verb
int g_port = 0;         // an extender already running (profiling it); 0: start one

// A Node as a kubelet registers it (labels, taints none, capacity, conditions, addresses,
// nodeInfo, a few images): about 2 KiB of JSON, like the ones kube-scheduler sends.
std::string KubeletNodeJson(int i) {
  const std::string name = fmt::format("node-{:04d}", i);
  const int cpu = 4 + 4 * (i % 4);
  return fmt::format(
      R"json({{"metadata":{{"name":"{0}","uid":"6b1f2c3d-{1:04d}-4e5f-8a9b-0c1d2e3f4a5b","resourceVersion":"{2}","creationTimestamp":"2026-11-24T10:00:00Z","labels":{{"beta.kubernetes.io/arch":"amd64","beta.kubernetes.io/os":"linux","kubernetes.io/arch":"amd64","kubernetes.io/hostname":"{0}","kubernetes.io/os":"linux","node.kubernetes.io/instance-type":"m5.xlarge","topology.kubernetes.io/region":"eu-west-1","topology.kubernetes.io/zone":"eu-west-1{3}"}},"annotations":{{"node.alpha.kubernetes.io/ttl":"0","volumes.kubernetes.io/controller-managed-attach-detach":"true"}}}},"spec":{{"podCIDR":"10.244.{4}.0/24","podCIDRs":["10.244.{4}.0/24"],"providerID":"aws:///eu-west-1a/i-0{1:04d}"}},"status":{{"capacity":{{"cpu":"{5}","ephemeral-storage":"101430960Ki","hugepages-2Mi":"0","memory":"16101764Ki","pods":"110"}},"allocatable":{{"cpu":"{5}","ephemeral-storage":"93478772582","hugepages-2Mi":"0","memory":"15999364Ki","pods":"110"}},"conditions":[{{"type":"MemoryPressure","status":"False","lastHeartbeatTime":"2026-11-24T10:05:00Z","lastTransitionTime":"2026-11-24T10:00:00Z","reason":"KubeletHasSufficientMemory","message":"kubelet has sufficient memory available"}},{{"type":"DiskPressure","status":"False","lastHeartbeatTime":"2026-11-24T10:05:00Z","lastTransitionTime":"2026-11-24T10:00:00Z","reason":"KubeletHasNoDiskPressure","message":"kubelet has no disk pressure"}},{{"type":"PIDPressure","status":"False","lastHeartbeatTime":"2026-11-24T10:05:00Z","lastTransitionTime":"2026-11-24T10:00:00Z","reason":"KubeletHasSufficientPID","message":"kubelet has sufficient PID available"}},{{"type":"Ready","status":"True","lastHeartbeatTime":"2026-11-24T10:05:00Z","lastTransitionTime":"2026-11-24T10:00:10Z","reason":"KubeletReady","message":"kubelet is posting ready status"}}],"addresses":[{{"type":"InternalIP","address":"10.0.{6}.{7}"}},{{"type":"Hostname","address":"{0}"}}],"daemonEndpoints":{{"kubeletEndpoint":{{"Port":10250}}}},"nodeInfo":{{"machineID":"ec2{1:04d}","systemUUID":"ec2{1:04d}","bootID":"b{1:04d}","kernelVersion":"6.1.0-13-amd64","osImage":"Debian GNU/Linux 12 (bookworm)","containerRuntimeVersion":"containerd://1.7.20","kubeletVersion":"v1.32.0","kubeProxyVersion":"v1.32.0","operatingSystem":"linux","architecture":"amd64"}},"images":[{{"names":["registry.k8s.io/kube-proxy@sha256:0f5a","registry.k8s.io/kube-proxy:v1.32.0"],"sizeBytes":30231165}},{{"names":["docker.io/library/nginx@sha256:1e67","docker.io/library/nginx:1.27"],"sizeBytes":72955450}}]}}}})json",
      name, i, 1000 + i, "abc"[i % 3], i % 256, cpu, i / 256, i % 256);
}

// A Deployment's pod as kube-scheduler sends it (no apiVersion/kind, as informers keep them).
const std::string kPod =
    R"({"metadata":{"name":"web-7c9d8b6f5d-x2x9q","generateName":"web-7c9d8b6f5d-","namespace":"default","uid":"0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d","resourceVersion":"5001","creationTimestamp":"2026-11-24T10:10:00Z","labels":{"app":"web","pod-template-hash":"7c9d8b6f5d"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7c9d8b6f5d","uid":"9f8e7d6c-5b4a-3928-1706-f5e4d3c2b1a0","controller":true,"blockOwnerDeletion":true}]},"spec":{"containers":[{"name":"web","image":"nginx:1.27","ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{"requests":{"cpu":"500m","memory":"512Mi"},"limits":{"memory":"1Gi"}},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"default","securityContext":{},"schedulerName":"default-scheduler","tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],"priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},"status":{"phase":"Pending","qosClass":"Burstable"}})";

std::string NamesBody() {
  std::string names;
  for (int i = 0; i < g_nodes; ++i) names += fmt::format("{}\"node-{:04d}\"", i ? "," : "", i);
  return R"({"Pod":)" + kPod + R"(,"Nodes":null,"NodeNames":[)" + names + "]}";
}

std::string ObjectsBody() {
  std::string items;
  for (int i = 0; i < g_nodes; ++i) items += (i ? "," : "") + KubeletNodeJson(i);
  return R"({"Pod":)" + kPod + R"(,"Nodes":{"metadata":{},"items":[)" + items + R"(]},"NodeNames":null})";
}

// `kubesched extender --listen 127.0.0.1:0` as a child process, or the one --port names.
class ExtenderProcess {
 public:
  ExtenderProcess() {
    if (g_port > 0) {
      port_ = g_port;
      return;
    }
    process_.emplace(std::vector<std::string>{"extender", "--listen", "127.0.0.1:0"},
                     "Serving the scheduler extender on ");
    port_ = process_->port();
  }
  int port() const { return port_; }
  //! The CPU time the extender has used so far (user + system), in ms; 0 for one not started here.
  double CpuMs() const {
    if (!process_) return 0;
    std::FILE* f = std::fopen(fmt::format("/proc/{}/stat", process_->pid()).c_str(), "r");
    if (!f) return 0;
    char buf[1024];
    const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    // Fields 14 and 15 (utime, stime, in clock ticks) follow the parenthesised command name.
    const char* p = std::strrchr(buf, ')');
    unsigned long long utime = 0, stime = 0;
    if (!p || std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
      return 0;
    return static_cast<double>(utime + stime) * 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  bool Alive() const { return !process_ || waitpid(process_->pid(), nullptr, WNOHANG) == 0; }

 private:
  std::optional<kubesched::bench::ServerProcess> process_;
  int port_ = 0;
};

struct Figures {
  std::string mode, verb;
  size_t requests = 0;
  size_t failures = 0;
  double seconds = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  double server_cpu_ms = 0;  // the extender's CPU time per request
};

// g_clients threads, each with its own kept-alive connection, POST `body` to `path` until
// g_requests are answered in all or g_seconds pass.
Figures Load(const ExtenderProcess& extender, const std::string& mode, const std::string& verb,
             const std::string& body) {
  std::atomic<int> issued{0};
  std::atomic<size_t> failures{0};
  std::vector<std::vector<double>> latencies(static_cast<size_t>(g_clients));
  const int port = extender.port();
  const double cpu_before = extender.CpuMs();
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::seconds(g_seconds);
  std::vector<std::thread> clients;
  for (int c = 0; c < g_clients; ++c) {
    clients.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", port);
      client.set_keep_alive(true);
      client.set_read_timeout(60);
      // As Go's net/http (kube-scheduler's client): without it, Nagle holds the body back until
      // the server's delayed ACK of the headers, ~40 ms per request.
      client.set_tcp_nodelay(true);
      while (issued.fetch_add(1) < g_requests && Clock::now() < deadline) {
        const auto sent = Clock::now();
        auto res = client.Post("/" + verb, body, "application/json");
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
        if (!res || res->status != 200) {
          failures.fetch_add(1);
          continue;
        }
        latencies[static_cast<size_t>(c)].push_back(ms);
      }
    });
  }
  for (auto& t : clients) t.join();
  Figures f{mode, verb};
  f.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  f.requests = all.size();
  f.failures = failures.load();
  f.p50_ms = kubesched::util::PercentileOfSorted(all, 0.50);
  f.p99_ms = kubesched::util::PercentileOfSorted(all, 0.99);
  f.max_ms = all.empty() ? 0 : all.back();
  if (f.requests > 0) f.server_cpu_ms = (extender.CpuMs() - cpu_before) / static_cast<double>(f.requests);
  return f;
}

// The extender answers a far-too-large body and malformed ones with 400s, from concurrent
// clients, and then still serves: the statuses seen, or an error.
std::optional<std::string> Abuse(int port, const std::string& good) {
  std::atomic<size_t> wrong{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < g_clients; ++c) {
    clients.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", port);
      for (int i = 0; i < 50; ++i) {
        std::string body = good.substr(0, static_cast<size_t>((c * 50 + i) * 997) % good.size());
        auto res = client.Post("/filter", body, "application/json");
        if (!res || res->status != 400) wrong.fetch_add(1);
      }
    });
  }
  for (auto& t : clients) t.join();
  if (wrong.load() > 0) return fmt::format("{} malformed bodies were not answered with 400", wrong.load());
  httplib::Client client("127.0.0.1", port);
  auto res = client.Post("/filter", std::string(80 * 1024 * 1024, ' '), "application/json");
  // The server may close the connection before reading the whole body: an answer, if any, is 400.
  if (res && res->status != 400) return fmt::format("an oversized body was answered with {}", res->status);
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a(argv[i]);
    auto value = [&](std::string_view flag) { return kubesched::bench::IntFlag(a, flag); };
    if (auto v = value("--nodes=")) {
      g_nodes = *v;
    } else if (auto v = value("--clients=")) {
      g_clients = *v;
    } else if (auto v = value("--requests=")) {
      g_requests = *v;
    } else if (auto v = value("--seconds=")) {
      g_seconds = *v;
    } else if (auto v = value("--port=")) {
      g_port = *v;
    } else {
      std::fprintf(stderr, "usage: %s [--nodes=N] [--clients=N] [--requests=N] [--seconds=N] [--port=N]\n", argv[0]);
      return 2;
    }
  }
  if (g_nodes < 1 || g_clients < 1 || g_requests < 1 || g_seconds < 1) {
    std::fprintf(stderr, "error: every flag must be positive\n");
    return 2;
  }
  try {
    ExtenderProcess extender;
    const std::string objects = ObjectsBody();
    const std::string names = NamesBody();
    {
      // The view learns the nodes from one request with their objects.
      httplib::Client client("127.0.0.1", extender.port());
      client.set_read_timeout(60);
      auto res = client.Post("/filter", objects, "application/json");
      if (!res || res->status != 200) throw std::runtime_error("the first request failed");
    }
    std::vector<Figures> figures;
    for (const char* verb : {"filter", "prioritize"}) figures.push_back(Load(extender, "names", verb, names));
    for (const char* verb : {"filter", "prioritize"}) {
      figures.push_back(Load(extender, "objects", verb, objects));
    }
    const auto abuse = Abuse(extender.port(), names);
    const Figures after = Load(extender, "names (after abuse)", "filter", names);

    std::printf(
        "\nkubesched extender: %d nodes per request, %d concurrent clients, request body %zu KiB (names) / "
        "%zu KiB (objects)\n",
        g_nodes, g_clients, names.size() / 1024, objects.size() / 1024);
    std::printf("%-20s %-11s %9s %9s %10s %9s %9s %9s %14s\n", "mode", "verb", "requests", "failures", "req/s",
                "p50 ms", "p99 ms", "max ms", "server cpu ms");
    for (const Figures& f : figures) {
      std::printf("%-20s %-11s %9zu %9zu %10.1f %9.2f %9.2f %9.2f %14.2f\n", f.mode.c_str(), f.verb.c_str(), f.requests,
                  f.failures, static_cast<double>(f.requests) / f.seconds, f.p50_ms, f.p99_ms, f.max_ms,
                  f.server_cpu_ms);
    }
    std::printf("malformed and oversized bodies: %s\n", abuse ? abuse->c_str() : "all answered 400");
    std::printf("afterwards: %zu filter requests answered (%zu failed), extender %s\n", after.requests, after.failures,
                extender.Alive() ? "up" : "DOWN");
    return abuse || after.failures > 0 || !extender.Alive() ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
