// sdk::ArgsDecoder: strict decoding of a plugin library's args with defaults, field paths and
// upstream's wording, as the configuration loader reports them.
#include "sdk/args.h"

#include <gtest/gtest.h>

#include "framework/registry.h"
#include "testing/args.h"

namespace kubesched::sdk {
namespace {

struct Inner {
  int32_t count = 3;
};

struct Args {
  int64_t arg = 42;
  double seconds = 1.5;
  bool enabled = true;
  std::string mode = "fast";
  std::vector<std::string> names;
  Inner inner;
};

void Decode(ArgsDecoder& d, Args& a) {
  d.Int64("arg", a.arg);
  d.Double("seconds", a.seconds);
  d.Bool("enabled", a.enabled);
  d.String("mode", a.mode);
  d.StringList("names", a.names);
  d.Object("inner", [&](ArgsDecoder& in) {
    in.Int32("count", a.inner.count);
    if (a.inner.count < 0) in.Invalid("count", a.inner.count, "must not be negative");
  });
  if (a.mode != "fast" && a.mode != "slow") d.NotSupported("mode", a.mode, {"fast", "slow"});
}

void Encode(ArgsEncoder& e, const Args& a) {
  e.Int64("arg", a.arg);
  e.String("mode", a.mode);
}

TEST(ArgsDecoder, AbsentArgsKeepTheDefaults) {
  const framework::ArgsDocument empty = testing::ArgsJson("{}");
  for (const framework::ArgsView& given : {framework::ArgsView(), empty.View()}) {
    auto a = DecodeArgs<Args>(given, "args", Decode);
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->arg, 42);
    EXPECT_EQ(a->seconds, 1.5);
    EXPECT_TRUE(a->enabled);
    EXPECT_EQ(a->mode, "fast");
    EXPECT_EQ(a->inner.count, 3);
  }
}

TEST(ArgsDecoder, GivenFieldsAreRead) {
  auto a = DecodeArgs<Args>(
      testing::ArgsJson(R"({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "MyArgs", "arg": 13,
                                "seconds": 2, "enabled": false, "mode": "slow", "names": ["a", "b"],
                                "inner": {"count": 7}, "mode": "slow"})")
          .View(),
      "args", Decode);
  ASSERT_TRUE(a.has_value()) << a.error().errors[0];
  EXPECT_EQ(a->arg, 13);
  EXPECT_EQ(a->seconds, 2.0);
  EXPECT_FALSE(a->enabled);
  EXPECT_EQ(a->mode, "slow");
  EXPECT_EQ(a->names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(a->inner.count, 7);
}

TEST(ArgsDecoder, DecodingErrorsNameEveryFieldAndHideValidation) {
  auto a = DecodeArgs<Args>(testing::ArgsJson(R"({"arg": "x", "inner": {"count": -1, "extra": 1}, "foo": 2})").View(),
                            "profiles[0].pluginConfig[1].args", Decode);
  ASSERT_FALSE(a.has_value());
  EXPECT_TRUE(a.error().decoding);
  EXPECT_EQ(a.error().errors, (std::vector<std::string>{
                                  "profiles[0].pluginConfig[1].args.arg: Invalid type: expected int64, got string",
                                  "unknown field \"profiles[0].pluginConfig[1].args.inner.extra\"",
                                  "unknown field \"profiles[0].pluginConfig[1].args.foo\"",
                              }));
}

TEST(ArgsDecoder, ValidationErrorsAreReportedWhenDecodingSucceeded) {
  auto a = DecodeArgs<Args>(testing::ArgsJson(R"({"mode": "medium", "inner": {"count": -1}})").View(), "args", Decode);
  ASSERT_FALSE(a.has_value());
  EXPECT_FALSE(a.error().decoding);
  EXPECT_EQ(a.error().errors, (std::vector<std::string>{
                                  "args.inner.count: Invalid value: -1: must not be negative",
                                  "args.mode: Unsupported value: \"medium\": supported values: \"fast\", \"slow\"",
                              }));
}

TEST(ArgsDecoder, ArgsThatAreNotAnObjectAreATypeError) {
  auto a = DecodeArgs<Args>(testing::ArgsJson("[1]").View(), "args", Decode);
  ASSERT_FALSE(a.has_value());
  EXPECT_EQ(a.error().errors, (std::vector<std::string>{"args: Invalid type: expected object, got array"}));
}

struct Dummy final : framework::Plugin {
  explicit Dummy(int64_t a) : arg(a) {}
  std::string_view Name() const override { return "Dummy"; }
  int64_t arg;
};

TEST(RegisterPlugin, RegistersTheFactoryAndTheArgsType) {
  framework::Registry registry;
  int64_t built_with = 0;
  ASSERT_TRUE(RegisterPlugin<Args>(registry, "Dummy", Decode, Encode, [&](const Args& a, framework::Handle&) {
                built_with = a.arg;
                return std::make_unique<Dummy>(a.arg);
              }).has_value());
  const framework::ArgsType* type = registry.FindArgsType("Dummy");
  ASSERT_NE(type, nullptr);
  EXPECT_EQ(type->kind, "DummyArgs");
  auto defaults = type->decode({}, "args");
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(*defaults, R"({"arg":42,"mode":"fast"})");
  auto bad = type->decode(testing::ArgsJson(R"({"arg": true})").View(), "p.args");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().errors[0], "p.args.arg: Invalid type: expected int64, got bool");
  // The name is taken now.
  EXPECT_FALSE(RegisterPlugin<Args>(registry, "Dummy", Decode, Encode, [](const Args& a, framework::Handle&) {
                 return std::make_unique<Dummy>(a.arg);
               }).has_value());
}

