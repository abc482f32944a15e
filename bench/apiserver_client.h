#pragma once
// What the whole-run benchmarks of kubesched's API test bed share: `kubesched apiserver` (or any
// kubesched command) as a child process, the objects they create, HTTP clients over loopback
// and per-operation latency records.

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <httplib.h>

#include "api/json.h"

#ifndef KUBESCHED_BINARY
#error "KUBESCHED_BINARY must name the kubesched binary"
#endif

namespace kubesched::bench {

using Clock = std::chrono::steady_clock;
namespace json = kubesched::api::json;

// ---------------------------------------------------------------------------------------------
// The server process

class ServerProcess {
 public:
  //! `kubesched <args...>`, which prints `<announce><url>` as its first line of output (`kubesched
  //! apiserver` by default; `kubesched extender` announces "Serving the scheduler extender on ").
  explicit ServerProcess(std::vector<std::string> args = {"apiserver", "--listen", "127.0.0.1:0"},
                         std::string announce = "listening on ") {
    int out[2];
    if (pipe(out) != 0) throw std::runtime_error("pipe failed");
    std::vector<char*> argv = {const_cast<char*>(KUBESCHED_BINARY)};
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      execv(KUBESCHED_BINARY, argv.data());
      _exit(127);
    }
    close(out[1]);
    std::string line;
    char c;
    while (read(out[0], &c, 1) == 1 && c != '\n') line.push_back(c);
    reader_fd_ = out[0];
    auto at = line.rfind(':');
    if (!line.starts_with(announce) || at == std::string::npos) {
      Stop();
      throw std::runtime_error("kubesched " + args.front() + " did not report its address (got \"" + line + "\")");
    }
    port_ = std::stoi(line.substr(at + 1));
  }
  ~ServerProcess() { Stop(); }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }

  void Stop() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
      pid_ = -1;
    }
    if (reader_fd_ >= 0) close(reader_fd_);
    reader_fd_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int reader_fd_ = -1;
  int port_ = 0;
};

//! The value of `--flag=N` when `arg` is that flag (the benchmarks' own flags).
inline std::optional<int> IntFlag(std::string_view arg, std::string_view flag) {
  if (!arg.starts_with(flag)) return std::nullopt;
  return std::atoi(std::string(arg.substr(flag.size())).c_str());
}

// ---------------------------------------------------------------------------------------------
// Objects

inline std::string NodeJson(int i) {
  return fmt::format(
      R"j({{"apiVersion":"v1","kind":"Node","metadata":{{"name":"node-{0}","labels":{{"kubernetes.io/hostname":"node-{0}",)j"
      R"j("topology.kubernetes.io/zone":"zone-{1}","node.kubernetes.io/instance-type":"n2-standard-32"}}}},)j"
      R"j("spec":{{"podCIDR":"10.{2}.{3}.0/24"}},)j"
      R"j("status":{{"capacity":{{"cpu":"32","memory":"128Gi","pods":"110","ephemeral-storage":"500Gi"}},)j"
      R"j("allocatable":{{"cpu":"31500m","memory":"125Gi","pods":"110","ephemeral-storage":"480Gi"}},)j"
      R"j("conditions":[{{"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status"}}],)j"
      R"j("addresses":[{{"type":"InternalIP","address":"10.0.{2}.{3}"}},{{"type":"Hostname","address":"node-{0}"}}],)j"
      R"j("nodeInfo":{{"kubeletVersion":"v1.32.0","osImage":"Debian GNU/Linux 12 (bookworm)","kernelVersion":"6.1.0",)j"
      R"j("containerRuntimeVersion":"containerd://1.7.0","architecture":"amd64","operatingSystem":"linux"}}}}}})j",
      i, i % 3, (i / 250) % 250, i % 250);
}

inline std::string PodJson(const std::string& name) {
  return fmt::format(
      R"j({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{0}","namespace":"default","labels":{{"app":"bench","tier":"web"}},)j"
      R"j("annotations":{{"bench.kubesched.io/run":"load"}}}},"spec":{{"containers":[{{"name":"app","image":"registry.k8s.io/pause:3.10",)j"
      R"j("env":[{{"name":"MODE","value":"bench"}}],"ports":[{{"containerPort":8080,"protocol":"TCP"}}],)j"
      R"j("resources":{{"requests":{{"cpu":"100m","memory":"500Mi"}},"limits":{{"memory":"500Mi"}}}},)j"
      R"j("readinessProbe":{{"httpGet":{{"path":"/healthz","port":8080}},"periodSeconds":5}}}}],)j"
      R"j("terminationGracePeriodSeconds":5,"tolerations":[{{"key":"example.com/bench","operator":"Exists","effect":"NoSchedule"}}]}}}})j",
      name);
}

inline std::string BindingJson(const std::string& pod, const std::string& node) {
  return fmt::format(
      R"j({{"apiVersion":"v1","kind":"Binding","metadata":{{"name":"{}","namespace":"default"}},"target":{{"apiVersion":"v1","kind":"Node","name":"{}"}}}})j",
      pod, node);
}

// ---------------------------------------------------------------------------------------------
// Measuring requests

struct OpStats {
  std::vector<double> latencies_ms;
  size_t failures = 0;
  double wall_seconds = 0;
  size_t bytes = 0;
};

class Recorder {
 public:
  void Add(const std::string& op, double ms, bool ok, size_t bytes = 0) {
    std::lock_guard lock(mu_);
    auto& s = ops_[op];
    s.latencies_ms.push_back(ms);
    if (!ok) ++s.failures;
    s.bytes += bytes;
  }
  void SetWall(const std::string& op, double seconds) {
    std::lock_guard lock(mu_);
    ops_[op].wall_seconds = seconds;
  }
  std::map<std::string, OpStats> Take() {
    std::lock_guard lock(mu_);
    return std::move(ops_);
  }

 private:
  std::mutex mu_;
  std::map<std::string, OpStats> ops_;
};

inline std::unique_ptr<httplib::Client> NewClient(int port) {
  auto c = std::make_unique<httplib::Client>("127.0.0.1", port);
  c->set_keep_alive(true);
  c->set_tcp_nodelay(true);
  c->set_read_timeout(60, 0);
  return c;
}

// POSTs `body` to `path`, recording the latency under `op`; whether the server answered 201.
inline bool Post(httplib::Client& c, const std::string& path, const std::string& body, const std::string& op,
                 Recorder& rec) {
  const auto t0 = Clock::now();
  auto res = c.Post(path, body, "application/json");
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  const bool ok = res && (res->status == 201 || res->status == 200);
  rec.Add(op, ms, ok);
  return ok;
}

// Runs `count` jobs over `threads` client threads; job(i, client) does the requests.
template <typename Job>
double RunParallel(int port, int threads, int count, Job job) {
  std::atomic<int> next{0};
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      auto c = NewClient(port);
      for (int i = next++; i < count; i = next++) job(i, *c);
    });
  }
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The resourceVersion of a list response.
inline std::string ListResourceVersion(const std::string& body, size_t* items) {
  json::Document doc;
  if (!json::Parse(body, doc)) return "";
  if (items) {
    const json::Value* list = json::Find(doc, "items");
    *items = list && list->IsArray() ? list->Size() : 0;
  }
  const json::Value* meta = json::Find(doc, "metadata");
  return meta ? std::string(json::GetString(*meta, "resourceVersion")) : "";
}

}  // namespace kubesched::bench
