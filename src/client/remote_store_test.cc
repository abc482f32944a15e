#include "client/remote_store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "api/json.h"
#include "cluster/store_client.h"
#include "cluster/store_informer.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "scheduler/run_loop.h"
#include "scheduler/scheduler.h"
#include "server/api_handler.h"
#include "server/http_server.h"
#include "store/resources.h"
#include "testing/api_test_bed.h"
#include "util/clock.h"

namespace kubesched::client {

using kubesched::testing::ApiTestBed;
namespace {

using namespace std::chrono_literals;

api::json::Document Doc(const std::string& text) {
  api::json::Document doc;
  EXPECT_TRUE(api::json::Parse(text, doc).has_value()) << text;
  return doc;
}

std::string PodJson(const std::string& name, const std::string& phase = "") {
  std::string status = phase.empty() ? "" : fmt::format(R"(,"status":{{"phase":"{}"}})", phase);
  return fmt::format(R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{}","namespace":"default"}},)"
                     R"("spec":{{"containers":[{{"name":"c","image":"busybox"}}]}}{}}})",
                     name, status);
}

std::unique_ptr<RestClient> Client(const std::string& url) {
  RestConfig config;
  config.server = url;
  config.qps = -1;  // no client-side limit in tests
  auto client = RestClient::Create(config);
  EXPECT_TRUE(client.has_value()) << client.error();
  return std::move(*client);
}

// Events an observer saw, by kind and pod name.
struct Seen {
  std::mutex mu;
  std::vector<std::pair<store::EventType, std::string>> events;
  uint64_t last_seq = 0;
  bool ordered = true;
  void Add(const store::WatchEvent& e) {
    std::lock_guard lock(mu);
    ordered = ordered && e.object->resource_version > last_seq;
    last_seq = e.object->resource_version;
    events.emplace_back(e.type, e.object->name);
  }
  bool Has(store::EventType type, const std::string& name) {
    std::lock_guard lock(mu);
    for (const auto& [t, n] : events) {
      if (t == type && n == name) return true;
    }
    return false;
  }
};

template <typename F>
bool Eventually(F f, std::chrono::milliseconds timeout = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (f()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return f();
}

TEST(RemoteStoreTest, MirrorsTheServerAndDeliversEachChangeOnceInOrder) {
  ApiTestBed bed;
  ASSERT_TRUE(bed.store().Create(bed.Pods(), "default", Doc(PodJson("before"))));
  auto client = Client(bed.Url());
  RemoteStore remote(*client, store::BuiltinResources(), {.informed = {{"", "pods"}, {"", "nodes"}}});
  Seen seen;
  remote.AddObserver([&](const store::WatchEvent& e) { seen.Add(e); });
  remote.Start();
  std::jthread never;
  ASSERT_TRUE(remote.WaitForCacheSync(never.get_stop_token()));
  EXPECT_TRUE(seen.Has(store::EventType::kAdded, "before"));

  // Reads come from the mirror, with the server's resourceVersion in the JSON and the view.
  auto got = remote.Get(*remote.FindResource("", "pods"), "default", "before");
  ASSERT_TRUE(got.has_value());
  auto server_version = bed.store().Get(bed.Pods(), "default", "before");
  ASSERT_TRUE(server_version.has_value());
  EXPECT_EQ((*got)->View<api::Pod>()->metadata.resource_version, std::to_string((*server_version)->resource_version));
  EXPECT_FALSE(remote.Get(*remote.FindResource("", "pods"), "default", "nope").has_value());

  // Changes made on the server arrive as adds, updates and deletes.
  ASSERT_TRUE(bed.store().Create(bed.Pods(), "default", Doc(PodJson("after"))));
  ASSERT_TRUE(Eventually([&] { return seen.Has(store::EventType::kAdded, "after"); }));
  ASSERT_TRUE(bed.store().Bind("default", "after", "", "node-1"));
  ASSERT_TRUE(Eventually([&] { return seen.Has(store::EventType::kModified, "after"); }));
  auto bound = remote.Get(*remote.FindResource("", "pods"), "default", "after");
  ASSERT_TRUE(bound.has_value());
  EXPECT_EQ((*bound)->View<api::Pod>()->spec.node_name, "node-1");
  ASSERT_TRUE(bed.store().Delete(bed.Pods(), "default", "before", {.grace_period_seconds = 0}));
  ASSERT_TRUE(Eventually([&] { return seen.Has(store::EventType::kDeleted, "before"); }));
  auto listed = remote.List(*remote.FindResource("", "pods"), "", {});
  ASSERT_TRUE(listed.has_value());
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0]->name, "after");
  std::lock_guard lock(seen.mu);
  EXPECT_TRUE(seen.ordered);
}

TEST(RemoteStoreTest, TerminalPodsLeaveAsDeletes) {
  ApiTestBed bed;
  auto client = Client(bed.Url());
  RemoteStore remote(*client, store::BuiltinResources(), {.informed = {{"", "pods"}}});
  Seen seen;
  remote.AddObserver([&](const store::WatchEvent& e) { seen.Add(e); });
  remote.Start();
  std::jthread never;
  ASSERT_TRUE(remote.WaitForCacheSync(never.get_stop_token()));
  ASSERT_TRUE(bed.store().Create(bed.Pods(), "default", Doc(PodJson("job"))));
  ASSERT_TRUE(Eventually([&] { return seen.Has(store::EventType::kAdded, "job"); }));
  ASSERT_TRUE(bed.store().Patch(bed.Pods(), "default", "job", store::PatchType::kMergePatch,
                                R"({"status":{"phase":"Succeeded"}})", "status"));
  // Upstream's field selector: the pod leaves the watch, which the server says with a DELETED.
  ASSERT_TRUE(Eventually([&] { return seen.Has(store::EventType::kDeleted, "job"); }));
  EXPECT_FALSE(remote.Get(*remote.FindResource("", "pods"), "default", "job").has_value());
}

TEST(RemoteStoreTest, RelistsAfterGoneAndReplacesTheMirror) {
  // A watcher may queue 1 event and the server keeps 3 changes: a burst closes the watch, its
  // resumption asks for a compacted version (410), and the relist must leave the mirror equal to
  // the server, deletions included.
  ApiTestBed bed({.watch_history = 3, .watcher_capacity = 1});
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(bed.store().Create(bed.Pods(), "default", Doc(PodJson(fmt::format("old-{}", i)))));
  }
  auto client = Client(bed.Url());
  RemoteStoreOptions options{.informed = {{"", "pods"}}};
  options.reflector.initial_backoff = 10ms;
  RemoteStore remote(*client, store::BuiltinResources(), options);
  std::mutex mu;
  std::map<std::string, int> live;  // what the observer believes exists
  remote.AddObserver([&](const store::WatchEvent& e) {
    std::lock_guard lock(mu);
    if (e.type == store::EventType::kDeleted) {
      live.erase(e.object->name);
    } else {
      live[e.object->name] = 1;
    }
  });
  remote.Start();
  std::jthread never;
  ASSERT_TRUE(remote.WaitForCacheSync(never.get_stop_token()));
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(bed.store().Delete(bed.Pods(), "default", fmt::format("old-{}", i), {.grace_period_seconds = 0}));
  }
  // Created and deleted again, many times faster than a watch delivers them over HTTP.
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 20; ++i) {
      const std::string name = fmt::format("new-{}", i);
      ASSERT_TRUE(bed.store().Create(bed.Pods(), "default", Doc(PodJson(name))));
      if (round + 1 < 20) {
        ASSERT_TRUE(bed.store().Delete(bed.Pods(), "default", name, {.grace_period_seconds = 0}));
      }
    }
  }
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard lock(mu);
    return live.size() == 20 && live.begin()->first.starts_with("new-");
  })) << "lists: "
      << remote.Lists("", "pods");
  EXPECT_GE(remote.Lists("", "pods"), 2);
  auto listed = remote.List(*remote.FindResource("", "pods"), "", {});
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(listed->items.size(), 20u);
}

