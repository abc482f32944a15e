#include "extender/wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "api/decode.h"
#include "api/json.h"
#include "testing/builders.h"

namespace kubesched::extender {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Objects as Go's client sends them: informer objects carry no apiVersion and kind.
constexpr std::string_view kPodJson =
    R"({"metadata":{"name":"web-0","namespace":"prod","uid":"pod-uid-1"},"spec":{"containers":[{"name":"app","image":"nginx"}]}})";
constexpr std::string_view kNode1Json =
    R"({"metadata":{"name":"n1","labels":{"zone":"a"}},"status":{"capacity":{"cpu":"4","memory":"8Gi"}}})";
constexpr std::string_view kNode2Json = R"({"metadata":{"name":"n2"},"status":{"capacity":{"cpu":"2"}}})";

// A typed object whose kept JSON is `text`, as a store or an informer hands it over.
template <typename T>
std::shared_ptr<const T> WithJson(std::string_view text) {
  api::json::Document doc;
  EXPECT_TRUE(api::json::Parse(text, doc).has_value()) << text;
  api::json::Set(doc, "kind", api::json::MakeString(std::is_same_v<T, api::Pod> ? "Pod" : "Node", doc.GetAllocator()),
                 doc.GetAllocator());
  api::json::Set(doc, "apiVersion", api::json::MakeString("v1", doc.GetAllocator()), doc.GetAllocator());
  std::shared_ptr<T> object;
  if constexpr (std::is_same_v<T, api::Pod>) {
    auto decoded = api::DecodePod(doc);
    EXPECT_TRUE(decoded.has_value());
    object = *decoded;
  } else {
    auto decoded = api::DecodeNode(doc);
    EXPECT_TRUE(decoded.has_value());
    object = *decoded;
  }
  object->json = std::make_shared<const std::string>(text);
  return object;
}

PodPtr Pod(std::string_view text = kPodJson) { return WithJson<api::Pod>(text); }
NodePtr Node(std::string_view text) { return WithJson<api::Node>(text); }

std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out += p;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Golden bodies: what Go's json.Marshal writes for the same values of upstream's types.

TEST(WireEncode, ExtenderArgsWithNodes) {
  ExtenderArgs args{.pod = Pod(), .nodes = std::vector<NodePtr>{Node(kNode1Json), Node(kNode2Json)}};
  EXPECT_EQ(EncodeExtenderArgs(args), Cat({R"({"Pod":)", kPodJson, R"(,"Nodes":{"metadata":{},"items":[)", kNode1Json,
                                           ",", kNode2Json, R"(]},"NodeNames":null})"}));
}

TEST(WireEncode, ExtenderArgsWithNodeNames) {
  ExtenderArgs args{.pod = Pod(), .node_names = std::vector<std::string>{"n1", "n2"}};
  EXPECT_EQ(EncodeExtenderArgs(args), Cat({R"({"Pod":)", kPodJson, R"(,"Nodes":null,"NodeNames":["n1","n2"]})"}));
}

TEST(WireEncode, ZeroValuesAreNull) {
  EXPECT_EQ(EncodeExtenderArgs({}), R"({"Pod":null,"Nodes":null,"NodeNames":null})");
  EXPECT_EQ(EncodeFilterResult({}),
            R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":""})");
  EXPECT_EQ(EncodePreemptionArgs({}), R"({"Pod":null,"NodeNameToVictims":null,"NodeNameToMetaVictims":null})");
  EXPECT_EQ(EncodePreemptionResult({}), R"({"NodeNameToMetaVictims":null})");
  EXPECT_EQ(EncodeBindingArgs({}), R"({"PodName":"","PodNamespace":"","PodUID":"","Node":""})");
  EXPECT_EQ(EncodeBindingResult({}), R"({"Error":""})");
  EXPECT_EQ(EncodeHostPriorityList({}), "[]");
}

TEST(WireEncode, EmptyListsAndMapsAreNotNull) {
  ExtenderArgs args{.nodes = std::vector<NodePtr>{}};
  EXPECT_EQ(EncodeExtenderArgs(args), R"({"Pod":null,"Nodes":{"metadata":{},"items":[]},"NodeNames":null})");
  ExtenderFilterResult result{.node_names = std::vector<std::string>{}, .failed_nodes = FailedNodesMap{}};
  EXPECT_EQ(EncodeFilterResult(result),
            R"({"Nodes":null,"NodeNames":[],"FailedNodes":{},"FailedAndUnresolvableNodes":null,"Error":""})");
}

TEST(WireEncode, FilterResultMapsSortedByNodeName) {
  ExtenderFilterResult result{
      .node_names = std::vector<std::string>{"n2"},
      .failed_nodes = FailedNodesMap{{"n3", "no GPU"}, {"n1", "disk full"}},
      .failed_and_unresolvable_nodes = FailedNodesMap{{"n4", "wrong rack"}},
      .error = "",
  };
  EXPECT_EQ(EncodeFilterResult(result),
            R"({"Nodes":null,"NodeNames":["n2"],"FailedNodes":{"n1":"disk full","n3":"no GPU"},)"
            R"("FailedAndUnresolvableNodes":{"n4":"wrong rack"},"Error":""})");
  ExtenderFilterResult with_nodes{.nodes = std::vector<NodePtr>{Node(kNode2Json)}, .error = "boom"};
  EXPECT_EQ(EncodeFilterResult(with_nodes),
            Cat({R"({"Nodes":{"metadata":{},"items":[)", kNode2Json,
                 R"(]},"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":"boom"})"}));
}

TEST(WireEncode, HostPriorityList) {
  EXPECT_EQ(EncodeHostPriorityList({{"n1", 3}, {"n2", 10}, {"n3", -1}}),
            R"([{"Host":"n1","Score":3},{"Host":"n2","Score":10},{"Host":"n3","Score":-1}])");
}

TEST(WireEncode, PreemptionArgsWithFullPods) {
  const std::string victim =
      R"({"metadata":{"name":"low","namespace":"prod","uid":"v1"},"spec":{"containers":[{"name":"c"}]}})";
  ExtenderPreemptionArgs args{
      .pod = Pod(),
      .node_name_to_victims = NodeNameToVictims{{"n2", {.pods = {}, .num_pdb_violations = 0}},
                                                {"n1", {.pods = {Pod(victim)}, .num_pdb_violations = 2}}},
  };
  EXPECT_EQ(EncodePreemptionArgs(args), Cat({R"({"Pod":)", kPodJson, R"(,"NodeNameToVictims":{"n1":{"Pods":[)", victim,
                                             R"(],"NumPDBViolations":2},"n2":{"Pods":[],"NumPDBViolations":0}},)",
                                             R"("NodeNameToMetaVictims":null})"}));
}

TEST(WireEncode, PreemptionArgsWithMetaVictims) {
  ExtenderPreemptionArgs args{
      .pod = Pod(),
      .node_name_to_meta_victims = NodeNameToMetaVictims{{"n1", {.pod_uids = {"u1", "u2"}, .num_pdb_violations = 1}}},
  };
  EXPECT_EQ(EncodePreemptionArgs(args),
            Cat({R"({"Pod":)", kPodJson,
                 R"(,"NodeNameToVictims":null,"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u1"},{"UID":"u2"}],)"
                 R"("NumPDBViolations":1}}})"}));
  ExtenderPreemptionResult result{.node_name_to_meta_victims =
                                      NodeNameToMetaVictims{{"n1", {.pod_uids = {}, .num_pdb_violations = 0}}}};
  EXPECT_EQ(EncodePreemptionResult(result), R"({"NodeNameToMetaVictims":{"n1":{"Pods":[],"NumPDBViolations":0}}})");
}

TEST(WireEncode, BindingArgsAndResult) {
  EXPECT_EQ(EncodeBindingArgs({.pod_name = "web-0", .pod_namespace = "prod", .pod_uid = "u1", .node = "n1"}),
            R"({"PodName":"web-0","PodNamespace":"prod","PodUID":"u1","Node":"n1"})");
  EXPECT_EQ(EncodeBindingResult({.error = "node n1 is full"}), R"({"Error":"node n1 is full"})");
}

// Go's encodeState.string: HTML-safe escapes, \b and \f short, other controls in lowercase hex,
// U+2028/U+2029 escaped, each invalid UTF-8 byte as U+FFFD; other UTF-8 as it is.
TEST(WireEncode, StringsEscapedAsGoDoes) {
  const std::string error = "a<b>&c\"d\\e\n\r\t\b\f\x01\x1f|\u00e9|\u2028\u2029|\xff|\xe2\x82|\xed\xa0\x80|\U0001F600";
  EXPECT_EQ(EncodeBindingResult({.error = error}), R"({"Error":"a\u003cb\u003e\u0026c\"d\\e\n\r\t\b\f\u0001\u001f|)"
                                                   "\u00e9"
                                                   R"(|\u2028\u2029|\ufffd|\ufffd\ufffd|\ufffd\ufffd\ufffd|)"
                                                   "\U0001F600"
                                                   R"("})");
  FailedNodesMap failed{{"<n>", "x"}};
  EXPECT_EQ(
      EncodeFilterResult({.failed_nodes = failed}),
      R"({"Nodes":null,"NodeNames":null,"FailedNodes":{"\u003cn\u003e":"x"},"FailedAndUnresolvableNodes":null,"Error":""})");
}

