// Tests for the scheduling queue, mirroring upstream's
// pkg/scheduler/backend/queue/scheduling_queue_test.go where the cases apply (queueing hints
// enabled; upstream's PV/PVC/CSI events are replaced by Namespace/PDB/Node events, which the
// queue treats the same way).

#include "queue/scheduling_queue.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/builders.h"

namespace kubesched::queue {
namespace {

using framework::ClusterEvent;
using framework::ClusterEventWithHint;
using framework::EventObjects;
using framework::EventResource;
using framework::PodInfoPtr;
using framework::QueuedPodInfo;
using framework::QueueingHint;
using framework::QueueingHintFn;
using kubesched::testing::MakePod;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
using ::testing::UnorderedElementsAreArray;
namespace action = framework::action;

constexpr int64_t kSecond = util::kNanosPerSecond;
constexpr int64_t kMillisecond = kSecond / 1000;
constexpr int64_t kStart = 1'000 * kSecond;
const std::string kProfile = std::string(api::kDefaultSchedulerName);

// Events standing in for upstream's test events (nodeAdd, pvAdd, pvUpdate, pvcAdd, csiNodeUpdate).
const ClusterEvent kNodeAdd{EventResource::kNode, action::kAdd, "NodeAdd"};
const ClusterEvent kNsAdd{EventResource::kNamespace, action::kAdd, "NamespaceAdd"};
const ClusterEvent kNsDelete{EventResource::kNamespace, action::kDelete, "NamespaceDelete"};
const ClusterEvent kPdbAdd{EventResource::kPodDisruptionBudget, action::kAdd, "PodDisruptionBudgetAdd"};
const ClusterEvent kNodeTaint{EventResource::kNode, action::kUpdateNodeTaint, "NodeUpdateNodeTaint"};
const ClusterEvent kUnscheduledPodUpdate{EventResource::kUnscheduledPod, action::kUpdate, "UnscheduledPodUpdate"};

const QueueingHintFn kQueue = [](const api::Pod&, const EventObjects&) { return QueueingHint::kQueue; };
const QueueingHintFn kSkip = [](const api::Pod&, const EventObjects&) { return QueueingHint::kSkip; };

using PluginEvents = std::map<std::string, std::vector<ClusterEventWithHint>, std::less<>>;

// Upstream's PrioritySort: higher priority first, then earlier timestamp.
bool PrioritySortLess(const QueuedPodInfo& a, const QueuedPodInfo& b) {
  int32_t pa = a.pod().Priority(), pb = b.pod().Priority();
  return pa > pb || (pa == pb && a.timestamp_ns < b.timestamp_ns);
}

// Admits a pod when it has a label whose key is in the allow list (upstream's preEnqueuePlugin).
class AllowListPlugin : public framework::PreEnqueuePlugin {
 public:
  AllowListPlugin(std::string name, std::vector<std::string> allow)
      : name_(std::move(name)), allow_(std::move(allow)) {}
  std::string_view Name() const override { return name_; }
  framework::Status PreEnqueue(const api::Pod& pod) override {
    for (const auto& key : allow_) {
      if (pod.metadata.labels.Has(key)) return {};
    }
    return framework::Status::UnschedulableAndUnresolvable("pod name not in allowlists");
  }
  void set_allow(std::vector<std::string> allow) { allow_ = std::move(allow); }

 private:
  std::string name_;
  std::vector<std::string> allow_;
};

// Like upstream's SchedulingGates plugin: gated while spec.schedulingGates is non-empty.
class GatesPlugin : public framework::PreEnqueuePlugin {
 public:
  static constexpr std::string_view kName = "SchedulingGates";
  std::string_view Name() const override { return kName; }
  framework::Status PreEnqueue(const api::Pod& pod) override {
    if (pod.spec.scheduling_gates.empty()) return {};
    return framework::Status::UnschedulableAndUnresolvable("waiting for scheduling gates");
  }
  static std::vector<ClusterEventWithHint> Events() {
    return {{ClusterEvent{EventResource::kPod, action::kUpdatePodSchedulingGatesEliminated, ""},
             [](const api::Pod& pod, const EventObjects& e) {
               return e.new_pod != nullptr && e.new_pod->metadata.uid == pod.metadata.uid ? QueueingHint::kQueue
                                                                                          : QueueingHint::kSkip;
             }}};
  }
};

std::unique_ptr<SchedulingQueue> NewQueue(const util::Clock& clock, PluginEvents events = {},
                                          std::vector<framework::PreEnqueuePlugin*> pre_enqueue = {},
                                          Options options = {}) {
  std::map<std::string, ProfileQueueingConfig, std::less<>> profiles;
  profiles[kProfile] = ProfileQueueingConfig{std::move(pre_enqueue), std::move(events)};
  return std::make_unique<SchedulingQueue>(PrioritySortLess, clock, std::move(profiles), options);
}

PodInfoPtr Pod(const std::string& name, int32_t priority = 0, const std::string& nominated = "",
               const std::string& ns = "ns1") {
  auto b = MakePod().Name(name).Namespace(ns).UID(name + ns).Priority(priority);
  if (!nominated.empty()) b.NominatedNodeName(nominated);
  return b.Info();
}

PodInfoPtr Mutated(const PodInfoPtr& p, const std::function<void(api::Pod&)>& fn) {
  auto pod = std::make_shared<api::Pod>(p->pod());
  fn(*pod);
  return framework::PodInfo::Create(pod);
}

std::string Uid(const PodInfoPtr& p) { return p->pod().metadata.uid; }

std::optional<SubQueue> Where(const SchedulingQueue& q, const PodInfoPtr& p) {
  auto got = q.Get(Uid(p));
  if (!got) return std::nullopt;
  return got->queue;
}

std::vector<std::string> Names(const SchedulingQueue& q, SubQueue sub) {
  std::vector<std::string> out;
  for (const auto& p : q.PendingPods()) {
    if (p.queue == sub) out.push_back(p.info.pod().metadata.name);
  }
  return out;
}

std::vector<std::string> NominatedNames(const SchedulingQueue& q, const std::string& node) {
  std::vector<std::string> out;
  for (const auto& p : q.NominatedPodsForNode(node)) out.push_back(p->pod().metadata.name);
  return out;
}

// Pops and checks that `want` came out.
QueuedPodInfo MustPop(SchedulingQueue& q, const PodInfoPtr& want) {
  auto got = q.Pop();
  EXPECT_TRUE(got.has_value()) << "want " << want->pod().metadata.name;
  if (!got) return {};
  EXPECT_EQ(got->pod().metadata.name, want->pod().metadata.name);
  return *got;
}

// A popped pod with the given rejecting plugins, as the scheduler hands it back.
QueuedPodInfo Rejected(QueuedPodInfo popped, std::vector<std::string> plugins, std::vector<std::string> pending = {}) {
  popped.unschedulable_plugins = std::move(plugins);
  popped.pending_plugins = std::move(pending);
  return popped;
}

// Adds, pops and returns the pod as unschedulable by `plugins` (upstream's
// popAndRequeueAsUnschedulable).
void AddPopReject(SchedulingQueue& q, const PodInfoPtr& p, std::vector<std::string> plugins) {
  q.Add(p);
  auto popped = MustPop(q, p);
  ASSERT_TRUE(q.AddUnschedulableIfNotPresent(Rejected(popped, std::move(plugins)), q.SchedulingCycle()).IsSuccess());
}

// -------------------------------------------------------------------------------------------
// Add / Pop ordering

TEST(SchedulingQueueTest, AddPopsByPriorityAndNominates) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock);
  auto med = Pod("mpp", 500, "node1", "ns2");
  auto up = Pod("up", 0, "node1");
  auto high = Pod("hpp", 1000);
  q->Add(med);
  q->Add(up);
  q->Add(high);
  EXPECT_THAT(NominatedNames(*q, "node1"), ElementsAre("mpp", "up"));
  MustPop(*q, high);
  MustPop(*q, med);
  MustPop(*q, up);
  EXPECT_FALSE(q->Pop().has_value());
  // Popping does not drop nominations.
  EXPECT_THAT(NominatedNames(*q, "node1"), ElementsAre("mpp", "up"));
}

TEST(SchedulingQueueTest, PopOrderPriorityThenTimestampThenArrival) {
  struct Case {
    std::string name;
    std::vector<std::pair<std::string, int32_t>> adds;  // name, priority; clock +1 ms between adds
    bool same_time;
    std::vector<std::string> want;
  };
  std::vector<Case> cases = {
      {"higher priority first", {{"a", 1}, {"b", 5}, {"c", 3}}, false, {"b", "c", "a"}},
      {"equal priority: earlier timestamp first", {{"a", 1}, {"b", 1}, {"c", 1}}, false, {"a", "b", "c"}},
      {"equal priority and timestamp: arrival order", {{"x", 0}, {"y", 0}, {"z", 0}}, true, {"x", "y", "z"}},
      {"mixed", {{"a", 0}, {"b", 10}, {"c", 0}, {"d", 10}}, false, {"b", "d", "a", "c"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    util::VirtualClock clock(kStart);
    auto q = NewQueue(clock);
    for (const auto& [name, prio] : c.adds) {
      q->Add(Pod(name, prio));
      if (!c.same_time) clock.Advance(kMillisecond);
    }
    std::vector<std::string> got;
    while (auto p = q->Pop()) got.push_back(p->pod().metadata.name);
    EXPECT_EQ(got, c.want);
  }
}

TEST(SchedulingQueueTest, PopCountsAttemptsAndCycles) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock);
  auto p = Pod("p");
  q->Add(p);
  EXPECT_EQ(q->SchedulingCycle(), 0);
  auto first = MustPop(*q, p);
  EXPECT_EQ(first.attempts, 1);
  EXPECT_EQ(first.timestamp_ns, kStart);
  EXPECT_EQ(first.initial_attempt_timestamp_ns, kStart);
  EXPECT_EQ(q->SchedulingCycle(), 1);
  EXPECT_TRUE(q->HasInFlight());
  EXPECT_THAT(q->InFlightPods(), ElementsAre(Uid(p)));
  q->Done(Uid(p));
  q->Done(Uid(p));  // idempotent
  EXPECT_FALSE(q->HasInFlight());
}

