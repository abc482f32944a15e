#include "plugins/node_declared_features/node_declared_features.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "api/decode.h"
#include "api/encode.h"
#include "api/schema.h"
#include "testing/builders.h"
#include "testing/fake_handle.h"
#include "testing/printers.h"

namespace kubesched::plugins::node_declared_features {
namespace {

using framework::QueueingHint;
using framework::Status;
using testing::MakeNode;
using testing::MakePod;

bool Always(const PodSpecView&) { return true; }
bool Never(const PodSpecView&) { return false; }

// A decoded pod (so it carries its JSON, as pods read from manifests and the API do) with `spec`.
std::shared_ptr<api::Pod> PodWithSpec(const std::string& spec, const std::string& uid = "uid-1") {
  api::json::Document doc;
  const std::string text = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default","uid":")" +
                           uid + R"("},"spec":)" + spec + "}";
  EXPECT_TRUE(api::json::Parse(text, doc).has_value()) << text;
  auto pod = api::DecodePod(doc);
  EXPECT_TRUE(pod.has_value()) << text;
  return pod.has_value() ? *pod : MakePod().Obj();
}

// A container list entry with `extra` members.
std::string Container(const std::string& name, const std::string& extra = "") {
  return R"({"name":")" + name + R"(","image":"busybox")" + (extra.empty() ? "" : "," + extra) + "}";
}

constexpr std::string_view kRestartAllRuleOnly =
    R"("restartPolicyRules":[{"action":"RestartAllContainers","exitCodes":{"operator":"In","values":[1]}}])";
constexpr std::string_view kRestartAllRule =
    R"("restartPolicy":"Never","restartPolicyRules":[{"action":"RestartAllContainers",)"
    R"("exitCodes":{"operator":"In","values":[1]}}])";

std::string PodCertificateVolume(const std::string& key_type) {
  return R"({"volumes":[{"name":"test","projected":{"sources":[{"podCertificate":{"signerName":"a/b","keyType":")" +
         key_type + R"("}}]}}],"containers":[)" + Container("c") + "]}";
}

std::vector<std::string_view> Infer(const api::Pod& pod) {
  return InferForPodScheduling(AllFeatures(), pod, kRegistryVersion);
}

// The registry of the release followed: upstream's AllFeatures, in its order.
TEST(FeatureRegistryTest, AllFeatures) {
  std::vector<std::string_view> names;
  std::vector<std::string_view> scheduling;
  for (const Feature& f : AllFeatures()) {
    names.push_back(f.name);
    EXPECT_FALSE(f.max_version.has_value()) << f.name;
    if (f.infer_for_scheduling != nullptr) scheduling.push_back(f.name);
  }
  EXPECT_EQ(names, (std::vector<std::string_view>{
                       "RestartAllContainersOnContainerExits", "InPlacePodLevelResourcesVerticalScaling",
                       "ExtendWebSocketsToKubelet", "InPlacePodVerticalScalingInitContainers",
                       "InPlacePodVerticalScalingMemoryBackedVolumes", "UserNamespacesHostNetworkSupport",
                       "DRANodeAllocatableResources", "VolumeBindMountOptions", "DRAOptionalNodeOperations",
                       "PodCertificateMLDSA"}));
  EXPECT_EQ(scheduling,
            (std::vector<std::string_view>{"RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport",
                                           "VolumeBindMountOptions", "PodCertificateMLDSA"}));
}

