#pragma once
// Plugin args as plugins read them: a read-only view of a JSON value (the `args` of a
// `pluginConfig` entry, or any value inside it), and ArgsDocument, the owned value a
// configuration keeps. The plugin-facing API (PluginFactory, ArgsType, the SDK) passes these, not
// a JSON library's types, so that plugin libraries do not depend on the library kubesched parses
// with (RapidJSON, api/json.h) nor break when it changes; this header includes neither.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>

namespace kubesched::framework {

//! A JSON value, read-only, borrowed from the document that owns it (which must outlive the
//! view). A default-constructed view is null, as is the view of an absent member or element, so
//! lookups chain without checks: `args.Find("scoringStrategy").Find("type").IsString()`.
class ArgsView {
 public:
  ArgsView() = default;

  bool IsNull() const;
  bool IsObject() const;
  bool IsArray() const;
  bool IsString() const;
  bool IsBool() const;
  //! Any number.
  bool IsNumber() const;
  //! An integer (written without a fraction or exponent) that fits int64.
  bool IsInt64() const;
  //! An integer that fits uint64 (a non-negative one).
  bool IsUint64() const;
  //! A number written with a fraction or an exponent, or an integer too big for 64 bits.
  bool IsDouble() const;

  //! Elements of an array, members of an object; 0 for anything else.
  size_t Size() const;
  //! Element `i` of an array; null when out of range or not an array.
  ArgsView operator[](size_t i) const;
  //! The member `key` (its first, should a name repeat); null when absent or not an object.
  ArgsView Find(std::string_view key) const;

  //! The text of a string (empty for anything else).
  std::string_view GetString() const;
  //! The value of a number as int64 (0 unless IsInt64).
  int64_t GetInt64() const;
  //! The value of a number as uint64 (0 unless IsUint64).
  uint64_t GetUint64() const;
  //! The value of any number (0 for anything else).
  double GetDouble() const;
  //! False for anything but `true`.
  bool GetBool() const;

  //! The type named in decoding errors: null, object, array, string, bool, integer, number.
  std::string_view TypeName() const;
  //! The value as compact JSON text, members in document order, for error messages: numbers and
  //! escapes as kubesched's configuration errors have always shown them (nlohmann/json's: 1.0,
  //! 1e+20, \u001f), so that messages stay the same. (The configuration keeps its args' members
  //! sorted by name, as it always has: config/load.cc.)
  std::string Encode() const;
  //! Encode's text indented as nlohmann/json's dump(2) indents it (two spaces a level, `"key":
  //! value`, `[]` and `{}` when empty), for people; `level` is how deep the value sits in the
  //! enclosing text (its members are indented one level more).
  std::string EncodePretty(int level = 0) const;

  //! Equal values: objects with the same members in any order, numbers by value (1 == 1.0).
  friend bool operator==(const ArgsView& a, const ArgsView& b);

  //! An object's member (defined below, as it holds a view).
  struct Member;
  //! Walks an object's members in document order.
  class MemberIterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Member;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Member;

    MemberIterator() = default;
    Member operator*() const;
    MemberIterator& operator++();
    MemberIterator operator++(int) {
      MemberIterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const MemberIterator& other) const { return member_ == other.member_; }

   private:
    friend class ArgsView;
    explicit MemberIterator(const void* member) : member_(member) {}
    const void* member_ = nullptr;
  };
  struct MemberRange {
    MemberIterator first;
    MemberIterator last;
    MemberIterator begin() const { return first; }
    MemberIterator end() const { return last; }
  };
  //! An object's members in document order (none for anything else):
  //! `for (auto [name, value] : args.Members())`.
  MemberRange Members() const;

 private:
  friend struct ArgsViewAccess;  // framework/args_view_json.h: views of api::json values
  explicit ArgsView(const void* value) : value_(value) {}

  const void* value_ = nullptr;  // an api::json::Value; nullptr reads as null
};

struct ArgsView::Member {
  std::string_view name;
  ArgsView value;
};

//! An owned JSON value (a configuration's args): parsed once, then shared read-only, so that a
//! copy of a configuration is cheap and every copy reads the same value. Default: null.
class ArgsDocument {
 public:
  ArgsDocument() = default;
  //! Parses JSON text; the parser's message on error.
  static std::expected<ArgsDocument, std::string> Parse(std::string_view json);

  ArgsView View() const;
  bool IsNull() const { return View().IsNull(); }
  //! Equal values (ArgsView's equality).
  friend bool operator==(const ArgsDocument& a, const ArgsDocument& b) { return a.View() == b.View(); }

 private:
  friend struct ArgsViewAccess;
  struct Holder;  // the api::json::Document
  std::shared_ptr<const Holder> doc_;
};

//! `s` as a JSON string, escaped as ArgsView::Encode escapes strings.
std::string QuoteMessageString(std::string_view s);
//! A number as the error messages show it (nlohmann/json's formatting, kept so that messages stay
//! as they were): 1.0, 0.5, 1e+20, 1e-05.
std::string FormatMessageNumber(double d);

}  // namespace kubesched::framework
