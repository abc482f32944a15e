#include <thread>

#include <gtest/gtest.h>

#include "store/store_test_util.h"

namespace kubesched::store {
namespace {

using namespace std::chrono_literals;
using testing::Field;
using testing::PodJson;

class WatchTest : public testing::StoreFixture {
 public:
  std::unique_ptr<Watcher> MustWatch(WatchOptions options, std::string_view ns = "") {
    auto w = store->Watch(Pods(), ns, options);
    EXPECT_TRUE(w.has_value()) << (w ? "" : w.error().message);
    return w ? std::move(*w) : nullptr;
  }
  //! The events queued now, as "TYPE name".
  static std::vector<std::string> Drain(Watcher& w) {
    std::vector<std::string> out;
    while (auto e = w.Next(0ms)) {
      if (e->type == EventType::kBookmark) continue;
      out.push_back(std::string(ToString(e->type)) + " " + e->object->name);
    }
    return out;
  }
};

TEST_F(WatchTest, FromZeroSendsCurrentObjectsThenChanges) {
  MustCreate(Pods(), "default", PodJson("a"));
  auto w = MustWatch({.resource_version = "0"});
  MustCreate(Pods(), "default", PodJson("b"));
  ASSERT_TRUE(store->Delete(Pods(), "default", "a", {}));
  EXPECT_EQ(Drain(*w), (std::vector<std::string>{"ADDED a", "ADDED b", "DELETED a"}));
}

TEST_F(WatchTest, DeletedEventCarriesTheDeletionsResourceVersion) {
  MustCreate(Pods(), "default", PodJson("a"));
  auto w = MustWatch({.resource_version = std::to_string(store->ResourceVersion())});
  ASSERT_TRUE(store->Delete(Pods(), "default", "a", {}));
  auto e = w->Next(0ms);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->type, EventType::kDeleted);
  EXPECT_EQ(e->object->resource_version, store->ResourceVersion());
  EXPECT_EQ(Field(*e->object, "metadata.resourceVersion"), std::to_string(store->ResourceVersion()));
}

TEST_F(WatchTest, FromAResourceVersionReplaysLaterChanges) {
  MustCreate(Pods(), "default", PodJson("a"));
  const uint64_t rv = store->ResourceVersion();
  MustCreate(Pods(), "default", PodJson("b"));
  MustCreate(Pods(), "default", PodJson("c"));
  auto w = MustWatch({.resource_version = std::to_string(rv)});
  EXPECT_EQ(Drain(*w), (std::vector<std::string>{"ADDED b", "ADDED c"}));
  auto future = store->Watch(Pods(), "", {.resource_version = std::to_string(rv + 100)});
  ASSERT_FALSE(future.has_value());
  EXPECT_EQ(future.error().HttpCode(), 504);
}

TEST_F(WatchTest, SelectorTransitionsBecomeAddedAndDeleted) {
  MustCreate(Pods(), "default", PodJson("a", "", R"({"app":"web"})"));
  auto w = MustWatch({.selectors = {"app=web", ""}, .resource_version = std::to_string(store->ResourceVersion())});
  auto field_watch =
      MustWatch({.selectors = {"", "spec.nodeName=n1"}, .resource_version = std::to_string(store->ResourceVersion())});
  ASSERT_TRUE(
      store->Patch(Pods(), "default", "a", PatchType::kMergePatch, R"({"metadata":{"labels":{"app":"db"}}})", ""));
  ASSERT_TRUE(
      store->Patch(Pods(), "default", "a", PatchType::kMergePatch, R"({"metadata":{"labels":{"app":"web"}}})", ""));
  ASSERT_TRUE(store->Patch(Pods(), "default", "a", PatchType::kMergePatch, R"({"metadata":{"labels":{"v":"2"}}})", ""));
  EXPECT_EQ(Drain(*w), (std::vector<std::string>{"DELETED a", "ADDED a", "MODIFIED a"}));
  ASSERT_TRUE(store->Bind("default", "a", "", "n1"));
  EXPECT_EQ(Drain(*field_watch), (std::vector<std::string>{"ADDED a"}));
}

TEST_F(WatchTest, NamespaceFilter) {
  MustCreate(R("", "namespaces"), "", R"({"metadata":{"name":"other"}})");
  auto w = MustWatch({.resource_version = std::to_string(store->ResourceVersion())}, "other");
  MustCreate(Pods(), "default", PodJson("a"));
  MustCreate(Pods(), "other", PodJson("b"));
  EXPECT_EQ(Drain(*w), (std::vector<std::string>{"ADDED b"}));
}

TEST_F(WatchTest, BookmarksAfterQuiet) {
  MustCreate(Pods(), "default", PodJson("a"));
  auto w = MustWatch({.resource_version = std::to_string(store->ResourceVersion()), .allow_bookmarks = true});
  MustCreate(R("", "nodes"), "", testing::NodeJson("n1"));  // another resource moves the version on
  auto e = w->Next(1s);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->type, EventType::kBookmark);
  EXPECT_EQ(e->object->resource_version, store->ResourceVersion());
  EXPECT_EQ(Field(*e->object, "metadata.resourceVersion"), std::to_string(store->ResourceVersion()));
  EXPECT_EQ(Field(*e->object, "kind"), "Pod");
  auto plain = MustWatch({.resource_version = std::to_string(store->ResourceVersion())});
  EXPECT_FALSE(plain->Next(60ms).has_value());
}