TEST(WireEncode, ObjectsWithoutKeptJsonEncodedFromTheirFields) {
  std::shared_ptr<api::Node> node = testing::MakeNode().Name("built").Capacity({{"cpu", "1"}}).Obj();
  node->json = nullptr;
  const std::string body = EncodeExtenderArgs({.nodes = std::vector<NodePtr>{node}});
  auto decoded = DecodeExtenderArgs(body);
  ASSERT_TRUE(decoded.has_value()) << decoded.error();
  ASSERT_TRUE(decoded->nodes.has_value());
  ASSERT_EQ(decoded->nodes->size(), 1u);
  EXPECT_EQ((*decoded->nodes)[0]->metadata.name, "built");
}

// ---------------------------------------------------------------------------------------------
// Round trips

TEST(WireRoundTrip, ExtenderArgsKeepObjectsAsGiven) {
  const std::string body =
      EncodeExtenderArgs({.pod = Pod(), .nodes = std::vector<NodePtr>{Node(kNode1Json), Node(kNode2Json)}});
  auto args = DecodeExtenderArgs(body);
  ASSERT_TRUE(args.has_value()) << args.error();
  ASSERT_NE(args->pod, nullptr);
  EXPECT_EQ(args->pod->metadata.name, "web-0");
  EXPECT_EQ(args->pod->metadata.uid, "pod-uid-1");
  EXPECT_EQ(*args->pod->json, kPodJson);  // no apiVersion or kind added
  ASSERT_TRUE(args->nodes.has_value());
  ASSERT_EQ(args->nodes->size(), 2u);
  EXPECT_EQ((*args->nodes)[0]->metadata.name, "n1");
  EXPECT_EQ(*(*args->nodes)[0]->metadata.labels.Find("zone"), "a");
  EXPECT_EQ(*(*args->nodes)[1]->json, kNode2Json);
  EXPECT_FALSE(args->node_names.has_value());
  // A server echoing the nodes writes the same bytes the client sent.
  EXPECT_EQ(EncodeFilterResult({.nodes = args->nodes}),
            Cat({R"({"Nodes":{"metadata":{},"items":[)", kNode1Json, ",", kNode2Json,
                 R"(]},"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":""})"}));
}

