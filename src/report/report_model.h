#pragma once
// What the HTML report shows, computed from the simulation results without any HTML: plain
// structs a renderer (report.cc) walks with the HtmlWriter, and builders that tests call
// directly. Strings here are plain text (never markup): the writer escapes them.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/resource.h"
#include "report/report.h"
#include "sim/simulation.h"
#include "sim/simulation_summary.h"

namespace kubesched::report::model {

inline constexpr int kColours = 12;
inline constexpr int kPatterns = 6;

// --- formatting shared by the model and the renderer --------------------------------------

//! An amount of `resource` as people read it: cores (millicores below one), Gi/Mi/Ki, counts.
std::string FormatAmount(std::string_view resource, int64_t amount);
//! 0.25 as "25%", 0.3333 as "33.33%".
std::string Percent(double fraction);

// --- workloads and runs ---------------------------------------------------------------------

struct Workload {
  std::string name;  //!< as people name it (api::WorkloadName)
  std::string kind;  //!< Deployment, StatefulSet, Job, DaemonSet, ReplicaSet, ..., or Pod (a bare pod)
  std::string namespace_;
  int colour = 0;
  int pattern = 0;
  size_t pods = 0;  //!< over every run
};

//! Workloads over every run, numbered in first-seen order (the same number in both columns).
class Workloads {
 public:
  size_t Of(const api::Pod& pod);
  Workload& operator[](size_t i) { return list_[i]; }
  const Workload& operator[](size_t i) const { return list_[i]; }
  size_t size() const { return list_.size(); }

