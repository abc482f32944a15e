#include "cmd/bench.h"

#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <expected>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "api/encode.h"
#include "api/json.h"
#include "api/resource_types.h"
#include "api/types.h"
#include "cluster/store_client.h"
#include "cluster/store_informer.h"
#include "cmd/cli.h"
#include "config/load.h"
#include "framework/args_view.h"
#include "framework/args_writer.h"
#include "framework/registry.h"
#include "plugins/gang_scheduling/gang_scheduling.h"
#include "plugins/registry.h"
#include "scheduler/run_loop.h"
#include "scheduler/scheduler.h"
#include "store/controllers/controller.h"
#include "store/controllers/resource_claim_controller.h"
#include "store/resources.h"
#include "store/store.h"
#include "util/clock.h"
#include "util/percentile.h"

namespace kubesched::cmd {
namespace {

// ---------------------------------------------------------------------------------------------
// Object templates: upstream's test/integration/scheduler_perf/templates/*.yaml, built directly
// as API objects (parsing 60k YAML documents would dominate the set-up time).

enum class PodTemplate {
  kDefault,                     // pod-default.yaml: 100m CPU, 500Mi
  kPodAntiAffinity,             // pod-with-pod-anti-affinity.yaml: color=green, required, hostname
  kPodAffinity,                 // pod-with-pod-affinity.yaml: color=blue, required, zone
  kPreferredPodAffinity,        // pod-with-preferred-pod-affinity.yaml: color=red, weight 1, hostname
  kPreferredPodAntiAffinity,    // pod-with-preferred-pod-anti-affinity.yaml: color=yellow, weight 1
  kNodeAffinity,                // pod-with-node-affinity.yaml: zone In [zone1, zone2]
  kTopologySpreading,           // pod-with-topology-spreading.yaml: maxSkew 5 zone DoNotSchedule
  kPreferredTopologySpreading,  // pod-with-preferred-topology-spreading.yaml: ScheduleAnyway
  kLowPriority,                 // pod-low-priority.yaml: 900m CPU, priority unset (0)
  kHighPriority,                // pod-high-priority.yaml: 3000m CPU, priority 10
  kHighPriorityLargeCpu,        // pod-high-priority-large-cpu.yaml: 9 CPU, priority 10 (never fits)
  kClaimTemplate,               // dra/pod-with-claim-template.yaml: one claim from test-claim-template
  kManyClaimTemplates,          // dra/pod-with-many-claim-templates.yaml: two claims of each template
};

struct PodGroup {
  PodTemplate tmpl = PodTemplate::kDefault;
  std::string ns = "default";
};

struct Workload {
  std::string name;  // "<TestCase>/<variant>", as upstream's benchmark names
  int nodes = 0;
  int init_pods = 0;  // per init group
  int measure_pods = 0;
  //! labelNodePrepareStrategy values for topology.kubernetes.io/zone, assigned round-robin.
  std::vector<std::string> zones;
  std::vector<PodGroup> init_groups;  // each a createPods op of init_pods pods, waited for in turn
  PodGroup measure;
  //! A churn op creating one pod of this template every churn_interval_ms of wall time while the
  //! measured pods are scheduled (upstream's `churn` opcode, mode create).
  std::optional<PodTemplate> churn;
  int churn_interval_ms = 0;
  std::optional<double> threshold;  // upstream's CI threshold (pods/s), when it sets one
  bool in_default_set = true;
  //! Measured pods in gangs of this many (a scheduling.k8s.io PodGroup each, minCount this many;
  //! upstream's podgroup/gangscheduling suite); 0: no gangs.
  int gang_size = 0;
  //! Nodes labelled topology.example.com/rack in racks of this many, and the gangs' PodGroups
  //! keep each gang in one rack (upstream's podgroup/tas suite); 0: no racks.
  int rack_size = 0;
  //! Every pod (init and measured) has its own PersistentVolume and claim, bound, of this kind
  //! (upstream's volumes suite: pv-aws.yaml or pv-csi.yaml with pvc.yaml); nodes attach 39 of the
  //! CSI driver's volumes (a CSINode each) for the CSI and migrated kinds.
  enum class Volumes { kNone, kInTree, kMigratedInTree, kCSI };
  Volumes volumes = Volumes::kNone;
  //! Dynamic Resource Allocation (upstream's dra suite): the first nodes_without_dra nodes are
  //! plain, the others scheduler-perf-dra-<i> with a ResourceSlice of max_claims_per_node devices
  //! from each driver (createResourceDriver). Claims come from templates, made by the
  //! resourceclaim controller as pods are created; init pods go to namespace init, measured pods
  //! to test.
  struct Dra {
    int nodes_without_dra = 0;
    int max_claims_per_node = 0;
    //! A second driver (another-test-driver.cdi.k8s.io) with its own class and claim template,
    //! as SchedulingWithMultipleResourceClaims has.
    bool two_drivers = false;
    //! createPods with steadyState: batches of steady_batch pods, each created once the previous
    //! one is scheduled and deleted, for steady_duration_ms of wall time (measure_pods unused).
    bool steady = false;
    int steady_batch = 10;
    int steady_duration_ms = 0;
  };
  std::optional<Dra> dra;
};

// The driver upstream's volume workloads attach (pv-csi.yaml; the AWS EBS plugin migrates to it).
constexpr std::string_view kEbsDriver = "ebs.csi.aws.com";

constexpr std::string_view kRackLabel = "topology.example.com/rack";

// The dra suite's driver, class and claim template (dra/templates/deviceclass.yaml,
// resourceclaimtemplate.yaml), and the second set SchedulingWithMultipleResourceClaims adds
// (another-deviceclass.yaml, another-resourceclaimtemplate.yaml).
constexpr std::string_view kDraDriver = "test-driver.cdi.k8s.io";
constexpr std::string_view kDraClass = "test-class";
constexpr std::string_view kClaimTemplateName = "test-claim-template";
constexpr std::string_view kAnotherDraDriver = "another-test-driver.cdi.k8s.io";
constexpr std::string_view kAnotherDraClass = "another-test-class";
constexpr std::string_view kAnotherClaimTemplateName = "another-test-claim-template";

// volumes: each pod with its own bound PersistentVolume (AWS EBS in-tree, the same migrated to its
// CSI driver with nodes attaching 39, or a CSI volume), upstream's sizes and thresholds
// (volumes/performance-config.yaml).
std::vector<Workload> VolumeWorkloads() {
  std::vector<Workload> w;
  auto add = [&w](std::string name, int nodes, int init_pods, int measure_pods, Workload::Volumes volumes,
                  std::optional<double> threshold) {
    Workload& x = w.emplace_back();
    x.name = std::move(name);
    x.nodes = nodes;
    x.init_pods = init_pods;
    x.measure_pods = measure_pods;
    x.init_groups = {PodGroup{}};
    x.volumes = volumes;
    x.threshold = threshold;
    x.in_default_set = threshold.has_value();
  };
  add("SchedulingInTreePVs/5000Nodes_2000Pods", 5000, 1000, 2000, Workload::Volumes::kInTree, 290);
  add("SchedulingMigratedInTreePVs/5000Nodes_5000Pods", 5000, 5000, 5000, Workload::Volumes::kMigratedInTree, 100);
  add("SchedulingCSIPVs/5000Nodes_5000Pods", 5000, 5000, 5000, Workload::Volumes::kCSI, 100);
  add("SchedulingCSIPVs/500Nodes", 500, 500, 1000, Workload::Volumes::kCSI, std::nullopt);
  return w;
}

// dra: Dynamic Resource Allocation with structured parameters, upstream's sizes and thresholds
// (dra/performance-config.yaml). kubesched always runs queueing hints, so of the variants upstream
// runs with SchedulerQueueingHints false and true only the _QueueingHintsEnabled one is here.
std::vector<Workload> DraWorkloads() {
  std::vector<Workload> w;
  auto add = [&w](std::string name, int nodes_with_dra, int nodes_without_dra, int init_pods, int measure_pods,
                  int max_claims_per_node, std::optional<double> threshold) -> Workload& {
    Workload& x = w.emplace_back();
    x.name = std::move(name);
    x.nodes = nodes_with_dra + nodes_without_dra;
    x.init_pods = init_pods;
    x.measure_pods = measure_pods;
    x.init_groups = {{PodTemplate::kClaimTemplate, "init"}};
    x.measure = {PodTemplate::kClaimTemplate, "test"};
    x.dra = Workload::Dra{nodes_without_dra, max_claims_per_node};
    x.threshold = threshold;
    x.in_default_set = threshold.has_value();
    return x;
  };
  // SchedulingWithResourceClaimTemplate: a claim per pod from a template; nodes, pods and devices
  // such that the cluster fills up completely.
  add("SchedulingWithResourceClaimTemplate/fast_QueueingHintsEnabled", 1, 1, 0, 10, 10, std::nullopt);
  add("SchedulingWithResourceClaimTemplate/2000pods_100nodes", 100, 0, 1000, 1000, 20, std::nullopt);
  add("SchedulingWithResourceClaimTemplate/2000pods_200nodes", 200, 0, 1000, 1000, 10, std::nullopt);
  add("SchedulingWithResourceClaimTemplate/5000pods_500nodes_QueueingHintsEnabled", 500, 0, 2500, 2500, 10, 56);
  // SteadyStateClusterResourceClaimTemplate: ten pods with a claim each, created, scheduled and
  // deleted over and over for 10s (2s for fast), the cluster otherwise empty (initClaims 0).
  auto steady = [&](std::string name, int nodes_with_dra, int nodes_without_dra, int duration_ms,
                    std::optional<double> threshold) {
    Workload& x = add(std::move(name), nodes_with_dra, nodes_without_dra, 0, 0, 10, threshold);
    x.init_groups.clear();
    x.dra->steady = true;
    x.dra->steady_duration_ms = duration_ms;
  };
  steady("SteadyStateClusterResourceClaimTemplate/fast_QueueingHintsEnabled", 1, 1, 2000, std::nullopt);
  steady("SteadyStateClusterResourceClaimTemplate/empty_100nodes", 100, 0, 10000, std::nullopt);
  steady("SteadyStateClusterResourceClaimTemplate/empty_200nodes", 200, 0, 10000, std::nullopt);
  steady("SteadyStateClusterResourceClaimTemplate/empty_500nodes_QueueingHintsEnabled", 500, 0, 10000, 64);
  // SchedulingWithMultipleResourceClaims (upstream until classic DRA went, 1.31): four claims a
  // pod, two from each of two drivers' templates; no threshold.
  for (auto [variant, nodes_with_dra, nodes_without_dra, init_pods, measure_pods, per_node] :
       std::vector<std::tuple<std::string, int, int, int, int, int>>{{"fast", 1, 1, 0, 1, 20},
                                                                     {"2000pods_100nodes", 100, 0, 1000, 1000, 40},
                                                                     {"2000pods_200nodes", 200, 0, 1000, 1000, 20}}) {
    Workload& x = add("SchedulingWithMultipleResourceClaims/" + variant, nodes_with_dra, nodes_without_dra, init_pods,
                      measure_pods, per_node, std::nullopt);
    x.init_groups = {{PodTemplate::kManyClaimTemplates, "init"}};
    x.measure = {PodTemplate::kManyClaimTemplates, "test"};
    x.dra->two_drivers = true;
  }
  return w;
}

// The workloads, with upstream's sizes (test/integration/scheduler_perf/{misc,affinity,
// topology_spreading}/performance-config.yaml, 1.33+). Variants carrying a `threshold` there are
// the ones upstream's ci-benchmark-scheduler-perf job checks; those are the default set here.
std::vector<Workload> AllWorkloads() {
  const std::vector<std::string> kZone1 = {"zone1"};
  const std::vector<std::string> kMoons = {"moon-1", "moon-2", "moon-3"};
  std::vector<Workload> w;
  auto add = [&w](std::string name, int nodes, int init_pods, int measure_pods) -> Workload& {
    Workload& x = w.emplace_back();
    x.name = std::move(name);
    x.nodes = nodes;
    x.init_pods = init_pods;
    x.measure_pods = measure_pods;
    x.init_groups = {PodGroup{}};
    return x;
  };
  // misc: SchedulingBasic, createNodes / createPods($initPods) / createPods($measurePods).
  add("SchedulingBasic/500Nodes", 500, 500, 1000);
  add("SchedulingBasic/5000Nodes_10000Pods", 5000, 1000, 10000).threshold = 680;
  // affinity: init pods in sched-0, measured in sched-1; the (anti-)affinity terms name both.
  {
    Workload& x = add("SchedulingPodAntiAffinity/5000Nodes_2000Pods", 5000, 1000, 2000);
    x.init_groups = {{PodTemplate::kPodAntiAffinity, "sched-0"}};
    x.measure = {PodTemplate::kPodAntiAffinity, "sched-1"};
    x.threshold = 60;
  }
  {
    Workload& x = add("SchedulingPodAffinity/5000Nodes_5000Pods", 5000, 5000, 5000);
    x.zones = kZone1;
    x.init_groups = {{PodTemplate::kPodAffinity, "sched-0"}};
    x.measure = {PodTemplate::kPodAffinity, "sched-1"};
    x.threshold = 35;
  }
  {
    Workload& x = add("SchedulingPreferredPodAffinity/5000Nodes_5000Pods", 5000, 5000, 5000);
    x.init_groups = {{PodTemplate::kPreferredPodAffinity, "sched-0"}};
    x.measure = {PodTemplate::kPreferredPodAffinity, "sched-1"};
    x.threshold = 90;
  }
  {
    Workload& x = add("SchedulingPreferredPodAntiAffinity/5000Nodes_5000Pods", 5000, 5000, 5000);
    x.init_groups = {{PodTemplate::kPreferredPodAntiAffinity, "sched-0"}};
    x.measure = {PodTemplate::kPreferredPodAntiAffinity, "sched-1"};
    x.threshold = 90;
  }
  {
    Workload& x = add("SchedulingNodeAffinity/5000Nodes_10000Pods", 5000, 5000, 10000);
    x.zones = kZone1;
    x.init_groups = {{PodTemplate::kNodeAffinity}};
    x.measure = {PodTemplate::kNodeAffinity};
    x.threshold = 220;
  }
  // topology_spreading: init pods are plain pods; measured pods spread over three zones.
  {
    Workload& x = add("TopologySpreading/5000Nodes_5000Pods", 5000, 5000, 5000);
    x.zones = kMoons;
    x.measure = {PodTemplate::kTopologySpreading};
    x.threshold = 460;
  }
  {
    Workload& x = add("PreferredTopologySpreading/5000Nodes_5000Pods", 5000, 5000, 5000);
    x.zones = kMoons;
    x.measure = {PodTemplate::kPreferredTopologySpreading};
    x.threshold = 340;
  }
  // affinity: five init groups (plain, affinity, anti-affinity, preferred, preferred anti) in
  // sched-0, then plain measured pods.
  {
    Workload& x = add("MixedSchedulingBasePod/5000Nodes_5000Pods", 5000, 2000, 5000);
    x.zones = kZone1;
    x.init_groups = {{PodTemplate::kDefault, "sched-0"},
                     {PodTemplate::kPodAffinity, "sched-0"},
                     {PodTemplate::kPodAntiAffinity, "sched-0"},
                     {PodTemplate::kPreferredPodAffinity, "sched-0"},
                     {PodTemplate::kPreferredPodAntiAffinity, "sched-0"}};
    x.threshold = 140;
  }
  // misc: Unschedulable: plain pods measured while a 9-CPU priority-10 pod (unschedulable on
  // 4-CPU nodes, so each runs a failing preemption attempt) arrives every 200ms.
  {
    Workload& x = add("Unschedulable/5kNodes/100Init/10kPods", 5000, 100, 10000);
    x.churn = PodTemplate::kHighPriorityLargeCpu;
    x.churn_interval_ms = 200;
    x.threshold = 590;
  }
  // misc: PreemptionBasic: 4 low-priority 900m pods fill each 4-CPU node; every measured 3-CPU
  // priority-10 pod preempts 3 of them. Upstream sets no threshold (labels performance, short).
  {
    Workload& x = add("PreemptionBasic/1000Nodes", 1000, 4000, 1000);
    x.init_groups = {{PodTemplate::kLowPriority}};
    x.measure = {PodTemplate::kHighPriority};
  }
  // The 500-node variants (upstream's "500Nodes" workloads: same templates, smaller sizes, no
  // threshold); run with --all or by test-case name.
  const std::vector<std::tuple<std::string, std::string, int, int, int>> small = {
      {"SchedulingPodAntiAffinity", "500Nodes", 500, 100, 400},
      {"SchedulingPodAffinity", "500Nodes", 500, 500, 1000},
      {"SchedulingPreferredPodAffinity", "500Nodes", 500, 500, 1000},
      {"SchedulingPreferredPodAntiAffinity", "500Nodes", 500, 500, 1000},
      {"SchedulingNodeAffinity", "500Nodes", 500, 500, 1000},
      {"TopologySpreading", "500Nodes", 500, 1000, 1000},
      {"PreferredTopologySpreading", "500Nodes", 500, 1000, 1000},
      {"MixedSchedulingBasePod", "500Nodes", 500, 200, 1000},
      {"Unschedulable", "500Nodes/10Init/1kPods", 500, 10, 1000},
      {"PreemptionBasic", "500Nodes", 500, 2000, 500},
  };
  for (const auto& [base, variant, nodes, init_pods, measure_pods] : small) {
    auto it = std::find_if(w.begin(), w.end(), [&](const Workload& x) { return x.name.starts_with(base + "/"); });
    Workload x = *it;
    x.name = base + "/" + variant;
    x.nodes = nodes;
    x.init_pods = init_pods;
    x.measure_pods = measure_pods;
    x.threshold.reset();
    x.in_default_set = false;
    w.insert(it, std::move(x));
  }
  w.front().in_default_set = false;  // SchedulingBasic/500Nodes
  for (Workload& x : VolumeWorkloads()) w.push_back(std::move(x));
  for (Workload& x : DraWorkloads()) w.push_back(std::move(x));
  // Gangs (kubesched's own sizes; upstream's podgroup suites run 10 to 5,000 nodes, 3 to 5,000
  // pods a group, with no threshold): every gang placed whole by its group's cycle.
  {
    Workload& x = add("GangScheduling/1000Nodes_1000Pods_GangsOf10", 1000, 1000, 1000);
    x.gang_size = 10;
    x.in_default_set = false;
  }
  {
    Workload& x = add("GangScheduling/5000Nodes_10000Pods_GangsOf100", 5000, 1000, 10000);
    x.gang_size = 100;
    x.in_default_set = false;
  }
  {
    Workload& x = add("TopologyAwareGang/1000Nodes_RacksOf4_GangsOf4", 1000, 1000, 1000);
    x.gang_size = 4;
    x.rack_size = 4;
    x.in_default_set = false;
  }
  {
    Workload& x = add("TopologyAwareGang/5000Nodes_RacksOf4_GangsOf4", 5000, 1000, 5000);
    x.gang_size = 4;
    x.rack_size = 4;
    x.in_default_set = false;
  }
  return w;
}

api::Quantity Q(std::string_view text) { return *api::Quantity::Parse(text); }

std::shared_ptr<api::Node> MakeNode(int index, const std::vector<std::string>& zones, int rack_size,
                                    std::string name = "") {
  auto node = std::make_shared<api::Node>();
  node->metadata.name = name.empty() ? fmt::format("scheduler-perf-{:05d}", index) : std::move(name);
  node->metadata.uid = "node-uid-" + std::to_string(index);
  node->metadata.creation_index = index;
  // A real kubelet sets the hostname label; the anti-affinity templates use it as topology key.
  node->metadata.labels.Set(std::string(api::kLabelHostname), node->metadata.name);
  if (!zones.empty()) node->metadata.labels.Set(std::string(api::kLabelTopologyZone), zones[index % zones.size()]);
  if (rack_size > 0) node->metadata.labels.Set(std::string(kRackLabel), fmt::format("rack-{:05d}", index / rack_size));
  node->status.capacity = {{"pods", Q("110")}, {"cpu", Q("4")}, {"memory", Q("32Gi")}};
  node->status.allocatable = node->status.capacity;
  node->status.conditions.push_back({"Ready", "True"});
  return node;
}

api::PodAffinityTerm ColorTerm(const std::string& color, std::string_view topology_key) {
  api::PodAffinityTerm term;
  api::LabelSelector sel;
  sel.match_labels.Set("color", color);
  term.label_selector = sel;
  term.topology_key = std::string(topology_key);
  term.namespaces = {"sched-1", "sched-0"};
  return term;
}

class PodFactory {
 public:
  std::shared_ptr<api::Pod> Make(PodTemplate tmpl, const std::string& ns, int64_t now_ns) {
    auto pod = std::make_shared<api::Pod>();
    int64_t n = counter_++;
    pod->metadata.namespace_ = ns;
    pod->metadata.uid = "pod-uid-" + std::to_string(n);
    pod->metadata.creation_timestamp_ns = now_ns;
    pod->metadata.creation_index = n;
    std::string cpu = "100m";
    std::string prefix = "pod-";
    std::optional<std::string> limit_cpu = "100m";
    switch (tmpl) {
      case PodTemplate::kDefault:
        break;
      case PodTemplate::kPodAntiAffinity: {
        prefix = "anti-affinity-pod-";
        pod->metadata.labels.Set("color", "green");
        api::PodAffinity anti;
        anti.required.push_back(ColorTerm("green", api::kLabelHostname));
        pod->spec.affinity.emplace().pod_anti_affinity = std::move(anti);
        break;
      }
      case PodTemplate::kPodAffinity: {
        prefix = "affinity-pod-";
        pod->metadata.labels.Set("color", "blue");
        api::PodAffinity aff;
        aff.required.push_back(ColorTerm("blue", api::kLabelTopologyZone));
        pod->spec.affinity.emplace().pod_affinity = std::move(aff);
        break;
      }
      case PodTemplate::kPreferredPodAffinity: {
        prefix = "preferred-affinity-pod-";
        pod->metadata.labels.Set("color", "red");
        api::PodAffinity aff;
        aff.preferred.push_back({1, ColorTerm("red", api::kLabelHostname)});
        pod->spec.affinity.emplace().pod_affinity = std::move(aff);
        break;
      }
      case PodTemplate::kPreferredPodAntiAffinity: {
        prefix = "preferred-anti-affinity-pod-";
        pod->metadata.labels.Set("color", "yellow");
        api::PodAffinity anti;
        anti.preferred.push_back({1, ColorTerm("yellow", api::kLabelHostname)});
        pod->spec.affinity.emplace().pod_anti_affinity = std::move(anti);
        break;
      }
      case PodTemplate::kNodeAffinity: {
        prefix = "node-affinity-";
        api::NodeSelectorTerm term;
        term.match_expressions.push_back(
            {std::string(api::kLabelTopologyZone), api::SelectorOperator::kIn, {"zone1", "zone2"}});
        api::NodeAffinity na;
        na.required = api::NodeSelector{{term}};
        pod->spec.affinity.emplace().node_affinity = std::move(na);
        break;
      }
      case PodTemplate::kTopologySpreading:
      case PodTemplate::kPreferredTopologySpreading: {
        prefix = "spreading-pod-";
        pod->metadata.labels.Set("color", "blue");
        api::TopologySpreadConstraint c;
        c.max_skew = 5;
        c.topology_key = std::string(api::kLabelTopologyZone);
        c.when_unsatisfiable = tmpl == PodTemplate::kTopologySpreading
                                   ? api::UnsatisfiableConstraintAction::kDoNotSchedule
                                   : api::UnsatisfiableConstraintAction::kScheduleAnyway;
        api::LabelSelector sel;
        sel.match_labels.Set("color", "blue");
        c.label_selector = sel;
        pod->spec.topology_spread_constraints.push_back(std::move(c));
        break;
      }
      case PodTemplate::kLowPriority:
        cpu = "900m";
        limit_cpu = cpu;
        pod->spec.termination_grace_period_seconds = 0;  // preemption's victims go at once
        break;
      case PodTemplate::kHighPriority:
        cpu = "3000m";
        limit_cpu = cpu;
        pod->spec.priority = 10;
        break;
      case PodTemplate::kHighPriorityLargeCpu:
        prefix = "pod-h-";
        cpu = "9";
        limit_cpu.reset();
        pod->spec.priority = 10;
        break;
      case PodTemplate::kClaimTemplate:
      case PodTemplate::kManyClaimTemplates: {
        // No CPU or memory: the pause container asks only for its claims.
        pod->metadata.name = "test-dra-" + std::to_string(n);
        api::Container c;
        c.name = "pause";
        c.image = "registry.k8s.io/pause:3.10.1";
        auto claim = [&](std::string name, std::string_view tmpl) {
          pod->spec.resource_claims.push_back({name, std::nullopt, std::string(tmpl)});
          c.resources.claims.push_back({std::move(name), ""});
        };
        if (tmpl == PodTemplate::kClaimTemplate) {
          claim("resource", kClaimTemplateName);
        } else {
          claim("resource-1a", kClaimTemplateName);
          claim("resource-1b", kClaimTemplateName);
          claim("resource-2a", kAnotherClaimTemplateName);
          claim("resource-2b", kAnotherClaimTemplateName);
        }
        pod->spec.containers.push_back(std::move(c));
        return pod;
      }
    }
    pod->metadata.name = prefix + std::to_string(n);
    api::Container c;
    c.name = "pause";
    c.image = "registry.k8s.io/pause:3.10.1";
    api::ContainerPort port;
    port.container_port = 80;
    c.ports.push_back(port);
    c.resources.requests = {{"cpu", Q(cpu)}, {"memory", Q("500Mi")}};
    if (limit_cpu) c.resources.limits = {{"cpu", Q(*limit_cpu)}, {"memory", Q("500Mi")}};
    pod->spec.containers.push_back(std::move(c));
    return pod;
  }

