#pragma once
// The preemption machinery every preemption plugin shares, as upstream's framework/preemption
// package: PodDisruptionBudget accounting, victim selection on one node, the dry run over
// candidate nodes, the choice between candidates, eligibility of a preemptor, and the way victims
// are evicted (a victim waiting at Permit is rejected, others deleted; lower-priority pods
// nominated to the node lose their nomination). DefaultPreemption and CrossNodePreemption both
// build on it, so a fix to how victims are chosen or evicted applies to both.

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "framework/extender.h"
#include "framework/handle.h"
#include "framework/interface.h"

namespace kubesched::framework::preemption {

inline constexpr std::string_view kNotEligibleNever = "not eligible due to preemptionPolicy=Never.";
inline constexpr std::string_view kNotEligibleTerminating =
    "not eligible due to a terminating pod on the nominated node.";
inline constexpr std::string_view kNoVictims = "No preemption victims found for incoming pod";
//! Upstream's words for a gang member, which preempts with its group (KEP-5710).
inline constexpr std::string_view kNotEligibleGroupMember = "not eligible due to workload aware preemption enabled";
inline constexpr std::string_view kNotHelpful = "Preemption is not helpful for scheduling";

//! A PodDisruptionBudget with the disruptions it currently allows (upstream reads
//! status.disruptionsAllowed, which kubesched derives from the snapshot: see ComputePdbBudgets).
struct PdbBudget {
  std::shared_ptr<const api::PodDisruptionBudget> pdb;
  int32_t disruptions_allowed = 0;
};

//! Derives each PDB's disruptionsAllowed as the disruption controller would, counting the
//! non-terminating pods of the snapshot that the PDB selects as healthy and taking the expected
//! count to be that number (kubesched has no controller scale): minAvailable N → healthy - N,
//! maxUnavailable M → M; percentages are scaled and rounded up; never negative.
std::vector<PdbBudget> ComputePdbBudgets(std::span<const std::shared_ptr<const api::PodDisruptionBudget>> pdbs,
                                         std::span<const NodeInfo* const> nodes);

//! Whether the PDB selects the pod (same namespace, non-empty selector that matches; a pod
//! without labels matches none).
bool PdbSelects(const api::PodDisruptionBudget& pdb, const api::Pod& pod);

//! Finds the PDBs that select a pod without matching every PDB's selector: PDBs are indexed by
//! namespace and one of their matchLabels pairs (those with only expressions by namespace), so a
//! lookup checks only the PDBs that can select the pod. Indices refer to the list it was built on.
class PdbIndex {
 public:
  explicit PdbIndex(std::span<const std::shared_ptr<const api::PodDisruptionBudget>> pdbs);
  explicit PdbIndex(std::span<const PdbBudget> budgets);
  //! The indices of the PDBs that select the pod, ascending, into `out` (cleared first).
  void Selecting(const api::Pod& pod, std::vector<int>& out) const;

 private:
  void Add(int index, const api::PodDisruptionBudget& pdb);
  std::vector<const api::PodDisruptionBudget*> pdbs_;
  std::unordered_map<std::string, std::vector<int>> by_label_;      // "ns\0key\0value"
  std::unordered_map<std::string, std::vector<int>> by_namespace_;  // no matchLabels
};

//! Splits pods (keeping their order) into those whose eviction would violate a PDB and the rest,
//! consuming each matching PDB's budget in order (upstream's filterPodsWithPDBViolation).
void FilterPodsWithPdbViolation(const std::vector<PodInfoPtr>& pods, std::span<const PdbBudget> pdbs,
                                std::vector<PodInfoPtr>& violating, std::vector<PodInfoPtr>& non_violating,
                                const PdbIndex* index = nullptr);

//! The pods to evict on one node, most important first (the extenders' type too).
using framework::NodeVictims;

struct Candidate {
  std::string node_name;
  NodeVictims victims;
};

//! Upstream's util.MoreImportantPod: higher priority, then earlier start time (a pod without a
//! start time counts as starting now_ns).
bool MoreImportantPod(const api::Pod& a, const api::Pod& b, int64_t now_ns);

//! Upstream's podTerminatingByPreemption: deleted, and marked DisruptionTarget by the scheduler.
bool TerminatingByPreemption(const api::Pod& pod);

//! Index of the candidate to preempt on, by upstream's ordered criteria: fewest PDB violations,
//! lowest highest-victim priority, smallest sum of priorities, fewest victims, latest earliest
//! start time among the highest-priority victims; ties go to the first. -1 when empty.
int PickOneNodeForPreemption(std::span<const Candidate> candidates, int64_t now_ns);

//! "0/N nodes are available: <sorted histogram>." as upstream's FitError.Error().
std::string FitErrorMessage(size_t num_all_nodes, const NodeToStatus& statuses);

class Evaluator {
 public:
  //! `plugin_name` names the plugin in the rejections of victims waiting at Permit.
  Evaluator(std::string_view plugin_name, Handle& handle) : plugin_name_(plugin_name), handle_(handle) {}

