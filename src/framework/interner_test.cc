#include "framework/interner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "framework/pod_info.h"
#include "testing/builders.h"

namespace kubesched::framework {
namespace {

TEST(StringInterner, EqualValuesShareAnId) {
  StringInterner interner;
  InternedId a = interner.Intern("x");
  InternedId b = interner.Intern("x");
  InternedId c = interner.Intern("y");
  EXPECT_EQ(a.value(), b.value());
  EXPECT_NE(a.value(), c.value());
  EXPECT_EQ(interner.live(), 2u);
  EXPECT_EQ(interner.size(), 2u);
}

TEST(StringInterner, DefaultIdIsNotInterned) {
  InternedId id;
  EXPECT_EQ(id.value(), kNotInterned);
  InternedId copy = id;
  EXPECT_EQ(copy.value(), kNotInterned);
}

TEST(StringInterner, IdIsFreedWithItsLastHolderAndRecycled) {
  StringInterner interner;
  InternedId a = interner.Intern("a");
  const uint32_t id_a = a.value();
  {
    InternedId copy = a;  // a second holder
    InternedId moved = std::move(copy);
    EXPECT_EQ(moved.value(), id_a);
    EXPECT_EQ(copy.value(), kNotInterned);  // NOLINT: moved-from is documented as empty
  }
  EXPECT_EQ(interner.live(), 1u);  // a still holds it
  a.Reset();
  EXPECT_EQ(interner.live(), 0u);
  // The freed id goes to the next new value; the table does not grow.
  InternedId b = interner.Intern("b");
  EXPECT_EQ(b.value(), id_a);
  EXPECT_EQ(interner.size(), 1u);
  // "a" comes back as a new value with a new id.
  InternedId a2 = interner.Intern("a");
  EXPECT_NE(a2.value(), b.value());
  EXPECT_EQ(interner.size(), 2u);
}

TEST(StringInterner, AssignmentReleasesTheOldId) {
  StringInterner interner;
  InternedId a = interner.Intern("a");
  InternedId b = interner.Intern("b");
  a = b;  // "a" has no holder left
  EXPECT_EQ(a.value(), b.value());
  EXPECT_EQ(interner.live(), 1u);
  const InternedId& alias = a;
  a = alias;  // self-assignment keeps the reference
  EXPECT_EQ(interner.live(), 1u);
  b = InternedId();
  EXPECT_EQ(interner.live(), 1u);  // a still holds "b"
  a = InternedId();
  EXPECT_EQ(interner.live(), 0u);
}

// Unique values coming and going keep the table as large as the values alive at once.
TEST(StringInterner, UniqueValuesDoNotGrowTheTable) {
  StringInterner interner;
  for (int round = 0; round < 100; ++round) {
    std::vector<InternedId> ids;
    for (int i = 0; i < 10; ++i) ids.push_back(interner.Intern("pod-" + std::to_string(round * 10 + i)));
  }
  EXPECT_EQ(interner.live(), 0u);
  EXPECT_LE(interner.size(), 10u);
}

TEST(StringInterner, ConcurrentInternAndRelease) {
  StringInterner interner;
  InternedId shared = interner.Intern("shared");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        InternedId s = interner.Intern("shared");
        InternedId u = interner.Intern("u-" + std::to_string(t) + "-" + std::to_string(i % 7));
        InternedId copy = s;
        EXPECT_EQ(copy.value(), shared.value());
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(interner.live(), 1u);
}

TEST(IdMemo, ComputesOncePerIdAndAlwaysBeyondItsSize) {
  IdMemo memo(4);
  int calls = 0;
  auto compute = [&] {
    ++calls;
    return 5u;
  };
  EXPECT_EQ(memo.Get(2, compute), 5u);
  EXPECT_EQ(memo.Get(2, compute), 5u);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(memo.Get(0, [] { return 0u; }), 0u);  // a zero result is remembered too
  EXPECT_EQ(memo.Get(0, [] { return 7u; }), 0u);
  EXPECT_EQ(memo.Get(4, compute), 5u);
  EXPECT_EQ(memo.Get(kNotInterned, compute), 5u);
  EXPECT_EQ(calls, 3);
}

// PodInfos hold their ids: pods from one template share them, and they are freed with the last
// PodInfo (copies made by WithPod included).
TEST(StringInterner, PodInfosHoldTheirIds) {
  StringInterner& sets = StringInterner::PodLabelSets();
  const std::string ns = "interner-test-ns";
  auto make = [&](std::string name) {
    auto pod = testing::MakePod().Name(std::move(name)).Namespace(ns).Labels({{"app", "interner-test"}}).Obj();
    api::PodAffinityTerm term;
    term.label_selector = api::LabelSelector{};
    term.label_selector->match_labels.Set("app", "interner-test");
    term.topology_key = "interner-test-key";
    pod->spec.affinity.emplace();
    pod->spec.affinity->pod_anti_affinity.emplace();
    pod->spec.affinity->pod_anti_affinity->required.push_back(term);
    return PodInfo::Create(std::move(pod));
  };
  const size_t live_sets = sets.live();
  const size_t live_terms = StringInterner::AffinityTerms().live();
  {
    PodInfoPtr a = make("a");
    PodInfoPtr b = make("b");
    EXPECT_EQ(a->label_set_id.value(), b->label_set_id.value());
    EXPECT_EQ(a->required_anti_affinity_terms[0].id.value(), b->required_anti_affinity_terms[0].id.value());
    EXPECT_EQ(sets.live(), live_sets + 1);
    EXPECT_EQ(StringInterner::AffinityTerms().live(), live_terms + 1);
    PodInfoPtr c = a->WithPod(a->pod_ptr());
    a.reset();
    b.reset();
    EXPECT_EQ(sets.live(), live_sets + 1);  // c holds them
  }
  EXPECT_EQ(sets.live(), live_sets);
  EXPECT_EQ(StringInterner::AffinityTerms().live(), live_terms);
}

}  // namespace
}  // namespace kubesched::framework