  //! The number the next pod gets (its name's and uid's suffix).
  int64_t next() const { return counter_; }

 private:
  int64_t counter_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The cluster: the object store every mode runs on, the scheduler's client over it
// (cluster::StoreClient) and its informers (cluster::StoreInformer), as scheduler_perf runs the
// scheduler against an API server. Nodes and pods are created in the store as its createNodes and
// createPods ops create them; binds, nominations, the PodScheduled condition and preemption's
// deletions are store writes that come back to the scheduler as informer events. Like
// scheduler_perf, bench runs no kubelets and no controllers: bound pods stay Pending, and
// preemption's victims (terminationGracePeriodSeconds 0 in upstream's template) go at once.

// The store keeps no history of changes: it serves watches from an older resourceVersion, and
// bench has no watchers.
constexpr size_t kBenchWatchHistory = 0;

// An object built here, as the JSON document the store takes.
template <typename T>
api::json::Document Document(const T& object, api::json::Value (*to_value)(const T&, api::json::Allocator&)) {
  api::json::Document doc;
  api::json::Value value = to_value(object, doc.GetAllocator());
  static_cast<api::json::Value&>(doc).Swap(value);
  return doc;
}

// Objects are stored with Store::Restore: they keep the uid and creationTimestamp built here and
// are not admitted, as scheduler_perf's API server runs without the Priority admission plugin
// (its templates set spec.priority without a PriorityClass, which that plugin refuses).
std::expected<void, std::string> Put(store::Store& store, const store::ResourceType& type, std::string_view ns,
                                     api::json::Document doc) {
  auto created = store.Restore(type, ns, std::move(doc));
  if (!created) return std::unexpected(created.error().message);
  return {};
}

// A pod's own PersistentVolume and claim, bound both ways (scheduler_perf's
// CreatePodWithPersistentVolume strategy), and the pod's volume naming the claim.
std::expected<void, std::string> PutBoundVolume(store::Store& store, Workload::Volumes kind, api::Pod& pod) {
  const std::string name = "vol-" + pod.metadata.uid;
  const std::string source = kind == Workload::Volumes::kCSI
                                 ? fmt::format(R"("csi":{{"driver":"{}","volumeHandle":"{}"}})", kEbsDriver, name)
                                 : fmt::format(R"("awsElasticBlockStore":{{"volumeID":"{}"}})", name);
  api::json::Document pv, pvc;
  (void)api::json::Parse(
      fmt::format(
          R"({{"apiVersion":"v1","kind":"PersistentVolume","metadata":{{"name":"{0}"}},"spec":{{)"
          R"("capacity":{{"storage":"1Gi"}},"accessModes":["ReadOnlyMany"],"persistentVolumeReclaimPolicy":"Retain",)"
          R"({1},"claimRef":{{"namespace":"{2}","name":"{0}","uid":"{0}"}}}},"status":{{"phase":"Bound"}}}})",
          name, source, pod.metadata.namespace_),
      pv);
  (void)api::json::Parse(
      fmt::format(
          R"({{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{{"name":"{0}","namespace":"{1}",)"
          R"("uid":"{0}"}},"spec":{{"accessModes":["ReadOnlyMany"],"resources":{{"requests":{{"storage":"1Gi"}}}},)"
          R"("storageClassName":"","volumeName":"{0}"}},"status":{{"phase":"Bound"}}}})",
          name, pod.metadata.namespace_),
      pvc);
  if (auto r = Put(store, *store.FindResource("", "persistentvolumes"), "", std::move(pv)); !r) return r;
  if (auto r = Put(store, *store.FindResource("", "persistentvolumeclaims"), pod.metadata.namespace_, std::move(pvc));
      !r) {
    return r;
  }
  api::Volume volume;
  volume.name = "vol";
  volume.claim_name = name;
  pod.spec.volumes.push_back(std::move(volume));
  return {};
}

// A DRA driver's devices on one node (upstream's createResourceDriver: a ResourceSlice per node,
// named after it, pool the node, devices instance-<i> with the test driver's attributes and 1Gi of
// memory capacity).
std::expected<void, std::string> PutResourceSlice(store::Store& store, std::string_view driver, const std::string& node,
                                                  const std::string& name, int devices) {
  std::string list;
  for (int i = 0; i < devices; ++i) {
    if (i > 0) list += ',';
    list +=
        fmt::format(R"({{"name":"instance-{0}","attributes":{{"model":{{"string":"A100"}},"family":{{"string":"GPU"}},)"
                    R"("driverVersion":{{"version":"1.2.3"}},"dra.example.com/numa":{{"int":{0}}}}},)"
                    R"("capacity":{{"memory":{{"value":"1Gi"}}}}}})",
                    i);
  }
  api::json::Document doc;
  if (auto parsed = api::json::Parse(
          fmt::format(
              R"({{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{{"name":"{}"}},)"
              R"("spec":{{"driver":"{}","nodeName":"{}","pool":{{"name":"{}","generation":1,"resourceSliceCount":1}},)"
              R"("devices":[{}]}}}})",
              name, driver, node, node, list),
          doc);
      !parsed) {
    return std::unexpected("bench: " + parsed.error().ToString());
  }
  return Put(store, *store.FindResource(api::kResourceApiGroup, "resourceslices"), "", std::move(doc));
}

// A DeviceClass selecting the driver's devices (deviceclass.yaml).
std::expected<void, std::string> PutDeviceClass(store::Store& store, std::string_view name, std::string_view driver) {
  api::json::Document doc;
  if (auto parsed = api::json::Parse(
          fmt::format(R"({{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{{"name":"{}"}},)"
                      R"("spec":{{"selectors":[{{"cel":{{"expression":"device.driver == \"{}\""}}}}]}}}})",
                      name, driver),
          doc);
      !parsed) {
    return std::unexpected("bench: " + parsed.error().ToString());
  }
  return Put(store, *store.FindResource(api::kResourceApiGroup, "deviceclasses"), "", std::move(doc));
}

