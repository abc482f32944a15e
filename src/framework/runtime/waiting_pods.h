#pragma once
// Pods whose Permit returned Wait. A waiting pod completes exactly once: allowed by every plugin
// it waits on, rejected by one, or timed out (a timeout is a rejection). Completion hands the
// outcome to a callback, which continues (or aborts) the pod's binding cycle.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "framework/handle.h"

namespace kubesched::framework::runtime {

class WaitingPodImpl final : public WaitingPod {
 public:
  using OnDone = std::function<void(Status)>;
  //! deadlines: plugin name (the plugin's static Name()) → clock time at which waiting on it
  //! times out.
  WaitingPodImpl(PodInfoPtr pod, std::map<std::string_view, int64_t> deadlines, OnDone on_done);

  const api::Pod& pod() const override { return pod_->pod(); }
  std::vector<std::string> GetPendingPlugins() const override;
  void Allow(std::string_view plugin) override;
  void Reject(std::string_view plugin, std::string message) override;

  //! Rejects the pod on behalf of a plugin it still waits on (the scheduler shutting down). The
  //! status names that plugin through the pending entry's own view of its static Name(), which
  //! outlives the binding cycle that reads it.
  void RejectPending(std::string message);
  //! Rejects the pod if a deadline has passed. Returns true when it completed now.
  bool ExpireIfDue(int64_t now_ns, int64_t started_ns);
  std::optional<int64_t> NextDeadline() const;
  bool done() const;

 private:
  void Complete(Status status);

  PodInfoPtr pod_;
  mutable std::mutex mu_;
  std::map<std::string_view, int64_t> pending_;  // guarded by mu_
  bool done_ = false;                            // guarded by mu_
  OnDone on_done_;
};

//! All waiting pods of all profiles, by pod uid. Thread-safe.
class WaitingPodsMap {
 public:
  void Add(std::shared_ptr<WaitingPodImpl> pod, int64_t started_ns);
  void Remove(const std::string& uid);
  std::shared_ptr<WaitingPodImpl> Get(std::string_view uid) const;
  void Iterate(const std::function<void(WaitingPod&)>& fn) const;
  //! Times out every waiting pod whose deadline is at or before now.
  void ExpireDue(int64_t now_ns);
  std::optional<int64_t> NextDeadline() const;
  size_t size() const;

 private:
  struct Entry {
    std::shared_ptr<WaitingPodImpl> pod;
    int64_t started_ns;
  };
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> pods_;  // guarded by mu_
};

}  // namespace kubesched::framework::runtime
