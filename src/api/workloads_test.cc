#include "api/workloads.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace kubesched::api {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;

bool InAlphabet(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return kNameSuffixAlphabet.find(c) != std::string_view::npos; });
}

Workload MakeWorkload(std::string kind, std::string name, int32_t replicas = 3) {
  Workload w;
  w.kind = std::move(kind);
  w.metadata.name = std::move(name);
  w.metadata.namespace_ = "shop";
  w.metadata.uid = "workload-uid";
  w.replicas = replicas;
  w.selector = LabelSelector{.match_labels = Labels{{"app", "web"}}, .match_expressions = {}};
  w.template_.metadata.labels = Labels{{"app", "web"}};
  w.template_.metadata.annotations = Labels{{"note", "x"}};
  Container c;
  c.name = "app";
  c.image = "nginx";
  c.resources.requests.emplace("cpu", Quantity::FromMilli(100));
  w.template_.spec.containers.push_back(c);
  w.template_.spec.priority = 5;
  return w;
}

std::shared_ptr<const Node> MakeNode(std::string name, Labels labels = {}, std::vector<Taint> taints = {}) {
  auto n = std::make_shared<Node>();
  n->metadata.name = name;
  n->metadata.labels = std::move(labels);
  n->metadata.labels.Set(std::string(kLabelHostname), name);
  n->spec.taints = std::move(taints);
  return n;
}

std::vector<std::string> Names(const std::vector<std::shared_ptr<Pod>>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back(p->metadata.name);
  return out;
}

TEST(WorkloadsTest, RandomStringsUseTheSafeAlphabet) {
  Rng rng(1);
  const std::string s = RandomString(rng, 200);
  EXPECT_EQ(s.size(), 200u);
  EXPECT_TRUE(InAlphabet(s));
  EXPECT_EQ(kNameSuffixAlphabet.size(), 27u);

  Rng a(7), b(7);
  EXPECT_EQ(GenerateName("web-", a), GenerateName("web-", b));
  const std::string long_base(70, 'x');
  const std::string generated = GenerateName(long_base, a);
  EXPECT_EQ(generated.size(), 63u);  // base cut to 58, plus 5
}

TEST(WorkloadsTest, GeneratedUIDsLookLikeUUIDs) {
  const std::string uid = GenerateUID("Pod", "default", "web");
  ASSERT_EQ(uid.size(), 36u);
  EXPECT_EQ(uid[8], '-');
  EXPECT_EQ(uid[13], '-');
  EXPECT_EQ(uid[18], '-');
  EXPECT_EQ(uid[23], '-');
  EXPECT_EQ(uid, GenerateUID("Pod", "default", "web"));
  EXPECT_NE(uid, GenerateUID("Pod", "default", "web2"));
  EXPECT_NE(uid, GenerateUID("Node", "default", "web"));
  // Length-prefixed fields: moving a character between fields changes the uid.
  EXPECT_NE(GenerateUID("Pod", "ab", "c"), GenerateUID("Pod", "a", "bc"));
}

TEST(WorkloadsTest, PodTemplateHashIsDeterministicAndTracksTheTemplate) {
  const Workload w = MakeWorkload("Deployment", "web");
  const std::string hash = ComputePodTemplateHash(w.template_);
  EXPECT_EQ(hash.size(), kPodTemplateHashLength);
  EXPECT_TRUE(InAlphabet(hash));
  EXPECT_EQ(hash, ComputePodTemplateHash(MakeWorkload("Deployment", "other").template_));

  Workload changed = w;
  changed.template_.spec.containers[0].image = "nginx:2";
  EXPECT_NE(ComputePodTemplateHash(changed.template_), hash);
  Workload relabelled = w;
  relabelled.template_.metadata.labels.Set("tier", "x");
  EXPECT_NE(ComputePodTemplateHash(relabelled.template_), hash);
  EXPECT_EQ(ReplicaSetNameForDeployment(w), "web-" + hash);
}