// Upstream TestPerPodSchedulingMetrics: attempts grow while the initial attempt time stays.
TEST(SchedulingQueueTest, AttemptsAndInitialAttemptTimestamp) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock);
  auto p = Pod("p");
  q->Add(p);
  auto popped = MustPop(*q, p);
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(popped, {"plugin"}), 1).IsSuccess());
  clock.Advance(kDefaultPodMaxInUnschedulablePodsNs + kSecond);
  q->FlushUnschedulablePodsLeftover();
  auto again = MustPop(*q, p);
  EXPECT_EQ(again.attempts, 2);
  EXPECT_EQ(again.initial_attempt_timestamp_ns, kStart);
  EXPECT_EQ(again.timestamp_ns, kStart);  // the time it was requeued
}

// -------------------------------------------------------------------------------------------
// Backoff

TEST(SchedulingQueueTest, BackoffDuration) {
  struct Case {
    std::string name;
    int64_t initial, max;
    int attempts;
    int64_t want;
  };
  const int64_t big = INT64_MAX / 2 + 1;
  std::vector<Case> cases = {
      {"no attempt, no backoff", kSecond, 10 * kSecond, 0, 0},
      {"first attempt: initial", kSecond, 10 * kSecond, 1, kSecond},
      {"doubles", kSecond, 10 * kSecond, 2, 2 * kSecond},
      {"doubles again", kSecond, 10 * kSecond, 3, 4 * kSecond},
      {"8 s", kSecond, 10 * kSecond, 4, 8 * kSecond},
      {"capped", kSecond, 10 * kSecond, 5, 10 * kSecond},
      {"stays capped", kSecond, 10 * kSecond, 6, 10 * kSecond},
      {"custom options", 2 * kSecond, 20 * kSecond, 4, 16 * kSecond},
      {"custom options capped", 2 * kSecond, 20 * kSecond, 5, 20 * kSecond},
      {"no overflow with many attempts", kSecond, INT64_MAX, 1000, INT64_MAX},
      {"no overflow near the limit", big, INT64_MAX, 2, INT64_MAX},
  };
  util::VirtualClock clock(kStart);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto q = NewQueue(clock, {}, {}, Options{.pod_initial_backoff_ns = c.initial, .pod_max_backoff_ns = c.max});
    EXPECT_EQ(q->BackoffDurationNs(c.attempts), c.want);
  }
}

// Upstream TestBackOffFlow: a pod failing with an error backs off 1, 2, 4, 8, 10, 10, 10 s.
TEST(SchedulingQueueTest, BackoffFlow) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock);
  auto p = Pod("test-pod", 0, "", "test-ns");
  q->Add(p);
  const std::vector<int64_t> want = {1, 2, 4, 8, 10, 10, 10};
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    auto popped = q->Pop();
    ASSERT_TRUE(popped.has_value());
    EXPECT_EQ(popped->attempts, static_cast<int>(i + 1));
    const int64_t requeued_at = clock.NowNs();
    // No rejecting plugin: an error, straight to backoffQ.
    ASSERT_TRUE(q->AddUnschedulableIfNotPresent(*popped, q->SchedulingCycle()).IsSuccess());
    EXPECT_EQ(Where(*q, p), SubQueue::kBackoff);
    EXPECT_FALSE(q->HasInFlight());
    EXPECT_EQ(q->NextTimerNs(), requeued_at + want[i] * kSecond);

    clock.Advance(want[i] * kSecond - kMillisecond);
    q->FlushBackoffQCompleted();
    EXPECT_EQ(Where(*q, p), SubQueue::kBackoff) << "flushed before backoff expired";
    clock.Advance(kMillisecond);
    q->FlushBackoffQCompleted();
    EXPECT_EQ(Where(*q, p), SubQueue::kActive) << "not flushed at expiry";
  }
  // activeQ is empty; the pod comes out of it.
  EXPECT_EQ(q->NumActive(), 1u);
  EXPECT_EQ(q->NumBackoff(), 0u);
}

TEST(SchedulingQueueTest, FlushBackoffQMovesOnlyExpiredInExpiryOrder) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock);
  auto a = Pod("a", 1), b = Pod("b", 2), c = Pod("c", 3);
  // a: 1 attempt (1 s); b: 2 attempts (2 s); c: 3 attempts (4 s).
  q->Add(a);
  auto pa = MustPop(*q, a);
  q->Add(b);
  auto pb = MustPop(*q, b);
  pb.attempts = 2;
  q->Add(c);
  auto pc = MustPop(*q, c);
  pc.attempts = 3;
  for (auto* info : {&pa, &pb, &pc}) ASSERT_TRUE(q->AddUnschedulableIfNotPresent(*info, 0).IsSuccess());
  EXPECT_EQ(q->NumBackoff(), 3u);
  EXPECT_THAT(Names(*q, SubQueue::kBackoff), ElementsAre("a", "b", "c"));
  EXPECT_EQ(q->NextTimerNs(), kStart + kSecond);
  clock.Advance(2 * kSecond);
  q->FlushBackoffQCompleted();
  EXPECT_THAT(Names(*q, SubQueue::kActive), ElementsAre("b", "a"));
  EXPECT_THAT(Names(*q, SubQueue::kBackoff), ElementsAre("c"));
  EXPECT_EQ(q->NextTimerNs(), kStart + 4 * kSecond);
}

// Upstream TestHighPriorityBackoff: an unschedulable high-priority pod does not block others.
TEST(SchedulingQueueTest, HighPriorityBackoff) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock);
  auto mid = Pod("test-midpod", 100, "node1");
  auto high = Pod("test-highpod", 1000, "node1");
  q->Add(mid);
  q->Add(high);
  auto p = MustPop(*q, high);
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(p, {"fooPlugin"}), q->SchedulingCycle()).IsSuccess());
  q->MoveAllToActiveOrBackoffQueue(framework::events::UnschedulableTimeout(), {});
  MustPop(*q, mid);
  EXPECT_EQ(Where(*q, high), SubQueue::kBackoff);
}

// -------------------------------------------------------------------------------------------
// In-flight pods and events (upstream Test_InFlightPods)

struct Action {
  enum Kind { kPop, kEvent, kEnqueue, kCreate } kind;
  std::string pod;                        // kPop, kEnqueue, kCreate
  ClusterEvent event{};                   // kEvent
  std::vector<std::string> plugins = {};  // kEnqueue: unschedulable plugins
  std::vector<std::string> pending = {};  // kEnqueue: pending plugins
};
Action PopA(std::string pod) { return {Action::kPop, std::move(pod)}; }
Action EventA(ClusterEvent e) { return {Action::kEvent, "", std::move(e)}; }
Action EnqueueA(std::string pod, std::vector<std::string> plugins = {}, std::vector<std::string> pending = {}) {
  return {Action::kEnqueue, std::move(pod), {}, std::move(plugins), std::move(pending)};
}
Action CreateA(std::string pod) { return {Action::kCreate, std::move(pod)}; }