// A ResourceClaimTemplate asking for one device of the class (resourceclaimtemplate.yaml).
std::expected<void, std::string> PutClaimTemplate(store::Store& store, std::string_view ns, std::string_view name,
                                                  std::string_view device_class) {
  api::json::Document doc;
  if (auto parsed = api::json::Parse(
          fmt::format(R"({{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate","metadata":{{"name":"{}",)"
                      R"("namespace":"{}"}},"spec":{{"spec":{{"devices":{{"requests":[{{"name":"req-0","exactly":{{)"
                      R"("deviceClassName":"{}"}}}}]}}}}}}}})",
                      name, ns, device_class),
          doc);
      !parsed) {
    return std::unexpected("bench: " + parsed.error().ToString());
  }
  return Put(store, *store.FindResource(api::kResourceApiGroup, "resourceclaimtemplates"), ns, std::move(doc));
}

// What bench reports about the cluster, counted from the store's events: binds of measured pods
// (spec.nodeName set on a pod PodFactory numbered in [first, end), whose uid is "pod-uid-<n>")
// and evictions (the DisruptionTarget condition StoreClient::DeletePod marks a victim with).
class StoreCounters {
 public:
  explicit StoreCounters(store::Store& store)
      : store_(store),
        pods_(store.FindResource("", "pods")),
        observer_(store.AddObserver([this](const store::WatchEvent& e) { OnEvent(e); })) {}
  ~StoreCounters() { store_.RemoveObserver(observer_); }
  StoreCounters(const StoreCounters&) = delete;
  StoreCounters& operator=(const StoreCounters&) = delete;

  //! Counts from now on the binds of pods numbered in [first, end), and evictions.
  void Measure(int64_t first, int64_t end) {
    first_ = first;
    end_ = end;
    measuring_ = true;
  }
  size_t measured_bound() const { return measured_bound_; }
  size_t evictions() const { return evictions_; }

 private:
  static bool Evicted(const api::Pod& pod) {
    return std::any_of(pod.status.conditions.begin(), pod.status.conditions.end(), [](const api::PodCondition& c) {
      return c.type == "DisruptionTarget" && c.status == "True" && c.reason == "PreemptionByScheduler";
    });
  }

  // Called on the thread that wrote (bench's only thread: binding is synchronous).
  void OnEvent(const store::WatchEvent& e) {
    if (!measuring_ || e.type != store::EventType::kModified || !e.object || !e.old_object || e.object->type != pods_) {
      return;
    }
    auto pod = e.object->View<api::Pod>();
    auto old = e.old_object->View<api::Pod>();
    if (!pod || !old) return;
    if (old->spec.node_name.empty() && !pod->spec.node_name.empty()) {
      constexpr std::string_view kPrefix = "pod-uid-";
      const std::string& uid = e.object->uid;
      int64_t n = -1;
      if (uid.starts_with(kPrefix)) std::from_chars(uid.data() + kPrefix.size(), uid.data() + uid.size(), n);
      if (n >= first_ && n < end_) ++measured_bound_;
    }
    if (pod->status.conditions.size() != old->status.conditions.size() && Evicted(*pod) && !Evicted(*old)) {
      ++evictions_;
    }
  }

  store::Store& store_;
  const store::ResourceType* pods_;
  const uint64_t observer_;
  bool measuring_ = false;
  int64_t first_ = 0, end_ = 0;
  size_t measured_bound_ = 0;
  size_t evictions_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Measurement

using WallClock = std::chrono::steady_clock;

struct Result {
  std::string name;
  int nodes = 0;
  int measure_pods = 0;
  size_t scheduled = 0;  // measured pods bound
  size_t attempts = 0;   // ScheduleOne calls during the measured phase
  size_t evictions = 0;
  double seconds = 0;
  double pods_per_second = 0;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0;
  double peak_rss_mib = 0;
  std::optional<double> threshold;
  //! Gang workloads: what the group cycles decided.
  std::optional<plugins::gang_scheduling::GangStats> gangs;
};

// Peak resident set size. Each workload starts by resetting the kernel's high-water mark
// (/proc/self/clear_refs "5"), so VmHWM is that workload's peak; where that is unavailable the
// process-wide getrusage ru_maxrss is reported instead (monotonic across workloads).
void ResetPeakRss() {
  std::ofstream f("/proc/self/clear_refs");
  if (f) f << "5";
}

double PeakRssMiB() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.starts_with("VmHWM:")) return std::stod(line.substr(6)) / 1024.0;  // kB
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // kB on Linux
}

