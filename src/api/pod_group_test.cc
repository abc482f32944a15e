// PodGroup (scheduling.k8s.io/v1alpha2) and the pod's spec.schedulingGroup: decoded with
// upstream's validation (pkg/apis/scheduling/validation, ValidatePodGroup), errors at field paths.

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/decode.h"
#include "api/encode.h"
#include "api/json.h"
#include "api/manifest.h"

namespace kubesched::api {
namespace {

using ::testing::HasSubstr;

json::Document Json(std::string_view text) {
  json::Document doc;
  auto r = json::Parse(text, doc);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().ToString());
  return doc;
}

std::string Group(std::string_view spec) {
  return std::string(
             R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":"pg"},"spec":)") +
         std::string(spec) + "}";
}

TEST(PodGroupDecode, GangWithTopologyAndTemplate) {
  auto pg = DecodePodGroup(Json(Group(R"({"schedulingPolicy":{"gang":{"minCount":8}},
      "podGroupTemplateRef":{"workload":{"workloadName":"job","podGroupTemplateName":"workers"}},
      "schedulingConstraints":{"topology":[{"key":"topology.example.com/rack"}]}})")));
  ASSERT_TRUE(pg.has_value()) << pg.error()[0].message;
  EXPECT_EQ((*pg)->metadata.namespace_, "default");
  EXPECT_EQ((*pg)->policy, PodGroupPolicy::kGang);
  EXPECT_EQ((*pg)->min_count, 8);
  EXPECT_EQ((*pg)->topology_key, "topology.example.com/rack");
  EXPECT_EQ((*pg)->workload_name, "job");
  EXPECT_EQ((*pg)->template_name, "workers");
}

TEST(PodGroupDecode, Basic) {
  auto pg = DecodePodGroup(Json(Group(R"({"schedulingPolicy":{"basic":{}}})")));
  ASSERT_TRUE(pg.has_value());
  EXPECT_EQ((*pg)->policy, PodGroupPolicy::kBasic);
  EXPECT_EQ((*pg)->min_count, 1);
  EXPECT_EQ((*pg)->topology_key, "");
}

TEST(PodGroupDecode, ValidationAsUpstream) {
  const struct {
    const char* spec;
    const char* field;
    const char* message;
  } cases[] = {
      {R"({"schedulingPolicy":{}})", "spec.schedulingPolicy", "must specify one of: `basic`, `gang`"},
      {R"({"schedulingPolicy":{"basic":{},"gang":{"minCount":1}}})", "spec.schedulingPolicy",
       "exactly one of `basic`, `gang` is required, but multiple fields are set"},
      {R"({"schedulingPolicy":{"gang":{}}})", "spec.schedulingPolicy.gang.minCount", "required field is missing"},
      {R"({"schedulingPolicy":{"gang":{"minCount":0}}})", "spec.schedulingPolicy.gang.minCount",
       "required field is missing"},
      {R"({"schedulingPolicy":{"gang":{"minCount":-2}}})", "spec.schedulingPolicy.gang.minCount",
       "must be greater than zero"},
      {R"({"schedulingPolicy":{"basic":{}},"podGroupTemplateRef":{"workload":{"workloadName":"Job"}}})",
       "spec.podGroupTemplateRef.workload.workloadName", "a lowercase RFC 1123 label"},
      {R"({"schedulingPolicy":{"basic":{}},"schedulingConstraints":{"topology":[{"key":"a"},{"key":"b"}]}})",
       "spec.schedulingConstraints.topology[1]", "must have at most 1 item"},
      {R"({"schedulingPolicy":{"basic":{}},"schedulingConstraints":{"topology":[{"key":"-bad-"}]}})",
       "spec.schedulingConstraints.topology[0].key", "name part must consist of"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.spec);
    auto pg = DecodePodGroup(Json(Group(c.spec)));
    ASSERT_FALSE(pg.has_value());
    EXPECT_EQ(pg.error()[0].field, c.field);
    EXPECT_THAT(pg.error()[0].message, HasSubstr(c.message));
  }
  auto no_spec =
      DecodePodGroup(Json(R"({"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":"pg"}})"));
  ASSERT_FALSE(no_spec.has_value());
  EXPECT_EQ(no_spec.error()[0].field, "spec");
}

TEST(PodGroupDecode, ServedAtV1alpha2Only) {
  auto v1 = DecodeObject(Json(R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PodGroup","metadata":{"name":"pg"},
      "spec":{"schedulingPolicy":{"basic":{}}}})"));
  ASSERT_FALSE(v1.has_value());
  EXPECT_EQ(v1.error()[0].field, "apiVersion");
  EXPECT_THAT(v1.error()[0].message, HasSubstr("use \"scheduling.k8s.io/v1alpha2\""));
}

// scheduler-plugins' PodGroup CRD (scheduling.x-k8s.io/v1alpha1, the Coscheduling plugin's): a
// gang of minMember, its timeout and minimum resources.
TEST(PodGroupDecode, SchedulerPluginsPodGroup) {
  auto pg = DecodePodGroup(Json(R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup",
      "metadata":{"name":"nginx","namespace":"ns"},
      "spec":{"minMember":3,"scheduleTimeoutSeconds":10,"minResources":{"cpu":"6","memory":"1Gi"}}})"));
  ASSERT_TRUE(pg.has_value()) << pg.error()[0].message;
  EXPECT_EQ((*pg)->api, PodGroupApi::kCoscheduling);
  EXPECT_EQ((*pg)->ApiVersion(), "scheduling.x-k8s.io/v1alpha1");
  EXPECT_EQ((*pg)->policy, PodGroupPolicy::kGang);
  EXPECT_EQ((*pg)->min_count, 3);
  EXPECT_EQ((*pg)->schedule_timeout_seconds, 10);
  ASSERT_EQ((*pg)->min_resources.size(), 2u);
  EXPECT_EQ((*pg)->min_resources.at("cpu").MilliValue(), 6000);
  // Everything optional, as the CRD has it; a negative minMember asks for nothing.
  auto empty = DecodePodGroup(Json(R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup",
      "metadata":{"name":"g"},"spec":{"minMember":-2}})"));
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ((*empty)->min_count, 0);
  EXPECT_FALSE((*empty)->schedule_timeout_seconds.has_value());
  // Wrong types are refused at their path.
  auto bad = DecodePodGroup(Json(R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup",
      "metadata":{"name":"g"},"spec":{"minMember":"three"}})"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error()[0].field, "spec.minMember");
  // Its CRD serves v1alpha1 only.
  auto v1 = DecodeObject(Json(R"({"apiVersion":"scheduling.x-k8s.io/v1","kind":"PodGroup","metadata":{"name":"g"}})"));
  ASSERT_FALSE(v1.has_value());
  EXPECT_THAT(v1.error()[0].message, HasSubstr("use \"scheduling.x-k8s.io/v1alpha1\""));
}

TEST(PodGroupDecode, BothPodGroupsOfOneNameLoadSideBySide) {
  auto loaded = LoadManifestsFromString(R"(apiVersion: scheduling.k8s.io/v1alpha2
kind: PodGroup
metadata: {name: g}
spec: {schedulingPolicy: {gang: {minCount: 2}}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: g}
spec: {minMember: 3}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: SomethingElse
metadata: {name: g}
)",
                                        "groups.yaml");
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  ASSERT_EQ(loaded->pod_groups.size(), 2u);
  EXPECT_EQ(loaded->pod_groups[0]->api, PodGroupApi::kScheduling);
  EXPECT_EQ(loaded->pod_groups[1]->api, PodGroupApi::kCoscheduling);
  EXPECT_NE(loaded->pod_groups[0]->metadata.uid, loaded->pod_groups[1]->metadata.uid);
  auto dup = LoadManifestsFromString(
      "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\n---\n"
      "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\n",
      "dup.yaml");
  ASSERT_FALSE(dup.has_value());
  EXPECT_THAT(dup.error().message, HasSubstr("duplicate PodGroup \"g\""));
}

TEST(PodGroupDecode, PodGroupOfAPod) {
  Pod pod;
  pod.spec.pod_group = "upstream";
  pod.metadata.labels.Set(std::string(kLabelCoschedulingPodGroup), "crd");
  EXPECT_EQ(PodGroupOf(pod, PodGroupApi::kScheduling), "upstream");
  EXPECT_EQ(PodGroupOf(pod, PodGroupApi::kCoscheduling), "crd");
  EXPECT_EQ(PodGroupOf(Pod{}, PodGroupApi::kCoscheduling), "");
}

TEST(PodGroupDecode, PodSchedulingGroupRoundTrips) {
  auto pod = DecodePod(Json(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"schedulingGroup":{"podGroupName":"train"},"containers":[{"name":"c"}]}})"));
  ASSERT_TRUE(pod.has_value());
  EXPECT_EQ((*pod)->spec.pod_group, "train");
  EXPECT_THAT(EncodePod(**pod), HasSubstr(R"("schedulingGroup":{"podGroupName":"train"})"));

  auto bad = DecodePod(Json(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"schedulingGroup":{"podGroupName":"Train_1"},"containers":[{"name":"c"}]}})"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error()[0].field, "spec.schedulingGroup.podGroupName");
}

}  // namespace
}  // namespace kubesched::api
