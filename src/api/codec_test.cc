// The codec: YAML into the JSON DOM (scalar resolution, anchors, duplicate keys, lines), typed
// decoding with field errors, typed encoding and the round trip, and the JSON objects keep.

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/decode.h"
#include "api/encode.h"
#include "api/json.h"
#include "api/manifest.h"
#include "api/yaml.h"
#include "testing/builders.h"

namespace kubesched::api {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

json::Document Yaml(std::string_view text, yaml::ScalarTexts* texts = nullptr) {
  json::Document doc;
  auto r = yaml::Parse(text, doc, texts);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return doc;
}

json::Document Json(std::string_view text) {
  json::Document doc;
  auto r = json::Parse(text, doc);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().ToString());
  return doc;
}

TEST(YamlTest, ScalarsResolveAsGoYamlV2) {
  struct Case {
    std::string yaml;
    std::string json;
  };
  const std::vector<Case> cases = {
      {"a: 1", R"({"a":1})"},
      {"a: -7", R"({"a":-7})"},
      {"a: 0644", R"({"a":420})"},  // YAML 1.1 octal, as a volume's defaultMode
      {"a: 0x1F", R"({"a":31})"},
      {"a: 1_000", R"({"a":1000})"},
      {"a: 18446744073709551615", R"({"a":18446744073709551615})"},
      {"a: 1.5", R"({"a":1.5})"},
      {"a: 1e3", R"({"a":1000.0})"},
      {"a: yes", R"({"a":true})"},
      {"a: Off", R"({"a":false})"},
      {"a: ~", R"({"a":null})"},
      {"a:", R"({"a":null})"},
      {"a: \"1\"", R"({"a":"1"})"},
      {"a: 'true'", R"({"a":"true"})"},
      {"a: !!str 12", R"({"a":"12"})"},
      {"a: 1.2.3", R"({"a":"1.2.3"})"},
      {"a: .inf", R"({"a":".inf"})"},  // JSON has no infinity: kept as written
      {"a: 500m", R"({"a":"500m"})"},
      {"1: x", R"({"1":"x"})"},  // keys are strings
      {"a: |\n  line\n", R"({"a":"line\n"})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    EXPECT_EQ(json::Encode(Yaml(c.yaml)), c.json);
  }
}

TEST(YamlTest, WrittenFormOfScalarsThatPrintDifferently) {
  yaml::ScalarTexts texts;
  json::Document doc = Yaml("a: 1.10\nb: 2\nc: y\nd: [0644]\n", &texts);
  EXPECT_EQ(texts.Find(json::Find(doc, "a")), "1.10");
  EXPECT_EQ(texts.Find(json::Find(doc, "b")), std::nullopt);
  EXPECT_EQ(texts.Find(json::Find(doc, "c")), "y");
  EXPECT_EQ(texts.Find(&(*json::Find(doc, "d"))[0]), "0644");
}

TEST(YamlTest, AnchorsAliasesAndDuplicateKeys) {
  EXPECT_EQ(json::Encode(Yaml("a: &x {b: 1}\nc: *x\n")), R"({"a":{"b":1},"c":{"b":1}})");
  // Duplicate keys are kept, in order, for the schema check to report.
  EXPECT_EQ(json::Encode(Yaml("a: 1\na: 2\n")), R"({"a":1,"a":2})");
}

TEST(YamlTest, Errors) {
  json::Document doc;
  auto bad = yaml::Parse("a: [1\n", doc);
  ASSERT_FALSE(bad.has_value());
  EXPECT_GT(bad.error().line, 0);
  auto unknown = yaml::Parse("a: *nope\n", doc);
  ASSERT_FALSE(unknown.has_value());
  EXPECT_THAT(unknown.error().message, HasSubstr("unknown anchor"));
  // Nine levels of ten aliases each: a billion values if expanded.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    const char p = static_cast<char>(c - 1);
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) bomb += std::string(i ? ", " : "") + "*" + p;
    bomb += "]\n";
  }
  auto exploded = yaml::Parse(bomb, doc);
  ASSERT_FALSE(exploded.has_value());
  EXPECT_THAT(exploded.error().message, HasSubstr("alias bomb"));
  std::string deep(2000, '[');
  EXPECT_FALSE(yaml::Parse(deep, doc).has_value());
  // Few values, but a 1 MB string aliased 2,000 times is 2 GB of document: refused once the
  // aliases pass 64 MiB, so parsing it holds about that much at most.
  std::string wide = "s: &s " + std::string(1 << 20, 'x') + "\nl: [";
  for (int i = 0; i < 2000; ++i) wide += i ? ", *s" : "*s";
  wide += "]\n";
  auto widened = yaml::Parse(wide, doc);
  ASSERT_FALSE(widened.has_value());
  EXPECT_THAT(widened.error().message, HasSubstr("aliases expand to more than 64 MiB of text (an alias bomb?)"));
  // Under the limit it is a document like any other.
  std::string fine = "s: &s " + std::string(1 << 20, 'x') + "\nl: [*s, *s, *s]\n";
  ASSERT_TRUE(yaml::Parse(fine, doc).has_value());
  EXPECT_EQ(doc["l"].Size(), 3u);
}