TEST(WorkloadsTest, DeploymentPods) {
  const Workload w = MakeWorkload("Deployment", "web", 3);
  Rng rng(1);
  auto pods = ExpandWorkload(w, {}, rng);
  ASSERT_EQ(pods.size(), 3u);
  const std::string hash = ComputePodTemplateHash(w.template_);
  const std::string rs = "web-" + hash;
  std::set<std::string> names;
  for (const auto& p : pods) {
    SCOPED_TRACE(p->metadata.name);
    const std::string& name = p->metadata.name;
    ASSERT_EQ(name.size(), rs.size() + 1 + kNameSuffixLength);
    EXPECT_TRUE(name.starts_with(rs + "-"));
    EXPECT_TRUE(InAlphabet(name.substr(rs.size() + 1)));
    EXPECT_EQ(p->metadata.generate_name, rs + "-");
    EXPECT_EQ(p->metadata.namespace_, "shop");
    EXPECT_EQ(p->metadata.labels, (Labels{{"app", "web"}, {"pod-template-hash", hash}}));
    EXPECT_EQ(p->metadata.annotations, (Labels{{"note", "x"}}));
    EXPECT_THAT(p->metadata.owner_references,
                ElementsAre(OwnerReference{"apps/v1", "ReplicaSet", rs, GenerateUID("ReplicaSet", "shop", rs), true}));
    EXPECT_EQ(p->metadata.uid, GenerateUID("Pod", "shop", name));
    EXPECT_EQ(p->spec.containers.at(0).image, "nginx");
    EXPECT_EQ(p->Priority(), 5);
    EXPECT_EQ(p->status.phase, PodPhase::kPending);
    EXPECT_TRUE(w.selector->Matches(p->metadata.labels));
    names.insert(name);
  }
  EXPECT_EQ(names.size(), 3u);
}

TEST(WorkloadsTest, NamesAreDeterministicPerSeed) {
  const Workload w = MakeWorkload("ReplicaSet", "rs", 5);
  Rng a(1), b(1), c(2);
  const auto first = Names(ExpandWorkload(w, {}, a));
  EXPECT_EQ(first, Names(ExpandWorkload(w, {}, b)));
  EXPECT_NE(first, Names(ExpandWorkload(w, {}, c)));
  // The stream continues: a second expansion from the same generator gives new names.
  EXPECT_NE(first, Names(ExpandWorkload(w, {}, a)));
}

TEST(WorkloadsTest, ReplicaSetPods) {
  const Workload w = MakeWorkload("ReplicaSet", "front", 2);
  Rng rng(3);
  auto pods = ExpandWorkload(w, {}, rng);
  ASSERT_EQ(pods.size(), 2u);
  for (const auto& p : pods) {
    EXPECT_TRUE(p->metadata.name.starts_with("front-"));
    EXPECT_EQ(p->metadata.name.size(), std::string("front-").size() + 5);
    EXPECT_FALSE(p->metadata.labels.Has(kLabelPodTemplateHash));
    EXPECT_THAT(p->metadata.owner_references,
                ElementsAre(OwnerReference{"apps/v1", "ReplicaSet", "front", "workload-uid", true}));
  }
  Workload none = w;
  none.replicas = 0;
  EXPECT_TRUE(ExpandWorkload(none, {}, rng).empty());
}

TEST(WorkloadsTest, StatefulSetPods) {
  const Workload w = MakeWorkload("StatefulSet", "db", 3);
  Rng rng(1);
  auto pods = ExpandWorkload(w, {}, rng);
  EXPECT_THAT(Names(pods), ElementsAre("db-0", "db-1", "db-2"));
  for (size_t i = 0; i < pods.size(); ++i) {
    const Pod& p = *pods[i];
    EXPECT_EQ(*p.metadata.labels.Find(kLabelStatefulSetPodName), "db-" + std::to_string(i));
    EXPECT_EQ(*p.metadata.labels.Find(kLabelPodIndex), std::to_string(i));
    EXPECT_EQ(*p.metadata.labels.Find("app"), "web");
    EXPECT_TRUE(p.metadata.labels.Has(kLabelControllerRevisionHash));
    EXPECT_TRUE(p.metadata.generate_name.empty());
    EXPECT_THAT(p.metadata.owner_references,
                ElementsAre(OwnerReference{"apps/v1", "StatefulSet", "db", "workload-uid", true}));
  }
  // StatefulSet names need no randomness: the same for any seed.
  Rng other(99);
  EXPECT_EQ(Names(ExpandWorkload(w, {}, other)), Names(pods));
}

