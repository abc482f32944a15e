#include "framework/node_info.h"

#include <algorithm>
#include <atomic>

namespace kubesched::framework {
namespace {

// Generations are global and increasing, so a snapshot can tell which nodes changed since it was
// last taken (as upstream's nextGeneration).
std::atomic<int64_t> g_generation{0};

const std::string kEmpty;

bool IsWildcardIP(std::string_view ip) { return ip.empty() || ip == "0.0.0.0"; }

template <typename F>
void ForEachHostPort(const api::Pod& pod, F&& f) {
  for (const auto& c : pod.spec.containers) {
    for (const auto& p : c.ports) {
      if (p.host_port > 0) f(p.host_ip, p.protocol, p.host_port);
    }
  }
  // Restartable init containers keep their ports for the pod's life.
  for (const auto& c : pod.spec.init_containers) {
    if (!c.restart_policy || *c.restart_policy != "Always") continue;
    for (const auto& p : c.ports) {
      if (p.host_port > 0) f(p.host_ip, p.protocol, p.host_port);
    }
  }
}

}  // namespace

void HostPortInfo::Add(std::string_view ip, std::string_view protocol, int32_t port) {
  std::string_view norm_ip = IsWildcardIP(ip) ? "0.0.0.0" : ip;
  std::string_view norm_proto = protocol.empty() ? "TCP" : protocol;
  for (auto& e : entries_) {
    if (e.port == port && e.ip == norm_ip && e.protocol == norm_proto) {
      ++e.count;
      return;
    }
  }
  entries_.push_back({std::string(norm_ip), std::string(norm_proto), port, 1});
}

void HostPortInfo::Remove(std::string_view ip, std::string_view protocol, int32_t port) {
  std::string_view norm_ip = IsWildcardIP(ip) ? "0.0.0.0" : ip;
  std::string_view norm_proto = protocol.empty() ? "TCP" : protocol;
  for (size_t i = 0; i < entries_.size(); ++i) {
    auto& e = entries_[i];
    if (e.port == port && e.ip == norm_ip && e.protocol == norm_proto) {
      if (--e.count == 0) entries_.erase(entries_.begin() + static_cast<long>(i));
      return;
    }
  }
}

bool HostPortInfo::CheckConflict(std::string_view ip, std::string_view protocol, int32_t port) const {
  if (port <= 0) return false;
  std::string_view norm_proto = protocol.empty() ? "TCP" : protocol;
  bool wildcard = IsWildcardIP(ip);
  for (const auto& e : entries_) {
    if (e.port != port || e.protocol != norm_proto) continue;
    // 0.0.0.0 conflicts with every ip, and every ip conflicts with 0.0.0.0.
    if (wildcard || e.ip == "0.0.0.0" || e.ip == ip) return true;
  }
  return false;
}

const std::string& NodeInfo::name() const { return node_ ? node_->metadata.name : kEmpty; }

void NodeInfo::Touch() { generation_ = g_generation.fetch_add(1, std::memory_order_relaxed) + 1; }

void NodeInfo::SetNode(std::shared_ptr<const api::Node> node) {
  node_ = std::move(node);
  allocatable_ = node_ ? Resource::FromList(node_->status.allocatable) : Resource{};
  Touch();
}

void NodeInfo::AddPod(PodInfoPtr pod) {
  const PodInfo& info = *pod;
  requested_.Add(info.requests);
  non_zero_milli_cpu_ += info.non_zero_milli_cpu;
  non_zero_memory_ += info.non_zero_memory;
  ForEachHostPort(info.pod(), [&](const std::string& ip, const std::string& proto, int32_t port) {
    used_ports_.Add(ip, proto, port);
  });
  if (info.HasAffinity()) pods_with_affinity_.push_back(pod);
  if (info.HasRequiredAntiAffinity()) pods_with_required_anti_affinity_.push_back(pod);
  pods_.push_back(std::move(pod));
  Touch();
}

bool NodeInfo::RemovePod(const api::Pod& pod) {
  const std::string& uid = pod.metadata.uid;
  auto match = [&](const PodInfoPtr& p) { return p->pod().metadata.uid == uid; };
  auto erase_from = [&](std::vector<PodInfoPtr>& v) {
    auto it = std::find_if(v.begin(), v.end(), match);
    if (it != v.end()) {
      // Order within a node does not matter: swap with the last for O(1) removal.
      std::iter_swap(it, v.end() - 1);
      v.pop_back();
    }
  };
  auto it = std::find_if(pods_.begin(), pods_.end(), match);
  if (it == pods_.end()) return false;
  PodInfoPtr removed = *it;
  erase_from(pods_with_affinity_);
  erase_from(pods_with_required_anti_affinity_);
  std::iter_swap(it, pods_.end() - 1);
  pods_.pop_back();
  requested_.Sub(removed->requests);
  non_zero_milli_cpu_ -= removed->non_zero_milli_cpu;
  non_zero_memory_ -= removed->non_zero_memory;
  ForEachHostPort(removed->pod(), [&](const std::string& ip, const std::string& proto, int32_t port) {
    used_ports_.Remove(ip, proto, port);
  });
  Touch();
  return true;
}

const ImageStateSummary* NodeInfo::FindImage(std::string_view normalized_name) const {
  auto it = std::lower_bound(image_states_.begin(), image_states_.end(), normalized_name,
                             [](const auto& e, std::string_view n) { return e.first < n; });
  return (it != image_states_.end() && it->first == normalized_name) ? &it->second : nullptr;
}

std::string NormalizedImageName(std::string_view name) {
  // A tag follows the last ':' after the last '/'; a digest follows '@'.
  auto slash = name.rfind('/');
  auto colon = name.rfind(':');
  bool has_tag = colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash);
  bool has_digest = name.find('@') != std::string_view::npos;
  std::string out(name);
  if (!has_tag && !has_digest) out += ":latest";
  return out;
}

}  // namespace kubesched::framework
