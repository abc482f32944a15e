#include "testing/fake_handle.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace kubesched::testing {
namespace {

const char kNotSupported[] = "not supported by FakeHandle";

}  // namespace

// ---------------------------------------------------------------------------------------------
// FakeSnapshot

FakeSnapshot::FakeSnapshot(const std::vector<std::shared_ptr<api::Node>>& nodes,
                           const std::vector<std::shared_ptr<api::Pod>>& pods) {
  Reset(nodes, pods);
}

void FakeSnapshot::Reset(const std::vector<std::shared_ptr<api::Node>>& nodes,
                         const std::vector<std::shared_ptr<api::Pod>>& pods) {
  node_infos_.clear();
  for (const auto& n : nodes) node_infos_.push_back(std::make_unique<framework::NodeInfo>(n));
  for (const auto& p : pods) {
    if (auto* info = MutableNodeInfo(p->spec.node_name)) info->AddPod(framework::PodInfo::Create(p));
  }
  RebuildLists();
}

void FakeSnapshot::AddNode(std::shared_ptr<const api::Node> node) {
  node_infos_.push_back(std::make_unique<framework::NodeInfo>(std::move(node)));
  RebuildLists();
}

bool FakeSnapshot::AddPod(std::shared_ptr<const api::Pod> pod) {
  auto* info = MutableNodeInfo(pod->spec.node_name);
  if (info == nullptr) return false;
  info->AddPod(framework::PodInfo::Create(std::move(pod)));
  RebuildLists();
  return true;
}

bool FakeSnapshot::RemovePod(const api::Pod& pod) {
  auto* info = MutableNodeInfo(pod.spec.node_name);
  if (info == nullptr || !info->RemovePod(pod)) return false;
  RebuildLists();
  return true;
}

framework::NodeInfo* FakeSnapshot::MutableNodeInfo(std::string_view node_name) {
  for (auto& info : node_infos_) {
    if (info->node() != nullptr && info->name() == node_name) return info.get();
  }
  return nullptr;
}

const framework::NodeInfo* FakeSnapshot::Get(std::string_view node_name) const {
  for (const auto& info : node_infos_) {
    if (info->node() != nullptr && info->name() == node_name) return info.get();
  }
  return nullptr;
}

void FakeSnapshot::RebuildLists() {
  domains_.Clear();
  all_.clear();
  with_affinity_.clear();
  with_required_anti_affinity_.clear();
  // Image states count the nodes holding each (normalized) image, cluster-wide.
  std::unordered_map<std::string, int> nodes_per_image;
  for (const auto& info : node_infos_) {
    std::unordered_set<std::string> seen;
    for (const auto& image : info->node()->status.images) {
      for (const auto& name : image.names) seen.insert(framework::NormalizedImageName(name));
    }
    for (const auto& name : seen) ++nodes_per_image[name];
  }
  for (const auto& info : node_infos_) {
    std::map<std::string, framework::ImageStateSummary> states;
    for (const auto& image : info->node()->status.images) {
      for (const auto& name : image.names) {
        std::string normalized = framework::NormalizedImageName(name);
        states[normalized] = {image.size_bytes, nodes_per_image[normalized]};
      }
    }
    info->set_image_states({states.begin(), states.end()});
    info->set_snapshot_index(static_cast<int32_t>(all_.size()));
    all_.push_back(info.get());
    if (!info->pods_with_affinity().empty()) with_affinity_.push_back(info.get());
    if (!info->pods_with_required_anti_affinity().empty()) with_required_anti_affinity_.push_back(info.get());
  }
}

// ---------------------------------------------------------------------------------------------
// FakeClusterClient

void FakeClusterClient::SetNamespaceLabels(std::string name, api::Labels labels) {
  std::lock_guard lock(mu_);
  namespaces_[std::move(name)] = std::move(labels);
}

void FakeClusterClient::AddPodDisruptionBudget(std::shared_ptr<const api::PodDisruptionBudget> pdb) {
  std::lock_guard lock(mu_);
  pdbs_.push_back(std::move(pdb));
}

void FakeClusterClient::SetBindResult(std::optional<framework::Status> status) {
  std::lock_guard lock(mu_);
  bind_result_ = std::move(status);
}