TEST(WorkloadsTest, JobPods) {
  Workload w = MakeWorkload("Job", "batch", 4);
  w.completions = 10;
  Rng rng(1);
  auto pods = ExpandWorkload(w, {}, rng);
  ASSERT_EQ(pods.size(), 4u);  // parallelism
  for (const auto& p : pods) {
    EXPECT_TRUE(p->metadata.name.starts_with("batch-"));
    EXPECT_EQ(*p->metadata.labels.Find(kLabelJobName), "batch");
    EXPECT_EQ(*p->metadata.labels.Find(kLabelBatchJobName), "batch");
    EXPECT_EQ(*p->metadata.labels.Find(kLabelControllerUID), "workload-uid");
    EXPECT_EQ(*p->metadata.labels.Find(kLabelBatchControllerUID), "workload-uid");
    EXPECT_THAT(p->metadata.owner_references,
                ElementsAre(OwnerReference{"batch/v1", "Job", "batch", "workload-uid", true}));
  }
  w.completions = 2;  // never more pods than completions left
  EXPECT_EQ(ExpandWorkload(w, {}, rng).size(), 2u);
}

TEST(WorkloadsTest, DaemonSetEligibility) {
  Workload ds = MakeWorkload("DaemonSet", "agent");
  ds.template_.spec.node_selector = Labels{{"role", "worker"}};
  ds.template_.spec.tolerations.push_back(
      Toleration{"dedicated", TolerationOperator::kEqual, "infra", TaintEffect::kNoSchedule, std::nullopt});

  struct Case {
    std::string name;
    std::shared_ptr<const Node> node;
    bool want;
  };
  const Labels worker{{"role", "worker"}};
  const std::vector<Case> cases = {
      {"plain worker", MakeNode("w1", worker), true},
      {"fails nodeSelector", MakeNode("m1", Labels{{"role", "master"}}), false},
      {"untolerated NoSchedule", MakeNode("w2", worker, {Taint{"gpu", "", TaintEffect::kNoSchedule}}), false},
      {"untolerated NoExecute", MakeNode("w3", worker, {Taint{"gpu", "", TaintEffect::kNoExecute}}), false},
      {"PreferNoSchedule is ignored", MakeNode("w4", worker, {Taint{"gpu", "", TaintEffect::kPreferNoSchedule}}), true},
      {"template toleration", MakeNode("w5", worker, {Taint{"dedicated", "infra", TaintEffect::kNoSchedule}}), true},
      {"template toleration, other value", MakeNode("w6", worker, {Taint{"dedicated", "db", TaintEffect::kNoSchedule}}),
       false},
      {"unschedulable taint tolerated",
       MakeNode("w7", worker, {Taint{std::string(kTaintNodeUnschedulable), "", TaintEffect::kNoSchedule}}), true},
      {"not-ready taint tolerated",
       MakeNode("w8", worker, {Taint{std::string(kTaintNodeNotReady), "", TaintEffect::kNoExecute}}), true},
      {"memory-pressure tolerated",
       MakeNode("w9", worker, {Taint{std::string(kTaintNodeMemoryPressure), "", TaintEffect::kNoSchedule}}), true},
      {"network-unavailable needs hostNetwork",
       MakeNode("w10", worker, {Taint{std::string(kTaintNodeNetworkUnavailable), "", TaintEffect::kNoSchedule}}),
       false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(DaemonSetShouldRunOnNode(ds, *c.node), c.want);
  }

  Workload host = ds;
  host.template_.spec.host_network = true;
  EXPECT_TRUE(DaemonSetShouldRunOnNode(
      host, *MakeNode("w", worker, {Taint{std::string(kTaintNodeNetworkUnavailable), "", TaintEffect::kNoSchedule}})));

  Workload pinned = ds;
  pinned.template_.spec.node_name = "w1";
  EXPECT_TRUE(DaemonSetShouldRunOnNode(pinned, *MakeNode("w1", worker)));
  EXPECT_FALSE(DaemonSetShouldRunOnNode(pinned, *MakeNode("w2", worker)));

  Workload affinity = MakeWorkload("DaemonSet", "agent");
  affinity.template_.spec.affinity.emplace();
  affinity.template_.spec.affinity->node_affinity.emplace();
  affinity.template_.spec.affinity->node_affinity->required =
      NodeSelector{{NodeSelectorTerm{{SelectorRequirement{"zone", SelectorOperator::kIn, {"a"}}}, {}}}};
  EXPECT_TRUE(DaemonSetShouldRunOnNode(affinity, *MakeNode("z", Labels{{"zone", "a"}})));
  EXPECT_FALSE(DaemonSetShouldRunOnNode(affinity, *MakeNode("z", Labels{{"zone", "b"}})));
}

TEST(WorkloadsTest, DaemonSetPodsArePinnedByAffinityNotNodeName) {
  Workload ds = MakeWorkload("DaemonSet", "agent");
  ds.template_.spec.host_network = true;
  ds.template_.spec.affinity.emplace();
  ds.template_.spec.affinity->node_affinity.emplace();
  ds.template_.spec.affinity->node_affinity->required =
      NodeSelector{{NodeSelectorTerm{{SelectorRequirement{"os", SelectorOperator::kIn, {"linux"}}}, {}}}};
  ds.template_.spec.affinity->node_affinity->preferred.push_back(
      PreferredSchedulingTerm{7, NodeSelectorTerm{{SelectorRequirement{"fast", SelectorOperator::kExists, {}}}, {}}});
  const std::vector<std::shared_ptr<const Node>> nodes = {
      MakeNode("n1", Labels{{"os", "linux"}}),
      MakeNode("n2", Labels{{"os", "windows"}}),
      MakeNode("n3", Labels{{"os", "linux"}}, {Taint{"x", "", TaintEffect::kNoSchedule}}),
      MakeNode("n4", Labels{{"os", "linux"}}),
  };
  Rng rng(1);
  auto pods = ExpandWorkload(ds, nodes, rng);
  ASSERT_EQ(pods.size(), 2u);
  std::vector<std::string> targets;
  for (const auto& p : pods) {
    EXPECT_TRUE(p->metadata.name.starts_with("agent-"));
    EXPECT_TRUE(p->spec.node_name.empty());
    targets.push_back(DaemonPodTargetNode(*p));
    const auto& na = *p->spec.affinity->node_affinity;
    // The required affinity is replaced by the pin; preferred terms stay.
    ASSERT_EQ(na.required->terms.size(), 1u);
    EXPECT_TRUE(na.required->terms[0].match_expressions.empty());
    EXPECT_EQ(na.preferred.size(), 1u);
    EXPECT_THAT(p->metadata.owner_references,
                ElementsAre(OwnerReference{"apps/v1", "DaemonSet", "agent", "workload-uid", true}));
    // Standard daemon tolerations, including network-unavailable for host-network pods.
    EXPECT_EQ(p->spec.tolerations.size(), 7u);
    EXPECT_THAT(p->spec.tolerations,
                Contains(Toleration{std::string(kTaintNodeNetworkUnavailable), TolerationOperator::kExists, "",
                                    TaintEffect::kNoSchedule, std::nullopt}));
    EXPECT_THAT(p->spec.tolerations,
                Contains(Toleration{std::string(kTaintNodeUnreachable), TolerationOperator::kExists, "",
                                    TaintEffect::kNoExecute, std::nullopt}));
    const std::string target = DaemonPodTargetNode(*p);
    EXPECT_TRUE(na.required->Matches(target, Labels{}));
    EXPECT_FALSE(na.required->Matches(target == "n1" ? "n4" : "n1", Labels{{"os", "linux"}}));
  }
  EXPECT_THAT(targets, ElementsAre("n1", "n4"));

  // No duplicate daemon tolerations when the template already has one.
  Workload tolerant = MakeWorkload("DaemonSet", "agent");
  tolerant.template_.spec.tolerations = DaemonSetTolerations(false);
  auto again = ExpandWorkload(tolerant, {MakeNode("n1")}, rng);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0]->spec.tolerations.size(), 6u);
  EXPECT_THAT(again[0]->spec.tolerations,
              Not(Contains(Toleration{std::string(kTaintNodeNetworkUnavailable), TolerationOperator::kExists, "",
                                      TaintEffect::kNoSchedule, std::nullopt})));
}