 private:
  std::unordered_map<std::string, size_t> index_;
  std::vector<Workload> list_;
};

struct PlacedPod {
  const api::Pod* pod = nullptr;
  size_t workload = 0;
  framework::Resource requests;
  bool already_running = false;
};

struct NodeUse {
  const api::Node* node = nullptr;
  framework::Resource allocatable;
  framework::Resource requested;
  std::vector<size_t> pods;  //!< indices into RunData::pods
};

//! One run's pods on its nodes: what the sections below are computed from.
struct RunData {
  std::string name;
  const sim::SimulationResult* result = nullptr;
  sim::SimulationSummary summary;
  std::vector<PlacedPod> pods;           //!< bound, not finished, in creation order
  std::vector<NodeUse> nodes;            //!< the input's order
  std::vector<const api::Pod*> unbound;  //!< not bound, not finished
};

RunData BuildRunData(const Run& run, Workloads& workloads);

// --- the sections -----------------------------------------------------------------------------

//! One count of the summary (a `dd[data-k]`); `verdict` is "better", "worse" or "" against the
//! other run.
struct Kpi {
  std::string_view label;
  std::string_view key;
  std::string value;
  std::string_view verdict;
};

//! A part of the pods chart, placed: the bar from x to x + width, the label at text_x.
struct ChartPart {
  size_t count = 0;
  std::string_view label;
  std::string_view fill;
  bool hatched = false;
  double x = 0;
  double width = 0;
  double text_x = 0;
};

struct RunSummary {
  std::string name;
  std::vector<Kpi> kpis;
  size_t scheduled = 0, already_running = 0, pending = 0;
  std::vector<ChartPart> chart;  //!< empty when there are no pods
  std::string optimizer;         //!< the batch optimizer's line, or ""
  std::string cross_node;        //!< cross-node preemption's line, or ""
};

std::vector<RunSummary> BuildSummaries(std::span<const RunData> runs);
//! The pods chart's parts: scheduled, already running, pending, each labelled with its count.
std::vector<ChartPart> ChartParts(size_t scheduled, size_t already_running, size_t pending);
inline constexpr double kChartWidth = 420;
inline constexpr double kChartRoom = 600;  //!< the labels may run past the bar

//! A row of the differences table: lower_is_better for nodes used, pending, evictions, moves.
struct DifferenceRow {
  std::string_view label;
  std::string_view key;
  int64_t a = 0, b = 0;
  std::string_view class_a, class_b;  //!< "better", "worse" or "" when equal
  std::string difference;             //!< "same", "-1 node", "+3 pods"
};

//! Pods placed by one run only: `run` placed them, the other left them pending.
struct PlacedOnly {
  size_t run = 0;
  std::string by, other;
  std::vector<std::string> pods;
};

struct DifferencesView {
  std::string name_a, name_b;
  std::vector<DifferenceRow> rows;
  //! Which run saves nodes, and how many ("" when both use as many).
  std::string saver, against;
  int64_t nodes_saved = 0;
  std::vector<std::string> nodes_only_a, nodes_only_b;
  PlacedOnly only_b, only_a;
};

DifferencesView BuildDifferences(const RunData& a, const RunData& b);

//! A pod's share of one resource bar.
struct Segment {
  size_t pod = 0;  //!< index into RunData::pods
  int64_t amount = 0;
  double share = 0;  //!< of the bar's scale (max of allocatable and requested)
};

struct ResourceBar {
  std::string resource;
  int64_t requested = 0, allocatable = 0;
  bool over = false;
  std::vector<Segment> segments;
};

struct NodeCard {
  size_t run = 0;
  const NodeUse* use = nullptr;
  std::vector<ResourceBar> bars;
};

struct NodeRow {
  size_t index = 0;  //!< in the input's order (the row's id is "n<index>")
  std::string name;
  std::string labels;           //!< "k=v k=v", the hostname label left out
  std::string taints;           //!< "k=v:Effect, ..., unschedulable"
  std::vector<NodeCard> cards;  //!< one per run
};

//! A zone's nodes (indices into the input's order); "" names the nodes without a zone.
struct ZoneGroup {
  std::string zone;
  std::vector<size_t> nodes;
};

struct HeatCell {
  size_t node = 0;
  std::string css_class;  //!< "e" (empty) or "h0".."h10" (highest requested share, in tenths)
  std::string title;
};

struct NodesView {
  bool big = false;    //!< past the heat-map threshold
  bool zoned = false;  //!< zone headings shown
  std::vector<ZoneGroup> zones;
  std::vector<size_t> legend;               //!< workloads, most pods first, at most kMaxLegend
  size_t legend_more = 0;                   //!< workloads left out of the legend
  bool legend_crowded = false;              //!< bare pods left out of the legend
  std::vector<std::vector<HeatCell>> heat;  //!< per run, in the input's node order (when big)
  std::vector<NodeRow> rows;                //!< the input's order
};
inline constexpr size_t kMaxLegend = 60;

//! Zones in name order, the nodes without a zone last, nodes in the input's order within each.
std::vector<ZoneGroup> GroupByZone(const RunData& run);
//! The resources shown for a node: cpu, memory and pods always; ephemeral storage and scalar
//! resources when the node offers them or a pod on it requests them, in any run.
std::vector<std::string> ResourcesOf(std::span<const NodeUse* const> uses);
//! The highest share of any resource requested on the node (0 for an empty node).
double Utilisation(const NodeUse& use);
NodeRow BuildNodeRow(std::span<const RunData> runs, size_t node);
NodesView BuildNodes(std::span<const RunData> runs, const Workloads& workloads, const ReportOptions& options);

struct PlacementRow {
  const NodeUse* use = nullptr;
  std::vector<int> counts;  //!< per column, then bare pods and other when shown
};

struct PlacementView {
  std::vector<size_t> columns;  //!< workloads with a column each, most pods first
  bool bare_column = false;     //!< bare pods counted together
  bool other_column = false;    //!< workloads past the largest counted together
  std::vector<std::vector<PlacementRow>> runs;
};

PlacementView BuildPlacement(std::span<const RunData> runs, const Workloads& workloads, const ReportOptions& options);

struct PendingPod {
  std::string key;   //!< namespace/name
  std::string name;  //!< as shown
};

//! Pending pods with the same message.
struct PendingGroup {
  std::string message;
  std::vector<PendingPod> pods;
};

//! A Filter reason across a run's pending pods: how many pods met it on their last attempt, and
//! on how many nodes at most.
struct ReasonTally {
  std::string reason;
  size_t pods = 0;
  size_t max_nodes = 0;
  bool operator==(const ReasonTally&) const = default;
};

struct PendingView {
  size_t pending = 0;
  std::vector<PendingGroup> groups;  //!< largest first
  std::vector<ReasonTally> reasons;  //!< most pods first
};

//! What a pending pod's group says: its FailedScheduling message, else why no attempt was made.
std::string PendingMessage(const api::Pod& pod, const sim::SimulationResult& result);
//! From SimulationResult::failed_attempts, the structured form of the pods' messages.
std::vector<ReasonTally> TallyReasons(std::span<const api::Pod* const> pending, const sim::SimulationResult& result);
PendingView BuildPending(const RunData& run, bool qualified_names);

struct EvictionRow {
  std::string pod_key, pod_name, node, action, reason, replacement;
};

std::vector<EvictionRow> BuildEvictions(const sim::SimulationResult& result, bool qualified_names);

//! A pod group's last group cycle: placed whole (where, after preempting what) or pending (why).
struct PodGroupRow {
  std::string name;     //!< namespace/name
  std::string outcome;  //!< "placed whole" or "pending"
  std::string domain;   //!< "key=value", or "-"
  int32_t min_count = 0;
  int32_t preempted = 0, moved = 0;
  bool optimal = false;
  std::string message;  //!< why pending; empty when placed
};

//! The groups of a run whose profile places pod groups whole (empty without a group cycle).
std::vector<PodGroupRow> BuildPodGroups(const sim::SimulationResult& result);

//! The explained pod's Score plugins, in the order the scored nodes first list them.
std::vector<std::string> ScorePlugins(const scheduler::AttemptExplanation& explanation);

//! A row of the explained pod's table: what Filter said of the node, and its scores.
struct ExplainedNode {
  const scheduler::AttemptExplanation::NodeDetail* node = nullptr;
  bool selected = false;
  //! Filtered for display only (node sampling stopped before it, or the nominated node was
  //! chosen): marked with a *.
  bool unevaluated = false;
  //! The Filter plugins that rejected the node (their Success and Skip left out).
  std::vector<const scheduler::AttemptExplanation::FilterVerdict*> rejections;
  //! Per column of score_plugins, the node's score; null where that plugin did not score it.
  std::vector<const scheduler::AttemptExplanation::ScoreDetail*> scores;
};

//! The explained pod's last attempt (`--explain`), node by node.
struct ExplanationView {
  size_t run = 0;
  const scheduler::AttemptExplanation* attempt = nullptr;
  std::vector<std::string> score_plugins;
  std::vector<ExplainedNode> nodes;
  bool any_unevaluated = false;
};

ExplanationView BuildExplanation(size_t run, const scheduler::AttemptExplanation& attempt);

//! The whole page.
struct ReportModel {
  std::string title;
  std::string inputs;  //!< "-f a.yaml -f b.yaml"
  uint64_t seed = 1;
  size_t node_count = 0, pod_count = 0;
  double simulated_seconds = 0;
  Workloads workloads;
  std::vector<RunData> runs;
  bool qualified_names = false;  //!< pods named with their namespace (more than one namespace)
  std::optional<DifferencesView> differences;
  std::vector<RunSummary> summaries;
  NodesView nodes;
  PlacementView placement;
  std::vector<PendingView> pending;
  std::vector<std::vector<EvictionRow>> evictions;   //!< per run; empty when no run evicted
  std::vector<std::vector<PodGroupRow>> pod_groups;  //!< per run; empty when no run had a group cycle
  std::vector<ExplanationView> explanations;         //!< of the runs that explained a pod
};

ReportModel BuildModel(std::span<const Run> runs, const ReportOptions& options);

}  // namespace kubesched::report::model