// Found by the yaml fuzz target: libfyaml 0.7.12 looped forever on invalid UTF-8 in a directive
// line, and kept invalid octets in scalars. Both are errors now, at the first invalid octet.
TEST(YamlTest, RejectsInvalidUtf8) {
  json::Document doc;
  auto hang = yaml::Parse("apiVersion: v1\nkind: Pod\n%m\x91tadata: {}\n", doc);
  ASSERT_FALSE(hang.has_value());
  EXPECT_EQ(hang.error().line, 3);
  EXPECT_EQ(hang.error().column, 3);
  EXPECT_THAT(hang.error().message, HasSubstr("invalid leading UTF-8 octet 0x91"));
  EXPECT_TRUE(doc.IsNull());
  auto in_scalar = yaml::Parse("name: caf\xc3\xa9 \xe9t\xe9\n", doc);
  ASSERT_FALSE(in_scalar.has_value());
  EXPECT_EQ(in_scalar.error().column, 12);
  EXPECT_THAT(in_scalar.error().message, HasSubstr("invalid trailing UTF-8 octet 0x74"));
  for (const char* bad : {"%\x22\xa6", "a: \xc0\xaf", "a: \xed\xa0\x80", "a: \xf4\x90\x80\x80", "a: \xe2\x82"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(yaml::Parse(bad, doc).has_value());
  }
  EXPECT_EQ(yaml::LinesOf("%m\x91\n", std::vector<yaml::SourcePath>{{}}), std::vector<int>{0});
  // Valid UTF-8 of every length still parses.
  Yaml("a: \"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82 \xf4\x8f\xbf\xbf\"\n");
}

// Found by the yaml fuzz target: on a control character inside a key, libfyaml 0.7.12 leaked a
// 2 KB buffer. YAML allows only printable characters (go-yaml: "control characters are not
// allowed"); the text is refused before libfyaml reads it.
TEST(YamlTest, RejectsControlCharacters) {
  json::Document doc;
  auto leak = yaml::Parse("apiVersion: v1\nmetadata:\n  name: web\n  t\x03mespace: x\n", doc);
  ASSERT_FALSE(leak.has_value());
  EXPECT_EQ(leak.error().line, 4);
  EXPECT_EQ(leak.error().column, 4);
  EXPECT_EQ(leak.error().message, "control characters are not allowed: U+0003");
  EXPECT_TRUE(doc.IsNull());
  // C1 controls (U+0080-U+009F, not U+0085), DEL, U+FFFE and NUL are refused too.
  for (std::string bad :
       {std::string("a: \xc2\x80"), std::string("a: \x7f"), std::string("a: \xef\xbf\xbe"), std::string("a: b\0", 5)}) {
    SCOPED_TRACE(bad);
    auto r = yaml::Parse(bad, doc);
    ASSERT_FALSE(r.has_value());
    EXPECT_THAT(r.error().message, HasSubstr("control characters are not allowed"));
  }
  // Tabs, carriage returns, non-breaking spaces and characters beyond the BMP are printable.
  Yaml("a: \"x\ty\xc2\xa0z \xf0\x9f\x99\x82\"\r\nb: 1\n");
}

// Found by the yaml fuzz target: libfyaml 0.7.12 leaked a buffer formatting a single-quoted
// scalar with five or more '' escapes. One-line single-quoted scalars are read from the source.
TEST(YamlTest, SingleQuotedScalars) {
  json::Document doc = Yaml(
      "a: 'it''s ''''''''''''here'''\nb: ['x''y', '', ' sp ']\n'k''1': v\nc: 'folded\n  over\n\n  lines'\n"
      "d: 'caf\xc3\xa9'\n");
  EXPECT_EQ(json::GetString(doc, "a"), "it's ''''''here'");
  const json::Value& b = *json::Find(doc, "b");
  ASSERT_EQ(b.Size(), 3u);
  EXPECT_EQ(json::View(b[0]), "x'y");
  EXPECT_EQ(json::View(b[1]), "");
  EXPECT_EQ(json::View(b[2]), " sp ");
  EXPECT_EQ(json::GetString(doc, "k'1"), "v");
  EXPECT_EQ(json::GetString(doc, "c"), "folded over\nlines");
  EXPECT_EQ(json::GetString(doc, "d"), "caf\xc3\xa9");
  // Folding as go-yaml (libyaml) folds; checked against libfyaml on 7,521 generated scalars
  // without '' or CRLF, where libfyaml 0.7.12 errs (it gave "\ta'''a" for '\ta''''a:').
  struct Case {
    const char* yaml;
    const char* value;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"k: 'a  \n  b'\n", "a b"},
           {"k: 'a\n\n  b'\n", "a\nb"},
           {"k: 'a\n \t\n\n b '\n", "a\n\nb "},
           {"k: ' a\n  '\n", " a "},
           {"k: 'ba -\r\n  '\n", "ba - "},
           {"k: 'x''\n  ''y'\n", "x' 'y"},
           {"k: '\n  =''''''''''x'\n", " ='''''x"},  // like the yaml fuzz target's leak
           // NEL breaks a line as LF does; U+2028 and U+2029 break it and stay (go-yaml v2's
           // read_line). libfyaml leaked formatting these (the kubeconfig fuzz target).
           {"k: 'a \xc2\x85  b'\n", "a b"},
           {"k: 'a\xc2\x85\xc2\x85 b'\n", "a\nb"},
           {"k: 'a \xe2\x80\xa8 b'\n",
            "a\xe2\x80\xa8"
            "b"},
           {"k: 'a\xe2\x80\xa9\n\n b'\n", "a\xe2\x80\xa9\n\nb"},
           {"k: '''''\xc2\x85 ''''\xc2\x85 x'\n", "'' '' x"},
       }) {
    SCOPED_TRACE(c.yaml);
    EXPECT_EQ(json::GetString(Yaml(c.yaml), "k"), c.value);
  }
}