// Upstream's restartallcontainers TestInferForScheduling, plus own cases.
TEST(FeatureRegistryTest, RestartAllContainers) {
  const std::vector<std::string_view> kWant = {"RestartAllContainersOnContainerExits"};
  struct Case {
    std::string name;
    std::string spec;
    bool want;
  };
  const std::vector<Case> cases = {
      // Upstream's init container also sets restartPolicy: Never, which kubesched's pod decoder does
      // not accept on an init container yet; the inference reads only the rules.
      {"init container with rules",
       "{\"initContainers\":[" + Container("container", std::string(kRestartAllRuleOnly)) + "],\"containers\":[" +
           Container("name") + "]}",
       true},
      {"regular container with rules",
       "{\"initContainers\":[" + Container("name") + "],\"containers\":[" +
           Container("container", std::string(kRestartAllRule)) + "]}",
       true},
      {"no rules", "{\"initContainers\":[" + Container("name") + "],\"containers\":[" + Container("name2") + "]}",
       false},
      // Own: a rule that restarts only its container needs nothing new of the node.
      {"a Restart rule",
       "{\"containers\":[" +
           Container("c", R"("restartPolicy":"Never","restartPolicyRules":[{"action":"Restart",)"
                          R"("exitCodes":{"operator":"In","values":[42]}}])") +
           "]}",
       false},
      {"the field name elsewhere (an annotation-like env value) parses, infers nothing",
       "{\"containers\":[" + Container("c", R"("env":[{"name":"restartPolicyRules","value":"x"}])") + "]}", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Infer(*PodWithSpec(c.spec)), c.want ? kWant : std::vector<std::string_view>{});
  }
}

// Upstream's podcertificatesmldsa TestInferForScheduling.
TEST(FeatureRegistryTest, PodCertificateMLDSA) {
  const std::vector<std::string_view> kWant = {"PodCertificateMLDSA"};
  struct Case {
    std::string name;
    std::string spec;
    bool want;
  };
  const std::string containers = "\"containers\":[" + Container("c") + "]";
  const std::vector<Case> cases = {
      {"podInfo contains spec that does not set volumes", "{" + containers + "}", false},
      {"a volume that is not a projected volume source",
       R"({"volumes":[{"name":"test","emptyDir":{}}],)" + containers + "}", false},
      {"a projected volume source, but not a podCertificate projection source",
       R"({"volumes":[{"name":"test","projected":{"sources":[{"secret":{"name":"s"}}]}}],)" + containers + "}", false},
      {"a podCertificate projection source, but not a MLDSA key type", PodCertificateVolume("RSA4096"), false},
      {"a podCertificate projection source and a MLDSA key type of MLDSA44", PodCertificateVolume("MLDSA44"), true},
      {"a podCertificate projection source and a MLDSA key type of MLDSA65", PodCertificateVolume("MLDSA65"), true},
      {"a podCertificate projection source and a MLDSA key type of MLDSA87", PodCertificateVolume("MLDSA87"), true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Infer(*PodWithSpec(c.spec)), c.want ? kWant : std::vector<std::string_view>{});
  }
}

// usernamespaceshostnetwork's InferForScheduling: host networking and hostUsers: false, both.
TEST(FeatureRegistryTest, UserNamespacesHostNetwork) {
  const std::vector<std::string_view> kWant = {"UserNamespacesHostNetworkSupport"};
  const std::string containers = "\"containers\":[" + Container("c") + "]";
  struct Case {
    std::string name;
    std::string spec;
    bool want;
  };
  const std::vector<Case> cases = {
      {"host network in a user namespace", R"({"hostNetwork":true,"hostUsers":false,)" + containers + "}", true},
      {"host network with the host's users", R"({"hostNetwork":true,"hostUsers":true,)" + containers + "}", false},
      {"host network, hostUsers unset", R"({"hostNetwork":true,)" + containers + "}", false},
      {"a user namespace on the pod network", R"({"hostUsers":false,)" + containers + "}", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Infer(*PodWithSpec(c.spec)), c.want ? kWant : std::vector<std::string_view>{});
  }
}