TEST_F(WatchTest, InitialEventsEndWithAnnotatedBookmark) {
  MustCreate(Pods(), "default", PodJson("a"));
  auto w = MustWatch({.resource_version = "", .allow_bookmarks = true, .send_initial_events = true});
  auto first = w->Next(0ms);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->type, EventType::kAdded);
  auto end = w->Next(0ms);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->type, EventType::kBookmark);
  EXPECT_NE(end->object->json.find("\"k8s.io/initial-events-end\":\"true\""), std::string::npos);
}

class SlowWatcherTest : public testing::StoreFixture {
 public:
  SlowWatcherTest() : StoreFixture(Options()) {}
  static StoreOptions Options() {
    StoreOptions o = DefaultOptions();
    o.watcher_capacity = 2;
    return o;
  }
};

TEST_F(SlowWatcherTest, ASlowWatcherIsClosedWithoutBlockingWriters) {
  auto w = store->Watch(Pods(), "", {.resource_version = std::to_string(store->ResourceVersion())});
  ASSERT_TRUE(w.has_value());
  for (const char* n : {"a", "b", "c", "d"}) MustCreate(Pods(), "default", PodJson(n));
  EXPECT_TRUE((*w)->Closed());
  EXPECT_NE((*w)->CloseReason().find("too slow"), std::string::npos);
  EXPECT_FALSE((*w)->Next(0ms).has_value());
}

TEST_F(SlowWatcherTest, AResumedWatchGetsItsWholeReplay) {
  // A watcher closed as too slow resumes from the last version it saw: the history it missed is
  // replayed whole (more than the capacity), not closed at once, which would leave a client
  // resuming over and over without ever catching up.
  const std::string from = std::to_string(store->ResourceVersion());
  for (const char* n : {"a", "b", "c", "d", "e"}) MustCreate(Pods(), "default", PodJson(n));
  auto w = store->Watch(Pods(), "", {.resource_version = from});
  ASSERT_TRUE(w.has_value());
  EXPECT_FALSE((*w)->Closed());
  std::vector<std::string> names;
  while (auto e = (*w)->Next(0ms)) names.push_back(e->object->name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
}

TEST_F(WatchTest, StopEndsTheWatch) {
  auto w = MustWatch({.resource_version = "0"});
  std::thread waiter([&] { EXPECT_FALSE(w->Next(5s).has_value()); });
  std::this_thread::sleep_for(10ms);
  w->Stop();
  waiter.join();
  EXPECT_TRUE(w->Closed());
  EXPECT_EQ(w->CloseReason(), "stopped");
  MustCreate(Pods(), "default", PodJson("a"));  // the store drops it
}

TEST_F(WatchTest, ObserversSeeEveryChangeInOrderWithoutReentry) {
  std::vector<std::string> seen;
  int depth = 0;
  bool reentered = false;
  store->AddObserver([&](const WatchEvent& e) {
    if (++depth > 1) reentered = true;
    seen.push_back(std::string(ToString(e.type)) + " " + e.object->type->resource + " " + e.object->name + " " +
                   std::to_string(e.object->resource_version));
    // The observer writes: its events come after this one, not inside it.
    if (e.type == EventType::kAdded && e.object->name == "a") MustCreate(Pods(), "default", PodJson("a-child"));
    --depth;
  });
  std::vector<uint64_t> second;
  store->AddObserver([&](const WatchEvent& e) { second.push_back(e.object->resource_version); });
  const uint64_t rv = store->ResourceVersion();
  MustCreate(Pods(), "default", PodJson("a"));
  MustCreate(Pods(), "default", PodJson("b"));
  EXPECT_FALSE(reentered);
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED pods a " + std::to_string(rv + 1),
                                            "ADDED pods a-child " + std::to_string(rv + 2),
                                            "ADDED pods b " + std::to_string(rv + 3)}));
  EXPECT_EQ(second, (std::vector<uint64_t>{rv + 1, rv + 2, rv + 3}));
}

TEST_F(WatchTest, IdleRunsAfterEveryQueuedEventAndAgainAfterItsWrites) {
  std::vector<std::string> log;
  bool wrote = false;
  store->AddObserver([&](const WatchEvent& e) { log.push_back("event " + e.object->name); },
                     [&] {
                       log.push_back("idle");
                       // The first idle writes; its event is delivered, then idle runs again.
                       if (!wrote) {
                         wrote = true;
                         MustCreate(Pods(), "default", PodJson("from-idle"));
                       }
                     });
  MustCreate(Pods(), "default", PodJson("a"));
  EXPECT_EQ(log, (std::vector<std::string>{"event a", "idle", "event from-idle", "idle"}));
}

TEST_F(WatchTest, RemovedObserverHearsNothing) {
  int calls = 0;
  uint64_t id = store->AddObserver([&](const WatchEvent&) { ++calls; });
  MustCreate(Pods(), "default", PodJson("a"));
  store->RemoveObserver(id);
  MustCreate(Pods(), "default", PodJson("b"));
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace kubesched::store