constexpr int64_t kMaxVirtualTimeNs = 3600LL * util::kNanosPerSecond;

// Runs scheduling cycles until nothing is left to do: activeQ empty, nobody backing off (the
// virtual clock jumps over backoff waits, so they cost no wall time). Pods left unschedulable
// stay so (scheduler_perf does not wait for its periodic flush). `on_cycle` runs after each
// cycle with its wall duration.
void Drain(scheduler::Scheduler& sched, util::VirtualClock& clock,
           std::function<void(std::chrono::nanoseconds)> on_cycle) {
  scheduler::RunLoopOptions loop;
  loop.deadline_ns = clock.NowNs() + kMaxVirtualTimeNs;
  loop.flush_unschedulable_once = false;
  loop.on_cycle = std::move(on_cycle);
  scheduler::RunUntilIdle(sched, clock, nullptr, loop);
}

// The workload's cluster: the namespaces the affinity and DRA workloads use ("default" exists),
// labelled as the API server labels every namespace; the nodes, with their ResourceSlices and the
// DRA classes and claim templates, or their CSINodes.
std::expected<void, std::string> PutClusterObjects(store::Store& store, const Workload& w) {
  const store::ResourceType& nodes = *store.FindResource("", "nodes");
  const store::ResourceType& namespaces = *store.FindResource("", "namespaces");
  for (const char* ns : {"sched-0", "sched-1", "init", "test"}) {
    api::json::Document doc;
    (void)api::json::Parse(
        fmt::format(R"({{"metadata":{{"name":"{0}","labels":{{"kubernetes.io/metadata.name":"{0}"}}}}}})", ns), doc);
    if (auto r = Put(store, namespaces, "", std::move(doc)); !r) return std::unexpected(r.error());
  }
  for (int i = 0; i < w.nodes; ++i) {
    // DRA nodes (node-with-dra-test-driver.yaml) are numbered from 0 after the plain ones.
    const int dra_index = w.dra ? i - w.dra->nodes_without_dra : -1;
    const std::string name = dra_index >= 0 ? fmt::format("scheduler-perf-dra-{}", dra_index) : "";
    if (auto r = Put(store, nodes, "", Document<api::Node>(*MakeNode(i, w.zones, w.rack_size, name), api::NodeToValue));
        !r) {
      return std::unexpected(r.error());
    }
    if (dra_index < 0) continue;
    if (auto r = PutResourceSlice(store, kDraDriver, name, name, w.dra->max_claims_per_node); !r) {
      return std::unexpected(r.error());
    }
    if (w.dra->two_drivers) {
      if (auto r = PutResourceSlice(store, kAnotherDraDriver, name, name + "-another", w.dra->max_claims_per_node);
          !r) {
        return std::unexpected(r.error());
      }
    }
  }
  if (w.dra) {
    std::vector<std::tuple<std::string_view, std::string_view, std::string_view>> sets = {
        {kDraClass, kDraDriver, kClaimTemplateName}};
    if (w.dra->two_drivers) sets.emplace_back(kAnotherDraClass, kAnotherDraDriver, kAnotherClaimTemplateName);
    for (const auto& [device_class, driver, tmpl] : sets) {
      if (auto r = PutDeviceClass(store, device_class, driver); !r) return std::unexpected(r.error());
      for (std::string_view ns : {"init", "test"}) {
        if (auto r = PutClaimTemplate(store, ns, tmpl, device_class); !r) return std::unexpected(r.error());
      }
    }
  }
  if (w.volumes == Workload::Volumes::kCSI || w.volumes == Workload::Volumes::kMigratedInTree) {
    const store::ResourceType& csi_nodes = *store.FindResource("storage.k8s.io", "csinodes");
    for (int i = 0; i < w.nodes; ++i) {
      api::json::Document doc;
      (void)api::json::Parse(
          fmt::format(
              R"({{"apiVersion":"storage.k8s.io/v1","kind":"CSINode","metadata":{{"name":"scheduler-perf-{:05d}"}},)"
              R"("spec":{{"drivers":[{{"name":"{}","nodeID":"n{}","allocatable":{{"count":39}}}}]}}}})",
              i, kEbsDriver, i),
          doc);
      if (auto r = Put(store, csi_nodes, "", std::move(doc)); !r) return std::unexpected(r.error());
    }
  }
  return {};
}