// volumebindmountoptions' InferForScheduling: a mount with bindMountOptions in any container.
TEST(FeatureRegistryTest, VolumeBindMountOptions) {
  const std::vector<std::string_view> kWant = {"VolumeBindMountOptions"};
  const std::string with_options = R"("volumeMounts":[{"name":"v","mountPath":"/d","bindMountOptions":["noexec"]}])";
  const std::string volumes = R"("volumes":[{"name":"v","emptyDir":{}}])";
  struct Case {
    std::string name;
    std::string spec;
    bool want;
  };
  const std::vector<Case> cases = {
      {"a container's mount", "{" + volumes + ",\"containers\":[" + Container("c", with_options) + "]}", true},
      {"an init container's mount",
       "{" + volumes + ",\"initContainers\":[" + Container("i", with_options) + "],\"containers\":[" + Container("c") +
           "]}",
       true},
      {"an ephemeral container's mount",
       "{" + volumes + ",\"containers\":[" + Container("c") + "],\"ephemeralContainers\":[" +
           Container("e", with_options) + "]}",
       true},
      {"an empty list",
       "{" + volumes + ",\"containers\":[" +
           Container("c", R"("volumeMounts":[{"name":"v","mountPath":"/d","bindMountOptions":[]}])") + "]}",
       false},
      {"mounts without options",
       "{" + volumes + ",\"containers\":[" + Container("c", R"("volumeMounts":[{"name":"v","mountPath":"/d"}])") + "]}",
       false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Infer(*PodWithSpec(c.spec)), c.want ? kWant : std::vector<std::string_view>{});
  }
}

TEST(FeatureRegistryTest, SeveralFeaturesSortedAndPodsBuiltInCode) {
  const std::string spec =
      R"({"hostNetwork":true,"hostUsers":false,"containers":[)" + Container("c", std::string(kRestartAllRule)) + "]}";
  EXPECT_EQ(Infer(*PodWithSpec(spec)), (std::vector<std::string_view>{"RestartAllContainersOnContainerExits",
                                                                      "UserNamespacesHostNetworkSupport"}));
  // A pod built in code has no JSON, hence none of the fields read there.
  auto built = MakePod().Name("p").Req({{"cpu", "1"}}).Obj();
  built->spec.host_network = true;
  EXPECT_TRUE(Infer(*built).empty());
}

// Upstream's TestPreFilter (the "plugin disabled" case has no counterpart: the feature is GA).
TEST(NodeDeclaredFeaturesTest, PreFilter) {
  struct Case {
    std::string name;
    std::vector<Feature> registry;
    Version version;
    Status want;
    std::vector<std::string> want_required;  // empty: no state written
  };
  const std::vector<Case> cases = {
      {"Pod with feature requirements",
       {{"TestFeature", std::nullopt, Always, {}}},
       {1, 35, 0},
       Status::Success(),
       {"TestFeature"}},
      {"Pod with multiple feature requirements",
       {{"TestFeature1", Version{1, 38, 0}, Always, {}}, {"TestFeature2", Version{1, 38, 0}, Always, {}}},
       {1, 35, 0},
       Status::Success(),
       {"TestFeature1", "TestFeature2"}},
      {"Pod with no requirements", {{"TestFeature", std::nullopt, Never, {}}}, {1, 35, 0}, Status::Skip(), {}},
      {"Feature not required, version > MaxVersion",
       {{"TestFeature", Version{1, 33, 0}, Always, {}}},
       {1, 34, 0},
       Status::Skip(),
       {}},
      // Own: at MaxVersion the feature still counts (the bound is inclusive).
      {"version == MaxVersion",
       {{"TestFeature", Version{1, 34, 0}, Always, {}}},
       {1, 34, 0},
       Status::Success(),
       {"TestFeature"}},
      {"a feature that only updates need",
       {{"TestFeature", std::nullopt, nullptr, {}}},
       {1, 35, 0},
       Status::Skip(),
       {}},
  };
  auto pod = framework::PodInfo::Create(MakePod().Name("test-pod").Obj());
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    NodeDeclaredFeatures plugin(c.registry, c.version);
    framework::CycleState state;
    auto [result, status] = plugin.PreFilter(state, *pod, {});
    EXPECT_TRUE(result.AllNodes());
    EXPECT_EQ(status, c.want);
    // The state is what Filter reads: a node declaring exactly the expected features fits, and
    // without state Filter reports the missing PreFilter.
    auto node = testing::MakeNodeInfo(MakeNode().Name("n").DeclaredFeatures(c.want_required).Obj());
    if (c.want_required.empty()) {
      EXPECT_TRUE(plugin.Filter(state, *pod, *node).IsError());
    } else {
      EXPECT_EQ(plugin.Filter(state, *pod, *node), Status::Success());
      auto fewer = c.want_required;
      fewer.pop_back();
      auto short_node = testing::MakeNodeInfo(MakeNode().Name("m").DeclaredFeatures(fewer).Obj());
      EXPECT_EQ(plugin.Filter(state, *pod, *short_node).code(), framework::Code::kUnschedulableAndUnresolvable);
    }
  }
}