TEST(SchedulingQueueTest, InFlightPods) {
  const ClusterEvent assigned_add = framework::events::AssignedPodAdd();
  const ClusterEvent timeout = framework::events::UnschedulableTimeout();
  struct Case {
    std::string name;
    PluginEvents events;
    std::vector<std::string> initial;
    std::vector<Action> actions;
    std::vector<std::string> want_in_flight;  // pod names
    std::vector<std::string> want_entries;    // InFlightEntries with pod names
    std::vector<std::string> want_active, want_backoff, want_unsched;
  };
  std::vector<Case> cases = {
      {"pod and interested events are registered in flight",
       {{"fooPlugin1", {{kNsAdd, kQueue}}}},
       {"targetpod"},
       // pdbAdd: nothing in flight yet; nsDelete: no plugin is interested.
       {EventA(kPdbAdd), PopA("targetpod"), EventA(kNsAdd), EventA(kNsDelete)},
       {"targetpod"},
       {"pod:targetpod", "NamespaceAdd"},
       {},
       {},
       {}},
      {"pod registered in flight is enqueued back to backoffQ",
       {{"fooPlugin1", {{kNsAdd, kQueue}, {kNodeAdd, kQueue}, {kPdbAdd, kQueue}}}},
       {"targetpod", "targetpod2"},
       {EventA(kPdbAdd), PopA("targetpod"), EventA(kNsAdd), PopA("targetpod2"), EventA(kNodeAdd),
        // No rejecting plugin (an error): backoffQ.
        EnqueueA("targetpod")},
       {"targetpod2"},
       {"pod:targetpod2", "NodeAdd"},
       {},
       {"targetpod"},
       {}},
      {"all pods registered in flight are enqueued back",
       {{"fooPlugin1", {{kNsAdd, kQueue}, {kNodeAdd, kQueue}, {kPdbAdd, kQueue}, {kNodeTaint, kQueue}}}},
       {"targetpod", "targetpod2"},
       {EventA(kPdbAdd), PopA("targetpod"), EventA(kNsAdd), PopA("targetpod2"), EventA(kNodeAdd), EnqueueA("targetpod"),
        EventA(kNodeTaint), EnqueueA("targetpod2")},
       {},
       {},
       {},
       {"targetpod", "targetpod2"},
       {}},
      {"one intermediate pod registered in flight is enqueued back",
       {{"fooPlugin1", {{kNsAdd, kQueue}, {kNodeAdd, kQueue}, {assigned_add, kQueue}}}},
       {"targetpod", "targetpod2", "targetpod3"},
       {EventA(kPdbAdd), PopA("targetpod"), EventA(kNsAdd), PopA("targetpod2"), EventA(kNodeAdd), PopA("targetpod3"),
        EventA(assigned_add), EnqueueA("targetpod2")},
       {"targetpod", "targetpod3"},
       {"pod:targetpod", "NamespaceAdd", "NodeAdd", "pod:targetpod3", "AssignedPodAdd"},
       {},
       {"targetpod2"},
       {}},
      {"events before popping are ignored when the pod comes back",
       {{"fooPlugin1", {{assigned_add, kSkip}}}},
       {"targetpod"},
       {EventA(timeout), PopA("targetpod"), EventA(assigned_add), EnqueueA("targetpod", {"fooPlugin1"})},
       {},
       {},
       {},
       {},
       {"targetpod"}},
      {"pod with no failed plugin is enqueued to backoffQ",
       {{"fooPlugin1", {{assigned_add, kQueue}}}},
       {"targetpod"},
       {PopA("targetpod"), EventA(assigned_add), EnqueueA("targetpod")},
       {},
       {},
       {},
       {"targetpod"},
       {}},
      {"pod goes to the pool when no event may make it schedulable",
       {{"fooPlugin1", {{assigned_add, kQueue}}}},
       {"targetpod"},
       {PopA("targetpod"), EventA(kNodeAdd), EnqueueA("targetpod", {"fooPlugin1"})},
       {},
       {},
       {},
       {},
       {"targetpod"}},
      {"pod goes to the pool because the failed plugin's hint returns Skip",
       {{"fooPlugin1", {{assigned_add, kSkip}}}},
       {"targetpod"},
       {PopA("targetpod"), EventA(assigned_add), EnqueueA("targetpod", {"fooPlugin1"})},
       {},
       {},
       {},
       {},
       {"targetpod"}},
      {"pod goes to activeQ because a Pending plugin's hint returns Queue",
       {{"fooPlugin3", {{assigned_add, kSkip}}},
        {"fooPlugin2", {{assigned_add, kQueue}}},
        {"fooPlugin1", {{assigned_add, kQueue}}}},
       {"targetpod"},
       {PopA("targetpod"), EventA(assigned_add), EnqueueA("targetpod", {"fooPlugin2", "fooPlugin3"}, {"fooPlugin1"})},
       {},
       {},
       {"targetpod"},
       {},
       {}},
      {"pod goes to backoffQ because a failed plugin's hint returns Queue",
       {{"fooPlugin2", {{assigned_add, kSkip}}}, {"fooPlugin1", {{assigned_add, kQueue}}}},
       {"targetpod"},
       {PopA("targetpod"), EventA(assigned_add), EnqueueA("targetpod", {"fooPlugin1", "fooPlugin2"})},
       {},
       {},
       {},
       {"targetpod"},
       {}},
      {"event received while another pod was in flight counts for a pod popped before it",
       {{"fooPlugin3", {{assigned_add, kSkip}}},
        {"fooPlugin2", {{assigned_add, kQueue}}},
        {"fooPlugin1", {{assigned_add, kQueue}}}},
       {"targetpod", "targetpod2"},
       {PopA("targetpod"), EventA(kNodeAdd), PopA("targetpod2"), EventA(assigned_add), EnqueueA("targetpod"),
        EnqueueA("targetpod2", {"fooPlugin2", "fooPlugin3"}, {"fooPlugin1"})},
       {},
       {},
       {"targetpod2"},
       {"targetpod"},
       {}},
      {"pod popped twice (queued again while in flight) is cleaned up",
       {{"fooPlugin1", {{kNsAdd, kQueue}, {kNodeAdd, kQueue}, {kPdbAdd, kQueue}, {kNodeTaint, kQueue}}}},
       {"targetpod", "targetpod2"},
       {EventA(kPdbAdd), PopA("targetpod"), EventA(kNsAdd), PopA("targetpod2"),
        // A bug elsewhere re-adds targetpod while it is being scheduled; the next Pop drops it.
        CreateA("targetpod"), CreateA("targetpod3"), PopA("targetpod3"), EventA(kNodeAdd), EnqueueA("targetpod"),
        EventA(kNodeTaint), EnqueueA("targetpod2"), EnqueueA("targetpod3")},
       {},
       {},
       {},
       {"targetpod", "targetpod2", "targetpod3"},
       {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    util::VirtualClock clock(kStart);
    auto q = NewQueue(clock, c.events);
    std::map<std::string, PodInfoPtr> pods;
    auto pod = [&](const std::string& name) -> PodInfoPtr {
      auto& p = pods[name];
      if (!p) p = MakePod().Name(name).UID(name).Info();
      return p;
    };
    for (const auto& name : c.initial) {
      q->Add(pod(name));
      clock.Advance(kSecond);
    }
    std::map<std::string, QueuedPodInfo> popped;
    for (const auto& a : c.actions) {
      switch (a.kind) {
        case Action::kCreate:
          q->Add(pod(a.pod));
          break;
        case Action::kPop:
          popped[a.pod] = MustPop(*q, pod(a.pod));
          break;
        case Action::kEvent:
          q->MoveAllToActiveOrBackoffQueue(a.event, {});
          break;
        case Action::kEnqueue:
          ASSERT_TRUE(popped.contains(a.pod));
          ASSERT_TRUE(
              q->AddUnschedulableIfNotPresent(Rejected(popped[a.pod], a.plugins, a.pending), q->SchedulingCycle())
                  .IsSuccess());
          break;
      }
    }
    EXPECT_THAT(q->InFlightPods(), UnorderedElementsAreArray(c.want_in_flight));
    EXPECT_EQ(q->InFlightEntries(), c.want_entries);
    EXPECT_THAT(Names(*q, SubQueue::kActive), UnorderedElementsAreArray(c.want_active));
    EXPECT_THAT(Names(*q, SubQueue::kBackoff), UnorderedElementsAreArray(c.want_backoff));
    EXPECT_THAT(Names(*q, SubQueue::kUnschedulable), UnorderedElementsAreArray(c.want_unsched));
  }
}

// Upstream TestPop: pending plugins survive Pop, and their Queue skips backoff.
TEST(SchedulingQueueTest, PopPreservesRejectingPlugins) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock, {{"fooPlugin1", {{kNsAdd, kQueue}}}});
  auto p = Pod("targetpod");
  q->Add(p);
  auto popped = MustPop(*q, p);
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(popped, {"fooPlugin2"}, {"fooPlugin1"}), 1).IsSuccess());
  EXPECT_EQ(Where(*q, p), SubQueue::kUnschedulable);
  q->MoveAllToActiveOrBackoffQueue(kNsAdd, {});
  EXPECT_EQ(Where(*q, p), SubQueue::kActive) << "Queue from a Pending plugin skips backoff";
  auto again = MustPop(*q, p);
  EXPECT_THAT(again.pending_plugins, ElementsAre("fooPlugin1"));
  EXPECT_THAT(again.unschedulable_plugins, ElementsAre("fooPlugin2"));
}

// Upstream TestPriorityQueue_AddUnschedulableIfNotPresent.
TEST(SchedulingQueueTest, AddUnschedulableIfNotPresent) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock);
  auto up = Pod("up", 0, "node1");
  auto hpp = Pod("hpp", 1000, "node1");
  q->Add(up);
  auto popped = MustPop(*q, up);
  q->Add(hpp);
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(popped, {"plugin"}), q->SchedulingCycle()).IsSuccess());
  MustPop(*q, hpp);
  EXPECT_THAT(NominatedNames(*q, "node1"), ElementsAre("up", "hpp"));
  // No event happened while it was scheduled: the pool.
  EXPECT_EQ(Where(*q, up), SubQueue::kUnschedulable);
  EXPECT_EQ(q->Get(Uid(up))->info.timestamp_ns, kStart);

  // Returning a pod that is already queued is an error and changes nothing.
  auto status = q->AddUnschedulableIfNotPresent(Rejected(popped, {"plugin"}), q->SchedulingCycle());
  EXPECT_TRUE(status.IsError());
  EXPECT_EQ(status.Message(), "Pod ns1/up is already present in the unschedulable queue");
  EXPECT_EQ(Where(*q, up), SubQueue::kUnschedulable);
}

// Upstream TestPriorityQueue_AddUnschedulableIfNotPresent_Backoff: a move request while pods
// were in flight sends them to backoffQ when they come back.
TEST(SchedulingQueueTest, AddUnschedulableAfterMoveRequestGoesToBackoff) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock);
  std::vector<PodInfoPtr> pods;
  for (int i = 0; i < 10; ++i) {
    pods.push_back(Pod("pod" + std::to_string(i), i, "", "ns" + std::to_string(i)));
    q->Add(pods.back());
  }
  std::map<int, QueuedPodInfo> popped;
  for (int i = 9; i > 0; --i) popped[i] = MustPop(*q, pods[i]);
  q->MoveAllToActiveOrBackoffQueue(framework::events::UnschedulableTimeout(), {});
  const int64_t old_cycle = q->SchedulingCycle();
  MustPop(*q, pods[0]);
  for (int i = 1; i < 10; ++i) {
    ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(popped[i], {"plugin"}), old_cycle).IsSuccess());
  }
  for (int i = 1; i < 10; ++i) EXPECT_EQ(Where(*q, pods[i]), SubQueue::kBackoff) << i;
}

// Upstream TestPriorityQueue_UpdateWhenInflight.
TEST(SchedulingQueueTest, UpdateWhileInFlightRequeuesOnReturn) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock, {{"fakePlugin", {{kUnscheduledPodUpdate, kQueue}}}});
  auto pod = Pod("test-pod", 0, "", "test-ns");
  q->Add(pod);
  auto popped = MustPop(*q, pod);
  auto updated = Mutated(pod, [](api::Pod& p) {
    api::Toleration t;
    t.key = "foo";
    p.spec.tolerations.push_back(t);
  });
  q->Update(pod->pod(), updated);
  EXPECT_FALSE(q->Get(Uid(pod)).has_value()) << "an in-flight pod is not queued by Update";
  EXPECT_THAT(q->InFlightEntries(), ElementsAre("pod:" + Uid(pod), "UnscheduledPodUpdatePodTolerations"));
  popped.pod_info = updated;
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(popped, {"fakePlugin"}), q->SchedulingCycle()).IsSuccess());
  auto got = q->Get(Uid(pod));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->queue, SubQueue::kBackoff);
  EXPECT_EQ(got->info.pod().spec.tolerations.size(), 1u);
}

// -------------------------------------------------------------------------------------------
// Update / Delete / Activate

