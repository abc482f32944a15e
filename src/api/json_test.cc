#include "api/json.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

namespace kubesched::api::json {
namespace {

TEST(Json, RoundTripsCompactly) {
  Document doc;
  ASSERT_TRUE(Parse(R"( {"a": [1, -2, 3.5, "x\u00e9", true, null], "b": {"c": 9223372036854775807}} )", doc));
  EXPECT_EQ(Encode(doc), R"({"a":[1,-2,3.5,"xé",true,null],"b":{"c":9223372036854775807}})");
}

// Found by the json fuzz target: RapidJSON's default number conversion is a few units in the last
// place off for long or large numbers, so the encoded shortest digits parsed back as another double.
TEST(Json, ParsesNumbersToTheNearestDoubleSoTheyRoundTrip) {
  for (const char* text :
       {"-1510191019125920259405", "-1510382038251880382518518810", "8006888885888618.80800688800",
        "88868778887786888888776768888808888880868888808",
        "40000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "6887688999999999999999999999999999999999999999999999999999999999999999999999999999999999999999998"}) {
    SCOPED_TRACE(text);
    Document doc;
    ASSERT_TRUE(Parse(text, doc));
    ASSERT_TRUE(doc.IsDouble());
    EXPECT_EQ(doc.GetDouble(), std::strtod(text, nullptr));
    const std::string encoded = Encode(doc);
    Document again;
    ASSERT_TRUE(Parse(encoded, again));
    EXPECT_EQ(again.GetDouble(), doc.GetDouble()) << encoded;
    EXPECT_EQ(Encode(again), encoded);
  }
  Document doc;
  ASSERT_TRUE(Parse("8006888885888618.80800688800", doc));
  EXPECT_EQ(Encode(doc), "8006888885888619.0");
  // RapidJSON's full-precision conversion took clz(0) for these (UBSan); they are zeros.
  for (const char* zero :
       {"0e55", "-0e55", "[0e-55]", "0.000000000000000000000000000000000000000000000000000000000000"}) {
    SCOPED_TRACE(zero);
    ASSERT_TRUE(Parse(zero, doc));
    const Value& v = doc.IsArray() ? doc[0] : doc;
    ASSERT_TRUE(v.IsDouble());
    EXPECT_EQ(v.GetDouble(), 0.0);
  }
  ASSERT_TRUE(Parse("-0e55", doc));
  EXPECT_TRUE(std::signbit(doc.GetDouble()));
  EXPECT_EQ(Encode(doc), "-0.0");
  ASSERT_TRUE(Parse("1e-400", doc));
  EXPECT_EQ(doc.GetDouble(), 0.0);
  ASSERT_TRUE(Parse("4.9e-324", doc));
  EXPECT_EQ(doc.GetDouble(), std::numeric_limits<double>::denorm_min());
}

TEST(Json, ParsesIntegersAsRapidJsonsReaderAndRejectsNumbersTooBig) {
  Document doc;
  ASSERT_TRUE(
      Parse("[-0, 2147483647, -2147483648, 4294967295, -2147483649, 4294967296, 9223372036854775807, "
            "-9223372036854775808, 18446744073709551615, 18446744073709551616, -9223372036854775809]",
            doc));
  EXPECT_TRUE(doc[0].IsInt() && doc[0].GetInt() == 0);
  EXPECT_TRUE(doc[1].IsInt() && doc[1].GetInt() == 2147483647);
  EXPECT_TRUE(doc[2].IsInt() && doc[2].GetInt() == -2147483647 - 1);
  EXPECT_TRUE(doc[3].IsUint() && !doc[3].IsInt() && doc[3].GetUint() == 4294967295u);
  EXPECT_TRUE(doc[4].IsInt64() && !doc[4].IsInt() && doc[4].GetInt64() == -2147483649LL);
  EXPECT_TRUE(doc[5].IsUint64() && !doc[5].IsUint() && doc[5].GetUint64() == 4294967296u);
  EXPECT_TRUE(doc[6].IsInt64() && doc[6].GetInt64() == std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(doc[7].IsInt64() && doc[7].GetInt64() == std::numeric_limits<int64_t>::min());
  EXPECT_TRUE(doc[8].IsUint64() && !doc[8].IsInt64() && doc[8].GetUint64() == std::numeric_limits<uint64_t>::max());
  EXPECT_TRUE(doc[9].IsDouble() && doc[9].GetDouble() == 18446744073709551616.0);
  EXPECT_TRUE(doc[10].IsDouble() && doc[10].GetDouble() == -9223372036854775809.0);
  EXPECT_EQ(Encode(doc),
            "[0,2147483647,-2147483648,4294967295,-2147483649,4294967296,9223372036854775807,-9223372036854775808,"
            "18446744073709551615,18446744073709553000.0,-9223372036854776000.0]");

  auto big = Parse("{\"a\": [1, 1.8e308]}", doc);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().column, 11);
  EXPECT_EQ(big.error().message, "Number too big to be stored in double.");
  EXPECT_TRUE(doc.IsNull());
  EXPECT_FALSE(Parse("-1e400", doc));
  EXPECT_TRUE(Parse("0.00001e310", doc)) << "1e305 fits";
}

// RapidJSON 1.1.0's SSE2 string scan let control characters 0x1A-0x1F through, depending on where
// they fell in 16-byte blocks; every one is an error, wherever it is.
TEST(Json, RejectsRawControlCharactersInStrings) {
  for (char c : {'\x01', '\x19', '\x1a', '\x1b', '\x1f'}) {
    for (size_t pad = 0; pad < 48; ++pad) {
      Document doc;
      const std::string text = "\"" + std::string(pad, 'a') + c + std::string(40, 'b') + "\"";
      EXPECT_FALSE(Parse(text, doc)) << int(c) << " after " << pad;
    }
  }
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

TEST(Json, ReportsASyntaxErrorAfterTooDeepNestingAsAParseWithoutTheLimitWould) {
  std::string deep(kMaxDepth + 1, '[');
  deep += std::string(kMaxDepth + 1, ']');
  Document doc;
  auto r = Parse(deep + ",", doc);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "The document root must not be followed by other values.");
  EXPECT_EQ(r.error().offset, deep.size());
  r = Parse(deep.substr(0, deep.size() - 1) + "}", doc);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().offset, deep.size() - 1);
  EXPECT_TRUE(doc.IsNull());
  r = Parse(deep, doc);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "nesting deeper than 1000 levels");
  EXPECT_EQ(r.error().offset, 0u);
}

TEST(Json, EncodesAsRapidJsonsWriter) {
  Document doc;
  ASSERT_TRUE(Parse(R"({"n":[0,-1,1,2147483647,-2147483648,4294967295,4294967296,-9223372036854775808,
      18446744073709551615,0.1,-2.5e-300,1e300,3.0,123456789.125],"e":{},"a":[],"x":[{},[[]],null,false]})",
                    doc));
  auto& alloc = doc.GetAllocator();
  std::string every_byte;
  for (int c = 0; c < 256; ++c) every_byte += static_cast<char>(c);
  Value strings(rapidjson::kArrayType);
  for (size_t len = 0; len < 40; ++len) {
    for (size_t at = 0; at < len; at += 3) {
      std::string s(len, 'a');
      s[at] = "\"\\\n\x01\x7f\xc3/"[at % 7];
      strings.PushBack(MakeString(s, alloc), alloc);
    }
  }
  strings.PushBack(MakeString(every_byte, alloc), alloc);
  strings.PushBack(MakeString(std::string_view("a\0b", 3), alloc), alloc);
  doc.AddMember(MakeString(every_byte, alloc), strings, alloc);
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  ASSERT_TRUE(doc.Accept(writer));
  EXPECT_EQ(Encode(doc), std::string(buffer.GetString(), buffer.GetSize()));
  std::string appended = "x";
  EncodeTo(doc, appended);
  EXPECT_EQ(appended, "x" + std::string(buffer.GetString(), buffer.GetSize()));
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
