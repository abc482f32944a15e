#include "api/names.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>

namespace kubesched::api {
namespace {

constexpr std::string_view kQualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr std::string_view kQualifiedNameErrMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
constexpr size_t kQualifiedNameMaxLength = 63;

constexpr std::string_view kLabelValueFmt = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
constexpr std::string_view kLabelValueErrMsg =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character";
constexpr size_t kLabelValueMaxLength = 63;

constexpr std::string_view kDNS1123LabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
constexpr std::string_view kDNS1123LabelErrMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character";
constexpr size_t kDNS1123LabelMaxLength = 63;

constexpr std::string_view kDNS1123SubdomainFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr std::string_view kDNS1123SubdomainErrMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character";
constexpr size_t kDNS1123SubdomainMaxLength = 253;

// Character classes of the patterns below, one table lookup per character (every label key and
// value of every object decoded goes through them).
enum CharClass : uint8_t { kLowerAlnum = 1, kUpper = 2, kDash = 4, kUnderscoreOrDot = 8 };
constexpr auto kCharClasses = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 'a'; c <= 'z'; ++c) t[c] = kLowerAlnum;
  for (int c = '0'; c <= '9'; ++c) t[c] = kLowerAlnum;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = kUpper;
  t['-'] = kDash;
  t['_'] = t['.'] = kUnderscoreOrDot;
  return t;
}();
bool InClass(char c, uint8_t classes) { return (kCharClasses[static_cast<unsigned char>(c)] & classes) != 0; }
bool AllInClass(std::string_view s, uint8_t classes) {
  return std::all_of(s.begin(), s.end(), [classes](char c) { return InClass(c, classes); });
}

bool IsAlnum(char c) { return InClass(c, kLowerAlnum | kUpper); }
bool IsLowerAlnum(char c) { return InClass(c, kLowerAlnum); }

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], anchored.
bool MatchesQualifiedNamePattern(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return AllInClass(s, kLowerAlnum | kUpper | kDash | kUnderscoreOrDot);
}

// One RFC 1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool MatchesDNSLabel(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  return AllInClass(s, kLowerAlnum | kDash);
}

// Labels joined by dots, in one pass: lowercase alphanumerics, '-' and '.', alphanumerics at both
// ends and on both sides of every dot (so no label is empty or starts or ends with '-').
bool MatchesDNSSubdomain(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    const uint8_t c = kCharClasses[static_cast<unsigned char>(s[i])];
    if (c & (kLowerAlnum | kDash)) continue;
    if (s[i] != '.' || !IsLowerAlnum(s[i - 1]) || !IsLowerAlnum(s[i + 1])) return false;
  }
  return true;
}

// validation.RegexError: note the doubled space before "or", as upstream renders it.
std::string RegexError(std::string_view msg, std::string_view fmt, std::initializer_list<std::string_view> examples) {
  std::string out(msg);
  if (examples.size() == 0) return out + " (regex used for validation is '" + std::string(fmt) + "')";
  out += " (e.g. ";
  bool first = true;
  for (auto e : examples) {
    if (!first) out += " or ";
    first = false;
    out += "'" + std::string(e) + "', ";
  }
  out += "regex used for validation is '" + std::string(fmt) + "')";
  return out;
}

std::string MaxLenError(size_t n) { return "must be no more than " + std::to_string(n) + " characters"; }

}  // namespace

std::vector<std::string> IsQualifiedName(std::string_view value) {
  std::vector<std::string> errs;
  std::string_view name = value;
  size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos) {
      errs.push_back("a qualified name " +
                     RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt, {"MyName", "my.name", "123-abc"}) +
                     " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
      return errs;
    }
    std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back("prefix part must be non-empty");
    } else {
      for (auto& m : IsDNS1123Subdomain(prefix)) errs.push_back("prefix part " + m);
    }
  }
  if (name.empty()) {
    errs.push_back("name part must be non-empty");
  } else if (name.size() > kQualifiedNameMaxLength) {
    errs.push_back("name part " + MaxLenError(kQualifiedNameMaxLength));
  }
  if (!MatchesQualifiedNamePattern(name)) {
    errs.push_back("name part " +
                   RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt, {"MyName", "my.name", "123-abc"}));
  }
  return errs;
}

std::vector<std::string> IsValidLabelValue(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kLabelValueMaxLength) errs.push_back(MaxLenError(kLabelValueMaxLength));
  if (!value.empty() && !MatchesQualifiedNamePattern(value)) {
    errs.push_back(RegexError(kLabelValueErrMsg, kLabelValueFmt, {"MyValue", "my_value", "12345"}));
  }
  return errs;
}

bool IsValidQualifiedName(std::string_view value) {
  std::string_view name = value;
  if (const size_t slash = value.find('/'); slash != std::string_view::npos) {
    const std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (name.find('/') != std::string_view::npos || prefix.empty() || prefix.size() > kDNS1123SubdomainMaxLength ||
        !MatchesDNSSubdomain(prefix)) {
      return false;
    }
  }
  return !name.empty() && name.size() <= kQualifiedNameMaxLength && MatchesQualifiedNamePattern(name);
}

bool IsValidLabelValueText(std::string_view value) {
  return value.size() <= kLabelValueMaxLength && (value.empty() || MatchesQualifiedNamePattern(value));
}

std::vector<std::string> IsDNS1123Subdomain(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kDNS1123SubdomainMaxLength) errs.push_back(MaxLenError(kDNS1123SubdomainMaxLength));
  if (!MatchesDNSSubdomain(value)) {
    errs.push_back(RegexError(kDNS1123SubdomainErrMsg, kDNS1123SubdomainFmt, {"example.com"}));
  }
  return errs;
}

std::vector<std::string> IsDNS1123Label(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kDNS1123LabelMaxLength) errs.push_back(MaxLenError(kDNS1123LabelMaxLength));
  if (!MatchesDNSLabel(value))
    errs.push_back(RegexError(kDNS1123LabelErrMsg, kDNS1123LabelFmt, {"my-name", "123-abc"}));
  return errs;
}

std::vector<std::string> IsValidPathSegmentName(std::string_view value) {
  for (std::string_view illegal : {".", ".."}) {
    if (value == illegal) return {"may not be '" + std::string(illegal) + "'"};
  }
  std::vector<std::string> errs;
  for (std::string_view illegal : {"/", "%"}) {
    if (value.find(illegal) != std::string_view::npos) errs.push_back("may not contain '" + std::string(illegal) + "'");
  }
  return errs;
}

std::string WorkloadName(const Pod& pod) {
  for (const auto& o : pod.metadata.owner_references) {
    if (!o.controller && pod.metadata.owner_references.size() > 1) continue;
    std::string name = o.name;
    if (const std::string* hash = pod.metadata.labels.Find("pod-template-hash")) {
      const std::string suffix = "-" + *hash;
      if (name.size() > suffix.size() && name.ends_with(suffix)) name.resize(name.size() - suffix.size());
    }
    return name;
  }
  return pod.metadata.name;
}

}  // namespace kubesched::api
