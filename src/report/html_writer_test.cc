// Tests of the HTML writer: whatever the input, text and attribute values come out escaped, and
// elements close in the order they opened.

#include "report/html_writer.h"

#include <gtest/gtest.h>

namespace kubesched::report {
namespace {

TEST(HtmlWriter, EscapesText) {
  HtmlWriter w;
  w.Text("<script>alert('x') & \"y\"</script>");
  EXPECT_EQ(w.Take(), "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;");
}

TEST(HtmlWriter, EscapesAttributeValues) {
  HtmlWriter w;
  const std::string evil = "\" onmouseover=\"alert(1)";
  w.Element("span", {{"title", evil}, {"data-pod", std::string("ns/<p>&'q'")}, {"data-run", 2}}, "x");
  EXPECT_EQ(w.Take(),
            "<span title=\"&quot; onmouseover=&quot;alert(1)\" data-pod=\"ns/&lt;p&gt;&amp;&#39;q&#39;\" "
            "data-run=\"2\">x</span>");
}

TEST(HtmlWriter, OptionalAndBareAttributes) {
  HtmlWriter w;
  w.Open("details", {Attr::When(false, "class", "hidden"), {"data-reason", "r"}, Attr::Flag("open")});
  w.Close();
  w.Element("b", {Attr::When(true, "class", "better")}, "1");
  EXPECT_EQ(w.Take(), "<details data-reason=\"r\" open></details><b class=\"better\">1</b>");
}

TEST(HtmlWriter, ClosesInTheOrderElementsOpened) {
  HtmlWriter w;
  w.Open("section", {{"id", "s"}});
  w.Open("div");
  w.Open("ul");
  EXPECT_EQ(w.depth(), 3u);
  w.Element("li", "a");
  w.Close();
  w.Void("br");
  w.Close();
  w.Close();
  EXPECT_EQ(w.depth(), 0u);
  EXPECT_EQ(w.Take(), "<section id=\"s\"><div><ul><li>a</li></ul><br></div></section>");
}

TEST(HtmlWriter, RawIsConstantMarkupAndNumbers) {
  HtmlWriter w;
  w.Raw("<svg>");
  w.SelfClosing("rect", {{"x", "1.5"}, {"fill", "#fff"}});
  w.RawNumbers("<text x=\"{:.1f}\">{}</text>", 2.26, 7);
  w.Raw("</svg>");
  w.Newline();
  EXPECT_EQ(w.Take(), "<svg><rect x=\"1.5\" fill=\"#fff\"/><text x=\"2.3\">7</text></svg>\n");
}

TEST(HtmlWriter, EscapeHtml) {
  EXPECT_EQ(EscapeHtml("plain-name.1"), "plain-name.1");
  EXPECT_EQ(EscapeHtml("&amp;"), "&amp;amp;");
  EXPECT_EQ(EscapeHtml(""), "");
  std::string out = "x";
  AppendEscapedHtml(out, "<y>");
  EXPECT_EQ(out, "x&lt;y&gt;");
}

}  // namespace
}  // namespace kubesched::report