TEST(WireRoundTrip, ObjectsWithApiVersionAndKindKeepThem) {
  const std::string node = R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n9"}})";
  auto args = DecodeExtenderArgs(Cat({R"({"Nodes":{"items":[)", node, "]}}"}));
  ASSERT_TRUE(args.has_value()) << args.error();
  EXPECT_EQ(*(*args->nodes)[0]->json, node);
}

// Go reads neither apiVersion nor kind into a v1.Node: a node that names others is still one.
TEST(WireRoundTrip, ObjectsNamingAnotherKindAreReadAsTheirField) {
  const std::string node = R"({"kind":"Pod","apiVersion":"apps/v1","metadata":{"name":"n9"}})";
  auto args = DecodeExtenderArgs(Cat({R"({"Nodes":{"items":[)", node, "]}}"}));
  ASSERT_TRUE(args.has_value()) << args.error();
  EXPECT_EQ((*args->nodes)[0]->metadata.name, "n9");
  EXPECT_EQ(*(*args->nodes)[0]->json, node);
}

TEST(WireRoundTrip, FilterResult) {
  ExtenderFilterResult in{
      .node_names = std::vector<std::string>{"n1", "n3"},
      .failed_nodes = FailedNodesMap{{"n2", "no"}},
      .failed_and_unresolvable_nodes = FailedNodesMap{{"n4", "never"}},
      .error = "partial <failure>",
  };
  auto out = DecodeFilterResult(EncodeFilterResult(in));
  ASSERT_TRUE(out.has_value()) << out.error();
  EXPECT_FALSE(out->nodes.has_value());
  EXPECT_EQ(out->node_names, in.node_names);
  EXPECT_EQ(out->failed_nodes, in.failed_nodes);
  EXPECT_EQ(out->failed_and_unresolvable_nodes, in.failed_and_unresolvable_nodes);
  EXPECT_EQ(out->error, in.error);
}

