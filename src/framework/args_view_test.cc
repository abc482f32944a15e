// framework::ArgsView, ArgsDocument and ArgsWriter: the plugin-facing JSON types.
#include "framework/args_view.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "framework/args_writer.h"

namespace kubesched::framework {
namespace {

ArgsDocument Parse(std::string_view json) {
  auto doc = ArgsDocument::Parse(json);
  EXPECT_TRUE(doc.has_value()) << doc.error();
  return doc ? std::move(*doc) : ArgsDocument();
}

TEST(ArgsView, TypesAndValues) {
  const ArgsDocument doc = Parse(R"({"n": null, "o": {}, "a": [1, 2], "s": "text", "t": true, "f": false,
                                     "i": -7, "u": 18446744073709551615, "d": 2.0, "big": 1e300})");
  const ArgsView v = doc.View();
  EXPECT_TRUE(v.IsObject());
  EXPECT_EQ(v.Size(), 10u);
  EXPECT_TRUE(v.Find("n").IsNull());
  EXPECT_EQ(v.Find("n").TypeName(), "null");
  EXPECT_EQ(v.Find("o").TypeName(), "object");
  EXPECT_EQ(v.Find("a").TypeName(), "array");
  EXPECT_EQ(v.Find("s").TypeName(), "string");
  EXPECT_EQ(v.Find("t").TypeName(), "bool");
  EXPECT_EQ(v.Find("i").TypeName(), "integer");
  EXPECT_EQ(v.Find("u").TypeName(), "integer");
  EXPECT_EQ(v.Find("d").TypeName(), "number");

  EXPECT_EQ(v.Find("s").GetString(), "text");
  EXPECT_TRUE(v.Find("t").GetBool());
  EXPECT_FALSE(v.Find("f").GetBool());
  EXPECT_TRUE(v.Find("i").IsInt64());
  EXPECT_FALSE(v.Find("i").IsUint64());
  EXPECT_EQ(v.Find("i").GetInt64(), -7);
  EXPECT_EQ(v.Find("i").GetDouble(), -7.0);
  EXPECT_FALSE(v.Find("u").IsInt64());
  EXPECT_TRUE(v.Find("u").IsUint64());
  EXPECT_EQ(v.Find("u").GetUint64(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(v.Find("u").GetInt64(), 0);  // not an int64: no value rather than a wrapped one
  EXPECT_TRUE(v.Find("d").IsDouble());
  EXPECT_TRUE(v.Find("d").IsNumber());
  EXPECT_EQ(v.Find("d").GetDouble(), 2.0);
  EXPECT_EQ(v.Find("a")[1].GetInt64(), 2);
  EXPECT_EQ(v.Find("a").Size(), 2u);
  EXPECT_EQ(v.Find("s").Size(), 0u);
}

TEST(ArgsView, AbsentValuesReadAsNull) {
  const ArgsDocument doc = Parse(R"({"a": [1], "s": "x"})");
  const ArgsView v = doc.View();
  EXPECT_TRUE(v.Find("missing").IsNull());
  EXPECT_TRUE(v.Find("missing").Find("deeper")[3].IsNull());
  EXPECT_TRUE(v.Find("a")[1].IsNull());  // out of range
  EXPECT_TRUE(v.Find("s").Find("x").IsNull());
  EXPECT_TRUE(v[0].IsNull());  // not an array
  EXPECT_EQ(v.Find("missing").GetString(), "");
  EXPECT_EQ(v.Find("missing").GetInt64(), 0);
  EXPECT_EQ(v.Find("missing").Encode(), "null");

  const ArgsView none;
  EXPECT_TRUE(none.IsNull());
  EXPECT_FALSE(none.IsObject());
  EXPECT_EQ(none.Size(), 0u);
  EXPECT_EQ(none.TypeName(), "null");
  EXPECT_TRUE(ArgsDocument().IsNull());
}

TEST(ArgsView, MembersInDocumentOrder) {
  const ArgsDocument doc = Parse(R"({"zeta": 1, "alpha": "two", "mid": [3]})");
  std::vector<std::string> names;
  std::vector<std::string> values;
  for (const auto [name, value] : doc.View().Members()) {
    names.emplace_back(name);
    values.push_back(value.Encode());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"zeta", "alpha", "mid"}));
  EXPECT_EQ(values, (std::vector<std::string>{"1", "\"two\"", "[3]"}));
  // Anything but an object has no members.
  EXPECT_EQ(doc.View().Find("mid").Members().begin(), doc.View().Find("mid").Members().end());
  EXPECT_EQ(ArgsView().Members().begin(), ArgsView().Members().end());
}

// Encode shows values as the configuration's error messages always have (nlohmann/json's dump):
// its number formatting and escapes; members in document order.
TEST(ArgsView, EncodeForMessages) {
  const ArgsDocument doc =
      Parse(R"({"b": [1, -2, 18446744073709551615, "x\u001f\"\\\n"], "a": {"z": null, "y": true}})");
  EXPECT_EQ(doc.View().Encode(), R"({"b":[1,-2,18446744073709551615,"x\u001f\"\\\n"],"a":{"z":null,"y":true}})");
  EXPECT_EQ(QuoteMessageString("a\x01\t"), R"("a\u0001\t")");
  const std::vector<std::pair<double, std::string>> numbers = {
      {1.0, "1.0"},
      {0.5, "0.5"},
      {-0.0, "-0.0"},
      {0.0, "0.0"},
      {1e20, "1e+20"},
      {1e-5, "1e-05"},
      {0.0001, "0.0001"},
      {123456789012345.0, "123456789012345.0"},
      {1234567890123456.0, "1.234567890123456e+15"},
      {1e15, "1e+15"},
      {1e16, "1e+16"},
      {0.1, "0.1"},
      {2.5e-7, "2.5e-07"},
      {1.5e300, "1.5e+300"},
      {-3.25, "-3.25"},
      {100.0, "100.0"},
      {4294967296.0, "4294967296.0"},
  };
  for (const auto& [d, want] : numbers) EXPECT_EQ(FormatMessageNumber(d), want) << d;
  EXPECT_EQ(Parse("[1e20, 2.0]").View().Encode(), "[1e+20,2.0]");
}

