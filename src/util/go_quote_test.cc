#include "util/go_quote.h"

#include <gtest/gtest.h>

#include <string>

namespace kubesched::util {
namespace {

// Cases from Go's strconv quote tests (TestQuote), plus C1 controls and bad UTF-8 sequences.
TEST(GoQuoteTest, QuotesAsGoStrconvQuote) {
  struct Case {
    std::string in;
    std::string want;
  };
  const Case cases[] = {
      {"", R"("")"},
      {"\a\b\f\r\n\t\v", R"("\a\b\f\r\n\t\v")"},
      {"\\", R"("\\")"},
      {"abc\xff"
       "def",
       R"("abc\xffdef")"},
      {"\xe2\x98\xba", "\"\xe2\x98\xba\""},  // U+263A is printable
      {"\xc3\xbf", "\"\xc3\xbf\""},          // U+00FF
      {"\x04", R"("\x04")"},
      {"\x7f", R"("\x7f")"},
      {"\xc2\x85", R"("\u0085")"},            // a C1 control character
      {"\xed\xa0\x80", R"("\xed\xa0\x80")"},  // a surrogate is not UTF-8
      {"\xc0\xaf", R"("\xc0\xaf")"},          // nor an overlong form
      {"say \"hi\"", R"("say \"hi\"")"},
      {std::string("a\0b", 3), R"("a\x00b")"},
  };
  for (const Case& c : cases) EXPECT_EQ(GoQuote(c.in), c.want) << c.want;
}

TEST(GoQuoteTest, AppendsToABuffer) {
  fmt::memory_buffer out;
  out.push_back('x');
  AppendGoQuoted(out, "y\n");
  EXPECT_EQ(fmt::to_string(out), "x\"y\\n\"");
}

}  // namespace
}  // namespace kubesched::util