TEST(WireRoundTrip, HostPriorityList) {
  HostPriorityList in{{"n1", 0}, {"n\u00e9", 10}, {"n3", INT64_MIN}, {"n4", INT64_MAX}};
  auto out = DecodeHostPriorityList(EncodeHostPriorityList(in));
  ASSERT_TRUE(out.has_value()) << out.error();
  EXPECT_EQ(*out, in);
}

TEST(WireRoundTrip, PreemptionArgsAndResult) {
  const std::string victim =
      R"({"metadata":{"name":"low","namespace":"prod","uid":"v1"},"spec":{"containers":[{"name":"c"}]}})";
  ExtenderPreemptionArgs in{
      .pod = Pod(),
      .node_name_to_victims = NodeNameToVictims{{"n1", {.pods = {Pod(victim)}, .num_pdb_violations = 3}}},
      .node_name_to_meta_victims = NodeNameToMetaVictims{{"n2", {.pod_uids = {"a", "b"}, .num_pdb_violations = 1}}},
  };
  auto out = DecodePreemptionArgs(EncodePreemptionArgs(in));
  ASSERT_TRUE(out.has_value()) << out.error();
  EXPECT_EQ(out->pod->metadata.name, "web-0");
  ASSERT_TRUE(out->node_name_to_victims.has_value());
  const Victims& v = out->node_name_to_victims->at("n1");
  ASSERT_EQ(v.pods.size(), 1u);
  EXPECT_EQ(v.pods[0]->metadata.uid, "v1");
  EXPECT_EQ(*v.pods[0]->json, victim);
  EXPECT_EQ(v.num_pdb_violations, 3);
  ASSERT_TRUE(out->node_name_to_meta_victims.has_value());
  EXPECT_THAT(out->node_name_to_meta_victims->at("n2").pod_uids, ElementsAre("a", "b"));
  EXPECT_EQ(out->node_name_to_meta_victims->at("n2").num_pdb_violations, 1);

  auto result =
      DecodePreemptionResult(EncodePreemptionResult({.node_name_to_meta_victims = in.node_name_to_meta_victims}));
  ASSERT_TRUE(result.has_value()) << result.error();
  EXPECT_THAT(result->node_name_to_meta_victims->at("n2").pod_uids, ElementsAre("a", "b"));
}

