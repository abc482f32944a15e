// Whole-run benchmark of `kubesched run` against `kubesched apiserver`, both as processes on
// loopback, as a real cluster's scheduler runs:
//
//   1. the API server starts, and 5,000 nodes are created (4 client threads);
//   2. `kubesched run` starts with client-side rate limits lifted in its configuration
//      (clientConnection.qps -1) and without leader election, and lists and watches the cluster;
//   3. once its caches have synced, 10,000 pods are created (4 client threads) while a watcher
//      on the API server notes when each pod is first seen bound.
//
// Reported: end-to-end pods/s (pods created / time from the first create to the last bind the
// watcher saw) and scheduling latency per pod (create request sent → bound pod seen by the
// watcher) at p50/p90/p99/max, as a user of the cluster would measure them.
//
//   cmake --build --preset release --target kubesched kubesched_run_bench
//   build/release/bench/kubesched_run_bench                        # ~1 minute
//   build/release/bench/kubesched_run_bench --nodes=500 --pods=1000   # a quick run
//   build/release/bench/kubesched_run_bench --rate=1000              # paced creation: latency

#include <fcntl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include <benchmark/benchmark.h>

#include "apiserver_client.h"
#include "util/percentile.h"

namespace {

using namespace kubesched::bench;
namespace fs = std::filesystem;

int g_nodes = 5000;
int g_pods = 10000;
int g_writers = 4;
int g_rate = 0;  // pods created per second in all (0: as fast as the writers go, a burst)

// `kubesched run` as a child process, its log in a file.
class SchedulerProcess {
 public:
  SchedulerProcess(int port, const fs::path& dir) : log_(dir / "run.log") {
    const fs::path config = dir / "config.yaml";
    std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                             "clientConnection:\n  qps: -1\nleaderElection:\n  leaderElect: false\n";
    const std::string master = fmt::format("http://127.0.0.1:{}", port);
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) dup2(fd, STDERR_FILENO);
      execl(KUBESCHED_BINARY, KUBESCHED_BINARY, "run", "--master", master.c_str(), "--config", config.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~SchedulerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
  }
  //! Waits until the scheduler logs that its caches synced; false after `timeout`.
  bool WaitForSync(std::chrono::seconds timeout) const {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      std::ifstream in(log_);
      std::stringstream text;
      text << in.rdbuf();
      if (text.str().find("Caches are synced") != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

 private:
  fs::path log_;
  pid_t pid_ = -1;
};

// Notes when each pod is first seen bound, from a watch on the API server.
class BindWatcher {
 public:
  BindWatcher(int port, std::string resource_version)
      : thread_([this, port, rv = std::move(resource_version)] { Run(port, rv); }) {}
  ~BindWatcher() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  size_t bound() const {
    std::lock_guard lock(mu_);
    return bound_at_.size();
  }
  std::unordered_map<std::string, Clock::time_point> Take() {
    std::lock_guard lock(mu_);
    return bound_at_;
  }

 private:
  void Run(int port, const std::string& rv) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(300, 0);
    std::string buffer;
    c.Get("/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=900&resourceVersion=" + rv,
          [&](const char* data, size_t n) {
            const auto now = Clock::now();
            buffer.append(data, n);
            size_t start = 0;
            for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
              See(std::string_view(buffer).substr(start, nl - start), now);
            }
            buffer.erase(0, start);
            return !stop_.load();
          });
  }
  void See(std::string_view line, Clock::time_point now) {
    json::Document doc;
    if (line.empty() || !json::Parse(line, doc)) return;
    const json::Value* obj = json::Find(doc, "object");
    const json::Value* spec = obj ? json::Find(*obj, "spec") : nullptr;
    const json::Value* meta = obj ? json::Find(*obj, "metadata") : nullptr;
    if (!spec || !meta || json::GetString(*spec, "nodeName").empty()) return;
    std::lock_guard lock(mu_);
    bound_at_.try_emplace(std::string(json::GetString(*meta, "name")), now);
  }

  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::unordered_map<std::string, Clock::time_point> bound_at_;  // guarded by mu_
  std::thread thread_;
};

struct Figures {
  double pods_per_second = 0;
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
  size_t bound = 0;
  double setup_seconds = 0, sync_seconds = 0;
};
std::optional<Figures> g_figures;

void BM_Run(benchmark::State& state) {
  for (auto _ : state) {
    const fs::path dir = fs::temp_directory_path() / fmt::format("kubesched-run-bench-{}", getpid());
    fs::create_directories(dir);
    ServerProcess server;
    const int port = server.port();
    Recorder rec;
    const auto setup0 = Clock::now();
    RunParallel(port, g_writers, g_nodes,
                [&](int i, httplib::Client& c) { Post(c, "/api/v1/nodes", NodeJson(i), "create node", rec); });
    const double setup_seconds = std::chrono::duration<double>(Clock::now() - setup0).count();

    const auto sync0 = Clock::now();
    SchedulerProcess sched(port, dir);
    if (!sched.WaitForSync(std::chrono::seconds(120))) {
      state.SkipWithError("kubesched run did not sync its caches");
      return;
    }
    const double sync_seconds = std::chrono::duration<double>(Clock::now() - sync0).count();

    auto c = NewClient(port);
    auto listed = c->Get("/api/v1/pods?limit=1");
    const std::string rv = listed ? ListResourceVersion(listed->body, nullptr) : "";
    BindWatcher watcher(port, rv);
    std::vector<Clock::time_point> created(static_cast<size_t>(g_pods));
    const auto t0 = Clock::now();
    RunParallel(port, g_writers, g_pods, [&](int i, httplib::Client& client) {
      if (g_rate > 0) {
        // Paced: pod i is due i/rate seconds after the start, so latency is the scheduler's,
        // not time spent queued behind a burst.
        std::this_thread::sleep_until(t0 + std::chrono::microseconds(int64_t{i} * 1'000'000 / g_rate));
      }
      created[static_cast<size_t>(i)] = Clock::now();
      Post(client, "/api/v1/namespaces/default/pods", PodJson(fmt::format("pod-{}", i)), "create pod", rec);
    });
    const auto deadline = Clock::now() + std::chrono::seconds(300);
    while (watcher.bound() < static_cast<size_t>(g_pods) && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    auto bound_at = watcher.Take();
    std::vector<double> latencies_ms;
    Clock::time_point last = t0;
    for (int i = 0; i < g_pods; ++i) {
      auto it = bound_at.find(fmt::format("pod-{}", i));
      if (it == bound_at.end()) continue;
      latencies_ms.push_back(
          std::chrono::duration<double, std::milli>(it->second - created[static_cast<size_t>(i)]).count());
      last = std::max(last, it->second);
    }
    const double seconds = std::chrono::duration<double>(last - t0).count();
    state.SetIterationTime(seconds);
    Figures f;
    f.bound = latencies_ms.size();
    f.pods_per_second = seconds > 0 ? static_cast<double>(f.bound) / seconds : 0;
    std::sort(latencies_ms.begin(), latencies_ms.end());
    f.p50 = kubesched::util::PercentileOfSorted(latencies_ms, 0.50);
    f.p90 = kubesched::util::PercentileOfSorted(latencies_ms, 0.90);
    f.p99 = kubesched::util::PercentileOfSorted(latencies_ms, 0.99);
    f.max = latencies_ms.empty() ? 0 : latencies_ms.back();
    f.setup_seconds = setup_seconds;
    f.sync_seconds = sync_seconds;
    state.counters["pods_per_s"] = f.pods_per_second;
    state.counters["p50_ms"] = f.p50;
    state.counters["p99_ms"] = f.p99;
    state.counters["bound"] = static_cast<double>(f.bound);
    g_figures = f;
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    std::string_view a(argv[i]);
    auto value = [&](std::string_view flag) { return IntFlag(a, flag); };
    if (auto v = value("--nodes=")) {
      g_nodes = *v;
    } else if (auto v = value("--pods=")) {
      g_pods = *v;
    } else if (auto v = value("--writers=")) {
      g_writers = *v;
    } else if (auto v = value("--rate=")) {
      g_rate = *v;
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (g_nodes < 1 || g_pods < 1 || g_writers < 1 || g_rate < 0) {
    std::fprintf(stderr, "error: --nodes, --pods and --writers must be positive, --rate not negative\n");
    return 2;
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  benchmark::RegisterBenchmark("BM_Run", BM_Run)->UseManualTime()->Iterations(1)->Unit(benchmark::kSecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (g_figures) {
    const Figures& f = *g_figures;
    std::printf("\n%d nodes (created in %.1f s), scheduler synced in %.2f s\n", g_nodes, f.setup_seconds,
                f.sync_seconds);
    std::printf(
        "%zu of %d pods bound: %.0f pods/s end to end; latency p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, "
        "max %.1f ms\n",
        f.bound, g_pods, f.pods_per_second, f.p50, f.p90, f.p99, f.max);
  }
  return 0;
}
