#include "cache/pod_group_index.h"

#include <algorithm>

namespace kubesched::cache {

std::string PodGroupIndex::KeyOf(std::string_view namespace_, std::string_view name) {
  std::string key;
  key.reserve(namespace_.size() + 1 + name.size());
  key.append(namespace_).append("/").append(name);
  return key;
}

void PodGroupIndex::Count(Entry& e, const Member& m, int sign) {
  const auto add = [sign](size_t& n) { n = sign > 0 ? n + 1 : n - 1; };
  add(e.counts.all);
  if (!m.pod->spec.node_name.empty()) {
    add(e.counts.assigned);
  } else if (m.assumed) {
    add(e.counts.assumed);
  }
}

void PodGroupIndex::EraseIfEmpty(const std::string& key) {
  auto it = groups_.find(key);
  if (it != groups_.end() && it->second.group == nullptr && it->second.members.empty()) groups_.erase(it);
}

void PodGroupIndex::SetGroup(std::shared_ptr<const api::PodGroup> group) {
  if (group->api != api_) return;
  std::lock_guard lock(mu_);
  groups_[KeyOf(group->metadata.namespace_, group->metadata.name)].group = std::move(group);
}

void PodGroupIndex::DeleteGroup(const api::PodGroup& group) {
  if (group.api != api_) return;
  std::lock_guard lock(mu_);
  const std::string key = KeyOf(group.metadata.namespace_, group.metadata.name);
  auto it = groups_.find(key);
  if (it == groups_.end()) return;
  it->second.group = nullptr;
  EraseIfEmpty(key);
}

void PodGroupIndex::RemoveMemberLocked(const std::string& key, const std::string& uid) {
  auto it = groups_.find(key);
  if (it == groups_.end()) return;
  auto m = it->second.members.find(uid);
  if (m == it->second.members.end()) return;
  Count(it->second, m->second, -1);
  it->second.members.erase(m);
  EraseIfEmpty(key);
}

void PodGroupIndex::SetPod(std::shared_ptr<const api::Pod> pod) {
  const std::string_view name = api::PodGroupOf(*pod, api_);
  std::lock_guard lock(mu_);
  const std::string key = name.empty() ? std::string() : KeyOf(pod->metadata.namespace_, name);
  if (auto was = group_of_.find(pod->metadata.uid); was != group_of_.end() && was->second != key) {
    // Its group label changed (or went): it leaves the old group.
    RemoveMemberLocked(was->second, pod->metadata.uid);
    group_of_.erase(was);
  }
  if (key.empty()) return;
  group_of_[pod->metadata.uid] = key;
  Entry& e = groups_[key];
  auto [it, inserted] = e.members.try_emplace(pod->metadata.uid);
  Member& m = it->second;
  if (inserted) {
    m.order = next_order_++;
  } else {
    Count(e, m, -1);
  }
  m.pod = std::move(pod);
  if (!m.pod->spec.node_name.empty()) m.assumed = false;  // bound: assigned from now on
  Count(e, m, +1);
}

void PodGroupIndex::DeletePod(const api::Pod& pod) {
  std::lock_guard lock(mu_);
  auto was = group_of_.find(pod.metadata.uid);
  if (was == group_of_.end()) return;
  RemoveMemberLocked(was->second, pod.metadata.uid);
  group_of_.erase(was);
}

std::shared_ptr<const api::PodGroup> PodGroupIndex::Group(std::string_view namespace_, std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = groups_.find(KeyOf(namespace_, name));
  return it == groups_.end() ? nullptr : it->second.group;
}

framework::PodGroupMembers PodGroupIndex::Members(std::string_view namespace_, std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = groups_.find(KeyOf(namespace_, name));
  return it == groups_.end() ? framework::PodGroupMembers{} : it->second.counts;
}

std::vector<std::shared_ptr<const api::Pod>> PodGroupIndex::UnscheduledMembers(std::string_view namespace_,
                                                                               std::string_view name) const {
  std::vector<const Member*> found;
  std::vector<std::shared_ptr<const api::Pod>> out;
  std::lock_guard lock(mu_);
  auto it = groups_.find(KeyOf(namespace_, name));
  if (it == groups_.end()) return out;
  for (const auto& [uid, m] : it->second.members) {
    if (m.pod->spec.node_name.empty() && !m.assumed) found.push_back(&m);
  }
  std::sort(found.begin(), found.end(), [](const Member* a, const Member* b) { return a->order < b->order; });
  out.reserve(found.size());
  for (const Member* m : found) out.push_back(m->pod);
  return out;
}

void PodGroupIndex::Assume(const api::Pod& pod) {
  const std::string_view name = api::PodGroupOf(pod, api_);
  if (name.empty()) return;
  std::lock_guard lock(mu_);
  auto it = groups_.find(KeyOf(pod.metadata.namespace_, name));
  if (it == groups_.end()) return;
  auto m = it->second.members.find(pod.metadata.uid);
  if (m == it->second.members.end() || m->second.assumed) return;
  Count(it->second, m->second, -1);
  m->second.assumed = true;
  Count(it->second, m->second, +1);
}

void PodGroupIndex::Forget(const api::Pod& pod) {
  const std::string_view name = api::PodGroupOf(pod, api_);
  if (name.empty()) return;
  std::lock_guard lock(mu_);
  auto it = groups_.find(KeyOf(pod.metadata.namespace_, name));
  if (it == groups_.end()) return;
  auto m = it->second.members.find(pod.metadata.uid);
  if (m == it->second.members.end() || !m->second.assumed) return;
  Count(it->second, m->second, -1);
  m->second.assumed = false;
  Count(it->second, m->second, +1);
}

}  // namespace kubesched::cache
