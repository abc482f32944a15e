#include "util/duration.h"

#include <cmath>
#include <limits>

namespace kubesched::util {

namespace {

struct Unit {
  std::string_view name;
  int64_t ns;
};

// Longest names first, so "ms" is not read as "m" followed by "s".
constexpr Unit kUnits[] = {
    {"ns", 1},
    {"us", 1'000},
    {"\xc2\xb5s", 1'000},  // U+00B5 micro sign
    {"\xce\xbcs", 1'000},  // U+03BC Greek mu
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
};

}  // namespace

std::expected<int64_t, std::string> ParseDuration(std::string_view text) {
  const std::string quoted = "\"" + std::string(text) + "\"";
  auto fail = [&](std::string why) { return std::unexpected("invalid duration " + quoted + ": " + why); };
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return 0;
  if (s.empty()) return fail("expected a number and a unit, such as 30s, 1m30s or 500ms");
  long double total = 0;
  while (!s.empty()) {
    size_t i = 0;
    int64_t whole = 0;
    bool digits = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (whole > (std::numeric_limits<int64_t>::max() - 9) / 10) return fail("out of range");
      whole = whole * 10 + (s[i] - '0');
      digits = true;
      ++i;
    }
    long double fraction = 0;
    if (i < s.size() && s[i] == '.') {
      ++i;
      long double scale = 0.1L;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        fraction += (s[i] - '0') * scale;
        scale /= 10;
        digits = true;
        ++i;
      }
    }
    if (!digits) return fail("expected a number, such as 30s, 1m30s or 500ms");
    s.remove_prefix(i);
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      if (s.starts_with(u.name)) {
        unit = &u;
        break;
      }
    }
    if (!unit) {
      size_t end = 0;
      while (end < s.size() && !(s[end] >= '0' && s[end] <= '9') && s[end] != '.') ++end;
      if (end == 0) return fail("missing unit (use ns, us, ms, s, m or h)");
      return fail("unknown unit \"" + std::string(s.substr(0, end)) + "\" (use ns, us, ms, s, m or h)");
    }
    s.remove_prefix(unit->name.size());
    total += (static_cast<long double>(whole) + fraction) * static_cast<long double>(unit->ns);
    if (total > static_cast<long double>(std::numeric_limits<int64_t>::max())) return fail("out of range");
  }
  const auto ns = static_cast<int64_t>(std::llround(total));
  return negative ? -ns : ns;
}

}  // namespace kubesched::util

namespace kubesched::util {

namespace {

// `v` with `prec` decimal places (trailing zeros and a bare point dropped), as Go's fmtFrac.
std::string WithFraction(uint64_t v, int prec) {
  std::string frac;
  bool print = false;
  for (int i = 0; i < prec; ++i) {
    const uint64_t digit = v % 10;
    print = print || digit != 0;
    if (print) frac.insert(frac.begin(), static_cast<char>('0' + digit));
    v /= 10;
  }
  std::string out = std::to_string(v);
  if (!frac.empty()) out += "." + frac;
  return out;
}

}  // namespace

std::string FormatDuration(int64_t ns) {
  if (ns == 0) return "0s";
  const bool negative = ns < 0;
  const uint64_t u = negative ? uint64_t(0) - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string out;
  if (u < 1'000'000'000) {
    // Below a second: the largest of ns, µs and ms that keeps the integer part non-zero.
    if (u < 1'000) {
      out = std::to_string(u) + "ns";
    } else if (u < 1'000'000) {
      out = WithFraction(u, 3) + "µs";
    } else {
      out = WithFraction(u, 6) + "ms";
    }
  } else {
    uint64_t seconds_ns = u % 60'000'000'000;  // seconds and their fraction, in ns
    uint64_t minutes = u / 60'000'000'000;
    out = WithFraction(seconds_ns, 9) + "s";
    if (minutes > 0) {
      out = std::to_string(minutes % 60) + "m" + out;
      if (minutes >= 60) out = std::to_string(minutes / 60) + "h" + out;
    }
  }
  return negative ? "-" + out : out;
}

}  // namespace kubesched::util