TEST(WorkloadsTest, NewPodForWorkloadReplacesLikeTheController) {
  Rng rng(5);
  const Workload sts = MakeWorkload("StatefulSet", "db", 3);
  auto sts_pods = ExpandWorkload(sts, {}, rng);
  auto again = NewPodForWorkload(sts, rng, sts_pods[2].get());
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->metadata.name, "db-2");
  EXPECT_EQ(*again->metadata.labels.Find(kLabelPodIndex), "2");
  EXPECT_EQ(NewPodForWorkload(sts, rng)->metadata.name, "db-0");

  const Workload deploy = MakeWorkload("Deployment", "web", 1);
  auto original = ExpandWorkload(deploy, {}, rng).at(0);
  auto replacement = NewPodForWorkload(deploy, rng, original.get());
  EXPECT_NE(replacement->metadata.name, original->metadata.name);
  EXPECT_EQ(replacement->metadata.owner_references, original->metadata.owner_references);
  EXPECT_EQ(replacement->metadata.labels, original->metadata.labels);

  const Workload ds = MakeWorkload("DaemonSet", "agent");
  auto daemon = ExpandWorkload(ds, {MakeNode("a"), MakeNode("b")}, rng).at(1);
  ASSERT_EQ(DaemonPodTargetNode(*daemon), "b");
  auto daemon_again = NewPodForWorkload(ds, rng, daemon.get());
  EXPECT_EQ(DaemonPodTargetNode(*daemon_again), "b");
  EXPECT_NE(daemon_again->metadata.name, daemon->metadata.name);
  EXPECT_EQ(DaemonPodTargetNode(*NewPodForWorkload(ds, rng)), "");

  Workload unknown = MakeWorkload("CronJob", "c");
  EXPECT_EQ(NewPodForWorkload(unknown, rng), nullptr);
  EXPECT_TRUE(ExpandWorkload(unknown, {}, rng).empty());
}

