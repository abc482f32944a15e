#include "api/yaml.h"

#include <libfyaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>

namespace kubesched::api::yaml {
namespace {

// ---------------------------------------------------------------------------------------------
// libfyaml's parser and diagnostics, owned.

struct DiagDeleter {
  void operator()(fy_diag* d) const { fy_diag_destroy(d); }
};
struct ParserDeleter {
  void operator()(fy_parser* p) const { fy_parser_destroy(p); }
};

void DiscardOutput(fy_diag*, void*, const char*, size_t) {}

// ---------------------------------------------------------------------------------------------
// The text must be UTF-8 (RFC 3629: no overlong forms, surrogates or code points above U+10FFFF)
// of YAML's printable characters (c-printable: tab, line feed, carriage return, U+0020-U+007E,
// U+0085, U+00A0-U+D7FF, U+E000-U+FFFD, U+10000 and above), as go-yaml's reader requires.
// libfyaml 0.7.12 does not check: it keeps invalid octets in scalars, on one in a directive line
// ("%m\x91") fy_scan_directive loops forever (libfyaml#101, fixed upstream after 0.7.12), and on
// some inputs with a control character it leaks a 2 KB buffer (found by the yaml fuzz target). So
// the text is checked before libfyaml sees it. The error, if any, names the first offending octet
// or character as go-yaml's reader does, at its line and column (columns count characters).
std::optional<ParseError> UnreadableText(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0, bad = 0;  // the sequence's first octet, the octet that is wrong
  const char* problem = nullptr;
  std::optional<uint32_t> control;  // the control character found, when that is the problem
  auto printable = [](uint32_t cp) {
    return cp == 0x09 || cp == 0x0A || cp == 0x0D || (cp >= 0x20 && cp <= 0x7E) || cp == 0x85 ||
           (cp >= 0xA0 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
  };
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      if (!printable(c)) {
        problem = "control characters are not allowed";
        control = c;
        bad = i;
        break;
      }
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the second octet
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      problem = "invalid leading UTF-8 octet";
      bad = i;
      break;
    }
    size_t k = 1;
    for (; k < len && i + k < n; ++k) {
      const unsigned char t = s[i + k];
      if (k == 1 ? (t < lo || t > hi) : (t < 0x80 || t > 0xBF)) break;
    }
    if (k < len) {
      problem = i + k < n ? "invalid trailing UTF-8 octet" : "incomplete UTF-8 octet sequence";
      bad = i + k < n ? i + k : i;
      break;
    }
    uint32_t cp = c & (0x7F >> len);
    for (k = 1; k < len; ++k) cp = (cp << 6) | (s[i + k] & 0x3F);
    if (!printable(cp)) {
      problem = "control characters are not allowed";
      control = cp;
      bad = i;
      break;
    }
    i += len;
  }
  if (problem == nullptr) return std::nullopt;
  ParseError e{1, 1, ""};
  for (size_t j = 0; j < i; ++j) {
    if (s[j] == '\n') {
      ++e.line;
      e.column = 1;
    } else if ((s[j] & 0xC0) != 0x80) {
      ++e.column;
    }
  }
  if (control) {
    e.message = fmt::format("{}: U+{:04X}", problem, *control);
  } else {
    e.message = fmt::format("{} 0x{:02x}: YAML text must be UTF-8", problem, static_cast<unsigned>(s[bad]));
  }
  return e;
}

// A parser over `text` whose errors are collected (to be read back) instead of printed.
class EventParser {
 public:
  explicit EventParser(std::string_view text) : text_(text) {
    fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = nullptr;
    dcfg.output_fn = DiscardOutput;
    dcfg.colorize = false;
    diag_.reset(fy_diag_create(&dcfg));
    if (diag_) fy_diag_set_collect_errors(diag_.get(), true);
    fy_parse_cfg cfg{};
    // Duplicate keys are kept for the schema check to report as the API server does; YAML 1.1 is
    // what go-yaml v2 reads.
    cfg.flags = static_cast<fy_parse_cfg_flags>(FYPCF_QUIET | FYPCF_ALLOW_DUPLICATE_KEYS | FYPCF_DEFAULT_VERSION_1_1 |
                                                FYPCF_JSON_NONE);
    cfg.diag = diag_.get();
    parser_.reset(fy_parser_create(&cfg));
    if (parser_) fy_parser_set_string(parser_.get(), text.data(), text.size());
  }

