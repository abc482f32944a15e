// Whole-run load benchmark of `kubesched apiserver`: the API test bed as kubectl, informers and
// schedulers use it, measured from separate client threads over loopback HTTP.
//
//   1. setup: create 5,000 nodes and 10,000 pending pods (POST, 4 client threads);
//   2. LIST: GET every node and every pod (20 times each, one after the other);
//   3. load: 10 watchers stream /api/v1/pods from the resourceVersion after setup while 4 client
//      threads create 10,000 more pods and bind each one as soon as it exists (POST
//      pods/binding), as a scheduler would;
//   4. watch lag: how long after the last write every watcher has seen every pod bound.
//
// Reported per operation: requests, requests per second over the phase's wall time, and latency
// p50/p99 (ms) measured at the client; the watchers' events delivered and the catch-up time.
// The server runs as its own process (`kubesched apiserver --listen 127.0.0.1:0`) so the figures
// include encoding, HTTP and the kernel's loopback, as a real client sees them.
//
//   cmake --build --preset release --target kubesched kubesched_apiserver_bench
//   build/release/bench/kubesched_apiserver_bench                 # ~1 minute
//   build/release/bench/kubesched_apiserver_bench --nodes=500 --pods=1000   # a quick run
//
// One Google Benchmark iteration is the whole run (manual time = the load phase); the counters
// carry the figures and a table is printed at the end.

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <httplib.h>

#include "api/json.h"
#include "apiserver_client.h"
#include "util/percentile.h"

#ifndef KUBESCHED_BINARY
#error "KUBESCHED_BINARY must name the kubesched binary"
#endif

namespace {

using namespace kubesched::bench;

struct Sizes {
  int nodes = 5000;
  int setup_pods = 10000;
  int load_pods = 10000;
  int watchers = 10;
  int writers = 4;
  int lists = 20;
};
Sizes g_sizes;
// --state=FILE: the server keeps its objects there (every write in the journal, on disk, before
// it is acknowledged); the file and its journal are removed before the run.
std::string g_state;

// ---------------------------------------------------------------------------------------------
// Watchers

class PodWatcher {
 public:
  PodWatcher(int port, std::string resource_version, std::atomic<bool>& stop)
      : thread_([this, port, rv = std::move(resource_version), &stop] { Run(port, rv, stop); }) {}
  ~PodWatcher() {
    if (thread_.joinable()) thread_.join();
  }
  size_t events() const { return events_.load(); }
  size_t bound() const { return bound_.load(); }
  bool failed() const { return failed_.load(); }

 private:
  void Run(int port, const std::string& rv, std::atomic<bool>& stop) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(120, 0);
    std::string buffer;
    std::string path = "/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=600&resourceVersion=" + rv;
    auto res = c.Get(path, [&](const char* data, size_t n) {
      buffer.append(data, n);
      size_t start = 0;
      for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
        Count(std::string_view(buffer).substr(start, nl - start));
      }
      buffer.erase(0, start);
      return !stop.load();
    });
    if (!res && !stop.load()) failed_ = true;
  }

  void Count(std::string_view line) {
    json::Document doc;
    if (line.empty() || !json::Parse(line, doc)) return;
    const std::string_view type = json::GetString(doc, "type");
    if (type == "BOOKMARK") return;
    ++events_;
    const json::Value* obj = json::Find(doc, "object");
    const json::Value* spec = obj ? json::Find(*obj, "spec") : nullptr;
    const json::Value* meta = obj ? json::Find(*obj, "metadata") : nullptr;
    if (!spec || !meta || json::GetString(*spec, "nodeName").empty()) return;
    std::string name(json::GetString(*meta, "name"));
    std::lock_guard lock(mu_);
    if (seen_bound_.insert(std::move(name)).second) ++bound_;
  }

  std::atomic<size_t> events_{0};
  std::atomic<size_t> bound_{0};
  std::atomic<bool> failed_{false};
  std::mutex mu_;
  std::set<std::string> seen_bound_;  // guarded by mu_
  std::thread thread_;
};

// ---------------------------------------------------------------------------------------------

struct Row {
  std::string op;
  size_t requests = 0;
  size_t failures = 0;
  double rps = 0;
  double p50 = 0, p99 = 0;
  double mib_per_s = 0;
};
std::vector<Row> g_rows;
std::vector<std::string> g_notes;