void FakeClusterClient::SetDeleteResult(std::optional<framework::Status> status) {
  std::lock_guard lock(mu_);
  delete_result_ = std::move(status);
}

std::vector<FakeClusterClient::BindRecord> FakeClusterClient::binds() const {
  std::lock_guard lock(mu_);
  return binds_;
}

std::vector<FakeClusterClient::DeletionRecord> FakeClusterClient::deletions() const {
  std::lock_guard lock(mu_);
  return deletions_;
}

std::vector<FakeClusterClient::NominationRecord> FakeClusterClient::nominations() const {
  std::lock_guard lock(mu_);
  return nominations_;
}

std::vector<FakeClusterClient::ConditionRecord> FakeClusterClient::conditions() const {
  std::lock_guard lock(mu_);
  return conditions_;
}

int FakeClusterClient::namespace_lookups() const {
  std::lock_guard lock(mu_);
  return namespace_lookups_;
}

framework::Status FakeClusterClient::Bind(const api::Pod& pod, const std::string& node_name) {
  std::lock_guard lock(mu_);
  if (bind_result_) return *bind_result_;
  binds_.push_back({pod.Key(), node_name});
  return framework::Status::Success();
}

framework::Status FakeClusterClient::DeletePod(const api::Pod& pod, std::string_view reason) {
  std::lock_guard lock(mu_);
  if (delete_result_) return *delete_result_;
  deletions_.push_back({pod.Key(), std::string(reason)});
  return framework::Status::Success();
}

framework::Status FakeClusterClient::SetNominatedNodeName(const api::Pod& pod, const std::string& node_name) {
  std::lock_guard lock(mu_);
  nominations_.push_back({pod.Key(), node_name});
  return framework::Status::Success();
}

framework::Status FakeClusterClient::SetPodScheduledCondition(const api::Pod& pod, const api::PodCondition& condition) {
  std::lock_guard lock(mu_);
  conditions_.push_back({pod.Key(), condition});
  return framework::Status::Success();
}