TEST(RemoteStoreTest, WritesAreRestCallsWithTheServersErrors) {
  ApiTestBed bed;
  auto client = Client(bed.Url());
  RemoteStore remote(*client, store::BuiltinResources(), {.informed = {{"", "pods"}}});
  remote.Start();
  std::jthread never;
  ASSERT_TRUE(remote.WaitForCacheSync(never.get_stop_token()));
  const store::ResourceType& pods = *remote.FindResource("", "pods");
  auto created = remote.Create(pods, "default", Doc(PodJson("w")));
  ASSERT_TRUE(created.has_value()) << created.error().message;
  const std::string uid = (*created)->uid;
  EXPECT_FALSE(uid.empty());
  auto again = remote.Create(pods, "default", Doc(PodJson("w")));
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().reason, store::Error::Reason::kAlreadyExists);

  // A bind with the wrong uid is a conflict; with the right one it binds; a second bind conflicts.
  auto wrong = remote.Bind("default", "w", "00000000-0000-0000-0000-000000000000", "node-1");
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().reason, store::Error::Reason::kConflict);
  ASSERT_TRUE(remote.Bind("default", "w", uid, "node-1").has_value());
  auto second = remote.Bind("default", "w", uid, "node-2");
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().reason, store::Error::Reason::kConflict);
  auto server_pod = bed.store().Get(bed.Pods(), "default", "w");
  ASSERT_TRUE(server_pod.has_value());
  EXPECT_EQ((*server_pod)->View<api::Pod>()->spec.node_name, "node-1");

  // An invalid object: 422 with its causes.
  auto invalid =
      remote.Create(pods, "default", Doc(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{}})"));
  ASSERT_FALSE(invalid.has_value());
  EXPECT_EQ(invalid.error().reason, store::Error::Reason::kInvalid);
  EXPECT_FALSE(invalid.error().causes.empty());

  // Leases are not informed: reads are REST calls.
  const store::ResourceType& leases = *remote.FindResource("coordination.k8s.io", "leases");
  auto missing = remote.Get(leases, "kube-system", "kube-scheduler");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().reason, store::Error::Reason::kNotFound);
}