// Upstream's TestFilter (the "plugin disabled" case has no counterpart: the feature is GA).
TEST(NodeDeclaredFeaturesTest, Filter) {
  const Status kUnsatisfied = Status::UnschedulableAndUnresolvable(std::string(kErrReasonUnsatisfiedRequirements));
  struct Case {
    std::string name;
    std::vector<std::string> node_features;
    std::vector<std::string_view> pre_filter_reqs;  // empty: PreFilter did not run
    Status want;
  };
  const std::vector<Case> cases = {
      {"Node matches requirements", {"FeatureA", "FeatureB"}, {"FeatureA"}, Status::Success()},
      {"Node does not match requirements", {"FeatureB"}, {"FeatureA"}, kUnsatisfied},
      {"Node with multiple features, pod requires subset",
       {"FeatureA", "FeatureB", "FeatureC"},
       {"FeatureA", "FeatureC"},
       Status::Success()},
      {"Node has no declared features", {}, {"FeatureA"}, kUnsatisfied},
      {"Node with some but not all required features", {"FeatureA"}, {"FeatureA", "FeatureB"}, kUnsatisfied},
      {"Error getting pre-filter state",
       {},
       {},
       Status::Error("error reading \"PreFilterNodeDeclaredFeatures\" from cycle-state: not found")},
  };
  auto pod = framework::PodInfo::Create(MakePod().Name("test-pod").Obj());
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    // A registry whose features the pod always requires: PreFilter leaves exactly those.
    std::vector<Feature> registry;
    for (std::string_view name : c.pre_filter_reqs) registry.push_back({name, std::nullopt, Always, {}});
    NodeDeclaredFeatures plugin(registry);
    framework::CycleState state;
    if (!c.pre_filter_reqs.empty()) {
      ASSERT_TRUE(plugin.PreFilter(state, *pod, {}).second.IsSuccess());
    }
    auto node = testing::MakeNodeInfo(MakeNode().Name("node-1").DeclaredFeatures(c.node_features).Obj());
    EXPECT_EQ(plugin.Filter(state, *pod, *node), c.want);
  }
}

