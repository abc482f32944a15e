#pragma once
// DefaultPreemption: upstream's PostFilter plugin (pkg/scheduler/framework/plugins/defaultpreemption
// and pkg/scheduler/framework/preemption). When no node fits a pod, it looks for nodes where
// evicting lower-priority pods would make room, picks the node whose eviction hurts least, evicts
// those pods and nominates the preemptor to the node.

#include <cstdint>
#include <expected>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/args.h"
#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/preemption/evaluator.h"

namespace kubesched::plugins::default_preemption {

// The shared machinery (framework/preemption), under the names this plugin's callers know.
using framework::preemption::Candidate;
using framework::preemption::ComputePdbBudgets;
using framework::preemption::FilterPodsWithPdbViolation;
using framework::preemption::kNotEligibleNever;
using framework::preemption::kNotEligibleTerminating;
using framework::preemption::kNotHelpful;
using framework::preemption::kNoVictims;
using framework::preemption::MoreImportantPod;
using framework::preemption::NodeVictims;
using framework::preemption::PdbBudget;
using framework::preemption::PickOneNodeForPreemption;

//! Upstream's DefaultPreemptionArgs.
struct DefaultPreemptionArgs {
  int32_t min_candidate_nodes_percentage = 10;
  int32_t min_candidate_nodes_absolute = 100;
};

//! Decodes the args strictly, applies the defaults (null/absent fields) and validates them; every
//! error names its field under `path` in upstream's field.Error wording.
std::expected<DefaultPreemptionArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& args,
                                                                       const std::string& path);
//! DecodeArgs with paths relative to args, the errors joined as upstream's aggregate ("[e1, e2]").
std::expected<DefaultPreemptionArgs, std::string> ParseArgs(const framework::ArgsView& args);
//! The args as a configuration file spells them.
std::string EncodeArgs(const DefaultPreemptionArgs& args);

class DefaultPreemption final : public framework::PostFilterPlugin {
 public:
  static constexpr std::string_view kName = "DefaultPreemption";

  DefaultPreemption(DefaultPreemptionArgs args, framework::Handle& handle);

  std::string_view Name() const override { return kName; }

  //! Preempts on the best candidate node: Success with {kOverride, node} after evicting the
  //! victims; Unschedulable "preemption: <why>" when the pod may not preempt or no node helps
  //! (then {kOverride, ""} to clear a stale nomination); Error on failures.
  std::pair<framework::PostFilterResult, framework::Status> PostFilter(
      framework::CycleState& state, const framework::PodInfo& pod,
      const framework::NodeToStatus& filtered_statuses) override;

  //! Whether the pod may preempt others, with the reason when not (preemptionPolicy Never, or a
  //! lower-priority pod on its nominated node is still terminating because of preemption).
  std::pair<bool, std::string> PodEligibleToPreemptOthers(const api::Pod& pod,
                                                          const framework::Status& nominated_node_status) const;

  //! The minimal set of lower-priority pods to evict from node_info (a copy this call mutates,
  //! with state a clone) so that pod fits. UnschedulableAndUnresolvable kNoVictims when there are
  //! no lower-priority pods; the Filter status when the pod does not fit even without them.
  framework::Status SelectVictimsOnNode(framework::CycleState& state, const framework::PodInfo& pod,
                                        framework::NodeInfo& node_info, std::span<const PdbBudget> pdbs,
                                        NodeVictims& victims);

  //! How many candidates the dry run looks for among num_nodes potential nodes.
  int32_t CalculateNumCandidates(int32_t num_nodes) const;
  //! A random offset in [0, num_nodes) from the plugin's seeded generator, and the number of
  //! candidates.
  std::pair<int32_t, int32_t> GetOffsetAndNumCandidates(int32_t num_nodes);
  //! Tests: forces the dry run to start at this offset (modulo the number of potential nodes).
  void set_fixed_offset_for_testing(int32_t offset) { fixed_offset_ = offset; }

  //! Dry-runs SelectVictimsOnNode over the potential nodes from offset until enough candidates
  //! are found; non-PDB-violating candidates come first. Records each failed node's status.
  std::vector<Candidate> DryRunPreemption(framework::CycleState& state, const framework::PodInfo& pod,
                                          std::span<const framework::NodeInfo* const> potential_nodes,
                                          std::span<const PdbBudget> pdbs, int32_t offset, int32_t num_candidates,
                                          framework::NodeToStatus& node_statuses, std::vector<std::string>& errors);

 private:
  DefaultPreemptionArgs args_;
  framework::Handle& handle_;
  framework::preemption::Evaluator evaluator_;
  std::mt19937 rng_{0x5eed};
  int32_t fixed_offset_ = -1;
};

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::default_preemption