TEST(WorkloadsTest, MatchLabelKeysAreMergedForGeneratedPods) {
  Workload w = MakeWorkload("Deployment", "web", 1);
  TopologySpreadConstraint tsc;
  tsc.topology_key = std::string(kLabelTopologyZone);
  tsc.label_selector = LabelSelector{.match_labels = Labels{{"app", "web"}}, .match_expressions = {}};
  tsc.match_label_keys = {std::string(kLabelPodTemplateHash)};
  w.template_.spec.topology_spread_constraints.push_back(tsc);
  PodAffinityTerm term;
  term.label_selector = LabelSelector{.match_labels = Labels{{"app", "web"}}, .match_expressions = {}};
  term.topology_key = std::string(kLabelHostname);
  term.mismatch_label_keys = {std::string(kLabelPodTemplateHash)};
  w.template_.spec.affinity.emplace();
  w.template_.spec.affinity->pod_anti_affinity = PodAffinity{.required = {term}, .preferred = {}};

  Rng rng(1);
  auto pod = ExpandWorkload(w, {}, rng).at(0);
  const std::string hash = ComputePodTemplateHash(w.template_);
  EXPECT_THAT(pod->spec.topology_spread_constraints[0].label_selector->match_expressions,
              ElementsAre(SelectorRequirement{std::string(kLabelPodTemplateHash), SelectorOperator::kIn, {hash}}));
  EXPECT_THAT(pod->spec.affinity->pod_anti_affinity->required[0].label_selector->match_expressions,
              ElementsAre(SelectorRequirement{std::string(kLabelPodTemplateHash), SelectorOperator::kNotIn, {hash}}));
  // Applying again (as for a pod rebuilt from this one) does not stack copies.
  ApplyMatchLabelKeys(*pod);
  EXPECT_EQ(pod->spec.topology_spread_constraints[0].label_selector->match_expressions.size(), 1u);
}