// End to end with the real registry: decoded pods and nodes.
TEST(NodeDeclaredFeaturesTest, DecodedPodsAndNodes) {
  auto needs = framework::PodInfo::Create(
      PodWithSpec("{\"containers\":[" + Container("c", std::string(kRestartAllRule)) + "]}"));
  auto plain = framework::PodInfo::Create(PodWithSpec("{\"containers\":[" + Container("c") + "]}"));
  auto old_node = testing::MakeNodeInfo(MakeNode().Name("old").DeclaredFeatures({"ExtendWebSocketsToKubelet"}).Obj());
  auto new_node =
      testing::MakeNodeInfo(MakeNode()
                                .Name("new")
                                .DeclaredFeatures({"ExtendWebSocketsToKubelet", "RestartAllContainersOnContainerExits"})
                                .Obj());
  testing::FakeHandle handle;
  auto made = New({}, handle);
  ASSERT_TRUE(made.has_value());
  auto* plugin = dynamic_cast<NodeDeclaredFeatures*>(made->get());
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->Name(), "NodeDeclaredFeatures");
  EXPECT_FALSE(plugin->FilterIsNodeLocal());

  framework::CycleState state;
  EXPECT_TRUE(plugin->PreFilter(state, *needs, {}).second.IsSuccess());
  EXPECT_EQ(plugin->Filter(state, *needs, *old_node),
            Status::UnschedulableAndUnresolvable("node(s) didn't match Pod's required features"));
  EXPECT_EQ(plugin->Filter(state, *needs, *new_node), Status::Success());
  // A clone (preemption's what-if state) carries the requirements.
  auto clone = state.Clone();
  EXPECT_EQ(plugin->Filter(*clone, *needs, *new_node), Status::Success());

  framework::CycleState plain_state;
  EXPECT_EQ(plugin->PreFilter(plain_state, *plain, {}).second, Status::Skip());
}

// Upstream's TestEnqueueExtensionsNodeUpdate, plus own cases.
TEST(NodeDeclaredFeaturesTest, IsSchedulableAfterNodeChange) {
  struct Case {
    std::string name;
    std::shared_ptr<api::Node> old_node;
    std::shared_ptr<api::Node> new_node;
    QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"Node Add with feature", nullptr, MakeNode().Name("node-1").DeclaredFeatures({"FeatureA"}).Obj(),
       QueueingHint::kQueue},
      {"Node Update (Features Added)", MakeNode().Name("node-1").Obj(),
       MakeNode().Name("node-1").DeclaredFeatures({"FeatureA"}).Obj(), QueueingHint::kQueue},
      {"Node Update (Features Unchanged)", MakeNode().Name("node-1").DeclaredFeatures({"FeatureA"}).Obj(),
       MakeNode().Name("node-1").DeclaredFeatures({"FeatureA"}).Obj(), QueueingHint::kSkip},
      // Own cases.
      {"Node Update (Features Removed)", MakeNode().Name("node-1").DeclaredFeatures({"FeatureA"}).Obj(),
       MakeNode().Name("node-1").Obj(), QueueingHint::kQueue},
      {"Node Update of something else", MakeNode().Name("node-1").DeclaredFeatures({"FeatureA"}).Obj(),
       MakeNode().Name("node-1").Label("zone", "a").DeclaredFeatures({"FeatureA"}).Obj(), QueueingHint::kSkip},
      {"Node Add without features", nullptr, MakeNode().Name("node-1").Obj(), QueueingHint::kQueue},
  };
  auto pod = MakePod().Name("test-pod").Obj();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::EventObjects event{.old_node = c.old_node.get(), .new_node = c.new_node.get()};
    EXPECT_EQ(IsSchedulableAfterNodeChange(*pod, event), c.want);
  }
}

// Upstream's TestEnqueueExtensionsPodUpdate with the real registry in place of its mock feature
// (whose inference the pods' restart rules now drive).
TEST(NodeDeclaredFeaturesTest, IsSchedulableAfterPodUpdate) {
  const std::string with_rule = "{\"containers\":[" + Container("c", std::string(kRestartAllRule)) + "]}";
  const std::string without = "{\"containers\":[" + Container("c") + "]}";
  const std::string other_change = "{\"containers\":[" + Container("c", R"("env":[{"name":"A","value":"1"}])") + "]}";
  struct Case {
    std::string name;
    std::shared_ptr<api::Pod> old_pod;
    std::shared_ptr<api::Pod> new_pod;
    QueueingHint want;
  };
  const std::vector<Case> cases = {
      {"Pod Update adds requirement", PodWithSpec(without, "123"), PodWithSpec(with_rule, "123"), QueueingHint::kQueue},
      {"Pod Update removes requirement", PodWithSpec(with_rule, "123"), PodWithSpec(without, "123"),
       QueueingHint::kQueue},
      {"Pod Update with no change in requirements", PodWithSpec(without, "123"), PodWithSpec(other_change, "123"),
       QueueingHint::kSkip},
      {"Updated pod not the same as target pod", PodWithSpec(without, "456"), PodWithSpec(with_rule, "456"),
       QueueingHint::kSkip},
  };
  auto target = MakePod().Name("test-pod").UID("123").Obj();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    framework::EventObjects event{.old_pod = c.old_pod.get(), .new_pod = c.new_pod.get()};
    EXPECT_EQ(IsSchedulableAfterPodUpdate(AllFeatures(), kRegistryVersion, *target, event), c.want);
  }
}