TEST(YamlTest, LinesOfPaths) {
  const std::string text = "a: 1\nb:\n  c: [x, {d: 2}]\n  e: *missing\n";
  const std::string ok = "a: 1\nb:\n  c: [x, {d: 2}]\n  e: 3\n";
  json::Document doc = Yaml(ok);
  using K = yaml::PathStep::Kind;
  const json::Value* d = json::Find((*json::Find(*json::Find(doc, "b"), "c"))[1], "d");
  auto path = yaml::PathTo(doc, d);
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(*path, (yaml::SourcePath{{K::kValue, 1}, {K::kValue, 0}, {K::kElement, 1}, {K::kValue, 0}}));
  const std::vector<yaml::SourcePath> paths = {*path, {{K::kKey, 1}}, {{K::kValue, 1}, {K::kKey, 1}}, {{K::kValue, 9}}};
  EXPECT_THAT(yaml::LinesOf(ok, paths), ElementsAre(3, 2, 4, 0));
  // JSON too.
  json::Document j = Json("{\"a\": 1,\n \"b\": {\"c\": [1,\n 2]}}");
  const json::Value* two = &(*json::Find(*json::Find(j, "b"), "c"))[1];
  EXPECT_THAT(yaml::LinesOf("{\"a\": 1,\n \"b\": {\"c\": [1,\n 2]}}", {{*yaml::PathTo(j, two)}}), ElementsAre(3));
}

// ---------------------------------------------------------------------------------------------
// Decoding objects one at a time (the store's and API server's path).