TEST(SchedulingQueueTest, Update) {
  struct Case {
    std::string name;
    // Prepares the queue and returns (old, new).
    std::function<std::pair<PodInfoPtr, PodInfoPtr>(SchedulingQueue&, util::VirtualClock&)> prepare;
    std::optional<SubQueue> want;
    bool want_nominated = false;
  };
  auto med = Pod("mpp", 500, "node1", "ns2");
  auto high = Pod("hpp", 1000);
  auto high_nominated = Pod("hpp", 1000, "node1");
  auto annotate = [](const PodInfoPtr& p, std::string v) {
    return Mutated(p, [v](api::Pod& pod) { pod.metadata.annotations.Set("foo", v); });
  };
  auto to_pool = [](SchedulingQueue& q, const PodInfoPtr& p, const std::string& plugin) {
    q.Add(p);
    auto popped = q.Pop();
    EXPECT_TRUE(q.AddUnschedulableIfNotPresent(Rejected(*popped, {plugin}), 1).IsSuccess());
    EXPECT_EQ(Where(q, p), SubQueue::kUnschedulable);
  };
  std::vector<Case> cases = {
      {"pod that didn't exist in the queue goes to activeQ",
       [&](SchedulingQueue&, util::VirtualClock&) {
         return std::pair{med, annotate(med, "test")};
       },
       SubQueue::kActive, true},
      {"adding a nominatedNodeName registers the nomination",
       [&](SchedulingQueue&, util::VirtualClock&) {
         return std::pair{high, high_nominated};
       },
       SubQueue::kActive, true},
      {"pod in activeQ stays in activeQ",
       [&](SchedulingQueue& q, util::VirtualClock&) {
         q.Add(high);
         return std::pair{high, high};
       },
       SubQueue::kActive},
      {"pod in backoffQ that still backs off is updated there",
       [&](SchedulingQueue& q, util::VirtualClock&) {
         q.Add(med);
         auto popped = q.Pop();
         EXPECT_TRUE(q.AddUnschedulableIfNotPresent(*popped, 1).IsSuccess());
         return std::pair{med, annotate(med, "test")};
       },
       SubQueue::kBackoff, true},
      {"pod in the pool whose backoff has not expired moves to backoffQ",
       [&](SchedulingQueue& q, util::VirtualClock&) {
         to_pool(q, med, "queuePlugin");
         return std::pair{med, annotate(med, "test")};
       },
       SubQueue::kBackoff, true},
      {"pod in the pool whose backoff has expired moves to activeQ",
       [&](SchedulingQueue& q, util::VirtualClock& clock) {
         to_pool(q, med, "queuePlugin");
         clock.Advance(kDefaultPodMaxBackoffNs);
         return std::pair{med, annotate(med, "test1")};
       },
       SubQueue::kActive, true},
      {"pod in the pool stays when the hint returns Skip",
       [&](SchedulingQueue& q, util::VirtualClock&) {
         to_pool(q, med, "skipPlugin");
         return std::pair{med, annotate(med, "test1")};
       },
       SubQueue::kUnschedulable, true},
      {"pod in the pool stays when its rejecting plugin did not register pod updates",
       [&](SchedulingQueue& q, util::VirtualClock&) {
         to_pool(q, med, "otherPlugin");
         return std::pair{med, annotate(med, "test1")};
       },
       SubQueue::kUnschedulable, true},
      {"pod in flight is not added to any queue",
       [&](SchedulingQueue& q, util::VirtualClock&) {
         q.Add(med);
         q.Pop();
         return std::pair{med, annotate(med, "bar")};
       },
       std::nullopt, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    util::VirtualClock clock(kStart);
    auto q = NewQueue(clock, {{"queuePlugin", {{kUnscheduledPodUpdate, kQueue}}},
                              {"skipPlugin", {{kUnscheduledPodUpdate, kSkip}}},
                              {"otherPlugin", {{kNodeAdd, kQueue}}}});
    auto [old_pod, new_pod] = c.prepare(*q, clock);
    q->Update(old_pod->pod(), new_pod);
    auto got = q->Get(Uid(new_pod));
    ASSERT_EQ(got.has_value(), c.want.has_value());
    if (!got) continue;
    EXPECT_EQ(got->queue, *c.want);
    EXPECT_EQ(got->info.pod_info, new_pod) << "the queued pod is the new version";
    EXPECT_EQ(NominatedNames(*q, "node1").size(), c.want_nominated ? 1u : 0u);
  }
}

TEST(SchedulingQueueTest, UpdateKeepsActiveOrderAndSeq) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock);
  auto a = Pod("a", 1), b = Pod("b", 1);
  q->Add(a);
  q->Add(b);  // same priority and timestamp: arrival order
  q->Update(a->pod(), Mutated(a, [](api::Pod& p) { p.metadata.labels.Set("x", "y"); }));
  EXPECT_THAT(Names(*q, SubQueue::kActive), ElementsAre("a", "b"));
  // A priority change re-sorts.
  q->Update(b->pod(), Mutated(b, [](api::Pod& p) { p.spec.priority = 5; }));
  EXPECT_THAT(Names(*q, SubQueue::kActive), ElementsAre("b", "a"));
}

// Upstream TestPriorityQueue_Delete, plus deletion from each sub-queue.
TEST(SchedulingQueueTest, Delete) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock);
  auto high = Pod("hpp", 1000), high_nominated = Pod("hpp", 1000, "node1");
  auto up = Pod("up", 0, "node1");
  q->Update(high->pod(), high_nominated);
  q->Add(up);
  q->Delete(high_nominated->pod());
  EXPECT_EQ(Where(*q, up), SubQueue::kActive);
  EXPECT_FALSE(Where(*q, high).has_value());
  EXPECT_THAT(NominatedNames(*q, "node1"), ElementsAre("up"));
  q->Delete(up->pod());
  EXPECT_THAT(NominatedNames(*q, "node1"), IsEmpty());
  EXPECT_EQ(q->NumActive(), 0u);

  struct Case {
    std::string name;
    SubQueue where;
  };
  for (const auto& c : std::vector<Case>{{"from activeQ", SubQueue::kActive},
                                         {"from backoffQ", SubQueue::kBackoff},
                                         {"from the pool", SubQueue::kUnschedulable}}) {
    SCOPED_TRACE(c.name);
    auto p = Pod("victim", 0, "node2");
    q->Add(p);
    if (c.where != SubQueue::kActive) {
      auto popped = MustPop(*q, p);
      std::vector<std::string> plugins;
      if (c.where == SubQueue::kUnschedulable) plugins = {"plugin"};
      ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(popped, plugins), 1).IsSuccess());
    }
    ASSERT_EQ(Where(*q, p), c.where);
    q->Delete(p->pod());
    EXPECT_FALSE(Where(*q, p).has_value());
    EXPECT_EQ(q->NumActive() + q->NumBackoff() + q->NumUnschedulable(), 0u);
    EXPECT_THAT(NominatedNames(*q, "node2"), IsEmpty());
    EXPECT_EQ(q->NextTimerNs(), std::nullopt);
  }
}

// Upstream TestPriorityQueue_Activate.
TEST(SchedulingQueueTest, Activate) {
  auto target = Pod("hpp", 1000, "node1");
  auto other = Pod("mpp", 500, "node1", "ns2");
  struct Case {
    std::string name;
    std::function<void(SchedulingQueue&)> prepare;
    size_t want_active;
    std::vector<std::string> want_entries;
  };
  std::vector<Case> cases = {
      {"pod already in activeQ", [&](SchedulingQueue& q) { q.Add(target); }, 1, {}},
      {"pod not queued", [&](SchedulingQueue&) {}, 0, {}},
      {"pod not queued but in flight: ForceActivate recorded",
       [&](SchedulingQueue& q) {
         q.Add(target);
         q.Pop();
       },
       0,
       {"pod:" + Uid(target), "ForceActivate"}},
      {"pod not queued and another pod in flight",
       [&](SchedulingQueue& q) {
         q.Add(other);
         q.Pop();
       },
       0,
       {"pod:" + Uid(other)}},
      {"pod in the pool", [&](SchedulingQueue& q) { AddPopReject(q, target, {"plugin"}); }, 1, {}},
      {"pod in backoffQ",
       [&](SchedulingQueue& q) {
         q.Add(target);
         auto popped = q.Pop();
         EXPECT_TRUE(q.AddUnschedulableIfNotPresent(*popped, 1).IsSuccess());
         EXPECT_EQ(Where(q, target), SubQueue::kBackoff);
       },
       1,
       {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    util::VirtualClock clock(kStart);
    auto q = NewQueue(clock);
    c.prepare(*q);
    q->Activate({target->pod_ptr()});
    EXPECT_EQ(q->NumActive(), c.want_active);
    if (c.want_active == 1) {
      EXPECT_EQ(Where(*q, target), SubQueue::kActive);
    }
    EXPECT_EQ(q->InFlightEntries(), c.want_entries);
  }
}

TEST(SchedulingQueueTest, ForceActivateWhileInFlightRequeuesOnlyThatPod) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock, {{"plugin", {{kNodeAdd, kQueue}}}});
  auto a = Pod("a"), b = Pod("b");
  q->Add(a);
  q->Add(b);
  auto pa = MustPop(*q, a);
  auto pb = MustPop(*q, b);
  q->Activate({a->pod_ptr()});
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(pa, {"plugin"}), 2).IsSuccess());
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(pb, {"plugin"}), 2).IsSuccess());
  EXPECT_EQ(Where(*q, a), SubQueue::kBackoff);
  EXPECT_EQ(Where(*q, b), SubQueue::kUnschedulable);
}

// -------------------------------------------------------------------------------------------
// PreEnqueue and gated pods

