#include "framework/runtime/waiting_pods.h"
#include "util/duration.h"

#include <fmt/format.h>

namespace kubesched::framework::runtime {

WaitingPodImpl::WaitingPodImpl(PodInfoPtr pod, std::map<std::string_view, int64_t> deadlines, OnDone on_done)
    : pod_(std::move(pod)), pending_(std::move(deadlines)), on_done_(std::move(on_done)) {}

std::vector<std::string> WaitingPodImpl::GetPendingPlugins() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, deadline] : pending_) out.emplace_back(name);
  return out;
}

void WaitingPodImpl::Complete(Status status) {
  OnDone callback;
  {
    std::lock_guard lock(mu_);
    if (done_) return;
    done_ = true;
    callback = std::move(on_done_);
  }
  if (callback) callback(std::move(status));
}

void WaitingPodImpl::Allow(std::string_view plugin) {
  bool all_allowed = false;
  {
    std::lock_guard lock(mu_);
    if (done_) return;
    auto it = pending_.find(plugin);
    if (it != pending_.end()) pending_.erase(it);
    all_allowed = pending_.empty();
  }
  if (all_allowed) Complete(Status::Success());
}

void WaitingPodImpl::Reject(std::string_view plugin, std::string message) {
  Status s = Status::Unschedulable(std::move(message));
  s.WithPlugin(plugin);
  Complete(std::move(s));
}

void WaitingPodImpl::RejectPending(std::string message) {
  std::string_view plugin;
  {
    std::lock_guard lock(mu_);
    if (done_ || pending_.empty()) return;
    plugin = pending_.begin()->first;
  }
  Reject(plugin, std::move(message));
}

bool WaitingPodImpl::ExpireIfDue(int64_t now_ns, int64_t started_ns) {
  std::string_view plugin;
  int64_t deadline = 0;
  {
    std::lock_guard lock(mu_);
    if (done_) return false;
    for (const auto& [name, d] : pending_) {
      if (d <= now_ns) {
        plugin = name;
        deadline = d;
        break;
      }
    }
  }
  if (plugin.empty()) return false;
  // Upstream's wording, with the wait given as a Go duration string ("1m30s", "500ms").
  Status s = Status::Unschedulable(fmt::format("rejected due to timeout after waiting {} at plugin {}",
                                               util::FormatDuration(deadline - started_ns), plugin));
  s.WithPlugin(plugin);
  Complete(std::move(s));
  return true;
}

std::optional<int64_t> WaitingPodImpl::NextDeadline() const {
  std::lock_guard lock(mu_);
  if (done_) return std::nullopt;
  std::optional<int64_t> best;
  for (const auto& [name, d] : pending_) {
    if (!best || d < *best) best = d;
  }
  return best;
}

bool WaitingPodImpl::done() const {
  std::lock_guard lock(mu_);
  return done_;
}

void WaitingPodsMap::Add(std::shared_ptr<WaitingPodImpl> pod, int64_t started_ns) {
  std::lock_guard lock(mu_);
  std::string uid = pod->pod().metadata.uid;
  pods_[uid] = Entry{std::move(pod), started_ns};
}

void WaitingPodsMap::Remove(const std::string& uid) {
  std::lock_guard lock(mu_);
  pods_.erase(uid);
}

std::shared_ptr<WaitingPodImpl> WaitingPodsMap::Get(std::string_view uid) const {
  std::lock_guard lock(mu_);
  auto it = pods_.find(std::string(uid));
  return it != pods_.end() ? it->second.pod : nullptr;
}

void WaitingPodsMap::Iterate(const std::function<void(WaitingPod&)>& fn) const {
  std::vector<std::shared_ptr<WaitingPodImpl>> pods;
  {
    std::lock_guard lock(mu_);
    for (const auto& [uid, e] : pods_) pods.push_back(e.pod);
  }
  for (auto& p : pods) fn(*p);
}

void WaitingPodsMap::ExpireDue(int64_t now_ns) {
  std::vector<Entry> entries;
  {
    std::lock_guard lock(mu_);
    for (const auto& [uid, e] : pods_) entries.push_back(e);
  }
  for (auto& e : entries) e.pod->ExpireIfDue(now_ns, e.started_ns);
}

std::optional<int64_t> WaitingPodsMap::NextDeadline() const {
  std::lock_guard lock(mu_);
  std::optional<int64_t> best;
  for (const auto& [uid, e] : pods_) {
    auto d = e.pod->NextDeadline();
    if (d && (!best || *d < *best)) best = d;
  }
  return best;
}

size_t WaitingPodsMap::size() const {
  std::lock_guard lock(mu_);
  return pods_.size();
}

}  // namespace kubesched::framework::runtime
