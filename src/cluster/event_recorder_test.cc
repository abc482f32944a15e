#include "cluster/event_recorder.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/json.h"
#include "store/resources.h"

namespace kubesched::cluster {
namespace {

namespace json = api::json;
using framework::EventObjectReference;
using framework::EventRecord;

// 2026-11-24T12:00:00.123456789Z: the microseconds show in eventTime, the nanoseconds in the name.
constexpr int64_t kStart = 1'795'521'600'123'456'789;
constexpr int64_t kSecond = util::kNanosPerSecond;
constexpr int64_t kMinute = 60 * kSecond;

EventObjectReference PodRef(std::string name, std::string ns = "default", std::string rv = "7") {
  return {"Pod", "v1", std::move(ns), name, "uid-" + name, std::move(rv)};
}

EventRecord Scheduled(std::string pod, std::string note = "") {
  return {.regarding = PodRef(pod),
          .type = "Normal",
          .reason = "Scheduled",
          .action = "Binding",
          .note = note.empty() ? "Successfully assigned default/" + pod + " to n1" : note,
          .reporting_controller = "default-scheduler"};
}

//! The store, with Create and Patch failing as an unreachable server's would (kInternal) while
//! `failures` lasts.
class FlakyStore final : public store::Store {
 public:
  explicit FlakyStore(store::Store& inner) : inner_(inner) {}
  int failures = 0;
  int writes = 0;

  const std::vector<const store::ResourceType*>& Resources() const override { return inner_.Resources(); }
  const store::ResourceType* FindResource(std::string_view g, std::string_view r) const override {
    return inner_.FindResource(g, r);
  }
  store::Result<store::ObjectPtr> Create(const store::ResourceType& t, std::string_view ns,
                                         json::Document body) override {
    ++writes;
    if (failures > 0) return Unreachable();
    return inner_.Create(t, ns, std::move(body));
  }
  store::Result<store::ObjectPtr> Restore(const store::ResourceType& t, std::string_view ns,
                                          json::Document body) override {
    return inner_.Restore(t, ns, std::move(body));
  }
  store::Result<store::ObjectPtr> Get(const store::ResourceType& t, std::string_view ns,
                                      std::string_view name) const override {
    return inner_.Get(t, ns, name);
  }
  store::Result<store::ListResult> List(const store::ResourceType& t, std::string_view ns,
                                        const store::ListOptions& o) const override {
    return inner_.List(t, ns, o);
  }
  store::Result<store::ObjectPtr> Update(const store::ResourceType& t, std::string_view ns, std::string_view name,
                                         json::Document body, const store::UpdateRequest& r) override {
    return inner_.Update(t, ns, name, std::move(body), r);
  }
  store::Result<store::ObjectPtr> Patch(const store::ResourceType& t, std::string_view ns, std::string_view name,
                                        store::PatchType pt, std::string_view patch, std::string_view sub) override {
    ++writes;
    if (failures > 0) return Unreachable();
    return inner_.Patch(t, ns, name, pt, patch, sub);
  }
  store::Result<store::ObjectPtr> PatchDecoded(const store::ResourceType& t, std::string_view ns, std::string_view name,
                                               store::PatchType pt, std::string_view patch, std::string_view sub,
                                               const PatchDecoder& decode) override {
    ++writes;
    if (failures > 0) return Unreachable();
    return inner_.PatchDecoded(t, ns, name, pt, patch, sub, decode);
  }
  store::Result<store::ObjectPtr> Delete(const store::ResourceType& t, std::string_view ns, std::string_view name,
                                         const store::DeleteOptions& o) override {
    return inner_.Delete(t, ns, name, o);
  }
  store::Result<std::unique_ptr<store::Watcher>> Watch(const store::ResourceType& t, std::string_view ns,
                                                       const store::WatchOptions& o) override {
    return inner_.Watch(t, ns, o);
  }
  store::Result<store::ObjectPtr> Bind(std::string_view ns, std::string_view pod, std::string_view uid,
                                       std::string_view node) override {
    return inner_.Bind(ns, pod, uid, node);
  }
  store::Result<store::ObjectPtr> Evict(std::string_view ns, std::string_view pod,
                                        const store::DeleteOptions& o) override {
    return inner_.Evict(ns, pod, o);
  }
  uint64_t ResourceVersion() const override { return inner_.ResourceVersion(); }
  uint64_t AddObserver(std::function<void(const store::WatchEvent&)> f) override {
    return inner_.AddObserver(std::move(f));
  }
  uint64_t AddObserver(std::function<void(const store::WatchEvent&)> f, std::function<void()> idle) override {
    return inner_.AddObserver(std::move(f), std::move(idle));
  }
  void RemoveObserver(uint64_t id) override { inner_.RemoveObserver(id); }
  store::Result<void> SaveState(const std::string& path) const override { return inner_.SaveState(path); }
  store::Result<void> LoadState(const std::string& path) override { return inner_.LoadState(path); }
  store::Result<void> OpenState(const std::string& path) override { return inner_.OpenState(path); }
  store::Result<void> CloseState() override { return inner_.CloseState(); }