// Upstream TestPriorityQueue_moveToActiveQ (via Add), then an unrelated update keeps the pod.
TEST(SchedulingQueueTest, PreEnqueueGatesPods) {
  struct Case {
    std::string name;
    std::vector<std::pair<std::string, std::vector<std::string>>> plugins;  // name, allow list
    std::string label;
    bool want_active;
    std::string want_gating;
  };
  std::vector<Case> cases = {
      {"no plugins registered", {}, "p", true, ""},
      {"pod label not in allowlists", {{"pre1", {}}, {"pre2", {}}}, "p", false, "pre1"},
      {"pod fails one of the plugins", {{"pre1", {"foo", "bar"}}, {"pre2", {"foo"}}}, "bar", false, "pre2"},
      {"pod passes all plugins", {{"pre1", {"foo", "bar"}}, {"pre2", {"bar"}}}, "bar", true, ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    util::VirtualClock clock(kStart);
    std::vector<std::unique_ptr<AllowListPlugin>> owned;
    std::vector<framework::PreEnqueuePlugin*> plugins;
    for (const auto& [name, allow] : c.plugins) {
      owned.push_back(std::make_unique<AllowListPlugin>(name, allow));
      plugins.push_back(owned.back().get());
    }
    auto q = NewQueue(clock, {}, plugins);
    auto pod = MakePod().Name("p").UID("p").Label(c.label, "").Info();
    q->Add(pod);
    auto got = q->Get("p");
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->queue, c.want_active ? SubQueue::kActive : SubQueue::kUnschedulable);
    EXPECT_EQ(got->info.gated, !c.want_active);
    EXPECT_EQ(got->info.gating_plugin, c.want_gating);
    if (!c.want_active) {
      EXPECT_THAT(got->info.unschedulable_plugins, ElementsAre(c.want_gating));
    }

    q->Update(pod->pod(), Mutated(pod, [](api::Pod& p) { p.metadata.annotations.Set("foo", ""); }));
    EXPECT_EQ(Where(*q, pod), c.want_active ? SubQueue::kActive : SubQueue::kUnschedulable);
    EXPECT_EQ(q->NumUnschedulable(), c.want_active ? 0u : 1u);
  }
}

TEST(SchedulingQueueTest, GatedPodReleasedWhenGatesRemoved) {
  util::VirtualClock clock(kStart);
  GatesPlugin gates;
  auto q = NewQueue(
      clock, {{std::string(GatesPlugin::kName), GatesPlugin::Events()}, {"fooPlugin", {{kNodeAdd, kQueue}}}}, {&gates});
  auto gated = MakePod().Name("g").UID("g").SchedulingGates({"example.com/wait"}).Info();
  q->Add(gated);
  auto got = q->Get("g");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->queue, SubQueue::kUnschedulable);
  EXPECT_TRUE(got->info.gated);
  EXPECT_EQ(got->info.gating_plugin, "SchedulingGates");
  EXPECT_FALSE(q->Pop().has_value());

  // Events the gating plugin did not register leave the pod alone, even wildcard ones.
  q->MoveAllToActiveOrBackoffQueue(kNodeAdd, {});
  EXPECT_EQ(Where(*q, gated), SubQueue::kUnschedulable);
  EXPECT_EQ(q->NextTimerNs(), std::nullopt) << "gated pods have no unschedulable timeout";
  clock.Advance(kDefaultPodMaxInUnschedulablePodsNs + kSecond);
  q->FlushUnschedulablePodsLeftover();
  EXPECT_EQ(Where(*q, gated), SubQueue::kUnschedulable);

  // An update that keeps a gate is not enough.
  auto relabeled = Mutated(gated, [](api::Pod& p) { p.metadata.labels.Set("a", "b"); });
  q->Update(gated->pod(), relabeled);
  EXPECT_EQ(Where(*q, gated), SubQueue::kUnschedulable);
  auto two_gates = Mutated(relabeled, [](api::Pod& p) { p.spec.scheduling_gates.push_back("x"); });
  q->Update(relabeled->pod(), two_gates);
  auto one_gate = Mutated(two_gates, [](api::Pod& p) { p.spec.scheduling_gates.pop_back(); });
  q->Update(two_gates->pod(), one_gate);
  EXPECT_EQ(Where(*q, gated), SubQueue::kUnschedulable);

  // Removing the last gate releases it.
  const int64_t released_at = clock.NowNs();
  auto ungated = Mutated(one_gate, [](api::Pod& p) { p.spec.scheduling_gates.clear(); });
  q->Update(one_gate->pod(), ungated);
  EXPECT_EQ(Where(*q, gated), SubQueue::kActive);
  auto popped = MustPop(*q, gated);
  EXPECT_FALSE(popped.gated);
  EXPECT_EQ(popped.gating_plugin, "");
  EXPECT_EQ(popped.attempts, 1);
  EXPECT_EQ(popped.timestamp_ns, kStart) << "timestamp is the Add time";
  EXPECT_EQ(popped.initial_attempt_timestamp_ns, released_at) << "first attempt starts when released";
  EXPECT_TRUE(popped.pod().spec.scheduling_gates.empty());
}

TEST(SchedulingQueueTest, PreEnqueueRunsAgainWhenLeavingBackoff) {
  util::VirtualClock clock(kStart);
  AllowListPlugin pre("pre", {"ok"});
  auto q = NewQueue(clock, {}, {&pre});
  auto p = MakePod().Name("p").UID("p").Label("ok", "").Info();
  q->Add(p);
  auto popped = MustPop(*q, p);
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(popped, 1).IsSuccess());
  EXPECT_EQ(Where(*q, p), SubQueue::kBackoff);
  pre.set_allow({});
  clock.Advance(kSecond);
  q->FlushBackoffQCompleted();
  auto got = q->Get("p");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->queue, SubQueue::kUnschedulable);
  EXPECT_TRUE(got->info.gated);
}

// -------------------------------------------------------------------------------------------
// Cluster events

// Upstream TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint.
TEST(SchedulingQueueTest, MoveAllWithQueueingHint) {
  struct Case {
    std::string name;
    std::vector<std::string> plugins, pending;
    std::string gating_plugin;
    QueueingHintFn hint;
    int64_t wait;
    SubQueue want;
  };
  std::vector<Case> cases = {
      {"Queue from a Pending plugin: activeQ", {}, {"foo"}, "", kQueue, 0, SubQueue::kActive},
      {"Queue while backing off: backoffQ", {"foo"}, {}, "", kQueue, 0, SubQueue::kBackoff},
      {"Queue after backoff: activeQ",
       {"foo"},
       {},
       "",
       kQueue,
       kDefaultPodInitialBackoffNs + kSecond,
       SubQueue::kActive},
      {"Skip: stays in the pool", {"foo"}, {}, "", kSkip, 0, SubQueue::kUnschedulable},
      {"gated by a plugin not interested in the event: hint not called",
       {"SchedulingGates"},
       {},
       "SchedulingGates",
       [](const api::Pod&, const EventObjects&) -> QueueingHint {
         ADD_FAILURE() << "hint called for a gated pod";
         return QueueingHint::kQueue;
       },
       0,
       SubQueue::kUnschedulable},
      {"gated by a plugin interested in the event", {"foo"}, {}, "foo", kQueue, 0, SubQueue::kBackoff},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    util::VirtualClock clock(kStart);
    GatesPlugin gates;
    AllowListPlugin foo("foo", {"foo"});
    auto q = NewQueue(clock, {{"foo", {{kNodeAdd, c.hint}}}, {"SchedulingGates", {{kUnscheduledPodUpdate, kQueue}}}},
                      {&gates, &foo});
    auto p = MakePod().Name("pod1").Namespace("ns1").UID("1").Label("foo", "bar").Info();
    q->Add(p);
    auto popped = MustPop(*q, p);
    popped = Rejected(popped, c.plugins, c.pending);
    if (!c.gating_plugin.empty()) {
      popped.gated = true;
      popped.gating_plugin = c.gating_plugin;
    }
    ASSERT_TRUE(q->AddUnschedulableIfNotPresent(popped, q->SchedulingCycle()).IsSuccess());
    ASSERT_EQ(Where(*q, p), SubQueue::kUnschedulable);
    clock.Advance(c.wait);
    q->MoveAllToActiveOrBackoffQueue(kNodeAdd, {});
    EXPECT_EQ(Where(*q, p), c.want);
  }
}

// Upstream TestPriorityQueue_MoveAllToActiveOrBackoffQueue.
TEST(SchedulingQueueTest, MoveAllToActiveOrBackoffQueue) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock, {{"fooPlugin", {{kNodeAdd, kQueue}}}});
  auto up = Pod("up", 0, "node1");
  auto high = Pod("hpp", 1000);
  auto med = Pod("mpp", 500, "node1", "ns2");
  auto hpp1 = Pod("hpp1", 1000);
  auto hpp2 = Pod("hpp2", 1000);

  q->Add(up);
  auto p_up = MustPop(*q, up);
  q->Add(high);
  auto p_high = MustPop(*q, high);
  EXPECT_THAT(q->InFlightPods(), UnorderedElementsAre(Uid(up), Uid(high)));
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(p_up, {"fooPlugin"}), 2).IsSuccess());
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(p_high, {"fooPlugin"}), 2).IsSuccess());
  EXPECT_THAT(q->InFlightPods(), IsEmpty());
  // No rejecting plugin: backoffQ.
  q->Add(hpp1);
  auto p_hpp1 = MustPop(*q, hpp1);
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(p_hpp1, 3).IsSuccess());
  // Rejected by a plugin nobody registered events for: the pool.
  q->Add(hpp2);
  auto p_hpp2 = MustPop(*q, hpp2);
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(p_hpp2, {"barPlugin"}), 4).IsSuccess());
  EXPECT_THAT(q->InFlightPods(), IsEmpty());

  // NodeAdd moves the fooPlugin pods to backoffQ (they still back off).
  q->MoveAllToActiveOrBackoffQueue(kNodeAdd, {});
  q->Add(med);
  EXPECT_EQ(q->NumActive(), 1u);
  MustPop(*q, med);
  EXPECT_EQ(q->NumBackoff(), 3u);
  EXPECT_THAT(Names(*q, SubQueue::kUnschedulable), ElementsAre("hpp2"));

  // Once they are back in the pool and their backoff expired, NodeAdd sends them to activeQ.
  clock.Advance(kDefaultPodMaxBackoffNs);
  q->FlushBackoffQCompleted();
  auto p2_up = MustPop(*q, high);  // highest priority first
  std::map<std::string, QueuedPodInfo> again;
  again["hpp"] = p2_up;
  while (auto p = q->Pop()) again[p->pod().metadata.name] = *p;
  ASSERT_EQ(again.size(), 3u);  // hpp, hpp1, up
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(again["up"], {"fooPlugin"}), 5).IsSuccess());
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(again["hpp"], {"fooPlugin"}), 5).IsSuccess());
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(again["hpp1"], 5).IsSuccess());
  q->Add(med);
  EXPECT_THAT(Names(*q, SubQueue::kUnschedulable), UnorderedElementsAre("up", "hpp", "hpp2"));
  EXPECT_THAT(Names(*q, SubQueue::kBackoff), ElementsAre("hpp1"));
  EXPECT_THAT(Names(*q, SubQueue::kActive), ElementsAre("mpp"));

  clock.Advance(kDefaultPodMaxBackoffNs);
  q->FlushBackoffQCompleted();
  q->MoveAllToActiveOrBackoffQueue(kNodeAdd, {});
  EXPECT_EQ(q->NumActive(), 4u);
  EXPECT_EQ(q->NumBackoff(), 0u);
  EXPECT_THAT(Names(*q, SubQueue::kUnschedulable), ElementsAre("hpp2")) << "hpp2 never moves on NodeAdd";
  EXPECT_THAT(q->InFlightPods(), ElementsAre(Uid(med)));
}