// The measured pods' PodGroups (gang workloads): one of gang_size pods (the last one smaller),
// constrained to a rack when the workload has racks.
std::expected<void, std::string> PutPodGroups(store::Store& store, const Workload& w) {
  if (w.gang_size > 0) {
    const store::ResourceType& pod_groups = *store.FindResource("scheduling.k8s.io", "podgroups");
    for (int g = 0; g * w.gang_size < w.measure_pods; ++g) {
      const int size = std::min(w.gang_size, w.measure_pods - g * w.gang_size);
      std::string constraints;
      if (w.rack_size > 0)
        constraints = fmt::format(R"(,"schedulingConstraints":{{"topology":[{{"key":"{}"}}]}})", kRackLabel);
      api::json::Document doc;
      (void)api::json::Parse(
          fmt::format(
              R"({{"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{{"name":"gang-{:05d}",)"
              R"("namespace":"{}","uid":"pod-group-uid-{}"}},"spec":{{"schedulingPolicy":{{"gang":{{"minCount":{}}}}}{}}}}})",
              g, w.measure.ns, g, size, constraints),
          doc);
      if (auto r = Put(store, pod_groups, w.measure.ns, std::move(doc)); !r) return std::unexpected(r.error());
    }
  }
  return {};
}

std::expected<Result, std::string> RunWorkload(const Workload& w, const framework::Registry& registry) {
  ResetPeakRss();
  util::VirtualClock clock(0);
  store::StoreOptions store_options;
  store_options.watch_history = kBenchWatchHistory;
  store_options.seed = 1;
  std::unique_ptr<store::Store> owned_store = store::NewMemoryStore(store::SchedulerResources(), clock, store_options);
  store::Store& store = *owned_store;
  const store::ResourceType& pods = *store.FindResource("", "pods");
  StoreCounters counters(store);
  cluster::StoreClient client(store, clock);
  cluster::StoreInformer informer(store);

  scheduler::SchedulerOptions opts;
  opts.config = config::DefaultConfiguration(registry);
  opts.async_binding = false;
  auto created = scheduler::Scheduler::Create(opts, client, clock, registry);
  if (!created) return std::unexpected(created.error());
  scheduler::Scheduler& sched = **created;
  informer.Subscribe(&sched);

  // The resourceclaim controller (the one `simulate` runs), as scheduler_perf starts it for DRA:
  // it makes each pod's claims from their templates as the pod is created, and deletes them once
  // the pod is gone.
  std::unique_ptr<store::controllers::ControllerManager> controllers;
  if (w.dra) {
    controllers = std::make_unique<store::controllers::ControllerManager>(store, clock, 1);
    controllers->Add(std::make_unique<store::controllers::ResourceClaimController>(controllers->context()));
    controllers->Start();
  }
  if (auto r = PutClusterObjects(store, w); !r) return std::unexpected(r.error());
  PodFactory factory;
  auto add_pod = [&](PodTemplate tmpl, const std::string& ns,
                     const std::string& pod_group = "") -> std::expected<void, std::string> {
    auto pod = factory.Make(tmpl, ns, clock.NowNs());
    pod->spec.pod_group = pod_group;
    if (w.volumes != Workload::Volumes::kNone) {
      if (auto r = PutBoundVolume(store, w.volumes, *pod); !r) return r;
    }
    return Put(store, pods, ns, Document<api::Pod>(*pod, api::PodToValue));
  };
  // Init pods: each createPods op completes before the next starts (no skipWaitToCompletion).
  for (const PodGroup& g : w.init_groups) {
    for (int i = 0; i < w.init_pods; ++i) {
      if (auto r = add_pod(g.tmpl, g.ns); !r) return std::unexpected(r.error());
    }
    Drain(sched, clock, nullptr);
  }

  std::vector<double> latencies_ms;
  latencies_ms.reserve(static_cast<size_t>(w.measure_pods) * 2);
  auto record_latency = [&latencies_ms](std::chrono::nanoseconds d) {
    latencies_ms.push_back(std::chrono::duration<double, std::milli>(d).count());
  };
  auto finish = [&](size_t attempts, WallClock::time_point start, WallClock::time_point end, int measured) {
    Result r;
    r.name = w.name;
    r.nodes = w.nodes;
    r.measure_pods = measured;
    r.scheduled = counters.measured_bound();
    r.attempts = attempts;
    r.evictions = counters.evictions();
    r.seconds = std::chrono::duration<double>(end - start).count();
    r.pods_per_second = r.seconds > 0 ? static_cast<double>(measured) / r.seconds : 0;
    std::sort(latencies_ms.begin(), latencies_ms.end());
    r.p50_ms = util::PercentileOfSorted(latencies_ms, 0.50);
    r.p90_ms = util::PercentileOfSorted(latencies_ms, 0.90);
    r.p99_ms = util::PercentileOfSorted(latencies_ms, 0.99);
    r.peak_rss_mib = PeakRssMiB();
    r.threshold = w.threshold;
    return r;
  };

  // Steady state (createPods with steadyState): a batch of pods is created; once all are
  // scheduled they are deleted (grace period 0, their claims going with them) and the next batch
  // is created, until the duration is up. Measured, as upstream measures it, is the whole loop:
  // creating and deleting pods and claims included; every pod scheduled counts.
  if (w.dra && w.dra->steady) {
    const size_t attempts_before = sched.attempts();
    const auto start = WallClock::now();
    const auto until = start + std::chrono::milliseconds(w.dra->steady_duration_ms);
    int created = 0;
    std::vector<std::string> batch;
    while (WallClock::now() < until) {
      const int64_t first = factory.next();
      counters.Measure(first, first + w.dra->steady_batch);
      const size_t bound_before = counters.measured_bound();
      batch.clear();
      for (int i = 0; i < w.dra->steady_batch; ++i) {
        batch.push_back("test-dra-" + std::to_string(factory.next()));
        if (auto r = add_pod(w.measure.tmpl, w.measure.ns); !r) return std::unexpected(r.error());
      }
      created += w.dra->steady_batch;
      Drain(sched, clock, record_latency);
      if (counters.measured_bound() - bound_before < static_cast<size_t>(w.dra->steady_batch)) break;  // stuck
      store::DeleteOptions now;
      now.grace_period_seconds = 0;
      for (const std::string& name : batch) {
        if (auto r = store.Delete(pods, w.measure.ns, name, now); !r) return std::unexpected(r.error().message);
      }
    }
    const auto end = WallClock::now();
    Result r = finish(sched.attempts() - attempts_before, start, end, created);
    // Throughput counts the pods scheduled (the last batch may be cut short).
    r.pods_per_second = r.seconds > 0 ? static_cast<double>(r.scheduled) / r.seconds : 0;
    return r;
  }

  // Measured phase: from the measured pods' creation (in the store, before the clock starts, so
  // that building and storing them is set-up) until none is left to attempt.
  counters.Measure(factory.next(), factory.next() + w.measure_pods);
  if (auto r = PutPodGroups(store, w); !r) return std::unexpected(r.error());
  for (int i = 0; i < w.measure_pods; ++i) {
    const std::string group = w.gang_size > 0 ? fmt::format("gang-{:05d}", i / w.gang_size) : std::string();
    if (auto r = add_pod(w.measure.tmpl, w.measure.ns, group); !r) return std::unexpected(r.error());
  }
  const size_t attempts_before = sched.attempts();
  std::string churn_error;
  const auto start = WallClock::now();
  auto last_churn = start;
  Drain(sched, clock, [&](std::chrono::nanoseconds d) {
    record_latency(d);
    if (w.churn) {
      auto now = WallClock::now();
      if (now - last_churn >= std::chrono::milliseconds(w.churn_interval_ms)) {
        last_churn = now;
        if (auto r = add_pod(*w.churn, "default"); !r && churn_error.empty()) churn_error = r.error();
      }
    }
  });
  const auto end = WallClock::now();
  if (!churn_error.empty()) return std::unexpected(churn_error);

  Result r = finish(sched.attempts() - attempts_before, start, end, w.measure_pods);
  if (w.gang_size > 0) {
    if (framework::runtime::Framework* fwk = sched.FrameworkFor("default-scheduler")) {
      const std::any stats = fwk->PluginStatistics(plugins::gang_scheduling::GangScheduling::kName);
      if (const auto* g = std::any_cast<plugins::gang_scheduling::GangReport>(&stats)) r.gangs = g->stats;
    }
  }
  return r;
}

bool Selected(const Workload& w, const std::vector<std::string>& names, bool all) {
  if (all) return true;
  if (names.empty()) return w.in_default_set;
  std::string base = w.name.substr(0, w.name.find('/'));
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n == w.name || n == base; });
}

