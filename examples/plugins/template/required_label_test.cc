// Unit tests for RequiredLabel with the SDK's test helpers: nodes and pods from the builders, a
// fake Handle holding them in a snapshot, the plugin called as the framework calls it.
#include <gtest/gtest.h>

#include <sdk/testing.h>

#include "required_label.h"

namespace example {
namespace {

using kubesched::framework::Code;
using kubesched::framework::CycleState;
using kubesched::framework::PodInfo;
using kubesched::testing::FakeHandle;
using kubesched::testing::MakeNode;
using kubesched::testing::MakePod;

TEST(RequiredLabel, KeepsOnlyNodesWithTheLabel) {
  auto labelled = MakeNode().Name("labelled").Label("example.com/schedulable", "yes").Obj();
  auto plain = MakeNode().Name("plain").Obj();
  FakeHandle handle({labelled, plain}, {});
  RequiredLabel plugin{RequiredLabelArgs{}};
  CycleState state;
  auto pod = PodInfo::Create(MakePod().Name("p").Obj());

  EXPECT_TRUE(plugin.Filter(state, *pod, *handle.snapshot().Get("labelled")).IsSuccess());
  auto rejected = plugin.Filter(state, *pod, *handle.snapshot().Get("plain"));
  EXPECT_EQ(rejected.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(rejected.Message(), RequiredLabel::kReason);
}

TEST(RequiredLabel, ChecksTheValueWhenOneIsGiven) {
  auto yes = MakeNode().Name("yes").Label("tier", "gold").Obj();
  auto no = MakeNode().Name("no").Label("tier", "silver").Obj();
  FakeHandle handle({yes, no}, {});
  RequiredLabel plugin{RequiredLabelArgs{"tier", "gold"}};
  CycleState state;
  auto pod = PodInfo::Create(MakePod().Name("p").Obj());

  EXPECT_TRUE(plugin.Filter(state, *pod, *handle.snapshot().Get("yes")).IsSuccess());
  EXPECT_FALSE(plugin.Filter(state, *pod, *handle.snapshot().Get("no")).IsSuccess());
}

TEST(RequiredLabel, ArgsAreDefaultedAndValidatedWithTheirPath) {
  auto defaults = kubesched::sdk::DecodeArgs<RequiredLabelArgs>({}, "args", DecodeArgs);
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(defaults->label, "example.com/schedulable");

  // Args as the configuration file gives them (JSON text, parsed as kubesched parses pluginConfig).
  const auto bad_args = kubesched::framework::ArgsDocument::Parse(R"({"label": 7, "colour": "red"})");
  ASSERT_TRUE(bad_args.has_value());
  auto bad = kubesched::sdk::DecodeArgs<RequiredLabelArgs>(bad_args->View(), "args", DecodeArgs);
  ASSERT_FALSE(bad.has_value());
  ASSERT_EQ(bad.error().errors.size(), 2u);
  EXPECT_EQ(bad.error().errors[0], "args.label: Invalid type: expected string, got integer");
  EXPECT_EQ(bad.error().errors[1], "unknown field \"args.colour\"");

  const auto empty_args = kubesched::framework::ArgsDocument::Parse(R"({"label": ""})");
  ASSERT_TRUE(empty_args.has_value());
  auto empty = kubesched::sdk::DecodeArgs<RequiredLabelArgs>(empty_args->View(), "args", DecodeArgs);
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().errors[0], "args.label: Required value: the label nodes must carry");
}

}  // namespace
}  // namespace example