TEST(RemoteStoreTest, StoreInformerSubscribesWhileTheReflectorsWrite) {
  // Subscribe lists and replays while events keep arriving: every pod is added exactly once.
  ApiTestBed bed;
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(bed.store().Create(bed.Pods(), "default", Doc(PodJson(fmt::format("p-{}", i)))));
  }
  auto client = Client(bed.Url());
  RemoteStore remote(*client, store::BuiltinResources(), {.informed = {{"", "pods"}, {"", "nodes"}}});
  remote.Start();
  std::jthread never;
  ASSERT_TRUE(remote.WaitForCacheSync(never.get_stop_token()));
  struct Handler final : cluster::EventHandler {
    std::mutex mu;
    std::map<std::string, int> adds;
    void OnNodeAdd(std::shared_ptr<const api::Node>) override {}
    void OnNodeUpdate(std::shared_ptr<const api::Node>, std::shared_ptr<const api::Node>) override {}
    void OnNodeDelete(std::shared_ptr<const api::Node>) override {}
    void OnPodAdd(std::shared_ptr<const api::Pod> pod) override {
      std::lock_guard lock(mu);
      ++adds[pod->metadata.name];
    }
    void OnPodUpdate(std::shared_ptr<const api::Pod>, std::shared_ptr<const api::Pod>) override {}
    void OnPodDelete(std::shared_ptr<const api::Pod>) override {}
  } handler;
  std::jthread writer([&] {
    for (int i = 50; i < 150; ++i) {
      (void)bed.store().Create(bed.Pods(), "default", Doc(PodJson(fmt::format("p-{}", i))));
    }
  });
  cluster::StoreInformer informer(remote);
  informer.Subscribe(&handler);
  writer.join();
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard lock(handler.mu);
    return handler.adds.size() == 150;
  }));
  std::lock_guard lock(handler.mu);
  for (const auto& [name, count] : handler.adds) EXPECT_EQ(count, 1) << name;
}

}  // namespace
}  // namespace kubesched::client

