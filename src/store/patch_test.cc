#include "store/patch.h"

#include <gtest/gtest.h>

#include "store/store_test_util.h"

namespace kubesched::store {
namespace {

using testing::Doc;

struct Case {
  std::string name;
  PatchType type;
  std::string original;
  std::string patch;
  std::string want;  // compact JSON; empty when the patch must fail
  Error::Reason reason = Error::Reason::kBadRequest;
};

TEST(PatchTest, Table) {
  const std::vector<Case> cases = {
      // RFC 7386's examples.
      {"merge replace", PatchType::kMergePatch, R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
      {"merge add", PatchType::kMergePatch, R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
      {"merge remove", PatchType::kMergePatch, R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})"},
      {"merge list replaced", PatchType::kMergePatch, R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
      {"merge nested", PatchType::kMergePatch, R"({"e":null})", R"({"a":{"bb":{"ccc":null}}})",
       R"({"e":null,"a":{"bb":{}}})"},
      {"merge not an object", PatchType::kMergePatch, R"({})", R"([1])", ""},
      // RFC 6902.
      {"json add", PatchType::kJsonPatch, R"({"foo":"bar"})", R"([{"op":"add","path":"/baz","value":"qux"}])",
       R"({"foo":"bar","baz":"qux"})"},
      {"json insert into array", PatchType::kJsonPatch, R"({"foo":["bar","baz"]})",
       R"([{"op":"add","path":"/foo/1","value":"qux"}])", R"({"foo":["bar","qux","baz"]})"},
      {"json append", PatchType::kJsonPatch, R"({"foo":[1]})", R"([{"op":"add","path":"/foo/-","value":2}])",
       R"({"foo":[1,2]})"},
      {"json remove", PatchType::kJsonPatch, R"({"foo":[1,2,3]})", R"([{"op":"remove","path":"/foo/1"}])",
       R"({"foo":[1,3]})"},
      {"json replace", PatchType::kJsonPatch, R"({"a":{"b":1}})", R"([{"op":"replace","path":"/a/b","value":2}])",
       R"({"a":{"b":2}})"},
      {"json move", PatchType::kJsonPatch, R"({"a":{"b":1},"c":{}})", R"([{"op":"move","from":"/a/b","path":"/c/d"}])",
       R"({"a":{},"c":{"d":1}})"},
      {"json copy", PatchType::kJsonPatch, R"({"a":1})", R"([{"op":"copy","from":"/a","path":"/b"}])",
       R"({"a":1,"b":1})"},
      {"json escaped pointer", PatchType::kJsonPatch, R"({"m":{"a/b":1,"c~d":2}})",
       R"([{"op":"remove","path":"/m/a~1b"},{"op":"replace","path":"/m/c~0d","value":3}])", R"({"m":{"c~d":3}})"},
      {"json test passes", PatchType::kJsonPatch, R"({"a":1})",
       R"([{"op":"test","path":"/a","value":1},{"op":"add","path":"/b","value":2}])", R"({"a":1,"b":2})"},
      {"json test fails", PatchType::kJsonPatch, R"({"a":1})", R"([{"op":"test","path":"/a","value":2}])", "",
       Error::Reason::kInvalid},
      {"json missing path", PatchType::kJsonPatch, R"({"a":1})", R"([{"op":"remove","path":"/b"}])", "",
       Error::Reason::kInvalid},
      {"json unknown op", PatchType::kJsonPatch, R"({})", R"([{"op":"frob","path":"/a"}])", ""},
      // Strategic merge patch.
      {"smp containers by name", PatchType::kStrategicMergePatch,
       R"({"spec":{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:1"}]}})",
       R"({"spec":{"containers":[{"name":"b","image":"b:2"}]}})",
       R"({"spec":{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:2"}]}})"},
      {"smp new element appended", PatchType::kStrategicMergePatch, R"({"spec":{"containers":[{"name":"a"}]}})",
       R"({"spec":{"containers":[{"name":"c","image":"c"}]}})",
       R"({"spec":{"containers":[{"name":"a"},{"name":"c","image":"c"}]}})"},
      {"smp delete element", PatchType::kStrategicMergePatch, R"({"spec":{"containers":[{"name":"a"},{"name":"b"}]}})",
       R"({"spec":{"containers":[{"name":"a","$patch":"delete"}]}})", R"({"spec":{"containers":[{"name":"b"}]}})"},
      {"smp replace list", PatchType::kStrategicMergePatch, R"({"spec":{"containers":[{"name":"a"},{"name":"b"}]}})",
       R"({"spec":{"containers":[{"name":"z"},{"$patch":"replace"}]}})", R"({"spec":{"containers":[{"name":"z"}]}})"},
      {"smp ports by containerPort", PatchType::kStrategicMergePatch,
       R"({"ports":[{"containerPort":80,"name":"http"},{"containerPort":443}]})",
       R"({"ports":[{"containerPort":80,"name":"web"}]})",
       R"({"ports":[{"containerPort":80,"name":"web"},{"containerPort":443}]})"},
      {"smp list without key replaced", PatchType::kStrategicMergePatch, R"({"spec":{"tolerations":[{"key":"a"}]}})",
       R"({"spec":{"tolerations":[{"key":"b"}]}})", R"({"spec":{"tolerations":[{"key":"b"}]}})"},
      {"smp finalizers union", PatchType::kStrategicMergePatch, R"({"metadata":{"finalizers":["a"]}})",
       R"({"metadata":{"finalizers":["b","a"]}})", R"({"metadata":{"finalizers":["a","b"]}})"},
      {"smp delete from primitive list", PatchType::kStrategicMergePatch, R"({"metadata":{"finalizers":["a","b"]}})",
       R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["a"]}})", R"({"metadata":{"finalizers":["b"]}})"},
      {"smp map replace", PatchType::kStrategicMergePatch, R"({"spec":{"selector":{"a":"1","b":"2"}}})",
       R"({"spec":{"selector":{"$patch":"replace","c":"3"}}})", R"({"spec":{"selector":{"c":"3"}}})"},
      {"smp retainKeys", PatchType::kStrategicMergePatch,
       R"({"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}}})",
       R"({"strategy":{"$retainKeys":["type"],"type":"Recreate"}})", R"({"strategy":{"type":"Recreate"}})"},
      {"smp null deletes", PatchType::kStrategicMergePatch, R"({"a":1,"b":2})", R"({"a":null})", R"({"b":2})"},
      {"smp missing merge key", PatchType::kStrategicMergePatch, R"({"spec":{"containers":[]}})",
       R"({"spec":{"containers":[{"image":"x"}]}})", ""},
      // kubectl apply's client-side patch: a changed env var, a new one, the order given.
      {"smp kubectl apply", PatchType::kStrategicMergePatch,
       R"({"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}},"spec":{"containers":[{"name":"app","image":"app:1","env":[{"name":"A","value":"1"},{"name":"B","value":"1"}]},{"name":"side","image":"s:1"}]}})",
       R"({"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"new\":1}"}},"spec":{"$setElementOrder/containers":[{"name":"side"},{"name":"app"}],"containers":[{"$setElementOrder/env":[{"name":"C"},{"name":"A"},{"name":"B"}],"env":[{"name":"A","value":"2"},{"name":"C","value":"3"}],"image":"app:2","name":"app"}]}})",
       R"({"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"new\":1}"}},"spec":{"containers":[{"name":"side","image":"s:1"},{"name":"app","image":"app:2","env":[{"name":"C","value":"3"},{"name":"A","value":"2"},{"name":"B","value":"1"}]}]}})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    api::json::Document doc = Doc(c.original);
    auto r = ApplyPatch(c.type, doc, c.patch);
    if (c.want.empty()) {
      ASSERT_FALSE(r.has_value());
      EXPECT_EQ(r.error().reason, c.reason) << r.error().message;
      continue;
    }
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(api::json::Encode(doc), c.want);
  }
}

