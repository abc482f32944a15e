#pragma once
// An HTML writer that escapes by construction: what comes from the simulation (names, labels,
// messages) can only be written as escaped text or as escaped attribute values. Tag names,
// attribute names and markup written as is must be compile-time constants (Markup's constructor
// is consteval), and RawNumbers formats numbers only, so no call site can put a pod's name into
// the document unescaped.

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

namespace kubesched::report {

//! `text` with &, <, >, " and ' replaced by character references: safe in element content and
//! in quoted attribute values.
std::string EscapeHtml(std::string_view text);
//! EscapeHtml(text) appended to `out`.
void AppendEscapedHtml(std::string& out, std::string_view text);

//! Markup of our own: a tag or attribute name, the page's CSS and script, a fixed fragment.
//! Only a constant expression makes one.
class Markup {
 public:
  consteval Markup(const char* text) : text_(text) {}       // NOLINT(google-explicit-constructor)
  consteval Markup(std::string_view text) : text_(text) {}  // NOLINT(google-explicit-constructor)
  std::string_view text() const { return text_; }

 private:
  std::string_view text_;
};

//! An attribute: a constant name and a value that is escaped when written. An attribute made
//! with When(false, ...) is left out; Flag writes a bare name (`open`).
class Attr {
 public:
  Attr(Markup name, std::string_view value) : name_(name), value_(value) {}
  Attr(Markup name, const char* value) : name_(name), value_(value) {}
  Attr(Markup name, std::string value) : name_(name), value_(std::move(value)) {}
  template <std::integral T>
  requires(!std::same_as<T, bool> && !std::same_as<T, char>) Attr(Markup name, T number)
      : name_(name), value_(std::to_string(number)) {}

  static Attr When(bool present, Markup name, std::string_view value) {
    Attr a(name, present ? value : std::string_view());
    a.present_ = present;
    return a;
  }
  static Attr Flag(Markup name) {
    Attr a(name, std::string_view());
    a.bare_ = true;
    return a;
  }

 private:
  friend class HtmlWriter;
  Markup name_;
  std::string value_;
  bool present_ = true;
  bool bare_ = false;
};

//! Writes a document into a string. Elements close in the order they opened (Close takes no
//! name, so a closing tag cannot mismatch).
class HtmlWriter {
 public:
  HtmlWriter() { out_.reserve(1 << 16); }

  //! `<tag a="v" ...>`, closed by a later Close().
  void Open(Markup tag, std::initializer_list<Attr> attributes = {});
  //! Closes the element opened last.
  void Close();
  //! An element without content or closing tag (`<meta ...>`, `<input ...>`, `<br>`).
  void Void(Markup tag, std::initializer_list<Attr> attributes = {});
  //! An SVG element without content: `<rect .../>`.
  void SelfClosing(Markup tag, std::initializer_list<Attr> attributes = {});
  //! `<tag ...>text</tag>`.
  void Element(Markup tag, std::initializer_list<Attr> attributes, std::string_view text);
  void Element(Markup tag, std::string_view text) { Element(tag, {}, text); }
  //! Text content, escaped.
  void Text(std::string_view text) { AppendEscapedHtml(out_, text); }
  //! Our own constant markup, as is.
  void Raw(Markup markup) { out_ += markup.text(); }
  //! Markup formatted from numbers only (SVG coordinates, generated CSS rules): a constant
  //! format string and arithmetic arguments, so nothing in it can come from the input.
  template <typename... Numbers>
  requires(std::is_arithmetic_v<Numbers>&&...) void RawNumbers(fmt::format_string<Numbers...> format,
                                                               Numbers... numbers) {
    // Checked against the arguments where it was written; formatted here without a second check.
    fmt::vformat_to(std::back_inserter(out_), static_cast<fmt::string_view>(format), fmt::make_format_args(numbers...));
  }
  void Newline() { out_ += '\n'; }

  //! The document; every element must have been closed.
  std::string Take();
  //! Elements open now (for tests).
  size_t depth() const { return open_.size(); }

 private:
  void Attributes(std::initializer_list<Attr> attributes);

  std::string out_;
  std::vector<std::string_view> open_;
};

}  // namespace kubesched::report