  bool ok() const { return parser_ != nullptr; }
  std::string_view text() const { return text_; }

  // The next event, or nullptr at the end of the stream or on an error (then Failed()).
  fy_event* Next() { return fy_parser_parse(parser_.get()); }
  void Free(fy_event* e) { fy_parser_event_free(parser_.get(), e); }
  bool Failed() { return fy_parser_get_stream_error(parser_.get()); }

  ParseError Error() {
    ParseError e{0, 0, "invalid YAML"};
    if (!diag_) return e;
    void* it = nullptr;
    if (fy_diag_error* d = fy_diag_errors_iterate(diag_.get(), &it)) {
      e.line = d->line;  // libfyaml's diagnostics count from 1 already
      e.column = d->column;
      if (d->msg != nullptr && *d->msg != '\0') e.message = d->msg;
    }
    return e;
  }

 private:
  std::string_view text_;
  std::unique_ptr<fy_diag, DiagDeleter> diag_;
  std::unique_ptr<fy_parser, ParserDeleter> parser_;
};

// Frees an event when it goes out of scope.
class EventHolder {
 public:
  EventHolder(EventParser& p, fy_event* e) : p_(p), e_(e) {}
  ~EventHolder() {
    if (e_ != nullptr) p_.Free(e_);
  }
  EventHolder(const EventHolder&) = delete;
  EventHolder& operator=(const EventHolder&) = delete;