TEST(PatchTest, ContentTypes) {
  EXPECT_EQ(PatchTypeFromContentType("application/json-patch+json"), PatchType::kJsonPatch);
  EXPECT_EQ(PatchTypeFromContentType("application/merge-patch+json; charset=utf-8"), PatchType::kMergePatch);
  EXPECT_EQ(PatchTypeFromContentType("application/strategic-merge-patch+json"), PatchType::kStrategicMergePatch);
  EXPECT_EQ(PatchTypeFromContentType("application/apply-patch+yaml"), std::nullopt);
}

class StorePatchTest : public testing::StoreFixture {};

TEST_F(StorePatchTest, PatchThroughTheStore) {
  MustCreate(Pods(), "default", testing::PodJson("p"));
  auto r = store->Patch(Pods(), "default", "p", PatchType::kStrategicMergePatch,
                        R"({"spec":{"containers":[{"name":"c","image":"nginx:2"}]}})", "");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(testing::Field(**r, "spec.containers.0.image"), "nginx:2");
  EXPECT_EQ(testing::Field(**r, "spec.containers.0.name"), "c");
  // A stale resourceVersion in a patch is a conflict.
  r = store->Patch(Pods(), "default", "p", PatchType::kMergePatch, R"({"metadata":{"resourceVersion":"1"}})", "");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().reason, Error::Reason::kConflict);
  r = store->Patch(Pods(), "default", "nope", PatchType::kMergePatch, "{}", "");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().reason, Error::Reason::kNotFound);
  // Status through the status subresource only.
  r = store->Patch(Pods(), "default", "p", PatchType::kMergePatch, R"({"status":{"phase":"Running"}})", "");
  EXPECT_EQ(testing::Field(**r, "status.phase"), "Pending");
  r = store->Patch(Pods(), "default", "p", PatchType::kMergePatch, R"({"status":{"phase":"Running"}})", "status");
  EXPECT_EQ(testing::Field(**r, "status.phase"), "Running");
}

}  // namespace
}  // namespace kubesched::store
