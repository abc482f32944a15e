#include "queue/nominator.h"

#include <algorithm>

namespace kubesched::queue {

std::string PodKey(const api::Pod& pod) {
  if (!pod.metadata.uid.empty()) return pod.metadata.uid;
  return pod.Key();
}

void Nominator::Add(framework::PodInfoPtr pod, const std::optional<std::string>& node_name, bool planned) {
  const api::Pod& p = pod->pod();
  const std::string key = PodKey(p);
  std::optional<std::string> plan;
  if (!node_name && p.status.nominated_node_name.empty() && planned_.contains(key)) {
    if (const std::string* n = NodeOf(key)) plan = *n;
  }
  Delete(p);
  const std::string node = node_name ? *node_name : plan ? *plan : p.status.nominated_node_name;
  if (node.empty() || !p.spec.node_name.empty()) return;
  if (planned || plan) planned_.insert(key);
  node_of_[key] = node;
  auto& list = pods_[node];
  for (const auto& existing : list) {
    if (PodKey(existing->pod()) == key) return;
  }
  list.push_back(std::move(pod));
}

void Nominator::Update(const api::Pod& old_pod, framework::PodInfoPtr new_pod) {
  std::optional<std::string> keep;
  if (old_pod.status.nominated_node_name.empty() && new_pod->pod().status.nominated_node_name.empty()) {
    if (const std::string* node = NodeOf(PodKey(old_pod))) keep = *node;
  }
  const bool planned = keep && planned_.contains(PodKey(old_pod));
  Delete(old_pod);
  Add(std::move(new_pod), keep, planned);
}

void Nominator::Delete(const api::Pod& pod) {
  const std::string key = PodKey(pod);
  if (!expectations_.empty()) std::erase_if(expectations_, [&](const auto& e) { return e.first == key; });
  auto it = node_of_.find(key);
  if (it == node_of_.end()) return;
  auto list_it = pods_.find(it->second);
  if (list_it != pods_.end()) {
    auto& list = list_it->second;
    auto pos = std::find_if(list.begin(), list.end(),
                            [&](const framework::PodInfoPtr& pi) { return PodKey(pi->pod()) == key; });
    if (pos != list.end()) list.erase(pos);
    if (list.empty()) pods_.erase(list_it);
  }
  node_of_.erase(it);
  planned_.erase(key);
}

void Nominator::Expect(framework::PodInfoPtr placeholder, const std::string& node_name,
                       std::function<bool(const framework::PodInfo&)> is_replacement) {
  const std::string key = PodKey(placeholder->pod());
  Add(placeholder, node_name, /*planned=*/true);
  expectations_.push_back({key, Expectation{std::move(placeholder), node_name, std::move(is_replacement), nullptr}});
}

bool Nominator::Claim(const framework::PodInfoPtr& pod) {
  if (expectations_.empty() || !pod->pod().spec.node_name.empty()) return false;
  const std::string key = PodKey(pod->pod());
  for (auto& [placeholder_key, e] : expectations_) {
    if (e.claimant && PodKey(e.claimant->pod()) == key) return true;  // claimed already (re-added)
  }
  for (auto& [placeholder_key, e] : expectations_) {
    if (e.claimant || !e.is_replacement(*pod)) continue;
    // The placeholder's hold passes to the pod; the expectation stays (claimed) until its plan
    // drops it, so that a second replacement does not claim it again.
    if (auto it = node_of_.find(placeholder_key); it != node_of_.end()) {
      auto list_it = pods_.find(it->second);
      if (list_it != pods_.end()) {
        std::erase_if(list_it->second,
                      [&](const framework::PodInfoPtr& pi) { return PodKey(pi->pod()) == placeholder_key; });
        if (list_it->second.empty()) pods_.erase(list_it);
      }
      node_of_.erase(it);
      planned_.erase(placeholder_key);
    }
    e.claimant = pod;
    Add(pod, e.node, /*planned=*/true);
    return true;
  }
  return false;
}

framework::PodInfoPtr Nominator::ClaimantOf(const std::string& placeholder_key) const {
  for (const auto& [key, e] : expectations_) {
    if (key == placeholder_key) return e.claimant;
  }
  return nullptr;
}

std::vector<framework::PodInfoPtr> Nominator::ForNode(const std::string& node_name) const {
  auto it = pods_.find(node_name);
  if (it == pods_.end()) return {};
  return it->second;
}

const std::string* Nominator::NodeOf(const std::string& key) const {
  auto it = node_of_.find(key);
  return it == node_of_.end() ? nullptr : &it->second;
}

}  // namespace kubesched::queue