 private:
  EventParser& p_;
  fy_event* e_;
};

int LineOfEvent(fy_event* e) {
  const fy_mark* m = fy_event_start_mark(e);
  return m != nullptr ? m->line + 1 : 0;
}

std::string_view TokenText(fy_token* t) {
  if (t == nullptr) return {};
  size_t len = 0;
  const char* s = fy_token_get_text(t, &len);
  return s != nullptr ? std::string_view(s, len) : std::string_view();
}

// A single-quoted scalar's value from its content between the quotes, folded as go-yaml v2 folds
// flow scalars: '' is one quote; white space around a line break goes; a line break is CR LF,
// CR, LF or NEL (each read as LF) or U+2028 / U+2029 (kept as they are). A first break that
// reads as LF becomes a space when no empty line follows it, else the empty lines' breaks; a
// first break U+2028 / U+2029 stays, followed by the empty lines' breaks. (Read from the source
// because libfyaml 0.7.12 leaks formatting such scalars: see ScalarText.) nullopt never; kept
// optional for the callers' fallback.
std::optional<std::string_view> SingleQuotedValue(std::string_view inner, std::string& out) {
  // The line break at `at`, if any: its length and what it reads as.
  auto break_at = [&](size_t at, std::string_view& reads_as) -> size_t {
    const char c = inner[at];
    if (c == '\r') {
      reads_as = "\n";
      return at + 1 < inner.size() && inner[at + 1] == '\n' ? 2 : 1;
    }
    if (c == '\n') {
      reads_as = "\n";
      return 1;
    }
    const std::string_view rest = inner.substr(at);
    if (rest.starts_with("\xc2\x85")) {
      reads_as = "\n";
      return 2;
    }
    if (rest.starts_with("\xe2\x80\xa8") || rest.starts_with("\xe2\x80\xa9")) {
      reads_as = rest.substr(0, 3);
      return 3;
    }
    return 0;
  };
  auto unquote = [&](std::string_view line) {
    for (size_t i = 0; i < line.size(); ++i) {
      out.push_back(line[i]);
      if (line[i] == '\'') ++i;  // '' is one quote
    }
  };
  const bool has_breaks =
      inner.find_first_of("\r\n") != std::string_view::npos || inner.find("\xc2\x85") != std::string_view::npos ||
      inner.find("\xe2\x80\xa8") != std::string_view::npos || inner.find("\xe2\x80\xa9") != std::string_view::npos;
  if (!has_breaks) {
    if (inner.find('\'') == std::string_view::npos) return inner;
    out.clear();
    unquote(inner);
    return std::string_view(out);
  }
  out.clear();
  constexpr std::string_view kBlank = " \t";
  std::string line;        // the current line's text, blanks after a break dropped
  size_t line_blanks = 0;  // trailing blanks of `line` (dropped if a break follows)
  bool at_line_start = false;
  std::string_view leading_break;  // the first break of the current run of breaks
  std::string trailing_breaks;     // the breaks after it (the empty lines')
  bool in_breaks = false;
  auto flush_breaks = [&] {
    if (!in_breaks) return;
    if (leading_break == "\n") {
      if (trailing_breaks.empty()) {
        out.push_back(' ');
      } else {
        out += trailing_breaks;
      }
    } else {
      out += leading_break;
      out += trailing_breaks;
    }
    in_breaks = false;
    trailing_breaks.clear();
  };
  size_t i = 0;
  while (i < inner.size()) {
    std::string_view reads_as;
    if (const size_t n = break_at(i, reads_as); n > 0) {
      // The text before the break, without its trailing blanks.
      line.resize(line.size() - line_blanks);
      line_blanks = 0;
      if (!line.empty()) {
        flush_breaks();
        unquote(line);
        line.clear();
      }
      if (!in_breaks) {
        in_breaks = true;
        leading_break = reads_as;
      } else {
        trailing_breaks += reads_as;
      }
      at_line_start = true;
      i += n;
      continue;
    }
    const char c = inner[i];
    if (kBlank.find(c) != std::string_view::npos) {
      if (!at_line_start) {
        line.push_back(c);
        ++line_blanks;
      }
    } else {
      at_line_start = false;
      line_blanks = 0;
      line.push_back(c);
      if (c == '\'' && i + 1 < inner.size() && inner[i + 1] == '\'') {
        line.push_back('\'');  // keep the pair whole for unquote
        ++i;
      }
    }
    ++i;
  }
  if (!line.empty()) {
    flush_breaks();
    unquote(line);
  } else {
    flush_breaks();  // the scalar ends in breaks: they fold as before any text
  }
  return std::string_view(out);
}

// A scalar's text. A single-quoted one is read from the source here: libfyaml 0.7.12 leaks a
// buffer (512 bytes and up) formatting one with five or more '' escapes (found by the yaml fuzz
// target). Other styles are libfyaml's to format.
std::string_view ScalarText(fy_event* e, std::string_view source, std::string& scratch) {
  fy_token* token = e->scalar.value;
  if (token != nullptr && fy_token_scalar_style(token) == FYSS_SINGLE_QUOTED) {
    // The marks of a quoted scalar enclose its content, between the quotes.
    const fy_mark* start = fy_event_start_mark(e);
    const fy_mark* end = fy_event_end_mark(e);
    if (start != nullptr && end != nullptr && start->input_pos > 0 && start->input_pos <= end->input_pos &&
        end->input_pos < source.size() && source[start->input_pos - 1] == '\'' && source[end->input_pos] == '\'') {
      const std::string_view inner = source.substr(start->input_pos, end->input_pos - start->input_pos);
      if (auto value = SingleQuotedValue(inner, scratch)) return *value;
    }
  }
  return TokenText(token);
}

// ---------------------------------------------------------------------------------------------
// Scalar resolution (go-yaml v2's resolve.go).

struct Word {
  std::string_view text;
  int kind;  // 0 null, 1 true, 2 false
};
constexpr Word kWords[] = {
    {"", 0},    {"~", 0},    {"null", 0}, {"Null", 0},  {"NULL", 0},  {"y", 1},     {"Y", 1},   {"yes", 1}, {"Yes", 1},
    {"YES", 1}, {"true", 1}, {"True", 1}, {"TRUE", 1},  {"on", 1},    {"On", 1},    {"ON", 1},  {"n", 2},   {"N", 2},
    {"no", 2},  {"No", 2},   {"NO", 2},   {"false", 2}, {"False", 2}, {"FALSE", 2}, {"off", 2}, {"Off", 2}, {"OFF", 2},
};

// strconv.ParseInt/ParseUint with base 0: an optional sign, then 0x / 0o / 0b / 0 (octal) or
// decimal digits.
bool ParseGoInteger(std::string_view s, int64_t& i, uint64_t& u, bool& is_unsigned) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  int base = 10;
  if (s.size() > 1 && s[0] == '0') {
    if (s[1] == 'x' || s[1] == 'X') {
      base = 16;
      s.remove_prefix(2);
    } else if (s[1] == 'b' || s[1] == 'B') {
      base = 2;
      s.remove_prefix(2);
    } else if (s[1] == 'o' || s[1] == 'O') {
      base = 8;
      s.remove_prefix(2);
    } else {
      base = 8;
      s.remove_prefix(1);
    }
  }
  if (s.empty()) return false;
  uint64_t magnitude = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), magnitude, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) return false;
  if (negative) {
    if (magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) return false;
    i = static_cast<int64_t>(0 - magnitude);
    is_unsigned = false;
    return true;
  }
  if (magnitude <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    i = static_cast<int64_t>(magnitude);
    is_unsigned = false;
  } else {
    u = magnitude;
    is_unsigned = true;
  }
  return true;
}

// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool IsYamlFloat(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

// How a resolved scalar prints as JSON, to tell whether the written form must be kept.
std::string Canonical(const json::Value& v) {
  char buf[64];
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  if (v.IsInt64()) return std::string(buf, std::to_chars(buf, buf + sizeof buf, v.GetInt64()).ptr);
  if (v.IsUint64()) return std::string(buf, std::to_chars(buf, buf + sizeof buf, v.GetUint64()).ptr);
  if (v.IsDouble()) return std::string(buf, std::to_chars(buf, buf + sizeof buf, v.GetDouble()).ptr);
  return {};
}

// ---------------------------------------------------------------------------------------------
// Building the DOM from events. Values wait on one stack (as RapidJSON's own reader does) until
// their container ends; the container is then built from them, and a value's address never
// changes after that (ScalarTexts keys on it).

class Builder {
 public:
  Builder(json::Document& doc, ScalarTexts* texts) : doc_(doc), alloc_(doc.GetAllocator()), texts_(texts) {}

  // Consumes the events of the first document; false with error_ set on failure.
  bool Run(EventParser& p) {
    source_ = p.text();
    bool in_document = false;
    bool have_root = false;
    while (true) {
      fy_event* e = p.Next();
      if (e == nullptr) {
        if (p.Failed()) {
          error_ = p.Error();
          return false;
        }
        break;
      }
      EventHolder hold(p, e);
      switch (e->type) {
        case FYET_DOCUMENT_START:
          in_document = true;
          break;
        case FYET_DOCUMENT_END:
          if (in_document) {
            // Only the first document, as yaml-cpp's Load; the caller splits streams.
            if (!stack_.empty()) {
              root_ = std::move(stack_.back());
              have_root = true;
            }
            Finish(have_root);
            return true;
          }
          break;
        case FYET_MAPPING_START:
        case FYET_SEQUENCE_START: {
          if (!CheckKeyPosition(e, e->type == FYET_MAPPING_START ? "a mapping" : "a list")) return false;
          if (frames_.size() >= static_cast<size_t>(json::kMaxDepth)) {
            error_ = ParseError{LineOfEvent(e), 0, fmt::format("nesting deeper than {} levels", json::kMaxDepth)};
            return false;
          }
          fy_token* anchor = e->type == FYET_MAPPING_START ? e->mapping_start.anchor : e->sequence_start.anchor;
          frames_.push_back(
              Frame{e->type == FYET_MAPPING_START, stack_.size(), pending_.size(), std::string(TokenText(anchor))});
          break;
        }
        case FYET_MAPPING_END:
        case FYET_SEQUENCE_END:
          if (!EndContainer()) return false;
          break;
        case FYET_SCALAR:
          if (!Scalar(e)) return false;
          break;
        case FYET_ALIAS:
          if (!Alias(e)) return false;
          break;
        default:
          break;
      }
    }
    if (!stack_.empty()) {
      root_ = std::move(stack_.back());
      have_root = true;
    }
    Finish(have_root);
    return true;
  }

  ParseError error_;

