#include "store/controllers/job_controller.h"

#include <map>
#include <set>

#include <gtest/gtest.h>

#include "store/controllers/controllers_test_util.h"

namespace kubesched::store::controllers {
namespace {

using testing::Field;
using testing::NodeJson;

std::string JobJson(std::string_view name, std::string_view spec) {
  return R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":")" + std::string(name) + R"("},"spec":{)" +
         std::string(spec) +
         R"("template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox:1"}]}}}})";
}

class JobControllerTest : public testing::ControllerFixture {
 public:
  const ResourceType& Jobs() const { return R("batch", "jobs"); }
  std::string Label(const ObjectPtr& o, std::string_view key) {
    for (const auto& [k, v] : o->labels()) {
      if (k == key) return v;
    }
    return "<none>";
  }
};

TEST_F(JobControllerTest, RunsParallelismPodsUntilCompletions) {
  MustCreate(Nodes(), "", NodeJson("n1"));
  auto job = MustCreate(Jobs(), "default", JobJson("batch", R"("parallelism":2,"completions":3,)"));
  auto pods = ListPods("job-name=batch");
  ASSERT_EQ(pods.size(), 2u);
  for (const auto& p : pods) {
    EXPECT_EQ(p->name.substr(0, 6), "batch-");
    EXPECT_EQ(p->name.size(), 11u);
    EXPECT_EQ(Field(*p, "metadata.generateName"), "batch-");
    EXPECT_EQ(Label(p, "batch.kubernetes.io/controller-uid"), job->uid);
    EXPECT_EQ(Label(p, "controller-uid"), job->uid);
    EXPECT_EQ(Label(p, "batch.kubernetes.io/job-name"), "batch");
    EXPECT_EQ(Field(*p, "metadata.ownerReferences.0.apiVersion"), "batch/v1");
  }
  BindAll("n1");
  SetPhase(pods[0], "Succeeded");
  // One done, two to go, two at a time.
  EXPECT_EQ(LivePods("job-name=batch").size(), 3u);
  auto status = MustGet(Jobs(), "default", "batch");
  EXPECT_EQ(Field(*status, "status.succeeded"), "1");
  EXPECT_EQ(Field(*status, "status.active"), "2");
  EXPECT_EQ(Field(*status, "status.startTime"), "2024-05-01T12:00:00Z");
  BindAll("n1");
  for (const auto& p : ListPods("job-name=batch")) {
    if (Field(*p, "status.phase") == "Running") SetPhase(p, "Succeeded");
  }
  status = MustGet(Jobs(), "default", "batch");
  EXPECT_EQ(Field(*status, "status.succeeded"), "3");
  EXPECT_EQ(Field(*status, "status.active"), "0");
  EXPECT_EQ(Field(*status, "status.conditions.0.type"), "Complete");
  EXPECT_EQ(Field(*status, "status.completionTime"), "2024-05-01T12:00:00Z");
}

TEST_F(JobControllerTest, TerminatingPodIsReplacedAtOnce) {
  MustCreate(Nodes(), "", NodeJson("n1"));
  MustCreate(Jobs(), "default", JobJson("batch", R"("parallelism":1,"completions":1,)"));
  BindAll("n1");
  auto pod = ListPods("job-name=batch").at(0);
  ASSERT_TRUE(store->Delete(Pods(), "default", pod->name, {}));
  auto live = LivePods("job-name=batch");
  ASSERT_EQ(live.size(), 1u);
  EXPECT_NE(live[0]->name, pod->name);
  EXPECT_EQ(Field(*MustGet(Jobs(), "default", "batch"), "status.terminating"), "1");
}

TEST_F(JobControllerTest, IndexedReplacementKeepsItsIndex) {
  MustCreate(Jobs(), "default", JobJson("idx", R"("parallelism":2,"completions":3,"completionMode":"Indexed",)"));
  auto pods = ListPods("job-name=idx");
  ASSERT_EQ(pods.size(), 2u);
  std::map<std::string, ObjectPtr> by_index;
  for (const auto& p : pods) {
    const std::string index = Label(p, "batch.kubernetes.io/job-completion-index");
    EXPECT_NE(Field(*p, "metadata.annotations").find("\"batch.kubernetes.io/job-completion-index\":\"" + index + "\""),
              std::string::npos);
    EXPECT_EQ(p->name.substr(0, 6), "idx-" + index + "-");
    by_index[index] = p;
  }
  ASSERT_TRUE(by_index.contains("0") && by_index.contains("1"));
  ASSERT_TRUE(store->Delete(Pods(), "default", by_index["1"]->name, {}));  // unbound: gone at once
  pods = ListPods("job-name=idx");
  ASSERT_EQ(pods.size(), 2u);
  std::set<std::string> indexes;
  for (const auto& p : pods) indexes.insert(Label(p, "batch.kubernetes.io/job-completion-index"));
  EXPECT_EQ(indexes, (std::set<std::string>{"0", "1"}));
  SetPhase(by_index["0"], "Succeeded");
  auto status = MustGet(Jobs(), "default", "idx");
  EXPECT_EQ(Field(*status, "status.completedIndexes"), "0");
  indexes.clear();
  for (const auto& p : LivePods("job-name=idx")) {
    if (Field(*p, "status.phase") != "Succeeded") indexes.insert(Label(p, "batch.kubernetes.io/job-completion-index"));
  }
  EXPECT_EQ(indexes, (std::set<std::string>{"1", "2"}));
}

TEST_F(JobControllerTest, SuspendedJobHasNoPods) {
  MustCreate(Jobs(), "default", JobJson("later", R"("suspend":true,"parallelism":2,"completions":2,)"));
  EXPECT_TRUE(ListPods("job-name=later").empty());
  EXPECT_EQ(Field(*MustGet(Jobs(), "default", "later"), "status.conditions.0.type"), "Suspended");
  ASSERT_TRUE(store->Patch(Jobs(), "default", "later", PatchType::kMergePatch, R"({"spec":{"suspend":false}})", ""));
  EXPECT_EQ(ListPods("job-name=later").size(), 2u);
  auto status = MustGet(Jobs(), "default", "later");
  EXPECT_EQ(Field(*status, "status.conditions.0.status"), "False");
  EXPECT_EQ(Field(*status, "status.conditions.0.reason"), "JobResumed");
  ASSERT_TRUE(store->Patch(Jobs(), "default", "later", PatchType::kMergePatch, R"({"spec":{"suspend":true}})", ""));
  EXPECT_TRUE(ListPods("job-name=later").empty());
}

TEST_F(JobControllerTest, FailsAfterBackoffLimit) {
  MustCreate(Nodes(), "", NodeJson("n1"));
  MustCreate(Jobs(), "default", JobJson("flaky", R"("backoffLimit":1,)"));
  for (int i = 0; i < 2; ++i) {
    BindAll("n1");
    for (const auto& p : ListPods("job-name=flaky")) {
      if (Field(*p, "status.phase") == "Running") SetPhase(p, "Failed");
    }
  }
  auto status = MustGet(Jobs(), "default", "flaky");
  EXPECT_EQ(Field(*status, "status.failed"), "2");
  EXPECT_EQ(Field(*status, "status.conditions.0.type"), "Failed");
  EXPECT_EQ(Field(*status, "status.conditions.0.reason"), "BackoffLimitExceeded");
  EXPECT_EQ(LivePods("job-name=flaky").size(), 2u);  // the two failed ones, no new one
}

TEST_F(JobControllerTest, TemplateMustNotRestartAlways) {
  auto r =
      store->Create(Jobs(), "default", store::testing::Doc(R"({"metadata":{"name":"bad"},"spec":{"template":{"spec":{
                           "containers":[{"name":"c","image":"busybox:1"}]}}}})"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().HttpCode(), 422);
}