TEST(SchedulingQueueTest, EventsMoveOnlyPodsWhoseRejectingPluginRegisteredThem) {
  struct Case {
    std::string name;
    ClusterEvent event;
    std::vector<std::string> want_moved;
  };
  const ClusterEvent node_label{EventResource::kNode, action::kUpdateNodeLabel, "NodeUpdateNodeLabel"};
  std::vector<Case> cases = {
      {"NodeAdd wakes the NodeAffinity and NodeResourcesFit pods", kNodeAdd, {"affinity", "fit", "both"}},
      {"node label update wakes NodeAffinity only", node_label, {"affinity", "both"}},
      {"node taint update wakes TaintToleration only", kNodeTaint, {"taint"}},
      {"assigned pod delete wakes NodeResourcesFit (Pod/Delete covers AssignedPod)",
       framework::events::AssignedPodDelete(),
       {"fit", "both"}},
      {"an event nobody registered moves nothing", kNsAdd, {}},
      {"wildcard events move everything",
       framework::events::UnschedulableTimeout(),
       {"affinity", "fit", "taint", "both", "unknown"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    util::VirtualClock clock(kStart);
    auto q = NewQueue(
        clock, {
                   {"NodeAffinity",
                    {{ClusterEvent{EventResource::kNode, action::kAdd | action::kUpdateNodeLabel, ""}, nullptr}}},
                   {"NodeResourcesFit",
                    {{ClusterEvent{EventResource::kNode, action::kAdd, ""}, nullptr},
                     {ClusterEvent{EventResource::kPod, action::kDelete, ""}, nullptr}}},
                   {"TaintToleration", {{ClusterEvent{EventResource::kNode, action::kUpdateNodeTaint, ""}, nullptr}}},
               });
    AddPopReject(*q, Pod("affinity"), {"NodeAffinity"});
    AddPopReject(*q, Pod("fit"), {"NodeResourcesFit"});
    AddPopReject(*q, Pod("taint"), {"TaintToleration"});
    AddPopReject(*q, Pod("both"), {"NodeAffinity", "NodeResourcesFit"});
    AddPopReject(*q, Pod("unknown"), {"SomethingElse"});
    q->MoveAllToActiveOrBackoffQueue(c.event, {});
    std::vector<std::string> moved = Names(*q, SubQueue::kBackoff);
    EXPECT_THAT(moved, UnorderedElementsAreArray(c.want_moved));
    EXPECT_EQ(q->NumUnschedulable(), 5 - c.want_moved.size());
  }
}

TEST(SchedulingQueueTest, HintsSeeTheEventObjects) {
  util::VirtualClock clock(kStart);
  // Only a node labelled gpu=true helps.
  QueueingHintFn gpu_node = [](const api::Pod&, const EventObjects& e) {
    return e.new_node != nullptr && e.new_node->metadata.labels.Has("gpu") ? QueueingHint::kQueue : QueueingHint::kSkip;
  };
  auto q = NewQueue(clock, {{"NodeAffinity", {{kNodeAdd, gpu_node}}}});
  auto p = Pod("p");
  AddPopReject(*q, p, {"NodeAffinity"});
  auto plain = kubesched::testing::MakeNode().Name("n1").Obj();
  auto gpu = kubesched::testing::MakeNode().Name("n2").Label("gpu", "true").Obj();
  q->MoveAllToActiveOrBackoffQueue(kNodeAdd, {.new_node = plain.get()});
  EXPECT_EQ(Where(*q, p), SubQueue::kUnschedulable);
  q->MoveAllToActiveOrBackoffQueue(kNodeAdd, {.new_node = gpu.get()});
  EXPECT_EQ(Where(*q, p), SubQueue::kBackoff);
}

TEST(SchedulingQueueTest, InFlightEventObjectsAreKept) {
  util::VirtualClock clock(kStart);
  QueueingHintFn gpu_node = [](const api::Pod&, const EventObjects& e) {
    return e.new_node != nullptr && e.new_node->metadata.labels.Has("gpu") ? QueueingHint::kQueue : QueueingHint::kSkip;
  };
  auto q = NewQueue(clock, {{"NodeAffinity", {{kNodeAdd, gpu_node}}}});
  auto p = Pod("p");
  q->Add(p);
  auto popped = MustPop(*q, p);
  {
    // The caller's node dies right after the call; the queue must have copied it.
    auto gpu = kubesched::testing::MakeNode().Name("n2").Label("gpu", "true").Obj();
    q->MoveAllToActiveOrBackoffQueue(kNodeAdd, {.new_node = gpu.get()});
  }
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(popped, {"NodeAffinity"}), 1).IsSuccess());
  EXPECT_EQ(Where(*q, p), SubQueue::kBackoff);
}

// Upstream TestPriorityQueue_AssignedPodAdded/Updated, with events and hints only (no
// affinity pre-filter).
TEST(SchedulingQueueTest, AssignedPodEvents) {
  struct Case {
    std::string name;
    std::string plugin;
    std::function<void(SchedulingQueue&, const api::Pod& assigned)> event;
    bool want_requeue;
  };
  auto assigned = MakePod().Name("lbp").Namespace("ns1").Label("service", "securityscan").Node("node1").Obj();
  std::vector<Case> cases = {
      {"AssignedPodAdd wakes InterPodAffinity", "InterPodAffinity",
       [](SchedulingQueue& q, const api::Pod& a) { q.AssignedPodAdded(a); }, true},
      {"AssignedPodAdd does not wake NodeResourcesFit", "NodeResourcesFit",
       [](SchedulingQueue& q, const api::Pod& a) { q.AssignedPodAdded(a); }, false},
      {"label update wakes InterPodAffinity", "InterPodAffinity",
       [](SchedulingQueue& q, const api::Pod& a) {
         api::Pod old = a;
         old.metadata.labels = {};
         q.AssignedPodUpdated(old, a);
       },
       true},
      {"label update does not wake NodeResourcesFit", "NodeResourcesFit",
       [](SchedulingQueue& q, const api::Pod& a) {
         api::Pod old = a;
         old.metadata.labels = {};
         q.AssignedPodUpdated(old, a);
       },
       false},
      {"scale down wakes NodeResourcesFit", "NodeResourcesFit",
       [](SchedulingQueue& q, const api::Pod& a) {
         api::Pod old = a;
         api::Container c;
         c.name = "c";
         c.resources.requests = kubesched::testing::Resources({{"cpu", "1"}});
         old.spec.containers.push_back(c);
         q.AssignedPodUpdated(old, a);
       },
       true},
      {"an unrelated update wakes nobody", "InterPodAffinity",
       [](SchedulingQueue& q, const api::Pod& a) {
         api::Pod old = a;
         old.metadata.annotations.Set("x", "y");
         q.AssignedPodUpdated(old, a);
       },
       false},
      {"AssignedPodDelete wakes NodeResourcesFit", "NodeResourcesFit",
       [](SchedulingQueue& q, const api::Pod& a) { q.AssignedPodDeleted(a); }, true},
      {"AssignedPodDelete does not wake a plugin registered for adds only", "InterPodAffinity",
       [](SchedulingQueue& q, const api::Pod& a) { q.AssignedPodDeleted(a); }, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    util::VirtualClock clock(kStart);
    const api::Pod* seen_old = nullptr;
    const api::Pod* seen_new = nullptr;
    QueueingHintFn record = [&](const api::Pod&, const EventObjects& e) {
      seen_old = e.old_pod;
      seen_new = e.new_pod;
      return QueueingHint::kQueue;
    };
    auto q = NewQueue(
        clock, {{"InterPodAffinity",
                 {{ClusterEvent{EventResource::kPod, action::kAdd | action::kUpdatePodLabel, ""}, record}}},
                {"NodeResourcesFit",
                 {{ClusterEvent{EventResource::kPod, action::kDelete | action::kUpdatePodScaleDown, ""}, record}}}});
    auto p = Pod("afp");
    AddPopReject(*q, p, {c.plugin});
    clock.Advance(kDefaultPodInitialBackoffNs + kSecond);
    c.event(*q, *assigned);
    EXPECT_EQ(Where(*q, p) == SubQueue::kActive, c.want_requeue);
    if (c.want_requeue) {
      EXPECT_TRUE(seen_old != nullptr || seen_new != nullptr) << "the hint saw the assigned pod";
    }
  }
}

// -------------------------------------------------------------------------------------------
// Unschedulable timeout and timers

// Upstream TestHighPriorityFlushUnschedulablePodsLeftover.
TEST(SchedulingQueueTest, FlushUnschedulablePodsLeftover) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock, {{"fakePlugin", {{kNodeAdd, kQueue}}}});
  auto mid = Pod("test-midpod", 100, "node1");
  auto high = Pod("test-highpod", 1000, "node1");
  q->Add(high);
  auto ph = MustPop(*q, high);
  q->Add(mid);
  auto pm = MustPop(*q, mid);
  // Returned with no attempts on record, as upstream's newQueuedPodInfo: no backoff owed.
  ph.attempts = pm.attempts = 0;
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(ph, {"fakePlugin"}), 2).IsSuccess());
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(pm, {"fakePlugin"}), 2).IsSuccess());
  EXPECT_EQ(q->NextTimerNs(), kStart + kDefaultPodMaxInUnschedulablePodsNs + 1);
  clock.Advance(kDefaultPodMaxInUnschedulablePodsNs + kSecond);
  q->FlushUnschedulablePodsLeftover();
  MustPop(*q, high);
  MustPop(*q, mid);
}

