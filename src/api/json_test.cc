#include "api/json.h"

#include <gtest/gtest.h>

#include <string>

namespace kubesched::api::json {
namespace {

TEST(Json, RoundTripsCompactly) {
  Document doc;
  ASSERT_TRUE(Parse(R"( {"a": [1, -2, 3.5, "x\u00e9", true, null], "b": {"c": 9223372036854775807}} )", doc));
  EXPECT_EQ(Encode(doc), R"({"a":[1,-2,3.5,"xé",true,null],"b":{"c":9223372036854775807}})");
}

TEST(Json, ReportsLineAndColumn) {
  Document doc;
  auto r = Parse("{\n  \"a\": 1,\n  \"b\" 2\n}", doc);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().line, 3);
  EXPECT_EQ(r.error().column, 7);
  EXPECT_TRUE(doc.IsNull());
  EXPECT_NE(r.error().ToString().find("line 3, column 7"), std::string::npos) << r.error().ToString();
}

TEST(Json, RejectsTrailingValuesAndEmptyInput) {
  Document doc;
  EXPECT_FALSE(Parse("{} {}", doc));
  EXPECT_FALSE(Parse("", doc));
  EXPECT_FALSE(Parse("   ", doc));
  EXPECT_TRUE(Parse("{}\n\n", doc));
}

TEST(Json, RejectsDeepNestingWithoutRecursing) {
  std::string deep(200000, '[');
  deep += std::string(200000, ']');
  Document doc;
  auto r = Parse(deep, doc);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("nesting deeper"), std::string::npos);
  std::string ok(kMaxDepth, '[');
  ok += std::string(kMaxDepth, ']');
  EXPECT_TRUE(Parse(ok, doc));
}

TEST(Json, EditsObjects) {
  Document doc;
  ASSERT_TRUE(Parse(R"({"metadata":{"name":"p"}})", doc));
  auto& alloc = doc.GetAllocator();
  Value& meta = Child(doc, "metadata", alloc);
  Set(meta, "resourceVersion", MakeString("7", alloc), alloc);
  Set(meta, "name", MakeString("q", alloc), alloc);
  Child(doc, "status", alloc);
  EXPECT_EQ(Encode(doc), R"({"metadata":{"name":"q","resourceVersion":"7"},"status":{}})");
  EXPECT_EQ(GetString(*Find(doc, "metadata"), "name"), "q");
  EXPECT_TRUE(Remove(doc, "status"));
  EXPECT_FALSE(Remove(doc, "status"));
  EXPECT_EQ(Find(doc, "status"), nullptr);
  EXPECT_EQ(EncodePretty(doc), "{\n  \"metadata\": {\n    \"name\": \"q\",\n    \"resourceVersion\": \"7\"\n  }\n}");
}

}  // namespace
}  // namespace kubesched::api::json
