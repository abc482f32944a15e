#pragma once
// Fluent builders for pods and nodes in tests, as upstream's st.MakePod() / st.MakeNode().
//   auto pod = MakePod().Name("p").Namespace("ns").Req({{"cpu", "500m"}}).Obj();
//   auto node = MakeNode().Name("n1").Capacity({{"cpu", "4"}, {"memory", "8Gi"}}).Obj();

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/types.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"

namespace kubesched::testing {

//! Parses a quantity that a test knows is valid (aborts otherwise).
api::Quantity Q(std::string_view text);
api::ResourceList Resources(std::vector<std::pair<std::string, std::string>> list);

class PodBuilder {
 public:
  PodBuilder();
  PodBuilder& Name(std::string name);
  PodBuilder& Namespace(std::string ns);
  PodBuilder& UID(std::string uid);
  PodBuilder& Label(std::string key, std::string value);
  PodBuilder& Labels(std::vector<std::pair<std::string, std::string>> labels);
  PodBuilder& Node(std::string node_name);
  PodBuilder& NominatedNodeName(std::string node_name);
  PodBuilder& SchedulerName(std::string name);
  PodBuilder& Priority(int32_t priority);
  PodBuilder& PreemptionPolicy(api::PreemptionPolicy policy);
  PodBuilder& CreationTimestamp(int64_t ns);
  PodBuilder& StartTime(int64_t ns);
  PodBuilder& Phase(api::PodPhase phase);
  //! Adds a container with these requests (and no limits).
  PodBuilder& Req(std::vector<std::pair<std::string, std::string>> requests);
  //! Adds an init container with these requests; sidecar=true sets restartPolicy Always.
  PodBuilder& InitReq(std::vector<std::pair<std::string, std::string>> requests, bool sidecar = false);
  PodBuilder& Overhead(std::vector<std::pair<std::string, std::string>> overhead);
  PodBuilder& Container(std::string image);
  //! Adds a container exposing hostPort (protocol TCP unless given).
  PodBuilder& HostPort(int32_t port, std::string protocol = "TCP", std::string host_ip = "");
  PodBuilder& NodeSelector(std::vector<std::pair<std::string, std::string>> selector);
  PodBuilder& NodeAffinityIn(std::string key, std::vector<std::string> values);
  PodBuilder& NodeAffinityNotIn(std::string key, std::vector<std::string> values);
  PodBuilder& RequiredNodeAffinity(api::NodeSelector selector);
  PodBuilder& PreferredNodeAffinity(int32_t weight, api::NodeSelectorTerm term);
  PodBuilder& Toleration(api::Toleration toleration);
  PodBuilder& SchedulingGates(std::vector<std::string> gates);
  //! spec.schedulingGroup.podGroupName.
  PodBuilder& PodGroup(std::string name);
  //! A volume of the claim `claim_name` (persistentVolumeClaim), named after it.
  PodBuilder& PVC(std::string claim_name, bool read_only = false);
  //! A generic ephemeral volume `volume_name` (its claim: "<pod name>-<volume name>").
  PodBuilder& EphemeralVolume(std::string volume_name);
  //! Any volume, as given.
  PodBuilder& Volume(api::Volume volume);
  //! Required pod affinity / anti-affinity: pods with label key in values, per topology key.
  PodBuilder& PodAffinityIn(std::string label_key, std::vector<std::string> values, std::string topology_key);
  PodBuilder& PodAntiAffinityIn(std::string label_key, std::vector<std::string> values, std::string topology_key);
  PodBuilder& PodAffinityExists(std::string label_key, std::string topology_key);
  PodBuilder& PodAntiAffinityExists(std::string label_key, std::string topology_key);
  PodBuilder& PreferredPodAffinityIn(int32_t weight, std::string label_key, std::vector<std::string> values,
                                     std::string topology_key);
  PodBuilder& PreferredPodAntiAffinityIn(int32_t weight, std::string label_key, std::vector<std::string> values,
                                         std::string topology_key);
  PodBuilder& SpreadConstraint(int32_t max_skew, std::string topology_key, api::UnsatisfiableConstraintAction action,
                               api::LabelSelector selector, std::optional<int32_t> min_domains = std::nullopt);
  PodBuilder& OwnerReference(std::string kind, std::string name, std::string uid = "");
  //! Direct access for anything the builder does not cover.
  api::Pod& Mutable() { return *pod_; }

  std::shared_ptr<api::Pod> Obj() const;
  framework::PodInfoPtr Info() const;

 private:
  std::shared_ptr<api::Pod> pod_;
};

class NodeBuilder {
 public:
  NodeBuilder();
  NodeBuilder& Name(std::string name);  // also sets kubernetes.io/hostname
  NodeBuilder& Label(std::string key, std::string value);
  //! Sets capacity and allocatable; "pods" defaults to 110 when not given.
  NodeBuilder& Capacity(std::vector<std::pair<std::string, std::string>> resources);
  NodeBuilder& Allocatable(std::vector<std::pair<std::string, std::string>> resources);
  NodeBuilder& Taint(std::string key, std::string value, api::TaintEffect effect);
  NodeBuilder& Unschedulable(bool unschedulable = true);
  NodeBuilder& Image(std::string name, int64_t size_bytes);
  //! status.declaredFeatures, kept sorted and without repeats as decoding keeps them.
  NodeBuilder& DeclaredFeatures(std::vector<std::string> features);
  api::Node& Mutable() { return *node_; }

  std::shared_ptr<api::Node> Obj() const;

 private:
  std::shared_ptr<api::Node> node_;
};

inline PodBuilder MakePod() { return PodBuilder(); }
inline NodeBuilder MakeNode() { return NodeBuilder(); }

//! A NodeInfo for `node` holding `pods`.
std::unique_ptr<framework::NodeInfo> MakeNodeInfo(std::shared_ptr<const api::Node> node,
                                                  const std::vector<std::shared_ptr<api::Pod>>& pods = {});

//! NodeInfos built with MakeNodeInfo, owned, and listed in the order added (a snapshot's node
//! list, as the optimizer's PlacementInput takes it).
struct NodeInfoList {
  std::vector<std::unique_ptr<framework::NodeInfo>> owned;
  std::vector<const framework::NodeInfo*> list;
  void Add(std::shared_ptr<const api::Node> node, const std::vector<std::shared_ptr<api::Pod>>& pods = {}) {
    owned.push_back(MakeNodeInfo(std::move(node), pods));
    list.push_back(owned.back().get());
  }
};

//! The pod named `name` among `pods`, or nullptr.
const api::Pod* FindPod(const std::vector<std::shared_ptr<const api::Pod>>& pods, const std::string& name);

//! The message of the pod's PodScheduled=False condition (its FailedScheduling message), or "".
std::string UnschedulableMessage(const api::Pod& pod);

}  // namespace kubesched::testing