TEST(WireRoundTrip, Binding) {
  auto args =
      DecodeBindingArgs(EncodeBindingArgs({.pod_name = "p", .pod_namespace = "ns", .pod_uid = "u", .node = "n"}));
  ASSERT_TRUE(args.has_value()) << args.error();
  EXPECT_EQ(args->pod_name, "p");
  EXPECT_EQ(args->pod_namespace, "ns");
  EXPECT_EQ(args->pod_uid, "u");
  EXPECT_EQ(args->node, "n");
  auto result = DecodeBindingResult(EncodeBindingResult({.error = "tab\there \u2028"}));
  ASSERT_TRUE(result.has_value()) << result.error();
  EXPECT_EQ(result->error, "tab\there \u2028");
}

// ---------------------------------------------------------------------------------------------
// Decoding as Go's encoding/json does

TEST(WireDecode, KeysMatchFieldsIgnoringCase) {
  auto args =
      DecodeExtenderArgs(Cat({R"({"pod":)", kPodJson, R"(,"NODENAMES":["a"],"nodes":{"ITEMS":[)", kNode2Json, "]}}"}));
  ASSERT_TRUE(args.has_value()) << args.error();
  EXPECT_EQ(args->pod->metadata.name, "web-0");
  EXPECT_THAT(*args->node_names, ElementsAre("a"));
  EXPECT_EQ((*args->nodes)[0]->metadata.name, "n2");

  auto filter = DecodeFilterResult(
      R"({"nodenames":["n1"],"failednodes":{"n2":"x"},"FAILEDANDUNRESOLVABLENODES":{"n3":"y"},"error":"e"})");
  ASSERT_TRUE(filter.has_value()) << filter.error();
  EXPECT_THAT(*filter->node_names, ElementsAre("n1"));
  EXPECT_EQ(filter->failed_nodes->at("n2"), "x");
  EXPECT_EQ(filter->failed_and_unresolvable_nodes->at("n3"), "y");
  EXPECT_EQ(filter->error, "e");

  auto priorities = DecodeHostPriorityList(R"([{"host":"n1","SCORE":7}])");
  ASSERT_TRUE(priorities.has_value()) << priorities.error();
  EXPECT_THAT(*priorities, ElementsAre(HostPriority{"n1", 7}));

  auto preemption =
      DecodePreemptionResult(R"({"nodeNameToMetaVictims":{"N1":{"pods":[{"uid":"u1"}],"numPdbViolations":4}}})");
  ASSERT_TRUE(preemption.has_value()) << preemption.error();
  // Map keys are data: kept as written.
  EXPECT_THAT(preemption->node_name_to_meta_victims->at("N1").pod_uids, ElementsAre("u1"));
  EXPECT_EQ(preemption->node_name_to_meta_victims->at("N1").num_pdb_violations, 4);

  auto binding = DecodeBindingArgs(R"({"podname":"p","PODNAMESPACE":"ns","poduid":"u","node":"n"})");
  ASSERT_TRUE(binding.has_value()) << binding.error();
  EXPECT_EQ(binding->pod_namespace, "ns");
  EXPECT_EQ(binding->pod_uid, "u");
}

TEST(WireDecode, LastMatchingKeyWinsAndUnknownKeysAreIgnored) {
  auto result = DecodeBindingResult(R"({"Error":"first","Extra":{"deep":[1,2,{}]},"error":"second","Errors":1})");
  ASSERT_TRUE(result.has_value()) << result.error();
  EXPECT_EQ(result->error, "second");
  auto priorities = DecodeHostPriorityList(R"([{"Host":"n1","Score":1,"Weight":"x","score":2}])");
  ASSERT_TRUE(priorities.has_value()) << priorities.error();
  EXPECT_THAT(*priorities, ElementsAre(HostPriority{"n1", 2}));
}