void PrintRow(const Result& r, std::ostream& out) {
  std::string threshold = r.threshold ? fmt::format("{:.0f}", *r.threshold) : "-";
  std::string measured = r.scheduled == static_cast<size_t>(r.measure_pods)
                             ? std::to_string(r.measure_pods)
                             : fmt::format("{} ({} bound)", r.measure_pods, r.scheduled);
  out << fmt::format("{:<54} {:>6} {:>14} {:>9.1f} {:>8.3f} {:>8.3f} {:>8.3f} {:>9.1f} {:>10}\n", r.name, r.nodes,
                     measured, r.pods_per_second, r.p50_ms, r.p90_ms, r.p99_ms, r.peak_rss_mib, threshold);
  if (r.gangs) {
    const auto& g = *r.gangs;
    out << fmt::format(
        "  gangs: {} group cycles, {} placed whole, {} unschedulable; {} solved optimal; {:.2f} ms a "
        "group (longest {:.2f} ms); {:.1f} domains solved a group\n",
        g.cycles, g.placed, g.unschedulable, g.all_optimal ? "all" : "not all",
        g.cycles > 0 ? 1000 * g.seconds / static_cast<double>(g.cycles) : 0, 1000 * g.max_seconds,
        g.cycles > 0 ? static_cast<double>(g.domains_tried) / static_cast<double>(g.cycles) : 0);
  }
}

