#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/strict_decoder.h"
#include "testing/args.h"

namespace kubesched::config {
namespace {

using testing::ArgsJson;

TEST(StrictDecoderTest, CollectsEveryErrorWithItsPath) {
  std::vector<std::string> errors;
  StrictDecoder d(errors);
  const framework::ArgsDocument doc =
      ArgsJson(R"({"a": 1, "n": "x", "big": 4294967296, "f": 1.5, "whole": 2.0, "s": 3, "b": "yes",
                           "list": ["ok", 7], "obj": [1]})");
  const framework::ArgsView j = doc.View();
  ASSERT_TRUE(d.Object(j, "args", {"n", "big", "f", "whole", "s", "b", "list", "obj"}));
  EXPECT_EQ(d.Int32(j.Find("n"), "args.n"), std::nullopt);
  EXPECT_EQ(d.Int32(j.Find("big"), "args.big"), std::nullopt);
  EXPECT_EQ(d.Int64(j.Find("big"), "args.big"), 4294967296);
  EXPECT_EQ(d.Int64(j.Find("f"), "args.f"), std::nullopt);
  EXPECT_EQ(d.Int32(j.Find("whole"), "args.whole"), 2);  // as sigs.k8s.io/yaml converts 2.0
  EXPECT_EQ(d.String(j.Find("s"), "args.s"), std::nullopt);
  EXPECT_EQ(d.Bool(j.Find("b"), "args.b"), std::nullopt);
  EXPECT_EQ(d.StringList(j.Find("list"), "args.list"), (std::vector<std::string>{"ok", ""}));
  EXPECT_FALSE(d.Object(j.Find("obj"), "args.obj", {}));
  EXPECT_FALSE(d.Object(j.Find("absent"), "args.absent", {}));  // null: absent, no error
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "unknown field \"args.a\"",
                        "args.n: Invalid type: expected int32, got string",
                        "args.big: Invalid value: 4294967296: out of range for int32",
                        "args.f: Invalid type: expected int64, got number",
                        "args.s: Invalid type: expected string, got integer",
                        "args.b: Invalid type: expected bool, got string",
                        "args.list[1]: Invalid type: expected string, got integer",
                        "args.obj: Invalid type: expected object, got array",
                    }));
}

TEST(StrictDecoderTest, RootPath) {
  std::vector<std::string> errors;
  StrictDecoder d(errors);
  EXPECT_FALSE(d.Object(ArgsJson("[]").View(), "", {}));
  EXPECT_TRUE(d.Object(ArgsJson(R"({"x": 1})").View(), "", {}));
  EXPECT_EQ(errors, (std::vector<std::string>{"Invalid type: expected object, got array", "unknown field \"x\""}));
  EXPECT_EQ(api::field_path::Child("", "a"), "a");
  EXPECT_EQ(api::field_path::Index(api::field_path::Child("a", "b"), 2), "a.b[2]");
}

}  // namespace
}  // namespace kubesched::config