TEST(WorkloadsTest, ToleratesTaint) {
  const Taint taint{"k", "v", TaintEffect::kNoSchedule};
  EXPECT_TRUE(ToleratesTaint({"k", TolerationOperator::kEqual, "v", TaintEffect::kNoSchedule, std::nullopt}, taint));
  EXPECT_TRUE(ToleratesTaint({"k", TolerationOperator::kEqual, "v", std::nullopt, std::nullopt}, taint));
  EXPECT_FALSE(ToleratesTaint({"k", TolerationOperator::kEqual, "w", std::nullopt, std::nullopt}, taint));
  EXPECT_FALSE(ToleratesTaint({"k", TolerationOperator::kEqual, "v", TaintEffect::kNoExecute, std::nullopt}, taint));
  EXPECT_TRUE(ToleratesTaint({"k", TolerationOperator::kExists, "", std::nullopt, std::nullopt}, taint));
  EXPECT_TRUE(ToleratesTaint({"", TolerationOperator::kExists, "", std::nullopt, std::nullopt}, taint));
  EXPECT_FALSE(ToleratesTaint({"other", TolerationOperator::kExists, "", std::nullopt, std::nullopt}, taint));
}

TEST(WorkloadsTest, ReplicationControllerAndIndexedJobPods) {
  Workload rc = MakeWorkload("ReplicationController", "legacy", 2);
  Rng rng(1);
  auto rc_pods = ExpandWorkload(rc, {}, rng);
  ASSERT_EQ(rc_pods.size(), 2u);
  for (const auto& pod : rc_pods) {
    EXPECT_TRUE(pod->metadata.name.starts_with("legacy-"));
    EXPECT_EQ(pod->metadata.generate_name, "legacy-");
    EXPECT_THAT(pod->metadata.owner_references,
                ElementsAre(OwnerReference{"v1", "ReplicationController", "legacy", "workload-uid", true}));
  }

  Workload job = MakeWorkload("Job", "shard", 2);
  job.completions = 4;
  job.completion_mode = CompletionMode::kIndexed;
  auto pods = ExpandWorkload(job, {}, rng);
  ASSERT_EQ(pods.size(), 2u);
  for (size_t i = 0; i < pods.size(); ++i) {
    EXPECT_EQ(pods[i]->metadata.generate_name, "shard-" + std::to_string(i) + "-");
    EXPECT_EQ(*pods[i]->metadata.labels.Find(kLabelJobCompletionIndex), std::to_string(i));
    EXPECT_EQ(*pods[i]->metadata.annotations.Find(kLabelJobCompletionIndex), std::to_string(i));
  }
  // A replacement keeps its index; a long job name is cut so that the index survives.
  EXPECT_EQ(*NewPodForWorkload(job, rng, pods[1].get())->metadata.labels.Find(kLabelJobCompletionIndex), "1");
  job.metadata.name = std::string(60, 'j');
  auto long_name = ExpandWorkload(job, {}, rng).at(1);
  EXPECT_EQ(long_name->metadata.generate_name, std::string(55, 'j') + "-1-");
  EXPECT_EQ(long_name->metadata.name.size(), 63u);

  job.suspend = true;
  EXPECT_TRUE(ExpandWorkload(job, {}, rng).empty());
}