// One workload's result as a JSON object, its fields sorted by name (as the output has always
// had them).
void WriteJson(const Result& r, framework::ArgsWriter& w) {
  w.StartObject();
  w.Key("attempts").Int64(static_cast<int64_t>(r.attempts));
  w.Key("evictions").Int64(static_cast<int64_t>(r.evictions));
  if (r.gangs) {
    const auto& g = *r.gangs;
    w.Key("gangs").StartObject();
    w.Key("allOptimal").Bool(g.all_optimal);
    w.Key("cycles").Int64(g.cycles);
    w.Key("domainsSolved").Int64(g.domains_tried);
    w.Key("maxSeconds").Double(g.max_seconds);
    w.Key("placed").Int64(g.placed);
    w.Key("seconds").Double(g.seconds);
    w.Key("unschedulable").Int64(g.unschedulable);
    w.EndObject();
  }
  w.Key("latencyMs").StartObject();
  w.Key("p50").Double(r.p50_ms).Key("p90").Double(r.p90_ms).Key("p99").Double(r.p99_ms);
  w.EndObject();
  w.Key("measuredPods").Int64(r.measure_pods);
  w.Key("measuredPodsBound").Int64(static_cast<int64_t>(r.scheduled));
  w.Key("nodes").Int64(r.nodes);
  w.Key("peakRssMiB").Double(r.peak_rss_mib);
  w.Key("podsPerSecond").Double(r.pods_per_second);
  w.Key("seconds").Double(r.seconds);
  w.Key("upstreamThreshold");
  if (r.threshold) {
    w.Double(*r.threshold);
  } else {
    w.Null();
  }
  w.Key("workload").String(r.name);
  w.EndObject();
}

}  // namespace