 private:
  struct Frame {
    bool mapping;
    size_t start;          // first stack slot of this container's children
    size_t pending_start;  // first pending_ entry of this container's children
    std::string anchor;
  };
  struct Pending {
    size_t slot;
    std::string text;
  };
  struct Anchored {
    json::Value value;
    size_t count;  // values in it, counted against kMaxAliasedValues when aliased
    size_t bytes;  // text in it (strings and keys), counted against kMaxAliasedBytes
  };

  void Finish(bool have_root) {
    if (have_root) {
      static_cast<json::Value&>(doc_).Swap(root_);
    } else {
      doc_.SetNull();
    }
    // A root scalar's written form: keyed by the document itself.
    if (texts_ != nullptr) {
      for (Pending& p : pending_) {
        if (p.slot == 0) texts_->Add(&doc_, p.text);
      }
    }
  }

  bool InKeyPosition() const {
    return !frames_.empty() && frames_.back().mapping && (stack_.size() - frames_.back().start) % 2 == 0;
  }

  bool CheckKeyPosition(fy_event* e, std::string_view what) {
    if (!InKeyPosition()) return true;
    error_ = ParseError{LineOfEvent(e), 0, fmt::format("mapping keys must be strings, got {}", what)};
    return false;
  }

  // The values in `v` and the bytes of its strings and keys, added to `count` and `bytes`.
  static void Measure(const json::Value& v, size_t& count, size_t& bytes) {
    ++count;
    if (v.IsString()) {
      bytes += v.GetStringLength();
    } else if (v.IsObject()) {
      for (const auto& m : v.GetObject()) {
        bytes += m.name.GetStringLength();
        Measure(m.value, count, bytes);
      }
    } else if (v.IsArray()) {
      for (const auto& x : v.GetArray()) Measure(x, count, bytes);
    }
  }

  // A completed value: onto the stack, and into anchors_ when it has an anchor.
  void Push(json::Value v, std::string_view anchor) {
    if (!anchor.empty()) {
      json::Value copy(v, alloc_);
      size_t count = 0;
      size_t bytes = 0;
      Measure(copy, count, bytes);
      anchors_.insert_or_assign(std::string(anchor), Anchored{std::move(copy), count, bytes});
    }
    stack_.push_back(std::move(v));
  }

  bool Scalar(fy_event* e) {
    fy_token* token = e->scalar.value;
    const std::string_view text = ScalarText(e, source_, scratch_);
    const std::string_view anchor = TokenText(e->scalar.anchor);
    if (InKeyPosition()) {
      stack_.push_back(json::MakeString(text, alloc_));
      return true;
    }
    if (token == nullptr) {  // an empty node (an empty document, "key:" with nothing after it)
      Push(json::Value(), anchor);
      return true;
    }
    bool plain = fy_token_scalar_style(token) == FYSS_PLAIN;
    // Not scalar.tag_implicit: libfyaml 0.7 leaves it uninitialised; a tag token means a written tag.
    if (fy_token* tag = e->scalar.tag; tag != nullptr) {
      size_t hlen = 0, slen = 0;
      const char* handle = fy_tag_token_handle(tag, &hlen);
      const char* suffix = fy_tag_token_suffix(tag, &slen);
      const std::string_view h = handle != nullptr ? std::string_view(handle, hlen) : std::string_view();
      const std::string_view s = suffix != nullptr ? std::string_view(suffix, slen) : std::string_view();
      if (h == "!!" && s == "str") {
        plain = false;
      } else if (h == "!!" && (s == "int" || s == "float" || s == "bool" || s == "null")) {
        plain = true;
      }
    }
    if (!plain) {
      Push(json::MakeString(text, alloc_), anchor);
      return true;
    }
    json::Value v = ResolvePlain(text, alloc_);
    if (texts_ != nullptr && !v.IsString() && !v.IsNull()) {
      if (Canonical(v) != text) pending_.push_back(Pending{stack_.size(), std::string(text)});
    }
    Push(std::move(v), anchor);
    return true;
  }

