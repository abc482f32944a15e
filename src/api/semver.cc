#include "api/semver.h"

#include <algorithm>
#include <charconv>

namespace kubesched::api {
namespace {

// blang/semver's character classes: numbers, and alphanumerics (letters, digits and '-').
bool IsNumeric(std::string_view s) {
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool IsAlphanumeric(std::string_view s) {
  for (char c : s) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool HasLeadingZero(std::string_view s) { return s.size() > 1 && s[0] == '0'; }

// A major, minor or patch number: digits only, no leading zero, fits uint64 (strconv.ParseUint).
std::optional<uint64_t> ParseNumber(std::string_view s) {
  if (s.empty() || !IsNumeric(s) || HasLeadingZero(s)) return std::nullopt;
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

// Splits on '.', keeping empty parts (strings.Split).
std::vector<std::string> Split(std::string_view s) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    if (dot == std::string_view::npos) {
      parts.emplace_back(s.substr(start));
      return parts;
    }
    parts.emplace_back(s.substr(start, dot - start));
    start = dot + 1;
  }
}

// A pre-release identifier (blang's NewPRVersion): numeric without leading zeros and within
// uint64, or alphanumeric with at least one non-digit.
bool ValidPreRelease(std::string_view s) {
  if (s.empty()) return false;
  if (IsNumeric(s)) return ParseNumber(s).has_value();
  return IsAlphanumeric(s);
}

int ComparePreRelease(const std::string& a, const std::string& b) {
  const bool a_num = IsNumeric(a);
  const bool b_num = IsNumeric(b);
  if (a_num && b_num) {
    // Validated: no leading zeros, so the longer number is the larger one.
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
    return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
  }
  if (a_num) return -1;  // numeric identifiers have lower precedence than alphanumeric ones
  if (b_num) return 1;
  const int c = a.compare(b);
  return c < 0 ? -1 : (c == 0 ? 0 : 1);
}

}  // namespace

std::optional<SemVer> SemVer::Parse(std::string_view text) {
  // As blang/semver/v4 Parse: "<major>.<minor>.<patch>[-<pre>][+<build>]", split into three at
  // the first two dots; the build metadata is cut off first, so "1.0.0+b-1" has no pre-release.
  if (text.empty()) return std::nullopt;
  const size_t dot1 = text.find('.');
  if (dot1 == std::string_view::npos) return std::nullopt;
  const size_t dot2 = text.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos) return std::nullopt;

  SemVer v;
  const auto major = ParseNumber(text.substr(0, dot1));
  const auto minor = ParseNumber(text.substr(dot1 + 1, dot2 - dot1 - 1));
  if (!major || !minor) return std::nullopt;
  v.major = *major;
  v.minor = *minor;

  std::string_view patch = text.substr(dot2 + 1);
  if (const size_t plus = patch.find('+'); plus != std::string_view::npos) {
    v.build = Split(patch.substr(plus + 1));
    patch = patch.substr(0, plus);
  }
  if (const size_t dash = patch.find('-'); dash != std::string_view::npos) {
    v.pre_release = Split(patch.substr(dash + 1));
    patch = patch.substr(0, dash);
  }
  const auto patch_number = ParseNumber(patch);
  if (!patch_number) return std::nullopt;
  v.patch = *patch_number;
  for (const auto& pre : v.pre_release) {
    if (!ValidPreRelease(pre)) return std::nullopt;
  }
  for (const auto& build : v.build) {
    if (build.empty() || !IsAlphanumeric(build)) return std::nullopt;
  }
  return v;
}

std::string SemVer::String() const {
  std::string out = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  for (size_t i = 0; i < pre_release.size(); ++i) {
    out += i == 0 ? '-' : '.';
    out += pre_release[i];
  }
  for (size_t i = 0; i < build.size(); ++i) {
    out += i == 0 ? '+' : '.';
    out += build[i];
  }
  return out;
}

std::strong_ordering SemVer::Compare(const SemVer& other) const {
  if (auto c = major <=> other.major; c != 0) return c;
  if (auto c = minor <=> other.minor; c != 0) return c;
  if (auto c = patch <=> other.patch; c != 0) return c;
  // A version without pre-release identifiers has the higher precedence (1.0.0-alpha < 1.0.0).
  if (pre_release.empty() && other.pre_release.empty()) return std::strong_ordering::equal;
  if (pre_release.empty()) return std::strong_ordering::greater;
  if (other.pre_release.empty()) return std::strong_ordering::less;
  const size_t n = std::min(pre_release.size(), other.pre_release.size());
  for (size_t i = 0; i < n; ++i) {
    const int c = ComparePreRelease(pre_release[i], other.pre_release[i]);
    if (c != 0) return c < 0 ? std::strong_ordering::less : std::strong_ordering::greater;
  }
  // Equal so far: the longer list of identifiers has the higher precedence.
  return pre_release.size() <=> other.pre_release.size();
}

}  // namespace kubesched::api