TEST(NodeDeclaredFeaturesTest, EventsToRegister) {
  NodeDeclaredFeatures plugin;
  auto events = plugin.EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event.resource, framework::EventResource::kNode);
  EXPECT_EQ(events[0].event.action, framework::action::kAdd | framework::action::kUpdate);
  EXPECT_EQ(events[1].event.resource, framework::EventResource::kUnscheduledPod);
  EXPECT_EQ(events[1].event.action, framework::action::kUpdate);
  // The registered pod hint is the plugin's registry at its version.
  auto old_pod = PodWithSpec("{\"containers\":[" + Container("c") + "]}", "u");
  auto new_pod = PodWithSpec("{\"containers\":[" + Container("c", std::string(kRestartAllRule)) + "]}", "u");
  EXPECT_EQ(events[1].hint(*old_pod, {.old_pod = old_pod.get(), .new_pod = new_pod.get()}), QueueingHint::kQueue);
}

// status.declaredFeatures as the API reads and writes it: decoded into a sorted set, encoded
// back, known to the strict schema.
TEST(NodeDeclaredFeaturesTest, NodeStatusDeclaredFeatures) {
  const std::string text = R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},)"
                           R"("status":{"declaredFeatures":["B","A","B"]}})";
  api::json::Document doc;
  ASSERT_TRUE(api::json::Parse(text, doc).has_value());
  auto node = api::DecodeNode(doc);
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ((*node)->status.declared_features, (std::vector<std::string>{"A", "B"}));

  std::vector<api::FieldIssue> issues;
  api::CheckFields(doc, "Node", "", issues);
  EXPECT_TRUE(issues.empty()) << issues.front().path << ": " << issues.front().message;

  auto built = MakeNode().Name("n").DeclaredFeatures({"Y", "X"}).Obj();
  EXPECT_NE(api::EncodeNode(*built).find(R"("declaredFeatures":["X","Y"])"), std::string::npos);
  api::json::Document encoded;
  ASSERT_TRUE(api::json::Parse(api::EncodeNode(*built), encoded).has_value());
  auto back = api::DecodeNode(encoded);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ((*back)->status.declared_features, (std::vector<std::string>{"X", "Y"}));

  // Not a list: a decoding error. A scalar of another type than a string: the decoders read its
  // text, as for every string field, and the schema check reports the type.
  api::json::Document not_list;
  ASSERT_TRUE(
      api::json::Parse(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"status":{"declaredFeatures":"A"}})",
                       not_list)
          .has_value());
  auto decoded = api::DecodeNode(not_list);
  ASSERT_FALSE(decoded.has_value());
  ASSERT_FALSE(decoded.error().empty());
  EXPECT_EQ(decoded.error().front().field, "status.declaredFeatures");
  api::json::Document number;
  ASSERT_TRUE(
      api::json::Parse(
          R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"status":{"declaredFeatures":["A",1]}})", number)
          .has_value());
  issues.clear();
  api::CheckFields(number, "Node", "", issues);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].path, "status.declaredFeatures[1]");
  EXPECT_EQ(issues[0].kind, api::FieldIssue::Kind::kType);
}

}  // namespace
}  // namespace kubesched::plugins::node_declared_features