  bool Alias(fy_event* e) {
    const std::string_view name = TokenText(e->alias.anchor);
    auto it = anchors_.find(std::string(name));
    if (it == anchors_.end()) {
      error_ = ParseError{LineOfEvent(e), 0, fmt::format("unknown anchor \"{}\"", name)};
      return false;
    }
    aliased_ += it->second.count;
    aliased_bytes_ += it->second.bytes;
    if (aliased_ > kMaxAliasedValues) {
      error_ = ParseError{LineOfEvent(e), 0,
                          fmt::format("aliases expand to more than {} values (an alias bomb?)", kMaxAliasedValues)};
      return false;
    }
    if (aliased_bytes_ > kMaxAliasedBytes) {
      error_ = ParseError{
          LineOfEvent(e), 0,
          fmt::format("aliases expand to more than {} MiB of text (an alias bomb?)", kMaxAliasedBytes >> 20)};
      return false;
    }
    if (InKeyPosition() && !it->second.value.IsString()) {
      error_ = ParseError{LineOfEvent(e), 0, "mapping keys must be strings"};
      return false;
    }
    stack_.push_back(json::Value(it->second.value, alloc_));
    return true;
  }

  bool EndContainer() {
    Frame f = std::move(frames_.back());
    frames_.pop_back();
    const size_t n = stack_.size() - f.start;
    json::Value v;
    if (f.mapping) {
      v.SetObject();  // RapidJSON 1.1 has no MemberReserve: members grow geometrically
      for (size_t i = f.start; i + 1 < stack_.size(); i += 2) {
        v.AddMember(stack_[i], stack_[i + 1], alloc_);
      }
    } else {
      v.SetArray();
      v.Reserve(static_cast<rapidjson::SizeType>(n), alloc_);
      for (size_t i = f.start; i < stack_.size(); ++i) v.PushBack(stack_[i], alloc_);
    }
    // The children now sit at their final addresses.
    if (texts_ != nullptr && pending_.size() > f.pending_start) {
      for (size_t i = f.pending_start; i < pending_.size(); ++i) {
        const size_t pos = pending_[i].slot - f.start;
        const json::Value* at = f.mapping ? &(v.MemberBegin() + static_cast<std::ptrdiff_t>(pos / 2))->value
                                          : &v[static_cast<rapidjson::SizeType>(pos)];
        texts_->Add(at, pending_[i].text);
      }
    }
    pending_.resize(f.pending_start);
    stack_.resize(f.start);
    Push(std::move(v), f.anchor);
    return true;
  }

  json::Document& doc_;
  std::string_view source_;  // the text being parsed (ScalarText reads quoted scalars from it)
  std::string scratch_;      // ScalarText's buffer
  json::Allocator& alloc_;
  ScalarTexts* texts_;
  std::vector<json::Value> stack_;
  std::vector<Frame> frames_;
  std::vector<Pending> pending_;
  std::unordered_map<std::string, Anchored> anchors_;
  size_t aliased_ = 0;
  size_t aliased_bytes_ = 0;
  json::Value root_;
};

// The path from `v` to `target`, appended to `path`; depth-first, iterative over the stack of
// open containers so deep documents cannot overflow the call stack.
bool Search(const json::Value& root, const json::Value* target, bool key, SourcePath& path) {
  if (!key && &root == target) return true;
  struct Open {
    const json::Value* v;
    uint32_t next;
  };
  std::vector<Open> open{{&root, 0}};
  path.clear();
  while (!open.empty()) {
    Open& top = open.back();
    const json::Value& v = *top.v;
    const uint32_t size = v.IsObject() ? v.MemberCount() : v.IsArray() ? v.Size() : 0;
    if (top.next >= size) {
      open.pop_back();
      if (!path.empty()) path.pop_back();
      continue;
    }
    const uint32_t i = top.next++;
    const json::Value* child = nullptr;
    if (v.IsObject()) {
      const auto m = v.MemberBegin() + i;
      if (key && &m->name == target) {
        path.push_back(PathStep{PathStep::Kind::kKey, i});
        return true;
      }
      child = &m->value;
      path.push_back(PathStep{PathStep::Kind::kValue, i});
    } else {
      child = &v[i];
      path.push_back(PathStep{PathStep::Kind::kElement, i});
    }
    if (!key && child == target) return true;
    if (child->IsObject() || child->IsArray()) {
      open.push_back(Open{child, 0});
    } else {
      path.pop_back();
    }
  }
  return false;
}

}  // namespace