TEST(SchedulingQueueTest, UnschedulableTimeoutAfterFiveMinutes) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock);
  auto p = Pod("p");
  AddPopReject(*q, p, {"plugin"});
  const int64_t deadline = kStart + kDefaultPodMaxInUnschedulablePodsNs;
  EXPECT_EQ(q->NextTimerNs(), deadline + 1);
  clock.AdvanceTo(deadline - kSecond);
  q->FlushUnschedulablePodsLeftover();
  EXPECT_EQ(Where(*q, p), SubQueue::kUnschedulable);
  clock.AdvanceTo(deadline);
  q->FlushUnschedulablePodsLeftover();
  EXPECT_EQ(Where(*q, p), SubQueue::kUnschedulable) << "exactly 5 minutes is not longer than 5 minutes";
  clock.AdvanceTo(*q->NextTimerNs());
  q->FlushUnschedulablePodsLeftover();
  // Its 1 s backoff ended long ago.
  EXPECT_EQ(Where(*q, p), SubQueue::kActive);
  EXPECT_EQ(q->NextTimerNs(), std::nullopt);
}

// Upstream TestPriorityQueue_initPodMaxInUnschedulablePodsDuration.
TEST(SchedulingQueueTest, MaxInUnschedulablePodsOption) {
  struct Case {
    std::string name;
    std::optional<int64_t> max;
  };
  for (const auto& c : std::vector<Case>{{"default", std::nullopt}, {"30 s", 30 * kSecond}}) {
    SCOPED_TRACE(c.name);
    util::VirtualClock clock(kStart);
    Options o;
    if (c.max) o.max_in_unschedulable_pods_ns = *c.max;
    auto q = NewQueue(clock, {}, {}, o);
    auto p1 = Pod("test-pod-1", 0, "node1");
    auto p2 = Pod("test-pod-2", 0, "node2", "ns2");
    // p2 has waited longer (older timestamp), so it comes first.
    q->Add(p2);
    auto pp2 = MustPop(*q, p2);
    clock.Advance(kSecond);
    q->Add(p1);
    auto pp1 = MustPop(*q, p1);
    clock.AdvanceTo(kStart);  // no-op: time does not go back
    ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(pp1, {"plugin"}), 1).IsSuccess());
    ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(pp2, {"plugin"}), 1).IsSuccess());
    // Both were returned at the same time; equal priority and time: p1 came back first.
    clock.Advance(o.max_in_unschedulable_pods_ns + 1);
    q->FlushUnschedulablePodsLeftover();
    EXPECT_EQ(q->NumActive(), 2u);
    EXPECT_EQ(q->NumUnschedulable(), 0u);
  }
}

TEST(SchedulingQueueTest, NextTimerNs) {
  util::VirtualClock clock(kStart);
  GatesPlugin gates;
  auto q = NewQueue(clock, {}, {&gates});
  EXPECT_EQ(q->NextTimerNs(), std::nullopt);

  // A gated pod sets no timer.
  q->Add(MakePod().Name("g").UID("g").SchedulingGates({"x"}).Info());
  EXPECT_EQ(q->NextTimerNs(), std::nullopt);

  // Pool pod rejected at kStart: timer at its unschedulable timeout.
  AddPopReject(*q, Pod("pool"), {"plugin"});
  EXPECT_EQ(q->NextTimerNs(), kStart + kDefaultPodMaxInUnschedulablePodsNs + 1);

  // An errored pod returned at kStart + 3 s with 2 attempts: backoff expiry at +5 s comes first.
  clock.Advance(3 * kSecond);
  auto e = Pod("err");
  q->Add(e);
  auto pe = MustPop(*q, e);
  pe.attempts = 2;
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(pe, 1).IsSuccess());
  EXPECT_EQ(q->NextTimerNs(), kStart + 5 * kSecond);

  clock.AdvanceTo(*q->NextTimerNs());
  q->FlushBackoffQCompleted();
  EXPECT_EQ(Where(*q, e), SubQueue::kActive);
  EXPECT_EQ(q->NextTimerNs(), kStart + kDefaultPodMaxInUnschedulablePodsNs + 1);
}

// -------------------------------------------------------------------------------------------
// Ordering after requeue (upstream TestRecentlyTriedPodsGoBack and friends)

TEST(SchedulingQueueTest, RecentlyTriedPodsGoBack) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock);
  for (int i = 0; i < 5; ++i) {
    q->Add(MakePod()
               .Name("test-pod-" + std::to_string(i))
               .Namespace("ns1")
               .UID("tp00" + std::to_string(i))
               .Priority(1000)
               .NominatedNodeName("node1")
               .Info());
  }
  clock.Advance(1000);
  auto p1 = q->Pop();
  ASSERT_TRUE(p1.has_value());
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(*p1, {"plugin"}), q->SchedulingCycle()).IsSuccess());
  clock.Advance(kDefaultPodMaxBackoffNs);
  q->MoveAllToActiveOrBackoffQueue(framework::events::UnschedulableTimeout(), {});
  for (int i = 0; i < 5; ++i) {
    auto p = q->Pop();
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(i == 4, p->pod().metadata.name == p1->pod().metadata.name) << i << " " << p->pod().metadata.name;
  }
}

TEST(SchedulingQueueTest, PodFailedMultipleTimesDoesNotBlockNewerPod) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock);
  auto unsched = Pod("test-pod-unscheduled", 1000, "node1");
  q->Add(unsched);
  auto popped = MustPop(*q, unsched);
  popped.attempts = 0;  // as upstream's lookup QueuedPodInfo: no backoff
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(popped, {"plugin"}), q->SchedulingCycle()).IsSuccess());
  clock.Advance(kDefaultPodInitialBackoffNs + kSecond);
  q->MoveAllToActiveOrBackoffQueue(framework::events::UnschedulableTimeout(), {});
  popped = MustPop(*q, unsched);

  auto newer = Pod("test-newer-pod", 1000, "node1");
  q->Add(newer);
  popped.attempts = 0;
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(popped, {"plugin"}), q->SchedulingCycle()).IsSuccess());
  clock.Advance(kDefaultPodInitialBackoffNs + kSecond);
  q->MoveAllToActiveOrBackoffQueue(framework::events::UnschedulableTimeout(), {});
  MustPop(*q, newer);
}

// -------------------------------------------------------------------------------------------
// Listing and nominator

// Upstream TestPriorityQueue_PendingPods.
TEST(SchedulingQueueTest, PendingPods) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock);
  auto up = Pod("up", 0, "node1"), high = Pod("hpp", 1000), med = Pod("mpp", 500, "node1", "ns2");
  q->Add(up);
  auto pu = MustPop(*q, up);
  q->Add(high);
  auto ph = MustPop(*q, high);
  q->Add(med);
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(pu, {"plugin"}), 2).IsSuccess());
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(ph, {"plugin"}), 2).IsSuccess());
  auto all = q->PendingPods();
  std::vector<std::string> names;
  for (const auto& p : all) names.push_back(p.info.pod().metadata.name);
  EXPECT_THAT(names, UnorderedElementsAre("up", "hpp", "mpp"));
  EXPECT_EQ(q->NumActive(), 1u);
  EXPECT_EQ(q->NumBackoff(), 0u);
  EXPECT_EQ(q->NumUnschedulable(), 2u);
  q->MoveAllToActiveOrBackoffQueue(framework::events::UnschedulableTimeout(), {});
  EXPECT_EQ(q->PendingPods().size(), 3u);
  EXPECT_EQ(q->NumActive(), 1u);
  EXPECT_EQ(q->NumBackoff(), 2u);
  EXPECT_EQ(q->NumUnschedulable(), 0u);
  EXPECT_THAT(Names(*q, SubQueue::kBackoff), UnorderedElementsAre("up", "hpp"));
}

// A plan's hold for a pod that does not exist yet (a moved pod's replacement): the placeholder
// holds the node until the first matching pod is added to the queue, which takes the hold over,
// planned, before PreEnqueue; other pods and a second replacement do not.
TEST(SchedulingQueueTest, ExpectedReplacementTakesOverTheHold) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock);
  auto placeholder = Pod("db-0-move");
  q->ExpectReplacement(placeholder, "node2",
                       [](const framework::PodInfo& pi) { return pi.pod().metadata.name.starts_with("db-"); });
  EXPECT_THAT(NominatedNames(*q, "node2"), ElementsAre("db-0-move"));
  EXPECT_TRUE(q->IsPlanned(placeholder->pod()));
  EXPECT_EQ(q->ReplacementOf(placeholder->pod()), nullptr);

  auto other = Pod("web-1");
  q->Add(other);
  EXPECT_THAT(NominatedNames(*q, "node2"), ElementsAre("db-0-move"));
  EXPECT_FALSE(q->NominatedNodeOf(other->pod()).has_value());

  auto replacement = Pod("db-x7k2p");
  q->Add(replacement);
  EXPECT_THAT(NominatedNames(*q, "node2"), ElementsAre("db-x7k2p"));
  EXPECT_TRUE(q->IsPlanned(replacement->pod()));
  EXPECT_EQ(q->NominatedNodeOf(replacement->pod()), "node2");
  EXPECT_EQ(q->ReplacementOf(placeholder->pod()), replacement);

  // A second pod of the same template finds the hold taken.
  auto second = Pod("db-q9w4z");
  q->Add(second);
  EXPECT_FALSE(q->NominatedNodeOf(second->pod()).has_value());
  EXPECT_EQ(q->ReplacementOf(placeholder->pod()), replacement);

  // Dropping the placeholder drops the expectation (the plan ended); the replacement's own plan
  // is the plan's to drop.
  q->DeleteNominatedPodIfExists(placeholder->pod());
  EXPECT_EQ(q->ReplacementOf(placeholder->pod()), nullptr);
  q->DeleteNominatedPodIfExists(replacement->pod());
  EXPECT_THAT(NominatedNames(*q, "node2"), IsEmpty());
}

