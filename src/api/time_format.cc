#include "api/time_format.h"

#include <limits>

namespace kubesched::api {

std::optional<int64_t> ParseRFC3339(std::string_view s) {
  auto num = [&](size_t pos, size_t len) -> std::optional<int> {
    if (pos + len > s.size()) return std::nullopt;
    int v = 0;
    for (size_t i = pos; i < pos + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  auto year = num(0, 4), month = num(5, 2), day = num(8, 2), hour = num(11, 2), minute = num(14, 2),
       second = num(17, 2);
  if (!year || !month || !day || !hour || !minute || !second || s.size() < 20 || s[4] != '-' || s[7] != '-' ||
      (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  size_t pos = 19;
  int64_t nanos = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 9) nanos = nanos * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return std::nullopt;
    for (int i = digits; i < 9; ++i) nanos *= 10;
  }
  int64_t offset_seconds = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    auto oh = num(pos + 1, 2), om = num(pos + 4, 2);
    if (!oh || !om || pos + 3 >= s.size() || s[pos + 3] != ':') return std::nullopt;
    offset_seconds = (*oh * 3600 + *om * 60) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  // Days from the civil date (Howard Hinnant's algorithm).
  const int64_t y = *year - (*month <= 2 ? 1 : 0);
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (*month + (*month > 2 ? -3 : 9)) + 2) / 5 + *day - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const int64_t days = era * 146097 + doe - 719468;
  const int64_t seconds = days * 86400 + *hour * 3600 + *minute * 60 + *second - offset_seconds;
  // Nanoseconds in an int64 cover 1678 to 2262; anything else cannot be represented.
  constexpr int64_t kLimit = std::numeric_limits<int64_t>::max() / 1'000'000'000 - 1;
  if (seconds > kLimit || seconds < -kLimit) return std::nullopt;
  return seconds * 1'000'000'000 + nanos;
}

std::string FormatRFC3339(int64_t unix_ns) {
  // Floor to whole seconds (metav1.Time drops fractions), then the civil date (Howard Hinnant's
  // algorithm, the inverse of the one above).
  int64_t seconds = unix_ns / 1'000'000'000;
  if (unix_ns % 1'000'000'000 < 0) --seconds;
  int64_t days = seconds / 86400;
  int64_t rem = seconds % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t day = doy - (153 * mp + 2) / 5 + 1;
  const int64_t month = mp < 10 ? mp + 3 : mp - 9;
  const int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  // Written digit by digit: fmt::format spent about 3,800 instructions per call here, and every
  // store write stamps a time or two. int64 nanoseconds span the years 1677 to 2262, four digits.
  char out[20] = {'0', '0', '0', '0', '-', '0', '0', '-', '0', '0', 'T', '0', '0', ':', '0', '0', ':', '0', '0', 'Z'};
  auto put = [&out](int at, int64_t value, int digits) {
    for (int i = digits - 1; i >= 0; --i, value /= 10) out[at + i] = static_cast<char>('0' + value % 10);
  };
  put(0, year, 4);
  put(5, month, 2);
  put(8, day, 2);
  put(11, rem / 3600, 2);
  put(14, rem % 3600 / 60, 2);
  put(17, rem % 60, 2);
  return std::string(out, sizeof(out));
}

std::string FormatRFC3339Micro(int64_t unix_ns) {
  // The whole seconds as metav1.Time writes them, then the floored microseconds before the 'Z'.
  std::string out = FormatRFC3339(unix_ns);
  int64_t fraction_ns = unix_ns % 1'000'000'000;
  if (fraction_ns < 0) fraction_ns += 1'000'000'000;
  int64_t micros = fraction_ns / 1000;
  char frac[7] = {'.', '0', '0', '0', '0', '0', '0'};
  for (int i = 6; i >= 1; --i, micros /= 10) frac[i] = static_cast<char>('0' + micros % 10);
  out.insert(out.size() - 1, frac, sizeof(frac));
  return out;
}

}  // namespace kubesched::api