TEST(FormatIndexesTest, CompressesRuns) {
  EXPECT_EQ(FormatIndexes({}), "");
  EXPECT_EQ(FormatIndexes({0}), "0");
  EXPECT_EQ(FormatIndexes({1, 3, 4, 5, 7}), "1,3-5,7");
}

// Without a kubelet, a pod annotated simulate.kubesched.io/run-for succeeds that long after it
// started: its containers exit 0 (Completed), Ready goes False (PodCompleted), and the Job counts
// it, so it completes. A pod restarted Always ignores the annotation.
TEST_F(JobControllerTest, PodsAnnotatedRunForSucceedAndTheJobCompletes) {
  MustCreate(Nodes(), "", NodeJson("n1"));
  MustCreate(Jobs(), "default",
             R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"once"},"spec":{"completions":2,
             "template":{"metadata":{"annotations":{"simulate.kubesched.io/run-for":"30s"}},
             "spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox:1"}]}}}})");
  MustCreate(Pods(), "default",
             R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"server","annotations":{
             "simulate.kubesched.io/run-for":"1s"}},"spec":{"containers":[{"name":"c","image":"x"}]}})");
  BindAll("n1");
  Advance(29);
  auto pods = ListPods("job-name=once");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(Field(*pods[0], "status.phase"), "Running");
  Advance(1);
  pods = ListPods("job-name=once");
  ASSERT_EQ(pods.size(), 2u);  // the first succeeded, the second is created
  const auto first = Field(*pods[0], "status.phase") == "Succeeded" ? pods[0] : pods[1];
  EXPECT_EQ(Field(*first, "status.phase"), "Succeeded");
  EXPECT_EQ(Field(*first, "status.containerStatuses.0.state.terminated.reason"), "Completed");
  EXPECT_EQ(Field(*first, "status.containerStatuses.0.state.terminated.exitCode"), "0");
  EXPECT_EQ(Field(*first, "status.conditions.1.type"), "Ready");
  EXPECT_EQ(Field(*first, "status.conditions.1.status"), "False");
  EXPECT_EQ(Field(*first, "status.conditions.1.reason"), "PodCompleted");
  BindAll("n1");
  Advance(30);
  auto job = MustGet(Jobs(), "default", "once");
  EXPECT_EQ(Field(*job, "status.succeeded"), "2");
  EXPECT_EQ(Field(*job, "status.conditions.0.type"), "Complete") << job->json;
  EXPECT_EQ(Field(*MustGet(Pods(), "default", "server"), "status.phase"), "Running");
}

}  // namespace
}  // namespace kubesched::store::controllers
