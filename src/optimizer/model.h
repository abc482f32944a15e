#pragma once
// The placement model of one batch: pods grouped by identical scheduling-relevant spec, the nodes
// with their free capacity and symmetry classes, and the constraints that couple pods, kept as
// data that the heuristic, the exact formulation and the validation all read. Constraints that
// do not couple pods are not modelled: the profile's own Filter plugins decide them once per
// group and node class (PlacementInput::static_fit).

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "framework/node_info.h"
#include "framework/pod_info.h"

namespace kubesched::optimizer {

//! What a batch is placed into, and the hooks through which the profile's plugins speak.
struct PlacementInput {
  //! The batch, in queue order (higher priority first).
  std::vector<framework::PodInfoPtr> pods;
  //! Every node of the snapshot, in its order.
  std::span<const framework::NodeInfo* const> nodes;
  //! Whether `pod` may run on `node` as far as constraints that do not couple pods say: the
  //! profile's Filter plugins on the pod with its required pod affinity and DoNotSchedule spread
  //! constraints taken out (the model decides those). Called once per group; the function it
  //! returns is called once per node class: empty string when the node fits, else the reason.
  std::function<std::function<std::string(const framework::NodeInfo& node)>(const framework::PodInfo& pod)> static_fit;
  //! The profile's Score plugins' totals for `pod` on each of `nodes` (the third objective level,
  //! a tie-break). May be empty: then every node is equally preferred.
  std::function<std::vector<int64_t>(const framework::PodInfo& pod, std::span<const framework::NodeInfo* const> nodes)>
      scores;
  //! Whether a node counts for a spread constraint of `pod` under the constraint's
  //! nodeAffinityPolicy / nodeTaintsPolicy.
  std::function<bool(const framework::PodInfo& pod, const framework::NodeInfo& node, bool honor_affinity,
                     bool honor_taints)>
      spread_node_eligible;
  //! A namespace's labels (for namespaceSelector in affinity terms); nullptr when unknown.
  std::function<const api::Labels*(std::string_view ns)> namespace_labels;
  //! Requests already promised on a node to pods that are not in the batch (nominations and
  //! plans of earlier batches), subtracted from its free capacity.
  std::function<framework::Resource(const framework::NodeInfo& node)> reserved;
};

//! A pod (anti-)affinity or spread constraint is evaluated over the domains of a topology key.
struct TopologyKey {
  std::string name;
  std::vector<int32_t> domain_of_node;  // per model node; -1 when the node lacks the label
  int32_t num_domains = 0;
  bool per_node = false;  // every node with the label is its own domain (hostname-like)
};

//! One required pod (anti-)affinity term of one group.
struct Term {
  int32_t owner = 0;  // group
  int32_t key = 0;    // TopologyKey index
  bool anti = false;
  std::vector<uint8_t> matches_group;  // per group: its pods match the term
  std::vector<int32_t> existing;       // per domain: running pods that match
  int64_t existing_total = 0;
  std::string description;  // for messages, e.g. "app In [nerthus]"
};

//! One DoNotSchedule topology spread constraint of one group.
struct Spread {
  int32_t owner = 0;
  int32_t key = 0;
  int32_t max_skew = 1;
  int32_t min_domains = 1;
  bool self_match = false;
  std::vector<uint8_t> node_counts;      // per node: pods on it are counted (policies)
  std::vector<uint8_t> domain_eligible;  // per domain: holds a counted node
  int32_t num_eligible_domains = 0;
  std::vector<uint8_t> matches_group;  // per group
  std::vector<int32_t> existing;       // per domain: running pods that match on counted nodes
};

struct HostPort {
  std::string ip;  // "0.0.0.0" when unset
  std::string protocol;
  int32_t port = 0;
};

struct Group {
  std::vector<framework::PodInfoPtr> pods;  // batch order
  std::string name;                         // for messages: the owner workload or the first pod
  int32_t priority = 0;
  double weight = 1;                         // objective weight of one placed pod
  std::vector<int64_t> demand;               // per resource dimension
  std::vector<int32_t> affinity_terms;       // Term indices owned
  std::vector<int32_t> anti_terms;           // Term indices owned
  std::vector<int32_t> anti_terms_matching;  // anti Terms of any group that match this group's pods
  std::vector<int32_t> spreads;              // Spread indices owned
  std::vector<int32_t> spreads_matching;     // Spread indices whose selector matches this group
  std::vector<int32_t> terms_matching;       // Terms (affinity or anti) whose selector matches this group
  std::vector<HostPort> ports;
  bool matches_own_affinity = false;  // matches every one of its affinity terms
  int32_t count() const { return static_cast<int32_t>(pods.size()); }
};

//! A resource that pods request alongside cpu and memory in their own proportions, and that some
//! nodes offer (a GPU as an extended resource). Its free amount on a node is stranded when the
//! node lacks the cpu or memory that the batch's pods requesting it need per unit of it: no such
//! pod could use it any more. Packing other pods onto such a node's cpu is what fragments a GPU
//! cluster (the openb trace), so the objective counts stranded units before new nodes.
struct Accelerator {
  int32_t dim = 0;
  //! (base dimension, how much of it one unit of the accelerator needs alongside), from the
  //! batch's pods that request the accelerator, in total.
  std::vector<std::pair<int32_t, double>> base;
  //! The accelerator amount of the batch's average pod requesting it: stranding is counted in
  //! these units (how many such pods the stranded amount would have served).
  double unit = 1;
};

struct ModelNode {
  const framework::NodeInfo* info = nullptr;
  std::vector<int64_t> free;  // per resource dimension, clamped at 0
  bool in_use = false;        // runs a pod that is not a DaemonSet's
  int32_t node_class = 0;
};

struct BatchModel {
  std::vector<std::string> resources;  // dimension names ("cpu" in milli, "pods", ...)
  std::vector<ModelNode> nodes;
  std::vector<Group> groups;
  //! [group][node class]: empty when the profile's filters accept the group there, else why not.
  std::vector<std::vector<std::string>> static_reason;
  //! [group][node]: whether static_reason is empty (the hot check, kept dense).
  std::vector<std::vector<uint8_t>> fits;
  //! [group]: the groups whose host ports conflict with it (port_conflict's rows, sparse).
  std::vector<std::vector<int32_t>> port_conflicts_of;
  std::vector<TopologyKey> keys;
  std::vector<Term> terms;
  std::vector<Spread> spreads;
  //! [group][group]: pods of the two groups may not share a node (host ports).
  std::vector<std::vector<uint8_t>> port_conflict;
  std::vector<Accelerator> accelerators;
  //! Objective weights, lexicographic (PlaceBatch sets them): a placed pod of weight 1 is worth
  //! `placed_weight`, a stranded accelerator unit `strand_weight`, a newly used node 1.
  double placed_weight = 1;
  double strand_weight = 0;
  int32_t num_classes = 0;
  size_t num_pods = 0;
  //! The group of each input pod, in input (queue) order.
  std::vector<int32_t> pod_group;

  //! [group][node]: the profile's score of the node for the group, scaled to [0, 1] per group
  //! (1 for the best node); all 0 without a scores hook.
  std::vector<std::vector<double>> preference;

  bool Fits(int32_t g, int32_t n) const { return fits[g][n] != 0; }
  //! Why the profile's filters reject group g on node n ("" when they accept it).
  const std::string& StaticReason(int32_t g, int32_t n) const { return static_reason[g][nodes[n].node_class]; }
  //! The accelerator units stranded on a node with this much free (model dimensions).
  double Stranded(std::span<const int64_t> free) const;
};

//! Builds the model (the "grouping" stage: groups, classes, keys, terms, spreads).
BatchModel BuildModel(const PlacementInput& input);

//! The scheduling-relevant identity of a pod: pods with equal keys are interchangeable for every
//! Filter and for every constraint between pods.
bool SameSchedulingSpec(const api::Pod& a, const framework::PodInfo& ai, const api::Pod& b,
                        const framework::PodInfo& bi);

}  // namespace kubesched::optimizer