TEST(DecodeTest, PodWithFieldErrors) {
  json::Document good = Json(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},
    "spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1"}}}],"extra":{"kept":true}}})");
  auto pod = DecodePod(good);
  ASSERT_TRUE(pod.has_value());
  EXPECT_EQ((*pod)->metadata.namespace_, "default");
  EXPECT_EQ((*pod)->spec.containers[0].resources.requests.at("cpu").MilliValue(), 1000);
  ASSERT_NE((*pod)->json, nullptr);
  EXPECT_THAT(*(*pod)->json, HasSubstr(R"("extra":{"kept":true})"));

  json::Document bad = Json(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},
    "spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"abc"}}}]}})");
  auto err = DecodePod(bad);
  ASSERT_FALSE(err.has_value());
  ASSERT_EQ(err.error().size(), 1u);
  EXPECT_EQ(err.error()[0].field, "spec.containers[0].resources.requests.cpu");
  EXPECT_EQ(err.error()[0].reason, kFieldValueInvalid);
  EXPECT_THAT(err.error()[0].message, HasSubstr("invalid quantity \"abc\""));

  json::Document no_containers = Json(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{}})");
  auto required = DecodePod(no_containers);
  ASSERT_FALSE(required.has_value());
  EXPECT_EQ(required.error()[0].reason, kFieldValueRequired);

  json::Document node = Json(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}})");
  EXPECT_FALSE(DecodePod(node).has_value());
  EXPECT_TRUE(DecodeNode(node).has_value());
  json::Document service = Json(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"s"}})");
  auto unsupported = DecodeObject(service);
  ASSERT_FALSE(unsupported.has_value());
  EXPECT_EQ(unsupported.error()[0].reason, kFieldValueNotSupported);
}

TEST(DecodeTest, ListItemsDecodeIndependently) {
  json::Document list = Json(R"({"apiVersion":"v1","kind":"List","items":[
    {"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}},
    {"apiVersion":"v1","kind":"Node","metadata":{"name":"B"}},
    {"apiVersion":"v1","kind":"Namespace","metadata":{"name":"c"}}]})");
  auto items = DecodeList(list);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_TRUE(items[0].has_value());
  ASSERT_FALSE(items[1].has_value());
  EXPECT_EQ(items[1].error()[0].field, "items[1].metadata.name");
  EXPECT_TRUE(items[2].has_value());
}

// ---------------------------------------------------------------------------------------------
// Encoding typed objects, and the round trip.

TEST(EncodeTest, PodRoundTrip) {
  auto pod = testing::MakePod()
                 .Name("web")
                 .Namespace("shop")
                 .UID("u1")
                 .Label("app", "web")
                 .Req({{"cpu", "250m"}, {"memory", "1Gi"}})
                 .Priority(5)
                 .NodeSelector({{"disk", "ssd"}})
                 .Obj();
  pod->spec.tolerations.push_back(Toleration{"k", TolerationOperator::kEqual, "v", TaintEffect::kNoExecute, 30});
  pod->spec.termination_grace_period_seconds = 10;
  Affinity affinity;
  affinity.node_affinity = NodeAffinity{};
  affinity.node_affinity->required =
      NodeSelector{{NodeSelectorTerm{{SelectorRequirement{"zone", SelectorOperator::kIn, {"a", "b"}}}, {}}}};
  affinity.pod_anti_affinity = PodAffinity{};
  affinity.pod_anti_affinity->preferred.push_back(WeightedPodAffinityTerm{
      50, PodAffinityTerm{LabelSelector{{{"app", "web"}}, {}}, {}, std::nullopt, "kubernetes.io/hostname", {}, {}}});
  pod->spec.affinity = affinity;
  pod->metadata.owner_references.push_back(OwnerReference{"apps/v1", "ReplicaSet", "web-1", "rs", true});
  pod->metadata.finalizers = {"example.com/x"};
  pod->metadata.generation = 3;
  pod->metadata.resource_version = "42";

  const std::string text = EncodePod(*pod);
  json::Document doc = Json(text);
  auto back = DecodePod(doc);
  ASSERT_TRUE(back.has_value()) << back.error()[0].ToString() << "\n" << text;
  const Pod& p = **back;
  EXPECT_EQ(p.metadata.name, "web");
  EXPECT_EQ(p.metadata.namespace_, "shop");
  EXPECT_EQ(p.metadata.uid, "u1");
  EXPECT_EQ(p.metadata.labels, pod->metadata.labels);
  EXPECT_EQ(p.metadata.owner_references, pod->metadata.owner_references);
  EXPECT_EQ(p.metadata.finalizers, pod->metadata.finalizers);
  EXPECT_EQ(p.metadata.generation, 3);
  EXPECT_EQ(p.metadata.resource_version, "42");
  EXPECT_EQ(p.spec.node_selector, pod->spec.node_selector);
  EXPECT_EQ(p.spec.tolerations, pod->spec.tolerations);
  EXPECT_EQ(p.spec.affinity, pod->spec.affinity);
  EXPECT_EQ(p.spec.priority, 5);
  EXPECT_EQ(p.spec.termination_grace_period_seconds, 10);
  ASSERT_EQ(p.spec.containers.size(), pod->spec.containers.size());
  EXPECT_EQ(p.spec.containers[0].resources.requests.at("cpu").MilliValue(), 250);
  EXPECT_EQ(p.spec.containers[0].resources.requests.at("memory").text(), "1Gi");
  // Encoding is stable: the decoded pod encodes to the same text.
  Pod again = p;
  again.json = nullptr;
  EXPECT_EQ(EncodePod(again), text);
}

