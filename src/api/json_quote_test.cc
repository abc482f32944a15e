#include "api/json_quote.h"

#include <gtest/gtest.h>

namespace kubesched::api::json {
namespace {

std::string Quoted(std::string_view s, Quoting q) {
  std::string out = "x";  // appends, keeping what is there
  AppendQuoted(out, s, q);
  return out;
}

TEST(AppendQuoted, PlainEscapesOnlyQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(Quoted("a\"b\\c", Quoting::kPlain), R"(x"a\"b\\c")");
  EXPECT_EQ(Quoted("\b\f\n\r\t\x01\x1f", Quoting::kPlain), R"(x"\b\f\n\r\t\u0001\u001f")");
  EXPECT_EQ(Quoted("<a&b>\x7f", Quoting::kPlain), "x\"<a&b>\x7f\"");
  // UTF-8, valid or not, and the JavaScript line separators are kept as they are.
  EXPECT_EQ(Quoted("\xc3\xa9\xff\xe2\x80\xa8", Quoting::kPlain), "x\"\xc3\xa9\xff\xe2\x80\xa8\"");
  EXPECT_EQ(Quoted("", Quoting::kPlain), R"(x"")");
}

TEST(AppendQuoted, GoEscapesHtmlCharactersLineSeparatorsAndInvalidUtf8) {
  EXPECT_EQ(Quoted("a\"b\\c\x01", Quoting::kGo), R"(x"a\"b\\c\u0001")");
  EXPECT_EQ(Quoted("<a&b>", Quoting::kGo), R"(x"\u003ca\u0026b\u003e")");
  EXPECT_EQ(Quoted("\xe2\x80\xa8\xe2\x80\xa9", Quoting::kGo), R"(x"\u2028\u2029")");
  // Valid UTF-8 is kept; each byte of an invalid sequence (a lone continuation byte, an overlong
  // form, a surrogate) is U+FFFD.
  EXPECT_EQ(Quoted("\xc3\xa9\xf0\x9f\x98\x80", Quoting::kGo), "x\"\xc3\xa9\xf0\x9f\x98\x80\"");
  EXPECT_EQ(Quoted("\x80", Quoting::kGo), R"(x"\ufffd")");
  EXPECT_EQ(Quoted("\xc0\xaf", Quoting::kGo), R"(x"\ufffd\ufffd")");
  EXPECT_EQ(Quoted("\xed\xa0\x80", Quoting::kGo), R"(x"\ufffd\ufffd\ufffd")");
}

}  // namespace
}  // namespace kubesched::api::json
