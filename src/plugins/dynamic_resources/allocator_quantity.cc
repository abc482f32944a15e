#include "plugins/dynamic_resources/allocator_quantity.h"

#include <charconv>
#include <limits>
#include <string>
#include <string_view>

namespace kubesched::plugins::dynamic_resources::internal {
namespace {

constexpr int kMaxDigits = 36;  // 10^36 < kNanoLimit * 10 < 2^127

Nano SaturatingMul(Nano a, Nano b) {
  if (a == 0 || b == 0) return 0;
  if (a > kNanoLimit / b) return kNanoLimit;
  const Nano p = a * b;
  return p > kNanoLimit ? kNanoLimit : p;
}

Nano Pow10(int e) {
  Nano p = 1;
  for (int i = 0; i < e && p < kNanoLimit; ++i) p *= 10;
  return p > kNanoLimit ? kNanoLimit : p;
}

struct Suffix {
  int exponent10 = 0;
  int exponent2 = 0;
  bool binary = false;
};

Suffix ReadSuffix(std::string_view s) {
  if (s.empty()) return {};
  if (s.size() == 2 && s[1] == 'i') {
    static constexpr std::string_view kBinary = "KMGTPE";
    const auto pos = kBinary.find(s[0]);
    return {0, 10 * static_cast<int>(pos + 1), true};
  }
  if (s.size() == 1) {
    switch (s[0]) {
      case 'n':
        return {-9};
      case 'u':
        return {-6};
      case 'm':
        return {-3};
      case 'k':
        return {3};
      case 'M':
        return {6};
      case 'G':
        return {9};
      case 'T':
        return {12};
      case 'P':
        return {15};
      case 'E':
        return {18};
      default:
        break;
    }
  }
  // e/E<integer>: Quantity::Parse bounded it to int32; anything past +-100 saturates anyway.
  std::string_view exp = s.substr(1);
  bool negative = false;
  if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) {
    negative = exp[0] == '-';
    exp.remove_prefix(1);
  }
  int64_t value = 0;
  std::from_chars(exp.data(), exp.data() + exp.size(), value);
  if (value > 1000) value = 1000;
  return {static_cast<int>(negative ? -value : value)};
}

}  // namespace

Nano ToNano(const api::Quantity& q) {
  std::string_view text = q.text();
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  // The significant digits of integer and fraction, and the power of ten they are scaled by.
  std::string digits;
  int exponent10 = 0;
  size_t pos = 0;
  bool in_fraction = false;
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (c == '.') {
      in_fraction = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    if (in_fraction) --exponent10;
    if (digits.empty() && c == '0') continue;
    digits.push_back(c);
  }
  const Suffix suffix = ReadSuffix(text.substr(pos));
  exponent10 += suffix.exponent10;
  while (!digits.empty() && digits.back() == '0') {
    digits.pop_back();
    ++exponent10;
  }
  if (digits.empty()) return 0;
  bool round_up = false;
  if (static_cast<int>(digits.size()) > kMaxDigits) {
    const int dropped = static_cast<int>(digits.size()) - kMaxDigits;
    round_up = digits.find_first_not_of('0', kMaxDigits) != std::string::npos;
    digits.resize(kMaxDigits);
    exponent10 += dropped;
  }
  Nano mantissa = 0;
  for (char c : digits) mantissa = mantissa * 10 + (c - '0');
  if (round_up) ++mantissa;
  mantissa = SaturatingMul(mantissa, static_cast<Nano>(1) << suffix.exponent2);

  Nano nano = 0;
  const int scale = exponent10 + 9;
  if (scale >= 0) {
    nano = SaturatingMul(mantissa, Pow10(scale));
  } else if (-scale > 38) {
    nano = 1;  // below one nano unit: upstream rounds it up to 1n
  } else {
    const Nano divisor = Pow10(-scale);
    nano = mantissa / divisor + (mantissa % divisor != 0 ? 1 : 0);
  }
  if (suffix.binary) {
    // Upstream caps binary quantities at the largest int64 ("9Ei" is 2^63-1).
    const Nano cap = static_cast<Nano>(std::numeric_limits<int64_t>::max()) * 1'000'000'000;
    if (nano > cap) nano = cap;
  }
  return negative ? -nano : nano;
}

int64_t CeilUnits(Nano n) {
  constexpr Nano kUnit = 1'000'000'000;
  Nano units = n / kUnit;
  if (n % kUnit != 0) units += n > 0 ? 1 : -1;  // away from zero, as Quantity.Value()
  if (units > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (units < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(units);
}

api::Quantity BinarySIQuantity(int64_t value) {
  static constexpr std::string_view kSuffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  const int64_t original = value;
  std::string text;
  if (value > -1024 && value < 1024) {
    text = std::to_string(value);
  } else {
    int exponent = 0;
    while (value % 1024 == 0 && exponent < 6) {
      value /= 1024;
      ++exponent;
    }
    text = std::to_string(value);
    text += kSuffixes[exponent];
  }
  auto parsed = api::Quantity::Parse(text);
  return parsed ? *parsed : api::Quantity::FromInt(original);
}

}  // namespace kubesched::plugins::dynamic_resources::internal
