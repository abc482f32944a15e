#include "framework/status.h"

#include <utility>

#include <gtest/gtest.h>

namespace kubesched::framework {
namespace {

TEST(StatusTest, CopiesShareTheReasonsAndAppendingChangesOnlyItsOwnStatus) {
  Status a(Code::kUnschedulable, "first");
  Status b = a;
  EXPECT_EQ(&a.reasons(), &b.reasons());  // shared, not copied
  b.AppendReason("second");
  EXPECT_EQ(a.reasons(), (std::vector<std::string>{"first"}));
  EXPECT_EQ(b.reasons(), (std::vector<std::string>{"first", "second"}));
  EXPECT_EQ(b.Message(), "first, second");
  EXPECT_NE(a, b);
  a = b;
  EXPECT_EQ(a, b);
}

TEST(StatusTest, StaticReasonsAreReferredToAndCopiedOnAppend) {
  static const StaticReasons kReasons{"Insufficient cpu"};
  Status s(Code::kUnschedulable, kReasons);
  EXPECT_EQ(&s.reasons(), &kReasons.reasons());
  Status t = s;
  t.AppendReason("Insufficient memory");
  EXPECT_EQ(kReasons.reasons(), (std::vector<std::string>{"Insufficient cpu"}));
  EXPECT_EQ(t.Message(), "Insufficient cpu, Insufficient memory");
}

TEST(StatusTest, AMovedFromStatusHasNoReasonsAndOutlivesTheOneItMovedTo) {
  Status a(Code::kUnschedulableAndUnresolvable, "gone");
  a.WithPlugin("NodeAffinity");
  {
    Status b = std::move(a);
    EXPECT_EQ(b.Message(), "gone");
    EXPECT_EQ(b.plugin(), "NodeAffinity");
    EXPECT_EQ(b.code(), Code::kUnschedulableAndUnresolvable);
  }
  EXPECT_TRUE(a.reasons().empty());  // NOLINT(bugprone-use-after-move): the state after a move is specified
  Status c(Code::kError, "x");
  Status d;
  d = std::move(c);
  EXPECT_EQ(d.Message(), "x");
  EXPECT_TRUE(c.reasons().empty());  // NOLINT(bugprone-use-after-move)
  d = std::move(d);                  // self-move keeps the status
  EXPECT_EQ(d.Message(), "x");
}

TEST(StatusTest, DefaultIsSuccessWithoutReasons) {
  Status s;
  EXPECT_TRUE(s.IsSuccess());
  EXPECT_TRUE(s.reasons().empty());
  EXPECT_EQ(s.Message(), "");
  EXPECT_EQ(Status(Code::kUnschedulable, std::vector<std::string>{}).reasons().size(), 0u);
}

}  // namespace
}  // namespace kubesched::framework
