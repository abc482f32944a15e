#include "client/leader_elector.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "api/json.h"
#include "store/meta.h"
#include "store/resources.h"
#include "util/clock.h"

namespace kubesched::client {
namespace {

using namespace std::chrono_literals;

LeaderElectionOptions Fast(const std::string& identity, bool release = true) {
  LeaderElectionOptions o;
  o.identity = identity;
  o.lease_duration_ns = 1'000'000'000;  // the Lease holds whole seconds
  o.renew_deadline_ns = 600'000'000;
  o.retry_period_ns = 50'000'000;
  o.release_on_cancel = release;
  return o;
}

template <typename F>
bool Eventually(F f, std::chrono::milliseconds timeout = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (f()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return f();
}

std::string Holder(store::Store& store) {
  auto lease = store.Get(*store.FindResource("coordination.k8s.io", "leases"), "kube-system", "kube-scheduler");
  if (!lease) return "<none>";
  api::json::Document doc = store::ParseObject(**lease);
  const api::json::Value* spec = api::json::Find(doc, "spec");
  return spec != nullptr ? std::string(api::json::GetString(*spec, "holderIdentity")) : "";
}

// A candidate campaigning on its own thread.
struct Candidate {
  Candidate(store::Store& store, const util::Clock& clock, LeaderElectionOptions options)
      : elector(store, clock, std::move(options)),
        thread([this](std::stop_token stop) { clean = elector.Run(stop, [this] { started = true; }); }) {}
  LeaderElector elector;
  std::atomic<bool> started{false};
  std::atomic<bool> clean{false};
  std::jthread thread;
};

TEST(LeaderElectorTest, OneLeadsAndAReleasedLeaseIsTakenAtOnce) {
  util::SystemClock clock;
  auto store = store::NewBuiltinStore(clock);
  auto a = std::make_unique<Candidate>(*store, clock, Fast("a"));
  ASSERT_TRUE(Eventually([&] { return a->started.load(); }));
  auto b = std::make_unique<Candidate>(*store, clock, Fast("b"));
  std::this_thread::sleep_for(300ms);  // several of b's retries, all within a's renewals
  EXPECT_FALSE(b->started.load());
  EXPECT_EQ(Holder(*store), "a");
  EXPECT_TRUE(a->elector.IsLeader());

  a->thread.request_stop();
  a->thread.join();
  EXPECT_TRUE(a->clean.load());
  EXPECT_FALSE(a->elector.IsLeader());
  ASSERT_TRUE(Eventually([&] { return b->started.load(); }));
  EXPECT_EQ(Holder(*store), "b");
}

TEST(LeaderElectorTest, AnUnreleasedLeaseIsTakenOnlyAfterItExpires) {
  util::SystemClock clock;
  auto store = store::NewBuiltinStore(clock);
  auto a = std::make_unique<Candidate>(*store, clock, Fast("a", /*release=*/false));
  ASSERT_TRUE(Eventually([&] { return a->started.load(); }));
  auto b = std::make_unique<Candidate>(*store, clock, Fast("b"));
  a->thread.request_stop();  // a stops renewing without releasing, as a killed leader
  a->thread.join();
  const auto stopped = std::chrono::steady_clock::now();
  ASSERT_TRUE(Eventually([&] { return b->started.load(); }));
  // b measured the expiry from when it saw a's last renewal.
  EXPECT_GE(std::chrono::steady_clock::now() - stopped, 300ms);
  EXPECT_EQ(Holder(*store), "b");
  auto lease = store->Get(*store->FindResource("coordination.k8s.io", "leases"), "kube-system", "kube-scheduler");
  api::json::Document doc = store::ParseObject(**lease);
  EXPECT_EQ(api::json::Find(*api::json::Find(doc, "spec"), "leaseTransitions")->GetInt64(), 1);
}

TEST(LeaderElectorTest, ALeaderThatCannotRenewStopsLeading) {
  util::SystemClock clock;
  auto store = store::NewBuiltinStore(clock);
  auto a = std::make_unique<Candidate>(*store, clock, Fast("a"));
  ASSERT_TRUE(Eventually([&] { return a->started.load(); }));
  // Someone else takes the Lease over behind a's back: a's renewals now fail (another holder,
  // not expired), and within its renew deadline it gives up.
  const store::ResourceType& leases = *store->FindResource("coordination.k8s.io", "leases");
  for (int i = 0; i < 20; ++i) {
    auto current = store->Get(leases, "kube-system", "kube-scheduler");
    ASSERT_TRUE(current.has_value());
    api::json::Document doc = store::ParseObject(**current);
    auto& al = doc.GetAllocator();
    api::json::Set(api::json::Child(doc, "spec", al), "holderIdentity", api::json::MakeString("intruder", al), al);
    if (store->Update(leases, "kube-system", "kube-scheduler", std::move(doc), {})) break;
  }
  ASSERT_TRUE(Eventually([&] { return !a->elector.IsLeader(); }));
  a->thread.join();
  EXPECT_FALSE(a->clean.load());
  EXPECT_EQ(Holder(*store), "intruder");
}

}  // namespace
}  // namespace kubesched::client
