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