// What the controllers create when some of their pods exist already (a cluster dump).
TEST(WorkloadsTest, ExistingPodsAreCountedAsTheirControllerCountsThem) {
  auto owned_pod = [](std::string name, PodPhase phase = PodPhase::kRunning, std::string node = "",
                      std::optional<int> index = std::nullopt, bool deleting = false) {
    Pod p;
    p.metadata.name = std::move(name);
    p.status.phase = phase;
    p.spec.node_name = std::move(node);
    if (index) p.metadata.annotations.Set(std::string(kLabelJobCompletionIndex), std::to_string(*index));
    if (deleting) p.metadata.deletion_timestamp_ns = 1;
    return p;
  };
  // What a created pod is told apart by: its ordinal (StatefulSet), node (DaemonSet), completion
  // index (Indexed Job), else just that it is new.
  auto describe = [](const Workload& w, const Pod& pod) -> std::string {
    if (w.kind == "StatefulSet") return pod.metadata.name;
    if (w.kind == "DaemonSet") return DaemonPodTargetNode(pod);
    if (const std::string* index = pod.metadata.labels.Find(kLabelJobCompletionIndex)) return "index " + *index;
    return "new";
  };
  auto job = [](int32_t parallelism, int32_t completions, bool indexed = false) {
    Workload w = MakeWorkload("Job", "job", parallelism);
    w.completions = completions;
    if (indexed) w.completion_mode = CompletionMode::kIndexed;
    return w;
  };
  struct Case {
    std::string name;
    Workload workload;
    std::vector<Pod> owned;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"ReplicaSet with all its replicas",
       MakeWorkload("ReplicaSet", "web", 1),
       {owned_pod("web-a", PodPhase::kRunning, "n1")},
       {}},
      {"ReplicaSet missing two",
       MakeWorkload("ReplicaSet", "web", 3),
       {owned_pod("web-a", PodPhase::kRunning, "n1")},
       {"new", "new"}},
      {"finished and deleting pods do not count",
       MakeWorkload("ReplicationController", "web", 2),
       {owned_pod("web-a", PodPhase::kFailed, "n1"), owned_pod("web-b", PodPhase::kRunning, "n1", std::nullopt, true),
        owned_pod("web-c", PodPhase::kPending)},
       {"new"}},
      {"more pods than replicas", MakeWorkload("ReplicaSet", "web", 1), {owned_pod("web-a"), owned_pod("web-b")}, {}},
      {"StatefulSet ordinals that exist are not recreated",
       MakeWorkload("StatefulSet", "db", 3),
       {owned_pod("db-1", PodPhase::kRunning, "n1")},
       {"db-0", "db-2"}},
      {"DaemonSet nodes with its pod get no second one",
       MakeWorkload("DaemonSet", "agent"),
       {owned_pod("agent-x", PodPhase::kRunning, "n2")},
       {"n1", "n3"}},
      {"Job: active pods fill parallelism, succeeded count against completions",
       job(2, 4),
       {owned_pod("job-a", PodPhase::kSucceeded), owned_pod("job-b", PodPhase::kRunning, "n1")},
       {"new"}},
      {"Job with its completions done",
       job(3, 2),
       {owned_pod("job-a", PodPhase::kSucceeded), owned_pod("job-b", PodPhase::kSucceeded)},
       {}},
      {"Job: failed pods are replaced", job(2, 2), {owned_pod("job-a", PodPhase::kFailed)}, {"new", "new"}},
      {"Indexed Job takes the lowest free indexes",
       job(2, 4, true),
       {owned_pod("job-0-a", PodPhase::kSucceeded, "", 0), owned_pod("job-1-a", PodPhase::kRunning, "n1", 1)},
       {"index 2"}},
      {"Indexed Job retries a failed index",
       job(3, 3, true),
       {owned_pod("job-0-a", PodPhase::kFailed, "", 0), owned_pod("job-2-a", PodPhase::kRunning, "n1", 2)},
       {"index 0", "index 1"}},
  };
  const std::vector<std::shared_ptr<const Node>> nodes = {MakeNode("n1"), MakeNode("n2"), MakeNode("n3")};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<const Pod*> owned;
    for (const Pod& p : c.owned) owned.push_back(&p);
    Rng rng(1);
    std::vector<std::string> got;
    for (const auto& pod : ExpandWorkload(c.workload, nodes, rng, owned)) {
      got.push_back(describe(c.workload, *pod));
      for (const Pod& p : c.owned) EXPECT_NE(pod->metadata.name, p.metadata.name);
    }
    EXPECT_EQ(got, c.want);
  }
}

}  // namespace
}  // namespace kubesched::api