  //! Whether the pod may preempt others, with the reason when not: preemptionPolicy Never, or a
  //! pod on its nominated node is still terminating because of preemption (a lower-priority one,
  //! as upstream; any, when the nomination is a plan's, since a plan's evictions are made for it).
  std::pair<bool, std::string> PodEligibleToPreemptOthers(const api::Pod& pod,
                                                          const Status& nominated_node_status) const;

  //! The nodes a preemption may help: those Filter rejected as resolvable (Unschedulable).
  std::vector<const NodeInfo*> PotentialNodes(const NodeToStatus& filtered_statuses) const;

  //! The PDB budgets as the snapshot's pods leave them.
  std::vector<PdbBudget> PdbBudgets() const;

  //! The minimal set of lower-priority pods to evict from node_info (a copy this call mutates,
  //! with state a clone) so that pod fits. UnschedulableAndUnresolvable kNoVictims when there are
  //! no lower-priority pods; the Filter status when the pod does not fit even without them.
  Status SelectVictimsOnNode(CycleState& state, const PodInfo& pod, NodeInfo& node_info,
                             std::span<const PdbBudget> pdbs, NodeVictims& victims, const PdbIndex* index = nullptr);

  //! Dry-runs SelectVictimsOnNode over the potential nodes from offset until enough candidates
  //! are found; non-PDB-violating candidates come first. Records each failed node's status and
  //! the errors met.
  std::vector<Candidate> DryRunPreemption(CycleState& state, const PodInfo& pod,
                                          std::span<const NodeInfo* const> potential_nodes,
                                          std::span<const PdbBudget> pdbs, int32_t offset, int32_t num_candidates,
                                          NodeToStatus& node_statuses, std::vector<std::string>& errors);

  //! Evicts one victim of `preemptor` preempting on `node_name`: rejects it when it waits at
  //! Permit, else deletes it through the client (gracefully: it terminates on its node). With
  //! `destination` set the deletion is a move. Once done, records upstream's Preempted event on
  //! the victim (related: the preemptor).
  Status Evict(const api::Pod& victim, const api::Pod& preemptor, const std::string& node_name, std::string_view reason,
               const std::string& destination = {});
  //! Evict with the preemptor given as the Event's related object and note: a pod group's
  //! preemption (KEP-5710) names the PodGroup.
  Status Evict(const api::Pod& victim, const EventObjectReference& preemptor, std::string_view note,
               std::string_view reason, const std::string& destination = {});

  //! Lower-priority pods nominated to `node_name` may no longer fit there: their nominations are
  //! cleared so that they look for another place. Planned holds (PodNominator::IsPlanned) stay.
  void ClearLowerPriorityNominations(const std::string& node_name, int32_t priority);

  //! upstream's callExtenders: each interested extender with a preempt verb accepts, drops or
  //! changes the candidates in turn (an ignorable one that fails is skipped; one that leaves a node
  //! without victims drops it when ignorable, else fails). The candidates that remain, by node.
  std::expected<std::vector<Candidate>, Status> CallExtenders(const api::Pod& pod, std::vector<Candidate> candidates);

  //! Evicts the candidate's victims for the preemptor and clears lower nominations on its node.
  Status PrepareCandidate(const Candidate& candidate, const PodInfo& preemptor);

  Handle& handle() { return handle_; }

 private:
  //! The lowest priority among the node's pods (nullopt when it has none). Remembered per node
  //! of the snapshot for the node's generation: a dry run asks it of every potential node, and
  //! most nodes have not changed since the last preemption attempt.
  std::optional<int32_t> LowestPodPriority(const NodeInfo& node);

  std::string plugin_name_;
  Handle& handle_;
  struct LowestPriority {
    bool known = false;
    int64_t generation = 0;
    std::optional<int32_t> priority;
  };
  std::vector<LowestPriority> lowest_priority_;  // by snapshot index
};

}  // namespace kubesched::framework::preemption
