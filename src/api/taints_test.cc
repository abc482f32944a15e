#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "api/taints.h"

namespace kubesched::api {
namespace {

using api::TaintEffect;
using api::TolerationOperator;

api::Toleration Tol(std::string key, TolerationOperator op, std::string value, std::optional<TaintEffect> effect) {
  api::Toleration t;
  t.key = std::move(key);
  t.op = op;
  t.value = std::move(value);
  t.effect = effect;
  return t;
}

// Toleration.ToleratesTaint cases (k8s.io/api core/v1 toleration_test.go).
TEST(ToleratesTaintTest, Table) {
  struct Case {
    std::string name;
    api::Toleration toleration;
    api::Taint taint;
    bool want;
  };
  const api::Taint foo_bar{"foo", "bar", TaintEffect::kNoSchedule};
  const std::vector<Case> cases = {
      {"empty key with Exists matches every taint", Tol("", TolerationOperator::kExists, "", std::nullopt), foo_bar,
       true},
      {"empty key with Exists and a different effect",
       Tol("", TolerationOperator::kExists, "", TaintEffect::kNoExecute), foo_bar, false},
      {"same key and value, Equal, no effect", Tol("foo", TolerationOperator::kEqual, "bar", std::nullopt), foo_bar,
       true},
      {"same key, different value, Equal", Tol("foo", TolerationOperator::kEqual, "baz", std::nullopt), foo_bar, false},
      {"same key, Exists ignores the value", Tol("foo", TolerationOperator::kExists, "", TaintEffect::kNoSchedule),
       foo_bar, true},
      {"different key", Tol("other", TolerationOperator::kExists, "", std::nullopt), foo_bar, false},
      {"effect must match when set", Tol("foo", TolerationOperator::kEqual, "bar", TaintEffect::kPreferNoSchedule),
       foo_bar, false},
      {"empty effect matches NoExecute",
       Tol("foo", TolerationOperator::kEqual, "bar", std::nullopt),
       {"foo", "bar", TaintEffect::kNoExecute},
       true},
      {"Equal with empty values",
       Tol("foo", TolerationOperator::kEqual, "", std::nullopt),
       {"foo", "", TaintEffect::kNoSchedule},
       true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ToleratesTaint(c.toleration, c.taint), c.want);
  }
}

TEST(FindMatchingUntoleratedTaintTest, Table) {
  struct Case {
    std::string name;
    std::vector<api::Taint> taints;
    std::vector<api::Toleration> tolerations;
    TaintFilter filter;
    std::optional<std::string> want_key;  // nullopt: all tolerated
  };
  const std::vector<Case> cases = {
      {"no taints", {}, {}, nullptr, std::nullopt},
      {"one untolerated taint", {{"a", "1", TaintEffect::kNoSchedule}}, {}, nullptr, "a"},
      {"first untolerated is returned",
       {{"a", "1", TaintEffect::kNoSchedule}, {"b", "2", TaintEffect::kNoSchedule}},
       {Tol("a", TolerationOperator::kExists, "", std::nullopt)},
       nullptr,
       "b"},
      {"filter skips PreferNoSchedule",
       {{"a", "1", TaintEffect::kPreferNoSchedule}},
       {},
       DoNotScheduleTaintsFilter,
       std::nullopt},
      {"filter keeps NoExecute", {{"a", "1", TaintEffect::kNoExecute}}, {}, DoNotScheduleTaintsFilter, "a"},
      {"all tolerated",
       {{"a", "1", TaintEffect::kNoSchedule}, {"b", "2", TaintEffect::kNoExecute}},
       {Tol("", TolerationOperator::kExists, "", std::nullopt)},
       nullptr,
       std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const api::Taint* got = FindMatchingUntoleratedTaint(c.taints, c.tolerations, c.filter);
    if (!c.want_key) {
      EXPECT_EQ(got, nullptr);
    } else {
      ASSERT_NE(got, nullptr);
      EXPECT_EQ(got->key, *c.want_key);
    }
  }
}

}  // namespace
}  // namespace kubesched::api