TEST(WireDecode, NullIsTheZeroValue) {
  auto args = DecodeExtenderArgs("null");
  ASSERT_TRUE(args.has_value());
  EXPECT_EQ(args->pod, nullptr);
  EXPECT_FALSE(args->nodes.has_value());

  auto filter = DecodeFilterResult(
      R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":null})");
  ASSERT_TRUE(filter.has_value()) << filter.error();
  EXPECT_FALSE(filter->nodes.has_value());
  EXPECT_FALSE(filter->node_names.has_value());
  EXPECT_FALSE(filter->failed_nodes.has_value());
  EXPECT_EQ(filter->error, "");

  // A list with null items has none; NodeNames with a null element holds "".
  auto empty = DecodeFilterResult(R"({"Nodes":{"items":null},"NodeNames":[null]})");
  ASSERT_TRUE(empty.has_value()) << empty.error();
  ASSERT_TRUE(empty->nodes.has_value());
  EXPECT_TRUE(empty->nodes->empty());
  EXPECT_THAT(*empty->node_names, ElementsAre(""));

  auto priorities = DecodeHostPriorityList("null");
  ASSERT_TRUE(priorities.has_value());
  EXPECT_TRUE(priorities->empty());

  auto victims = DecodePreemptionArgs(R"({"Pod":null,"NodeNameToVictims":{"n1":null,"n2":{"Pods":null}}})");
  ASSERT_TRUE(victims.has_value()) << victims.error();
  EXPECT_TRUE(victims->node_name_to_victims->at("n1").pods.empty());
  EXPECT_TRUE(victims->node_name_to_victims->at("n2").pods.empty());
  EXPECT_FALSE(victims->node_name_to_meta_victims.has_value());
}

struct BadBody {
  std::string name;
  std::function<std::string(std::string_view)> decode;  // the error, or "" when it decoded
  std::string body;
  std::string error;  // the error starts with this
};

template <typename T>
std::string ErrorOf(const std::expected<T, std::string>& r) {
  return r.has_value() ? "" : r.error();
}

class WireDecodeErrors : public ::testing::TestWithParam<BadBody> {};

TEST_P(WireDecodeErrors, NameTheField) {
  const BadBody& c = GetParam();
  const std::string error = c.decode(c.body);
  EXPECT_THAT(error, StartsWith(c.error)) << c.body;
}

const auto kArgs = [](std::string_view b) { return ErrorOf(DecodeExtenderArgs(b)); };
const auto kFilter = [](std::string_view b) { return ErrorOf(DecodeFilterResult(b)); };
const auto kPriorities = [](std::string_view b) { return ErrorOf(DecodeHostPriorityList(b)); };
const auto kPreemptArgs = [](std::string_view b) { return ErrorOf(DecodePreemptionArgs(b)); };
const auto kPreemptResult = [](std::string_view b) { return ErrorOf(DecodePreemptionResult(b)); };
const auto kBindArgs = [](std::string_view b) { return ErrorOf(DecodeBindingArgs(b)); };
const auto kBindResult = [](std::string_view b) { return ErrorOf(DecodeBindingResult(b)); };