namespace kubesched::client {
namespace {

// The scheduler of `kubesched run` over a remote store: StoreClient, the default profile,
// StoreInformer subscribed.
struct SchedulerOver {
  SchedulerOver(RemoteStore& remote, bool async_binding) : client(remote, clock), informer(remote) {
    plugins::RegisterInTreePlugins(registry);
    scheduler::SchedulerOptions options;
    options.config = config::DefaultConfiguration(registry);
    options.async_binding = async_binding;
    auto created = scheduler::Scheduler::Create(options, client, clock, registry);
    EXPECT_TRUE(created.has_value()) << created.error();
    if (!created) return;
    sched = std::move(*created);
    informer.Subscribe(sched.get());
  }
  util::SystemClock clock;
  cluster::StoreClient client;
  framework::Registry registry;
  std::unique_ptr<scheduler::Scheduler> sched;
  cluster::StoreInformer informer;  // destroyed first: no event reaches a destroyed scheduler
};

// A bind the API refuses with 409 because someone else bound the pod first: the scheduler forgets
// its assumed pod (never retries it blindly), and the pod ends up accounted once, on the node
// the API server has.
TEST(RemoteStoreSchedulingTest, ABindThatConflictsIsForgottenNotRetried) {
  ApiTestBed bed;
  ASSERT_TRUE(bed.store().Create(*bed.store().FindResource("", "nodes"), "",
                                 Doc(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-1"},)"
                                     R"("status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}})")));
  ASSERT_TRUE(bed.store().Create(*bed.store().FindResource("", "nodes"), "",
                                 Doc(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-2"},)"
                                     R"("status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}})")));
  ASSERT_TRUE(bed.store().Create(bed.Pods(), "default", Doc(PodJson("contested"))));
  auto client = Client(bed.Url());
  RemoteStore remote(*client, store::SchedulerResources(),
                     {.informed = SchedulerInformedResources(), .optional = SchedulerOptionalResources()});
  remote.Start();
  std::jthread never;
  ASSERT_TRUE(remote.WaitForCacheSync(never.get_stop_token()));

  SchedulerOver harness(remote, /*async_binding=*/false);  // the binding cycle runs when the test says
  ASSERT_TRUE(harness.sched != nullptr);
  scheduler::Scheduler& sched = *harness.sched;

  ASSERT_TRUE(Eventually([&] { return sched.queue().NumActive() == 1; }));
  ASSERT_TRUE(sched.ScheduleOne());  // assumed on one node; the bind is queued
  auto pod = bed.store().Get(bed.Pods(), "default", "contested");
  ASSERT_TRUE(pod.has_value());
  const std::string uid = (*pod)->uid;
  ASSERT_EQ(sched.cache().AssumedPodCount(), 1u);
  const std::string assumed_node = sched.cache().GetPod(uid)->pod().spec.node_name;
  const std::string other = assumed_node == "node-1" ? "node-2" : "node-1";
  ASSERT_TRUE(bed.store().Bind("default", "contested", uid, other));  // another scheduler wins

  sched.RunPendingBindings();  // the bind gets 409 Conflict
  EXPECT_EQ(sched.cache().AssumedPodCount(), 0u);
  // The watch brings the pod as bound elsewhere: accounted once, on that node, and not queued.
  ASSERT_TRUE(Eventually([&] {
    auto cached = sched.cache().GetPod(uid);
    return cached != nullptr && cached->pod().spec.node_name == other;
  }));
  EXPECT_EQ(sched.cache().PodCount(), 1u);
  EXPECT_EQ(sched.queue().NumActive() + sched.queue().NumUnschedulable(), 0u);
  auto final_pod = bed.store().Get(bed.Pods(), "default", "contested");
  EXPECT_EQ((*final_pod)->View<api::Pod>()->spec.node_name, other);
}

}  // namespace
}  // namespace kubesched::client

