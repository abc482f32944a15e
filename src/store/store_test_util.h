#pragma once
// Helpers for the store's tests: a store over the built-in resources on a virtual clock, JSON
// bodies from text, and field reads from stored objects.

#include <charconv>
#include <memory>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "api/json.h"
#include "store/resources.h"
#include "store/store.h"
#include "util/clock.h"

namespace kubesched::store::testing {

//! 2024-05-01T12:00:00Z: tests compare timestamps against it.
inline constexpr int64_t kStartNs = 1714564800LL * 1'000'000'000;

inline api::json::Document Doc(std::string_view text) {
  api::json::Document d;
  auto r = api::json::Parse(text, d);
  EXPECT_TRUE(r.has_value()) << text;
  return d;
}

//! The value at a dotted path of an object's JSON ("spec.nodeName", "status.conditions.0.type"),
//! encoded (strings without quotes); "<none>" when absent.
inline std::string Field(const Object& object, std::string_view path) {
  api::json::Document doc;
  if (!api::json::Parse(object.json, doc)) return "<unparsable>";
  const api::json::Value* v = &doc;
  while (!path.empty()) {
    size_t dot = path.find('.');
    std::string_view part = path.substr(0, dot);
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
    if (v->IsArray()) {
      size_t i = 0;
      std::from_chars(part.data(), part.data() + part.size(), i);
      if (i >= v->Size()) return "<none>";
      v = &(*v)[static_cast<rapidjson::SizeType>(i)];
    } else {
      v = api::json::Find(*v, part);
      if (v == nullptr) return "<none>";
    }
  }
  return v->IsString() ? std::string(api::json::View(*v)) : api::json::Encode(*v);
}

inline std::string PodJson(std::string_view name, std::string_view extra_spec = "", std::string_view labels = "{}") {
  return "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" + std::string(name) +
         "\",\"labels\":" + std::string(labels) +
         "},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx:1\"}]" + std::string(extra_spec) + "}}";
}

inline std::string NodeJson(std::string_view name, std::string_view ip = "10.0.0.1") {
  return "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" + std::string(name) +
         "\"},\"status\":{\"capacity\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"},\"addresses\":[{\"type\":"
         "\"InternalIP\",\"address\":\"" +
         std::string(ip) + "\"}]}}";
}

struct StoreFixture : ::testing::Test {
  explicit StoreFixture(StoreOptions options = DefaultOptions())
      : clock(kStartNs), store(NewBuiltinStore(clock, options)) {}
  static StoreOptions DefaultOptions() {
    StoreOptions o;
    o.seed = 7;
    o.future_resource_version_wait = std::chrono::milliseconds(20);
    o.bookmark_interval = std::chrono::milliseconds(30);
    return o;
  }
  const ResourceType& R(std::string_view group, std::string_view resource) const {
    const ResourceType* t = store->FindResource(group, resource);
    EXPECT_NE(t, nullptr) << resource;
    return *t;
  }
  const ResourceType& Pods() const { return R("", "pods"); }
  const ResourceType& Nodes() const { return R("", "nodes"); }
  ObjectPtr MustCreate(const ResourceType& type, std::string_view ns, std::string_view text) {
    auto r = store->Create(type, ns, Doc(text));
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
    return r ? *r : nullptr;
  }
  ObjectPtr MustGet(const ResourceType& type, std::string_view ns, std::string_view name) {
    auto r = store->Get(type, ns, name);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
    return r ? *r : nullptr;
  }

  util::VirtualClock clock;
  std::unique_ptr<Store> store;
};

}  // namespace kubesched::store::testing