json::Value ResolvePlain(std::string_view text, json::Allocator& alloc) {
  for (const Word& w : kWords) {
    if (w.text == text) {
      if (w.kind == 0) return json::Value();
      return json::Value(w.kind == 1);
    }
  }
  const char c = text.empty() ? '\0' : text[0];
  if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
    std::string plain(text);
    std::erase(plain, '_');
    int64_t i = 0;
    uint64_t u = 0;
    bool is_unsigned = false;
    if (c != '.' && ParseGoInteger(plain, i, u, is_unsigned)) {
      return is_unsigned ? json::Value(u) : json::Value(i);
    }
    if (IsYamlFloat(plain)) {
      double d = 0;
      const char* begin = plain.data() + (plain[0] == '+' ? 1 : 0);
      auto [ptr, ec] = std::from_chars(begin, plain.data() + plain.size(), d);
      if (ec == std::errc() && ptr == plain.data() + plain.size() && std::isfinite(d)) return json::Value(d);
    }
  }
  return json::MakeString(text, alloc);
}

std::expected<void, ParseError> Parse(std::string_view text, json::Document& doc, ScalarTexts* texts) {
  if (auto invalid = UnreadableText(text)) {
    doc.SetNull();
    return std::unexpected(std::move(*invalid));
  }
  EventParser parser(text);
  if (!parser.ok()) return std::unexpected(ParseError{0, 0, "cannot create a YAML parser"});
  Builder builder(doc, texts);
  if (!builder.Run(parser)) {
    doc.SetNull();
    return std::unexpected(std::move(builder.error_));
  }
  return {};
}

std::optional<SourcePath> PathTo(const json::Value& root, const json::Value* target, bool key) {
  SourcePath path;
  if (target == nullptr || !Search(root, target, key, path)) return std::nullopt;
  return path;
}

std::vector<int> LinesOf(std::string_view text, std::span<const SourcePath> paths) {
  std::vector<int> lines(paths.size(), 0);
  if (paths.empty() || UnreadableText(text)) return lines;  // text Parse rejects has no paths
  EventParser p(text);
  if (!p.ok()) return lines;
  struct Frame {
    bool mapping;
    uint32_t children = 0;
  };
  std::vector<Frame> frames;
  SourcePath current;
  size_t unresolved = paths.size();
  bool started = false;
  while (unresolved > 0) {
    fy_event* e = p.Next();
    if (e == nullptr) break;
    EventHolder hold(p, e);
    const bool node_start = e->type == FYET_SCALAR || e->type == FYET_ALIAS || e->type == FYET_MAPPING_START ||
                            e->type == FYET_SEQUENCE_START;
    if (e->type == FYET_DOCUMENT_END && started) break;
    if (e->type == FYET_MAPPING_END || e->type == FYET_SEQUENCE_END) {
      if (!frames.empty()) frames.pop_back();
      continue;
    }
    if (!node_start) continue;
    started = true;
    // This node's path: its container's (the first frames.size() - 1 steps), plus its position.
    current.resize(frames.empty() ? 0 : frames.size() - 1);
    if (!frames.empty()) {
      Frame& parent = frames.back();
      const uint32_t k = parent.children++;
      if (parent.mapping) {
        current.push_back(PathStep{k % 2 == 0 ? PathStep::Kind::kKey : PathStep::Kind::kValue, k / 2});
      } else {
        current.push_back(PathStep{PathStep::Kind::kElement, k});
      }
    }
    const int line = LineOfEvent(e);
    for (size_t i = 0; i < paths.size(); ++i) {
      if (lines[i] != 0) continue;
      const SourcePath& want = paths[i];
      const bool exact = want == current;
      // An alias stands for its whole subtree: a path into it points at the alias.
      const bool into_alias = e->type == FYET_ALIAS && want.size() > current.size() &&
                              std::equal(current.begin(), current.end(), want.begin());
      if (exact || into_alias) {
        lines[i] = line;
        --unresolved;
      }
    }
    if (e->type == FYET_MAPPING_START || e->type == FYET_SEQUENCE_START) {
      frames.push_back(Frame{e->type == FYET_MAPPING_START});
    }
  }
  return lines;
}

}  // namespace kubesched::api::yaml