INSTANTIATE_TEST_SUITE_P(
    Wire, WireDecodeErrors,
    ::testing::Values(
        BadBody{"malformed", kFilter, R"({"Error":)", "invalid JSON at line 1, column 10"},
        BadBody{"trailing", kBindResult, R"({"Error":""} {})", "invalid JSON"},
        BadBody{"empty", kBindArgs, "", "invalid JSON"},
        BadBody{"root_array", kArgs, "[]", "expected an object, got array"},
        BadBody{"root_object_for_list", kPriorities, "{}", "expected an array, got object"},
        BadBody{"node_names_type", kArgs, R"({"NodeNames":"n1"})", "NodeNames: expected an array, got string"},
        BadBody{"node_name_element", kFilter, R"({"NodeNames":["n1",2]})",
                "NodeNames[1]: expected a string, got number"},
        BadBody{"nodes_type", kArgs, R"({"Nodes":[]})", "Nodes: expected an object, got array"},
        BadBody{"items_type", kArgs, R"({"Nodes":{"items":{}}})", "Nodes.items: expected an array, got object"},
        BadBody{"null_node", kFilter, R"({"Nodes":{"items":[null]}})",
                "Nodes.items[0]: expected a Node object, got null"},
        BadBody{"nameless_node", kArgs, R"({"Nodes":{"items":[{"metadata":{"name":"a"}},{"metadata":{}}]}})",
                "Nodes.items[1].metadata.name: "},
        BadBody{"pod_type", kArgs, R"({"Pod":"web-0"})", "Pod: expected a Pod object, got string"},
        BadBody{
            "bad_pod", kArgs,
            R"({"Pod":{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"lots"}}}]}}})",
            "Pod.spec.containers[0].resources.requests.cpu: "},
        BadBody{"failed_nodes_type", kFilter, R"({"FailedNodes":["n1"]})",
                "FailedNodes: expected an object, got array"},
        BadBody{"failed_reason_type", kFilter, R"({"FailedAndUnresolvableNodes":{"n1":true}})",
                R"(FailedAndUnresolvableNodes["n1"]: expected a string, got bool)"},
        BadBody{"error_type", kFilter, R"({"Error":{}})", "Error: expected a string, got object"},
        BadBody{"score_fraction", kPriorities, R"([{"Host":"n1","Score":1.5}])",
                "[0].Score: 1.5 is not a 64-bit integer"},
        BadBody{"score_exponent", kPriorities, R"([{"Score":1e2}])", "[0].Score: 100.0 is not a 64-bit integer"},
        BadBody{"score_overflow", kPriorities, R"([{"Score":9223372036854775808}])",
                "[0].Score: 9223372036854775808 is not a 64-bit integer"},
        BadBody{"score_string", kPriorities, R"([{"Score":"5"}])", "[0].Score: expected an integer, got string"},
        BadBody{"priority_type", kPriorities, R"([{"Host":"n1"},7])", "[1]: expected an object, got number"},
        BadBody{"victims_type", kPreemptArgs, R"({"NodeNameToVictims":{"n1":[]}})",
                R"(NodeNameToVictims["n1"]: expected an object, got array)"},
        BadBody{"victim_null", kPreemptArgs, R"({"NodeNameToVictims":{"n1":{"Pods":[null]}}})",
                R"(NodeNameToVictims["n1"].Pods[0]: expected a Pod object, got null)"},
        BadBody{"victim_bad", kPreemptArgs, R"({"NodeNameToVictims":{"n1":{"Pods":[{"metadata":{}}]}}})",
                R"(NodeNameToVictims["n1"].Pods[0].metadata.name: )"},
        BadBody{"violations_type", kPreemptArgs, R"({"NodeNameToVictims":{"n1":{"NumPDBViolations":"2"}}})",
                R"(NodeNameToVictims["n1"].NumPDBViolations: expected an integer, got string)"},
        BadBody{"meta_pod_type", kPreemptResult, R"({"NodeNameToMetaVictims":{"n1":{"Pods":["u1"]}}})",
                R"(NodeNameToMetaVictims["n1"].Pods[0]: expected an object, got string)"},
        BadBody{"meta_pod_null", kPreemptResult, R"({"NodeNameToMetaVictims":{"n1":{"Pods":[null]}}})",
                R"(NodeNameToMetaVictims["n1"].Pods[0]: expected an object, got null)"},
        BadBody{"uid_type", kPreemptResult, R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":5}]}}})",
                R"(NodeNameToMetaVictims["n1"].Pods[0].UID: expected a string, got number)"},
        BadBody{"meta_map_type", kPreemptResult, R"({"NodeNameToMetaVictims":"n1"})",
                "NodeNameToMetaVictims: expected an object, got string"},
        BadBody{"bind_field_type", kBindArgs, R"({"PodUID":["u"]})", "PodUID: expected a string, got array"},
        BadBody{"bind_result_root", kBindResult, R"("ok")", "expected an object, got string"}),
    [](const ::testing::TestParamInfo<BadBody>& info) { return info.param.name; });