// Upstream TestPriorityQueue_NominatedPodsForNode and TestPriorityQueue_UpdateNominatedPodForNode.
TEST(SchedulingQueueTest, Nominator) {
  util::VirtualClock clock(kStart);
  auto q = NewQueue(clock);
  auto med = Pod("mpp", 500, "node1", "ns2");
  auto up = Pod("up", 0, "node1");
  auto high = Pod("hpp", 1000);
  q->Add(med);
  q->Add(up);
  q->Add(high);
  MustPop(*q, high);
  auto list = q->NominatedPodsForNode("node1");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0], med);
  EXPECT_EQ(list[1], up);
  list.clear();  // a copy
  EXPECT_EQ(q->NominatedPodsForNode("node1").size(), 2u);
  EXPECT_THAT(q->NominatedPodsForNode("node2"), IsEmpty());

  // Override nominations (preemption) on nodes the pods do not name.
  q->AddNominatedPod(up, "node5");
  q->AddNominatedPod(high, "node2");
  EXPECT_THAT(NominatedNames(*q, "node1"), ElementsAre("mpp"));
  EXPECT_THAT(NominatedNames(*q, "node2"), ElementsAre("hpp"));
  EXPECT_THAT(NominatedNames(*q, "node5"), ElementsAre("up"));
  q->AddNominatedPod(high, "node4");
  EXPECT_THAT(NominatedNames(*q, "node2"), IsEmpty());
  EXPECT_THAT(NominatedNames(*q, "node4"), ElementsAre("hpp"));
  // A bound pod is not nominated.
  q->AddNominatedPod(MakePod().Name("sp").Namespace("ns1").UID("spns1").Node("foo").Info(), "node1");
  EXPECT_THAT(NominatedNames(*q, "node1"), ElementsAre("mpp"));
  // An empty node clears the nomination.
  q->AddNominatedPod(up, "");
  EXPECT_THAT(NominatedNames(*q, "node5"), IsEmpty());
  q->DeleteNominatedPodIfExists(high->pod());
  EXPECT_THAT(NominatedNames(*q, "node4"), IsEmpty());
  EXPECT_THAT(NominatedNames(*q, "node1"), ElementsAre("mpp"));

  // An update without nominatedNodeName keeps the in-memory nomination (status not synced yet).
  q->AddNominatedPod(up, "node7");
  auto up2 = Mutated(up, [](api::Pod& p) {
    p.status.nominated_node_name.clear();
    p.metadata.annotations.Set("a", "b");
  });
  auto up_plain = Mutated(up, [](api::Pod& p) { p.status.nominated_node_name.clear(); });
  q->Update(up_plain->pod(), up2);
  ASSERT_EQ(q->NominatedPodsForNode("node7").size(), 1u);
  EXPECT_EQ(q->NominatedPodsForNode("node7")[0], up2) << "the nominator follows the new version";
  // An update that sets a nominatedNodeName moves it.
  auto up3 = Mutated(up2, [](api::Pod& p) { p.status.nominated_node_name = "node8"; });
  q->Update(up2->pod(), up3);
  EXPECT_THAT(NominatedNames(*q, "node7"), IsEmpty());
  EXPECT_THAT(NominatedNames(*q, "node8"), ElementsAre("up"));
  q->Delete(up3->pod());
  EXPECT_THAT(NominatedNames(*q, "node8"), IsEmpty());
}

// -------------------------------------------------------------------------------------------
// Pop from backoffQ (upstream TestPriorityQueue_Pop)

TEST(SchedulingQueueTest, PopFromBackoffQ) {
  struct Case {
    std::string name;
    bool enabled;
    std::vector<std::string> want;
  };
  for (const auto& c :
       std::vector<Case>{{"enabled: active then backoffQ, never the error backoffQ", true, {"mpp", "hpp"}},
                         {"disabled: activeQ only", false, {"mpp"}}}) {
    SCOPED_TRACE(c.name);
    util::VirtualClock clock(kStart);
    auto q = NewQueue(clock, {}, {}, Options{.pop_from_backoff_q = c.enabled});
    auto med = Pod("mpp", 500, "node1", "ns2"), high = Pod("hpp", 1000), high2 = Pod("hpp2", 1000);
    auto up = Pod("up");
    q->Add(high);
    auto ph = MustPop(*q, high);
    q->Add(high2);
    auto ph2 = MustPop(*q, high2);
    ASSERT_TRUE(q->AddUnschedulableIfNotPresent(Rejected(ph, {"plugin"}), 1).IsSuccess());
    ASSERT_TRUE(q->AddUnschedulableIfNotPresent(ph2, 1).IsSuccess());  // error: error backoffQ
    AddPopReject(*q, up, {"plugin"});
    q->MoveAllToActiveOrBackoffQueue(framework::events::UnschedulableTimeout(), {});
    ASSERT_EQ(Where(*q, high), SubQueue::kBackoff);
    ASSERT_EQ(Where(*q, high2), SubQueue::kBackoff);
    // Keep `up` out of the way: it is back in the pool after one more failure.
    q->Delete(up->pod());
    q->Add(med);
    std::vector<std::string> got;
    while (auto p = q->Pop()) got.push_back(p->pod().metadata.name);
    EXPECT_EQ(got, c.want);
  }
}

TEST(SchedulingQueueTest, PopFromBackoffQAlignsExpiryToWindows) {
  util::VirtualClock clock(10 * kSecond + 300 * kMillisecond);
  auto q = NewQueue(clock, {}, {}, Options{.pop_from_backoff_q = true});
  auto p = Pod("p");
  q->Add(p);
  auto popped = MustPop(*q, p);
  ASSERT_TRUE(q->AddUnschedulableIfNotPresent(popped, 1).IsSuccess());
  // Expiry 11.3 s, aligned to the 11 s window: it backs off until the 12 s window starts.
  EXPECT_EQ(q->NextTimerNs(), 12 * kSecond);
  clock.AdvanceTo(11 * kSecond + 900 * kMillisecond);
  q->FlushBackoffQCompleted();
  EXPECT_EQ(Where(*q, p), SubQueue::kBackoff);
  clock.AdvanceTo(12 * kSecond);
  q->FlushBackoffQCompleted();
  EXPECT_EQ(Where(*q, p), SubQueue::kActive);
}

// -------------------------------------------------------------------------------------------
// Blocking pop, close, concurrency

TEST(SchedulingQueueTest, PopBlockingWakesOnAddAndClose) {
  util::RealClock clock;
  auto q = NewQueue(clock);
  std::optional<QueuedPodInfo> got;
  std::thread t([&] { got = q->PopBlocking(std::stop_token{}); });
  auto p = Pod("p");
  q->Add(p);
  t.join();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->pod().metadata.name, "p");

  std::optional<QueuedPodInfo> none = QueuedPodInfo{};
  std::thread t2([&] { none = q->PopBlocking(std::stop_token{}); });
  q->Close();
  t2.join();
  EXPECT_FALSE(none.has_value());
  EXPECT_FALSE(q->HasInFlight()) << "Close ends in-flight tracking";
}

TEST(SchedulingQueueTest, PopBlockingStopsOnStopToken) {
  util::RealClock clock;
  auto q = NewQueue(clock);
  std::optional<QueuedPodInfo> got = QueuedPodInfo{};
  std::jthread t([&](std::stop_token st) { got = q->PopBlocking(st); });
  t.request_stop();
  t.join();
  EXPECT_FALSE(got.has_value());
}

TEST(SchedulingQueueTest, ConcurrentAddPopSmoke) {
  util::RealClock clock;
  // Microsecond backoffs so that returned pods come back quickly on the real clock.
  auto q = NewQueue(clock, {{"plugin", {{kNodeAdd, kQueue}}}}, {},
                    Options{.pod_initial_backoff_ns = 1000, .pod_max_backoff_ns = 1000});
  constexpr int kProducers = 4, kPerProducer = 250, kTotal = kProducers * kPerProducer;
  std::atomic<int> scheduled{0};
  std::mutex seen_mu;
  std::multiset<std::string> seen;

  std::vector<std::thread> threads;
  for (int t = 0; t < kProducers; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerProducer; ++i) {
        q->Add(Pod("p" + std::to_string(t) + "-" + std::to_string(i), i % 7));
      }
    });
  }
  // Events keep arriving while pods are popped and returned.
  std::atomic<bool> stop_events{false};
  threads.emplace_back([&] {
    while (!stop_events) {
      q->MoveAllToActiveOrBackoffQueue(kNodeAdd, {});
      q->FlushBackoffQCompleted();
      (void)q->NominatedPodsForNode("node1");
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> consumers;
  for (int c = 0; c < 2; ++c) {
    consumers.emplace_back([&] {
      while (scheduled.load() < kTotal) {
        auto p = q->Pop();
        if (!p) {
          std::this_thread::yield();
          continue;
        }
        const std::string uid = p->pod().metadata.uid;
        // Every third first attempt fails and is returned; NodeAdd sends it back to activeQ.
        if (p->attempts == 1 && std::hash<std::string>{}(uid) % 3 == 0) {
          p->unschedulable_plugins = {"plugin"};
          EXPECT_TRUE(q->AddUnschedulableIfNotPresent(*p, 0).IsSuccess());
          continue;
        }
        {
          std::lock_guard lock(seen_mu);
          seen.insert(uid);
        }
        q->Done(uid);
        ++scheduled;
      }
    });
  }
  for (auto& t : consumers) t.join();
  stop_events = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(seen.size(), static_cast<size_t>(kTotal));
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), static_cast<size_t>(kTotal))
      << "a pod was scheduled twice";
  EXPECT_FALSE(q->HasInFlight());
  EXPECT_EQ(q->NumActive() + q->NumBackoff() + q->NumUnschedulable(), 0u);
}

}  // namespace
}  // namespace kubesched::queue