 private:
  store::Result<store::ObjectPtr> Unreachable() {
    --failures;
    return std::unexpected(store::Error{store::Error::Reason::kInternal, "connection refused", {}});
  }
  store::Store& inner_;
};

class EventRecorderTest : public ::testing::Test {
 protected:
  EventRecorderTest()
      : clock_(kStart),
        store_(store::NewBuiltinStore(clock_)),
        recorder_(*store_, clock_, {.hostname = "host-a"}),
        events_(*store_->FindResource("events.k8s.io", "events")) {}

  //! Every stored Event, in its events.k8s.io/v1 form.
  std::vector<json::Document> Events() {
    auto listed = store_->List(events_, "", {});
    EXPECT_TRUE(listed.has_value());
    std::vector<json::Document> out;
    if (!listed) return out;
    for (const auto& o : listed->items) {
      json::Document doc;
      EXPECT_TRUE(json::Parse(o->json.str(), doc).has_value());
      out.push_back(std::move(doc));
    }
    return out;
  }

  static std::string Str(const json::Value& v, std::string_view path) {
    const json::Value* cur = &v;
    size_t start = 0;
    while (cur != nullptr) {
      const size_t dot = path.find('.', start);
      cur = json::Find(*cur, path.substr(start, dot == std::string_view::npos ? dot : dot - start));
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
    if (cur == nullptr) return "<absent>";
    if (cur->IsString()) return std::string(cur->GetString(), cur->GetStringLength());
    if (cur->IsInt()) return std::to_string(cur->GetInt());
    return "<other>";
  }

  util::VirtualClock clock_;
  std::unique_ptr<store::Store> store_;
  EventRecorder recorder_;
  const store::ResourceType& events_;
};

TEST_F(EventRecorderTest, FirstOccurrenceCreatesTheEventWithEveryField) {
  EventRecord preempted{.regarding = PodRef("victim", "team", "41"),
                        .related = PodRef("big", "team", "52"),
                        .type = "Normal",
                        .reason = "Preempted",
                        .action = "Preempting",
                        .note = "Preempted by pod uid-big on node n1",
                        .reporting_controller = "my-scheduler"};
  json::Document ns;
  ASSERT_TRUE(json::Parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}})", ns).has_value());
  ASSERT_TRUE(store_->Create(*store_->FindResource("", "namespaces"), "", std::move(ns)).has_value());
  ASSERT_TRUE(recorder_.Record(preempted));
  EXPECT_TRUE(Events().empty()) << "Record() only queues";
  recorder_.Flush();