TEST(ArgsView, EncodePrettyIndentsAsDump2) {
  const ArgsDocument doc = Parse(R"({"a": [1, {"b": []}], "c": {}, "d": "x"})");
  EXPECT_EQ(doc.View().EncodePretty(),
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": []\n    }\n  ],\n  \"c\": {},\n  \"d\": \"x\"\n}");
  // One level deeper: the members at four spaces, the closing brace at two.
  EXPECT_EQ(Parse(R"({"k": 1})").View().EncodePretty(1), "{\n    \"k\": 1\n  }");
  EXPECT_EQ(Parse("[]").View().EncodePretty(), "[]");
  EXPECT_EQ(ArgsView().EncodePretty(), "null");
}

TEST(ArgsView, EqualityIsByValue) {
  const ArgsDocument a = Parse(R"({"x": 1, "y": [true, "s"]})");
  const ArgsDocument b = Parse(R"({"y": [true, "s"], "x": 1.0})");
  const ArgsDocument c = Parse(R"({"x": 1, "y": [true, "t"]})");
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a == c);
  EXPECT_FALSE(a == ArgsDocument());
  EXPECT_EQ(ArgsDocument(), Parse("null"));
  EXPECT_EQ(ArgsView(), Parse("null").View());
}

TEST(ArgsDocument, CopiesShareOneValue) {
  ArgsDocument a = Parse(R"({"k": "v"})");
  const ArgsDocument copy = a;
  a = ArgsDocument();
  EXPECT_EQ(copy.View().Find("k").GetString(), "v");
}

TEST(ArgsDocument, ParseErrorsAreValues) {
  auto bad = ArgsDocument::Parse(R"({"k": )");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().find("invalid JSON"), std::string::npos) << bad.error();
}

TEST(ArgsWriter, WritesCompactJsonInOrder) {
  ArgsWriter w;
  w.StartObject();
  w.Key("name").String("a\"b\n");
  w.Key("weight").Int64(-3);
  w.Key("ratio").Double(1.0);
  w.Key("half").Double(0.5);
  w.Key("nan").Double(std::nan(""));
  w.Key("on").Bool(true);
  w.Key("none").Null();
  w.Key("list").StringList({"x", "y"});
  w.Key("empty").StartArray().EndArray();
  w.Key("spliced").Json(R"({"a":[1]})");
  w.Key("nested").StartArray();
  w.StartObject().Key("k").Int64(1).EndObject();
  w.StartObject().EndObject();
  w.EndArray();
  w.EndObject();
  EXPECT_EQ(std::move(w).Take(),
            R"({"name":"a\"b\n","weight":-3,"ratio":1.0,"half":0.5,"nan":null,"on":true,"none":null,)"
            R"("list":["x","y"],"empty":[],"spliced":{"a":[1]},"nested":[{"k":1},{}]})");
}

TEST(ArgsWriter, ReadsBackAsTheSameValue) {
  ArgsWriter w;
  w.StartObject().Key("d").Double(0.1).Key("i").Int64(std::numeric_limits<int64_t>::min()).EndObject();
  const ArgsDocument doc = Parse(w.text());
  EXPECT_EQ(doc.View().Find("d").GetDouble(), 0.1);
  EXPECT_EQ(doc.View().Find("i").GetInt64(), std::numeric_limits<int64_t>::min());
}

}  // namespace
}  // namespace kubesched::framework