// Every strict prefix of a body is malformed JSON: an error from every decoder, never a crash.
TEST(WireDecode, TruncatedBodiesAreErrors) {
  const std::string bodies[] = {
      EncodeExtenderArgs({.pod = Pod(), .nodes = std::vector<NodePtr>{Node(kNode1Json)}}),
      EncodePreemptionArgs({.pod = Pod(), .node_name_to_victims = NodeNameToVictims{{"n1", {.pods = {Pod()}}}}}),
      R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u1"}],"NumPDBViolations":1}}})",
      R"([{"Host":"n1","Score":3}])",
  };
  for (const std::string& body : bodies) {
    for (size_t n = 0; n < body.size(); ++n) {
      const std::string_view prefix(body.data(), n);
      EXPECT_FALSE(DecodeExtenderArgs(prefix).has_value()) << prefix;
      EXPECT_FALSE(DecodeFilterResult(prefix).has_value()) << prefix;
      EXPECT_FALSE(DecodeHostPriorityList(prefix).has_value()) << prefix;
      EXPECT_FALSE(DecodePreemptionArgs(prefix).has_value()) << prefix;
      EXPECT_FALSE(DecodePreemptionResult(prefix).has_value()) << prefix;
      EXPECT_FALSE(DecodeBindingArgs(prefix).has_value()) << prefix;
      EXPECT_FALSE(DecodeBindingResult(prefix).has_value()) << prefix;
    }
  }
}

}  // namespace
}  // namespace kubesched::extender

namespace kubesched::extender {
namespace {

// A caller that already holds a node's version gets it back instead of a decode; any other item
// (another version, another uid, no resourceVersion) is decoded as usual.
TEST(WireDecode, NodesTheCallerHoldsAreReusedByUidAndResourceVersion) {
  auto held = std::make_shared<api::Node>();
  held->metadata.name = "n1";
  held->metadata.uid = "u1";
  held->metadata.resource_version = "7";
  int asked = 0;
  NodeReuse reuse = [&](std::string_view name, std::string_view uid, std::string_view rv) -> NodePtr {
    ++asked;
    return name == "n1" && uid == "u1" && rv == "7" ? held : nullptr;
  };
  const std::string body =
      R"({"Pod":{"metadata":{"name":"p","namespace":"default"},"spec":{"containers":[{"name":"c","image":"x"}]}},)"
      R"("Nodes":{"items":[)"
      R"({"metadata":{"name":"n1","uid":"u1","resourceVersion":"7"}},)"
      R"({"metadata":{"name":"n1","uid":"u1","resourceVersion":"8"}},)"
      R"({"metadata":{"name":"n2","uid":"u2"}}]}})";
  auto args = DecodeExtenderArgs(body, reuse);
  ASSERT_TRUE(args.has_value()) << args.error();
  ASSERT_EQ(args->nodes->size(), 3u);
  EXPECT_EQ((*args->nodes)[0].get(), held.get());
  EXPECT_NE((*args->nodes)[1].get(), held.get());
  EXPECT_EQ((*args->nodes)[1]->metadata.resource_version, "8");
  EXPECT_EQ((*args->nodes)[2]->metadata.name, "n2");
  EXPECT_EQ(asked, 2);  // the item without a resourceVersion is not asked about
}

}  // namespace
}  // namespace kubesched::extender