  auto events = Events();
  ASSERT_EQ(events.size(), 1u);
  const json::Document& e = events[0];
  struct Field {
    std::string path;
    std::string want;
  };
  const std::vector<Field> fields = {
      {"apiVersion", "events.k8s.io/v1"},
      {"kind", "Event"},
      {"metadata.name", "victim.18eaf961d9e64d15"},  // fmt "%x" of the nanoseconds
      {"metadata.namespace", "team"},
      {"eventTime", "2026-11-24T12:00:00.123456Z"},
      {"reportingController", "my-scheduler"},
      {"reportingInstance", "my-scheduler-host-a"},
      {"type", "Normal"},
      {"reason", "Preempted"},
      {"action", "Preempting"},
      {"note", "Preempted by pod uid-big on node n1"},
      {"regarding.kind", "Pod"},
      {"regarding.apiVersion", "v1"},
      {"regarding.namespace", "team"},
      {"regarding.name", "victim"},
      {"regarding.uid", "uid-victim"},
      {"regarding.resourceVersion", "41"},
      {"related.kind", "Pod"},
      {"related.apiVersion", "v1"},
      {"related.namespace", "team"},
      {"related.name", "big"},
      {"related.uid", "uid-big"},
      {"related.resourceVersion", "52"},
      {"series", "<absent>"},
  };
  for (const Field& f : fields) {
    SCOPED_TRACE(f.path);
    EXPECT_EQ(Str(e, f.path), f.want);
  }
  EXPECT_EQ(fmt::format("victim.{:x}", kStart), "victim.18eaf961d9e64d15");
}

TEST_F(EventRecorderTest, RegardingWithoutNamespaceGoesToDefault) {
  EventRecord r = Scheduled("p");
  r.regarding.namespace_.clear();
  recorder_.Record(r);
  recorder_.Flush();
  auto events = Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(Str(events[0], "metadata.namespace"), "default");
  EXPECT_EQ(Str(events[0], "related"), "<absent>");
}

TEST_F(EventRecorderTest, SecondOccurrencePatchesTheSeriesOntoTheSameEvent) {
  recorder_.Record(Scheduled("p"));
  recorder_.Flush();
  auto first = Events();
  ASSERT_EQ(first.size(), 1u);
  const std::string name = Str(first[0], "metadata.name");

  clock_.Advance(2 * kSecond);
  recorder_.Record(Scheduled("p"));
  recorder_.Flush();
  auto events = Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(Str(events[0], "metadata.name"), name);
  EXPECT_EQ(Str(events[0], "series.count"), "2");
  EXPECT_EQ(Str(events[0], "series.lastObservedTime"), "2026-11-24T12:00:02.123456Z");
  EXPECT_EQ(Str(events[0], "eventTime"), "2026-11-24T12:00:00.123456Z") << "the first occurrence's time stays";
}

TEST_F(EventRecorderTest, LaterOccurrencesOnlyCountUntilTheHeartbeat) {
  recorder_.Record(Scheduled("p"));
  clock_.Advance(kSecond);
  recorder_.Record(Scheduled("p"));
  recorder_.Flush();
  // Occurrences 3 to 7, 5 minutes apart, so the series never goes idle (finishSeries leaves it
  // alone) and only the 30-minute refresh writes their count.
  for (int i = 3; i <= 7; ++i) {
    clock_.AdvanceTo(kStart + (i - 2) * 5 * kMinute + kSecond);
    recorder_.Record(Scheduled("p"));
    recorder_.Flush();
    auto events = Events();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(Str(events[0], "series.count"), "2") << "occurrence " << i << " is only counted";
  }
  clock_.AdvanceTo(kStart + EventRecorder::kRefreshTimeNs);
  recorder_.Flush();
  auto events = Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(Str(events[0], "series.count"), "7");
  EXPECT_EQ(Str(events[0], "series.lastObservedTime"), "2026-11-24T12:25:01.123456Z");
}

TEST_F(EventRecorderTest, IsomorphismIgnoresTheNoteButNotReasonOrObject) {
  struct Case {
    std::string name;
    EventRecord second;
    size_t want_events;
  };
  EventRecord other_reason = Scheduled("p");
  other_reason.reason = "FailedScheduling";
  other_reason.type = "Warning";
  other_reason.action = "Scheduling";
  EventRecord other_rv = Scheduled("p");
  other_rv.regarding.resource_version = "8";
  EventRecord other_controller = Scheduled("p");
  other_controller.reporting_controller = "second-scheduler";
  EventRecord with_related = Scheduled("p");
  with_related.related = PodRef("q");
  const std::vector<Case> cases = {
      {"different note aggregates", Scheduled("p", "another note"), 1},
      {"different reason is new", other_reason, 2},
      {"different pod is new", Scheduled("q"), 2},
      {"different resourceVersion is new", other_rv, 2},
      {"different reporting controller is new", other_controller, 2},
      {"a related object is new", with_related, 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    util::VirtualClock clock(kStart);
    auto store = store::NewBuiltinStore(clock);
    EventRecorder recorder(*store, clock, {.hostname = "h"});
    recorder.Record(Scheduled("p"));
    recorder.Flush();
    clock.Advance(kSecond);
    recorder.Record(c.second);
    recorder.Flush();
    auto listed = store->List(*store->FindResource("events.k8s.io", "events"), "", {});
    ASSERT_TRUE(listed.has_value());
    ASSERT_EQ(listed->items.size(), c.want_events);
    if (c.want_events == 1) {
      json::Document doc;
      ASSERT_TRUE(json::Parse(listed->items[0]->json.str(), doc).has_value());
      EXPECT_EQ(Str(doc, "series.count"), "2");
      EXPECT_EQ(Str(doc, "note"), "Successfully assigned default/p to n1") << "the first note stays";
    }
  }
}

TEST_F(EventRecorderTest, IdleSeriesIsFinishedAndTheNextOccurrenceCreatesANewEvent) {
  recorder_.Record(Scheduled("p"));
  recorder_.Record(Scheduled("p"));
  recorder_.Record(Scheduled("p"));
  recorder_.Flush();
  ASSERT_EQ(Events().size(), 1u);
  EXPECT_EQ(Str(Events()[0], "series.count"), "2");

  // The first finishSeries (6 min) leaves it: observed exactly 6 minutes before is not idle.
  clock_.AdvanceTo(kStart + EventRecorder::kFinishTimeNs);
  recorder_.Flush();
  EXPECT_EQ(Str(Events()[0], "series.count"), "2");
  // The next one (12 min) writes the final count and forgets the series.
  clock_.AdvanceTo(kStart + 2 * EventRecorder::kFinishTimeNs);
  recorder_.Flush();
  ASSERT_EQ(Events().size(), 1u);
  EXPECT_EQ(Str(Events()[0], "series.count"), "3");

  recorder_.Record(Scheduled("p"));
  recorder_.Flush();
  auto events = Events();
  ASSERT_EQ(events.size(), 2u) << "a new Event after the series ended";
  int singles = 0;
  for (const auto& e : events) singles += Str(e, "series") == "<absent>" ? 1 : 0;
  EXPECT_EQ(singles, 1);
}

TEST_F(EventRecorderTest, SingleEventIsForgottenAfterSixMinutes) {
  recorder_.Record(Scheduled("p"));
  recorder_.Flush();
  clock_.AdvanceTo(kStart + 2 * EventRecorder::kFinishTimeNs);
  recorder_.Flush();
  recorder_.Record(Scheduled("p"));
  recorder_.Flush();
  auto events = Events();
  ASSERT_EQ(events.size(), 2u);
  for (const auto& e : events) EXPECT_EQ(Str(e, "series"), "<absent>");
}

TEST_F(EventRecorderTest, SeriesWhoseEventWasDeletedIsCreatedWhole) {
  recorder_.Record(Scheduled("p"));
  recorder_.Flush();
  auto first = Events();
  ASSERT_EQ(first.size(), 1u);
  const std::string name = Str(first[0], "metadata.name");
  ASSERT_TRUE(store_->Delete(events_, "default", name, {}).has_value());
  clock_.Advance(kSecond);
  recorder_.Record(Scheduled("p"));
  recorder_.Flush();
  auto events = Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(Str(events[0], "metadata.name"), name);
  EXPECT_EQ(Str(events[0], "series.count"), "2");
  EXPECT_EQ(Str(events[0], "reason"), "Scheduled");
}

TEST(EventRecorder, FullQueueDropsWithoutBlocking) {
  util::VirtualClock clock(kStart);
  auto store = store::NewBuiltinStore(clock);
  EventRecorder recorder(*store, clock, {.queue_capacity = 3, .hostname = "h"});
  const auto begin = std::chrono::steady_clock::now();
  int accepted = 0;
  for (int i = 0; i < 10; ++i) accepted += recorder.Record(Scheduled("p" + std::to_string(i))) ? 1 : 0;
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(1));
  EXPECT_EQ(accepted, 3);
  EXPECT_EQ(recorder.dropped(), 7u);
  recorder.Flush();
  auto listed = store->List(*store->FindResource("events.k8s.io", "events"), "", {});
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(listed->items.size(), 3u);
  // Room again once written.
  EXPECT_TRUE(recorder.Record(Scheduled("later")));
}

TEST(EventRecorder, UnreachableServerIsRetriedAfterTenSecondsThenGivenUp) {
  struct Case {
    std::string name;
    int failures;
    int max_tries;
    size_t want_events;
    int want_writes;
  };
  const std::vector<Case> cases = {
      {"written on the third try", 2, 12, 1, 3},
      {"given up after max_tries", 5, 3, 0, 3},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    util::VirtualClock clock(kStart);
    auto inner = store::NewBuiltinStore(clock);
    FlakyStore flaky(*inner);
    flaky.failures = c.failures;
    EventRecorder recorder(flaky, clock, {.hostname = "h", .max_tries = c.max_tries});
    recorder.Record(Scheduled("p"));
    recorder.Flush();
    EXPECT_EQ(flaky.writes, 1);
    // Not before 10 s, and within 12.5 s (10 s jittered by up to 25%) each time.
    for (int i = 0; i < 6; ++i) {
      clock.Advance(10 * kSecond - 1);
      const int before = flaky.writes;
      recorder.Flush();
      EXPECT_EQ(flaky.writes, before) << "retried before 10 s";
      clock.Advance(2'500'000'001);
      recorder.Flush();
    }
    EXPECT_EQ(flaky.writes, c.want_writes);
    auto listed = inner->List(*inner->FindResource("events.k8s.io", "events"), "", {});
    ASSERT_TRUE(listed.has_value());
    EXPECT_EQ(listed->items.size(), c.want_events);
  }
}

TEST(EventRecorder, WorkerWritesAndStopDrains) {
  util::VirtualClock clock(kStart);
  auto store = store::NewBuiltinStore(clock);
  const store::ResourceType& events = *store->FindResource("events.k8s.io", "events");
  EventRecorder recorder(*store, clock, {.hostname = "h"});
  recorder.Start();
  recorder.Record(Scheduled("a"));
  // The worker writes without a Flush().
  for (int i = 0; i < 500 && store->List(events, "", {})->items.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(store->List(events, "", {})->items.size(), 1u);
  clock.Advance(1000);
  for (int i = 0; i < 50; ++i) recorder.Record(Scheduled("b" + std::to_string(i)));
  recorder.Stop();
  EXPECT_EQ(store->List(events, "", {})->items.size(), 51u);
}

}  // namespace
}  // namespace kubesched::cluster