void BM_ApiServer(benchmark::State& state) {
  const Sizes s = g_sizes;
  for (auto _ : state) {
    std::vector<std::string> args = {"apiserver", "--listen", "127.0.0.1:0"};
    if (!g_state.empty()) {
      std::filesystem::remove(g_state);
      std::filesystem::remove(g_state + ".journal");
      args.insert(args.end(), {"--state", g_state});
    }
    ServerProcess server(args);
    const int port = server.port();
    Recorder rec;

    // 1. Setup.
    rec.SetWall("create node (setup)", RunParallel(port, s.writers, s.nodes, [&](int i, httplib::Client& c) {
                  Post(c, "/api/v1/nodes", NodeJson(i), "create node (setup)", rec);
                }));
    rec.SetWall("create pod (setup)", RunParallel(port, s.writers, s.setup_pods, [&](int i, httplib::Client& c) {
                  Post(c, "/api/v1/namespaces/default/pods", PodJson(fmt::format("setup-{}", i)), "create pod (setup)",
                       rec);
                }));

    // 2. LIST.
    std::string rv;
    {
      auto c = NewClient(port);
      for (const auto& [op, path, want] :
           {std::tuple<std::string, std::string, int>{"list nodes", "/api/v1/nodes", s.nodes},
            {"list pods", "/api/v1/pods", s.setup_pods}}) {
        const auto t0 = Clock::now();
        for (int i = 0; i < s.lists; ++i) {
          const auto r0 = Clock::now();
          auto res = c->Get(path);
          const double ms = std::chrono::duration<double, std::milli>(Clock::now() - r0).count();
          size_t items = 0;
          const bool ok = res && res->status == 200;
          if (ok) rv = ListResourceVersion(res->body, &items);
          rec.Add(op, ms, ok && items == static_cast<size_t>(want), ok ? res->body.size() : 0);
        }
        rec.SetWall(op, std::chrono::duration<double>(Clock::now() - t0).count());
      }
    }

    // 3. Load, watched.
    std::atomic<bool> stop{false};
    std::vector<std::unique_ptr<PodWatcher>> watchers;
    for (int w = 0; w < s.watchers; ++w) watchers.push_back(std::make_unique<PodWatcher>(port, rv, stop));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the watches open
    const double load_seconds = RunParallel(port, s.writers, s.load_pods, [&](int i, httplib::Client& c) {
      const std::string name = fmt::format("load-{}", i);
      if (!Post(c, "/api/v1/namespaces/default/pods", PodJson(name), "create pod (load)", rec)) return;
      Post(c, "/api/v1/namespaces/default/pods/" + name + "/binding",
           BindingJson(name, fmt::format("node-{}", i % s.nodes)), "bind pod (load)", rec);
    });
    rec.SetWall("create pod (load)", load_seconds);
    rec.SetWall("bind pod (load)", load_seconds);
    const auto load_end = Clock::now();

    // 4. Watch lag: until every watcher has seen every load pod bound (or 60 s).
    auto caught_up = [&] {
      return std::all_of(watchers.begin(), watchers.end(),
                         [&](const auto& w) { return w->bound() >= static_cast<size_t>(s.load_pods) || w->failed(); });
    };
    while (!caught_up() && Clock::now() - load_end < std::chrono::seconds(60)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const double lag_ms = std::chrono::duration<double, std::milli>(Clock::now() - load_end).count();
    size_t events = 0, complete = 0, failed = 0;
    for (const auto& w : watchers) {
      events += w->events();
      complete += w->bound() >= static_cast<size_t>(s.load_pods);
      failed += w->failed();
    }
    stop = true;
    server.Stop();  // ends the watch streams
    watchers.clear();

    state.SetIterationTime(load_seconds);
    g_rows.clear();
    for (auto& [op, st] : rec.Take()) {
      std::sort(st.latencies_ms.begin(), st.latencies_ms.end());
      Row r;
      r.op = op;
      r.requests = st.latencies_ms.size();
      r.failures = st.failures;
      r.rps = st.wall_seconds > 0 ? static_cast<double>(r.requests) / st.wall_seconds : 0;
      r.p50 = kubesched::util::PercentileOfSorted(st.latencies_ms, 0.50);
      r.p99 = kubesched::util::PercentileOfSorted(st.latencies_ms, 0.99);
      r.mib_per_s = st.wall_seconds > 0 ? static_cast<double>(st.bytes) / st.wall_seconds / (1 << 20) : 0;
      g_rows.push_back(r);
      std::string key = op;
      std::replace(key.begin(), key.end(), ' ', '_');
      state.counters[key + "_rps"] = r.rps;
      state.counters[key + "_p99_ms"] = r.p99;
    }
    g_notes = {fmt::format("load phase: {} pods created and bound by {} client threads in {:.2f} s ({:.0f} writes/s)",
                           s.load_pods, s.writers, load_seconds, 2.0 * s.load_pods / load_seconds),
               fmt::format("watchers: {} of {} saw every pod bound ({} failed); {} events delivered, {:.0f} events/s; "
                           "last watcher caught up {:.0f} ms after the last write",
                           complete, s.watchers, failed, events, events / (load_seconds + lag_ms / 1000), lag_ms)};
    state.counters["watch_events"] = static_cast<double>(events);
    state.counters["watch_lag_ms"] = lag_ms;
    state.counters["watchers_complete"] = static_cast<double>(complete);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Our own flags first (--nodes=N --pods=N --watchers=N --writers=N --state=FILE), then Google Benchmark's.
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    std::string_view a(argv[i]);
    auto value = [&](std::string_view flag) { return IntFlag(a, flag); };
    if (auto v = value("--nodes=")) {
      g_sizes.nodes = *v;
    } else if (auto v = value("--pods=")) {
      g_sizes.setup_pods = g_sizes.load_pods = *v;
    } else if (auto v = value("--watchers=")) {
      g_sizes.watchers = *v;
    } else if (auto v = value("--writers=")) {
      g_sizes.writers = *v;
    } else if (a.starts_with("--state=")) {
      g_state = std::string(a.substr(8));
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (g_sizes.nodes < 1 || g_sizes.setup_pods < 1 || g_sizes.watchers < 0 || g_sizes.writers < 1) {
    std::fprintf(stderr, "error: --nodes, --pods and --writers must be positive, --watchers not negative\n");
    return 2;
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  benchmark::RegisterBenchmark("BM_ApiServer", BM_ApiServer)->UseManualTime()->Iterations(1)->Unit(benchmark::kSecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::printf("\n%-22s %9s %9s %10s %9s %9s %9s\n", "OPERATION", "REQUESTS", "FAILED", "REQ/S", "P50 MS", "P99 MS",
              "MIB/S");
  for (const auto& r : g_rows) {
    std::printf("%-22s %9zu %9zu %10.0f %9.2f %9.2f %9.1f\n", r.op.c_str(), r.requests, r.failures, r.rps, r.p50, r.p99,
                r.mib_per_s);
  }
  for (const auto& n : g_notes) std::printf("%s\n", n.c_str());
  return 0;
}