// spec.resourceClaims, the containers' resources.claims and status.resourceClaimStatuses (DRA)
// survive the typed encoding: a pod written through it keeps the claims it asks for.
TEST(EncodeTest, PodResourceClaimsRoundTrip) {
  auto pod = testing::MakePod().Name("gpu").Namespace("ml").UID("u2").Req({{"cpu", "100m"}}).Obj();
  pod->spec.resource_claims = {
      PodResourceClaim{"shared", "gpu-claim", std::nullopt},
      PodResourceClaim{"own", std::nullopt, "gpu-template"},
  };
  pod->spec.containers[0].resources.claims = {ResourceClaimUse{"shared", ""}, ResourceClaimUse{"own", "req-0"}};
  Container init;
  init.name = "setup";
  init.image = "busybox";
  init.resources.claims = {ResourceClaimUse{"shared", ""}};
  pod->spec.init_containers.push_back(std::move(init));
  pod->status.resource_claim_statuses = {PodResourceClaimStatus{"own", "gpu-own-x7k2p"}};

  const std::string text = EncodePod(*pod);
  EXPECT_THAT(text, HasSubstr(R"("resourceClaims":[{"name":"shared","resourceClaimName":"gpu-claim"},)"
                              R"({"name":"own","resourceClaimTemplateName":"gpu-template"}])"));
  EXPECT_THAT(text, HasSubstr(R"("claims":[{"name":"shared"},{"name":"own","request":"req-0"}])"));
  EXPECT_THAT(text, HasSubstr(R"("resourceClaimStatuses":[{"name":"own","resourceClaimName":"gpu-own-x7k2p"}])"));
  json::Document doc = Json(text);
  auto back = DecodePod(doc);
  ASSERT_TRUE(back.has_value()) << back.error()[0].ToString() << "\n" << text;
  const Pod& p = **back;
  EXPECT_EQ(p.spec.resource_claims, pod->spec.resource_claims);
  ASSERT_EQ(p.spec.containers.size(), 1u);
  EXPECT_EQ(p.spec.containers[0].resources.claims, pod->spec.containers[0].resources.claims);
  ASSERT_EQ(p.spec.init_containers.size(), 1u);
  EXPECT_EQ(p.spec.init_containers[0].resources.claims, pod->spec.init_containers[0].resources.claims);
  EXPECT_EQ(p.status.resource_claim_statuses, pod->status.resource_claim_statuses);
  Pod again = p;
  again.json = nullptr;
  EXPECT_EQ(EncodePod(again), text);

  // A pod without claims writes none of the three fields.
  auto plain = testing::MakePod().Name("plain").Obj();
  const std::string plain_text = EncodePod(*plain);
  EXPECT_THAT(plain_text, ::testing::Not(HasSubstr("resourceClaims")));
  EXPECT_THAT(plain_text, ::testing::Not(HasSubstr("claims")));
  EXPECT_THAT(plain_text, ::testing::Not(HasSubstr("resourceClaimStatuses")));
}

TEST(EncodeTest, NodeRoundTrip) {
  auto node = testing::MakeNode()
                  .Name("n1")
                  .Label("zone", "a")
                  .Capacity({{"cpu", "4"}, {"memory", "16Gi"}, {"pods", "110"}})
                  .Taint("dedicated", "web", TaintEffect::kNoSchedule)
                  .Obj();
  node->status.images.push_back(ContainerImage{{"nginx:1.25"}, 1000});
  node->status.conditions.push_back(NodeCondition{"Ready", "True"});
  const std::string text = EncodeNode(*node);
  json::Document doc = Json(text);
  auto back = DecodeNode(doc);
  ASSERT_TRUE(back.has_value()) << back.error()[0].ToString() << "\n" << text;
  const Node& n = **back;
  EXPECT_EQ(n.metadata.labels, node->metadata.labels);
  EXPECT_EQ(n.spec.taints, node->spec.taints);
  EXPECT_EQ(n.status.capacity.size(), node->status.capacity.size());
  EXPECT_EQ(n.status.allocatable.at("memory").text(), "16Gi");
  ASSERT_EQ(n.status.images.size(), 1u);
  EXPECT_EQ(n.status.images[0].names, node->status.images[0].names);
  Node again = n;
  again.json = nullptr;
  EXPECT_EQ(EncodeNode(again), text);
}