namespace kubesched::client {
namespace {

// The watch of a scheduler is closed and its version compacted mid-burst, so it relists (410
// Gone): every pod is still bound exactly once, and the scheduler's cache agrees with the server.
// The compaction is injected when the 32nd pod is created (before the watch sees it), so the relist
// happens however fast or slow the machine is; the small history and queue add more of them.
TEST(RemoteStoreSchedulingTest, ARelistMidBurstLosesNoPodAndBindsNoneTwice) {
  store::StoreOptions options{.watch_history = 5, .watcher_capacity = 4};
  options.compact_before = [](const store::WatchEvent& change) {
    return change.type == store::EventType::kAdded && change.object->name == "p-31";
  };
  ApiTestBed bed(options);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(
        bed.store().Create(*bed.store().FindResource("", "nodes"), "",
                           Doc(fmt::format(R"({{"apiVersion":"v1","kind":"Node","metadata":{{"name":"node-{}"}},)"
                                           R"("status":{{"allocatable":{{"cpu":"4","memory":"8Gi","pods":"110"}}}}}})",
                                           i))));
  }
  auto client = Client(bed.Url());
  RemoteStoreOptions store_options{.informed = SchedulerInformedResources(), .optional = SchedulerOptionalResources()};
  store_options.reflector.initial_backoff = 10ms;
  RemoteStore remote(*client, store::SchedulerResources(), store_options);
  remote.Start();
  std::jthread never;
  ASSERT_TRUE(remote.WaitForCacheSync(never.get_stop_token()));
  SchedulerOver harness(remote, /*async_binding=*/true);
  ASSERT_TRUE(harness.sched != nullptr);
  scheduler::Scheduler& sched = *harness.sched;
  std::stop_source stop;
  std::thread loop([&] { scheduler::RunOnRealTime(sched, harness.clock, stop.get_token()); });

  // 64 pods of 250m fill the four nodes exactly.
  for (int i = 0; i < 64; ++i) {
    ASSERT_TRUE(bed.store().Create(
        bed.Pods(), "default",
        Doc(fmt::format(
            R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p-{}","namespace":"default"}},)"
            R"("spec":{{"containers":[{{"name":"c","image":"x","resources":{{"requests":{{"cpu":"250m"}}}}}}]}}}})",
            i))));
  }
  auto bound_on_server = [&] {
    auto listed = bed.store().List(bed.Pods(), "", {});
    std::map<std::string, int> per_node;
    for (const auto& p : listed->items) {
      const std::string& node = p->View<api::Pod>()->spec.node_name;
      if (!node.empty()) ++per_node[node];
    }
    return per_node;
  };
  EXPECT_TRUE(Eventually(
      [&] {
        size_t n = 0;
        for (const auto& [node, count] : bound_on_server()) n += count;
        return n == 64;
      },
      30s));
  stop.request_stop();
  loop.join();
  EXPECT_GE(remote.Lists("", "pods"), 2) << "the injected compaction did not make the client relist";
  for (const auto& [node, count] : bound_on_server()) EXPECT_EQ(count, 16) << node;
  EXPECT_TRUE(Eventually([&] { return sched.cache().PodCount() == 64 && sched.cache().AssumedPodCount() == 0; }))
      << "cache: " << sched.cache().PodCount() << " pods, " << sched.cache().AssumedPodCount() << " assumed; mirror "
      << remote.List(bed.Pods(), "", {})->items.size() << " pods";
}

}  // namespace
}  // namespace kubesched::client
