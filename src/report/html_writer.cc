#include "report/html_writer.h"

#include <cassert>

namespace kubesched::report {

void AppendEscapedHtml(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
}

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  AppendEscapedHtml(out, text);
  return out;
}

void HtmlWriter::Attributes(std::initializer_list<Attr> attributes) {
  for (const Attr& a : attributes) {
    if (!a.present_) continue;
    out_ += ' ';
    out_ += a.name_.text();
    if (a.bare_) continue;
    out_ += "=\"";
    AppendEscapedHtml(out_, a.value_);
    out_ += '"';
  }
}

void HtmlWriter::Open(Markup tag, std::initializer_list<Attr> attributes) {
  out_ += '<';
  out_ += tag.text();
  Attributes(attributes);
  out_ += '>';
  open_.push_back(tag.text());
}

void HtmlWriter::Close() {
  assert(!open_.empty());
  if (open_.empty()) return;
  out_ += "</";
  out_ += open_.back();
  out_ += '>';
  open_.pop_back();
}

void HtmlWriter::Void(Markup tag, std::initializer_list<Attr> attributes) {
  out_ += '<';
  out_ += tag.text();
  Attributes(attributes);
  out_ += '>';
}

void HtmlWriter::SelfClosing(Markup tag, std::initializer_list<Attr> attributes) {
  out_ += '<';
  out_ += tag.text();
  Attributes(attributes);
  out_ += "/>";
}

void HtmlWriter::Element(Markup tag, std::initializer_list<Attr> attributes, std::string_view text) {
  Open(tag, attributes);
  Text(text);
  Close();
}

std::string HtmlWriter::Take() {
  assert(open_.empty());
  open_.clear();
  return std::move(out_);
}

}  // namespace kubesched::report