struct Shape {
  std::vector<std::string> names = {"a", "b"};
  double ratio = 0.5;
  bool on = false;
  Inner inner;
};

void EncodeShape(ArgsEncoder& e, const Shape& s) {
  e.StringList("names", s.names);
  e.Double("ratio", s.ratio);
  e.Bool("on", s.on);
  e.Null("unset");
  e.Object("inner", [&](ArgsEncoder& in) { in.Int64("count", s.inner.count); });
  e.Raw("raw").StartArray().Int64(1).EndArray();
}

TEST(ArgsEncoder, WritesTheFieldsInOrder) {
  EXPECT_EQ(EncodeArgs<Shape>(Shape{}, EncodeShape),
            R"({"names":["a","b"],"ratio":0.5,"on":false,"unset":null,"inner":{"count":3},"raw":[1]})");
}

// Invalid shows the value as JSON whatever its C++ type, as the configuration's messages do.
void DecodeChecked(ArgsDecoder& d, Shape& s) {
  d.StringList("names", s.names);
  d.Double("ratio", s.ratio);
  d.Invalid("ratio", s.ratio, "d");
  d.Invalid("names", s.names.front(), "s");
  d.Invalid("on", true, "b");
  d.Invalid("count", int32_t{-4}, "i");
  d.Invalid("raw", d.Raw("raw"), "v");
}

TEST(ArgsDecoder, InvalidShowsTheValueAsJson) {
  auto a = DecodeArgs<Shape>(testing::ArgsJson(R"({"names": ["x"], "ratio": 1e20, "raw": {"k": [1.0]}})").View(),
                             "args", DecodeChecked);
  ASSERT_FALSE(a.has_value());
  EXPECT_FALSE(a.error().decoding);
  EXPECT_EQ(a.error().errors, (std::vector<std::string>{
                                  "args.ratio: Invalid value: 1e+20: d",
                                  "args.names: Invalid value: \"x\": s",
                                  "args.on: Invalid value: true: b",
                                  "args.count: Invalid value: -4: i",
                                  "args.raw: Invalid value: {\"k\":[1.0]}: v",
                              }));
}

}  // namespace
}  // namespace kubesched::sdk