std::optional<api::Labels> FakeClusterClient::NamespaceLabels(std::string_view name) const {
  std::lock_guard lock(mu_);
  ++namespace_lookups_;
  auto it = namespaces_.find(name);
  if (it == namespaces_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::shared_ptr<const api::PodDisruptionBudget>> FakeClusterClient::ListPodDisruptionBudgets() const {
  std::lock_guard lock(mu_);
  return pdbs_;
}

// ---------------------------------------------------------------------------------------------
// FakeWaitingPod

FakeWaitingPod::FakeWaitingPod(std::shared_ptr<const api::Pod> pod, std::vector<std::string> pending_plugins)
    : pod_(std::move(pod)), pending_(std::move(pending_plugins)) {}

std::vector<std::string> FakeWaitingPod::GetPendingPlugins() const {
  std::lock_guard lock(mu_);
  return pending_;
}

void FakeWaitingPod::Allow(std::string_view plugin) {
  std::lock_guard lock(mu_);
  std::erase_if(pending_, [&](const std::string& p) { return p == plugin; });
}

void FakeWaitingPod::Reject(std::string_view plugin, std::string message) {
  std::lock_guard lock(mu_);
  rejected_ = true;
  reject_message_ = std::move(message);
}

bool FakeWaitingPod::allowed() const {
  std::lock_guard lock(mu_);
  return pending_.empty() && !rejected_;
}

bool FakeWaitingPod::rejected() const {
  std::lock_guard lock(mu_);
  return rejected_;
}

std::string FakeWaitingPod::reject_message() const {
  std::lock_guard lock(mu_);
  return reject_message_;
}

// ---------------------------------------------------------------------------------------------
// FakePodNominator

void FakePodNominator::AddNominatedPod(framework::PodInfoPtr pod, const std::string& node_name) {
  DeleteNominatedPodIfExists(pod->pod());
  std::lock_guard lock(mu_);
  by_node_[node_name].push_back(std::move(pod));
}

void FakePodNominator::DeleteNominatedPodIfExists(const api::Pod& pod) {
  std::lock_guard lock(mu_);
  for (auto it = by_node_.begin(); it != by_node_.end();) {
    std::erase_if(it->second,
                  [&](const framework::PodInfoPtr& p) { return p->pod().metadata.uid == pod.metadata.uid; });
    it = it->second.empty() ? by_node_.erase(it) : std::next(it);
  }
}

std::vector<framework::PodInfoPtr> FakePodNominator::NominatedPodsForNode(const std::string& node_name) const {
  std::lock_guard lock(mu_);
  auto it = by_node_.find(node_name);
  return it == by_node_.end() ? std::vector<framework::PodInfoPtr>{} : it->second;
}

// ---------------------------------------------------------------------------------------------
// FakeHandle

FakeHandle::FakeHandle() = default;

FakeHandle::FakeHandle(const std::vector<std::shared_ptr<api::Node>>& nodes,
                       const std::vector<std::shared_ptr<api::Pod>>& pods)
    : snapshot_(nodes, pods) {}

std::shared_ptr<FakeWaitingPod> FakeHandle::AddWaitingPod(std::shared_ptr<const api::Pod> pod,
                                                          std::vector<std::string> pending_plugins) {
  auto waiting = std::make_shared<FakeWaitingPod>(std::move(pod), std::move(pending_plugins));
  std::lock_guard lock(waiting_mu_);
  waiting_.push_back(waiting);
  return waiting;
}

std::pair<framework::PreFilterResult, framework::Status> FakeHandle::RunPreFilterPlugins(
    framework::CycleState& state, const framework::PodInfo& pod) {
  if (!run_pre_filter_plugins) return {framework::PreFilterResult{}, framework::Status::Error(kNotSupported)};
  return run_pre_filter_plugins(state, pod);
}

framework::Status FakeHandle::RunPreFilterExtensionAddPod(framework::CycleState& state,
                                                          const framework::PodInfo& pod_to_schedule,
                                                          const framework::PodInfo& pod_to_add,
                                                          const framework::NodeInfo& node_info) {
  if (!run_pre_filter_extension_add_pod) return framework::Status::Error(kNotSupported);
  return run_pre_filter_extension_add_pod(state, pod_to_schedule, pod_to_add, node_info);
}

framework::Status FakeHandle::RunPreFilterExtensionRemovePod(framework::CycleState& state,
                                                             const framework::PodInfo& pod_to_schedule,
                                                             const framework::PodInfo& pod_to_remove,
                                                             const framework::NodeInfo& node_info) {
  if (!run_pre_filter_extension_remove_pod) return framework::Status::Error(kNotSupported);
  return run_pre_filter_extension_remove_pod(state, pod_to_schedule, pod_to_remove, node_info);
}

framework::Status FakeHandle::RunFilterPlugins(const framework::CycleState& state, const framework::PodInfo& pod,
                                               const framework::NodeInfo& node_info) {
  if (!run_filter_plugins) return framework::Status::Error(kNotSupported);
  return run_filter_plugins(state, pod, node_info);
}

framework::Status FakeHandle::RunFilterPluginsWithNominatedPods(framework::CycleState& state,
                                                                const framework::PodInfo& pod,
                                                                const framework::NodeInfo& node_info) {
  if (!run_filter_plugins_with_nominated_pods) return framework::Status::Error(kNotSupported);
  return run_filter_plugins_with_nominated_pods(state, pod, node_info);
}

void FakeHandle::IterateOverWaitingPods(const std::function<void(framework::WaitingPod&)>& fn) {
  std::vector<std::shared_ptr<FakeWaitingPod>> copy;
  {
    std::lock_guard lock(waiting_mu_);
    copy = waiting_;
  }
  for (auto& w : copy) fn(*w);
}

std::shared_ptr<framework::WaitingPod> FakeHandle::GetWaitingPod(std::string_view uid) {
  std::lock_guard lock(waiting_mu_);
  for (auto& w : waiting_) {
    if (w->pod().metadata.uid == uid) return w;
  }
  return nullptr;
}

bool FakeHandle::RejectWaitingPod(std::string_view uid) {
  std::shared_ptr<FakeWaitingPod> found;
  {
    std::lock_guard lock(waiting_mu_);
    auto it =
        std::find_if(waiting_.begin(), waiting_.end(), [&](const auto& w) { return w->pod().metadata.uid == uid; });
    if (it == waiting_.end()) return false;
    found = *it;
    waiting_.erase(it);
  }
  found->Reject("", "removed");
  return true;
}

}  // namespace kubesched::testing