// ---------------------------------------------------------------------------------------------
// The loader keeps every object's full JSON, defaulted.

TEST(LosslessTest, LoadedObjectsKeepTheirDefaultedJson) {
  auto objs = LoadManifestsFromString(R"(apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: 4}}
---
apiVersion: v1
kind: Pod
metadata: {name: web, resourceVersion: "7", finalizers: [a/b]}
spec:
  containers: [{name: c, image: nginx, resources: {limits: {cpu: 1}}, livenessProbe: {exec: {command: [x]}}}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs, namespace: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec: {containers: [{name: c, image: nginx, args: [--flag]}]}
)",
                                      "test.yaml");
  ASSERT_TRUE(objs.has_value()) << objs.error().ToString();
  ASSERT_EQ(objs->nodes.size(), 1u);
  ASSERT_NE(objs->nodes[0]->json, nullptr);
  json::Document node = Json(*objs->nodes[0]->json);
  EXPECT_EQ(json::Encode(*json::Find(*json::Find(node, "status"), "allocatable")), R"({"cpu":4,"pods":"110"})");
  EXPECT_EQ(json::GetString(*json::Find(*json::Find(node, "metadata"), "labels"), "kubernetes.io/hostname"), "n1");

  ASSERT_EQ(objs->pods.size(), 2u);
  const Pod& web = *objs->pods[0];
  EXPECT_EQ(web.metadata.resource_version, "7");
  EXPECT_THAT(web.metadata.finalizers, ElementsAre("a/b"));
  json::Document pod = Json(*web.json);
  const json::Value& spec = *json::Find(pod, "spec");
  EXPECT_EQ(json::GetString(spec, "schedulerName"), "default-scheduler");
  EXPECT_EQ(json::Find(spec, "terminationGracePeriodSeconds")->GetInt(), 30);
  EXPECT_EQ(json::Find(spec, "priority")->GetInt(), 0);
  EXPECT_EQ(json::GetString(spec, "preemptionPolicy"), "PreemptLowerPriority");
  const json::Value& c = (*json::Find(spec, "containers"))[0];
  EXPECT_TRUE(json::Find(c, "livenessProbe") != nullptr);  // unmodelled fields are kept
  EXPECT_EQ(json::Encode(*json::Find(*json::Find(c, "resources"), "requests")), R"({"cpu":1})");
  EXPECT_EQ(json::GetString(*json::Find(pod, "metadata"), "namespace"), "default");
  EXPECT_EQ(json::GetString(*json::Find(pod, "metadata"), "uid"), web.metadata.uid);

  // A pod from the ReplicaSet: its template, with the controller's metadata.
  const Pod& created = *objs->pods[1];
  ASSERT_NE(created.json, nullptr);
  json::Document cp = Json(*created.json);
  EXPECT_EQ(json::GetString(*json::Find(cp, "metadata"), "name"), created.metadata.name);
  EXPECT_EQ(json::GetString(*json::Find(cp, "metadata"), "namespace"), "shop");
  const json::Value& refs = *json::Find(*json::Find(cp, "metadata"), "ownerReferences");
  EXPECT_EQ(json::GetString(refs[0], "kind"), "ReplicaSet");
  const json::Value& cc = (*json::Find(*json::Find(cp, "spec"), "containers"))[0];
  EXPECT_EQ(json::Encode(*json::Find(cc, "args")), R"(["--flag"])");
  // The kept JSON decodes to the same object.
  auto again = DecodePod(cp);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ((*again)->metadata.labels, created.metadata.labels);
  ASSERT_EQ(objs->namespaces.size(), 2u);
  for (const auto& ns : objs->namespaces) EXPECT_NE(ns->json, nullptr);
}

}  // namespace
}  // namespace kubesched::api