CLI::App* AddBenchSubcommand(CLI::App& app, BenchFlags& args) {
  CLI::App* bench =
      app.add_subcommand("bench",
                         "run upstream scheduler_perf workloads in memory and report throughput (pods/s), per-attempt "
                         "latency and peak RSS");
  bench->add_option("--workload", args.workloads,
                    "workload to run (repeatable): a test case (SchedulingBasic) or one variant "
                    "(SchedulingBasic/500Nodes); default: every variant upstream's CI gates with a threshold");
  bench->add_option("--nodes", args.nodes, "override the node count of every selected workload")
      ->check(IntegerInRange(1, INT32_MAX, "a positive integer", "POSITIVE"));
  bench->add_option("--pods", args.pods, "override the measured pod count of every selected workload")
      ->check(IntegerInRange(1, INT32_MAX, "a positive integer", "POSITIVE"));
  bench->add_option("-o,--output", args.output, "output format: table or json")
      ->check(OneOf({"table", "json"}))
      ->capture_default_str();
  bench->add_flag("--list", args.list, "list the workloads and exit");
  bench->add_flag("--all", args.all, "run every workload, the 500-node variants included");
  return bench;
}

int BenchCommand(const BenchFlags& args) {
  if (args.output != "table" && args.output != "json") {
    std::cerr << "error: -o/--output: unsupported value \"" << args.output << "\" (expected table or json)\n";
    return 2;
  }
  std::vector<Workload> all = AllWorkloads();
  if (args.list) {
    for (const auto& w : all) {
      const std::string measure = w.dra && w.dra->steady ? fmt::format("steady({} for {}s)", w.dra->steady_batch,
                                                                       w.dra->steady_duration_ms / 1000.0)
                                                         : std::to_string(w.measure_pods);
      std::cout << fmt::format("{:<52} nodes={} initPods={}x{} measurePods={} threshold={}{}\n", w.name, w.nodes,
                               w.init_pods, w.init_groups.size(), measure,
                               w.threshold ? fmt::format("{:.0f}", *w.threshold) : "-",
                               w.in_default_set ? "" : " (not in default set)");
    }
    return 0;
  }
  for (const auto& n : args.workloads) {
    bool known = std::any_of(all.begin(), all.end(),
                             [&](const Workload& w) { return w.name == n || w.name.substr(0, w.name.find('/')) == n; });
    if (!known) {
      std::cerr << "error: --workload: unknown workload \"" << n << "\" (see kubesched bench --list)\n";
      return 2;
    }
  }

  std::vector<Workload> selected;
  for (Workload w : all) {
    if (!Selected(w, args.workloads, args.all)) continue;
    if (args.nodes) w.nodes = *args.nodes;
    if (args.pods) w.measure_pods = *args.pods;
    selected.push_back(std::move(w));
  }
  framework::Registry registry;
  plugins::RegisterInTreePlugins(registry);

  const bool table = args.output == "table";
  if (table) {
    std::cout << fmt::format("{:<54} {:>6} {:>14} {:>9} {:>8} {:>8} {:>8} {:>9} {:>10}\n", "WORKLOAD", "NODES",
                             "MEASURED PODS", "PODS/S", "P50 MS", "P90 MS", "P99 MS", "RSS MIB", "UPSTREAM");
    std::cout.flush();
  }
  framework::ArgsWriter out;
  out.StartArray();
  for (const auto& w : selected) {
    auto r = RunWorkload(w, registry);
    if (!r) {
      std::cerr << "error: " << w.name << ": " << r.error() << "\n";
      return 1;
    }
    if (table) {
      PrintRow(*r, std::cout);
      std::cout.flush();
    } else {
      WriteJson(*r, out);
    }
  }
  if (!table) {
    // Indented as it has always been printed (two spaces a level).
    out.EndArray();
    auto doc = framework::ArgsDocument::Parse(out.text());
    std::cout << (doc ? doc->View().EncodePretty() : out.text()) << "\n";
  }
  return 0;
}

}  // namespace kubesched::cmd
