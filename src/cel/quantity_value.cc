#include "cel/quantity_value.h"

#include <limits>

namespace kubesched::cel {
namespace {

constexpr __int128 kNanoPerUnit = 1'000'000'000;
constexpr int kMaxDigits = 38;  // every 38-digit number is below 1e38 <= kMaxNano

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

__int128 Pow10(int n) {
  __int128 r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

struct Suffix {
  int exponent10 = 0;
  int exponent2 = 0;
  bool binary = false;
};

// The suffixes of resource.Quantity; the "e<int>" form is handled by the caller.
std::optional<Suffix> LookupSuffix(std::string_view s) {
  if (s.empty()) return Suffix{};
  if (s.size() == 1) {
    switch (s[0]) {
      case 'n':
        return Suffix{-9, 0, false};
      case 'u':
        return Suffix{-6, 0, false};
      case 'm':
        return Suffix{-3, 0, false};
      case 'k':
        return Suffix{3, 0, false};
      case 'M':
        return Suffix{6, 0, false};
      case 'G':
        return Suffix{9, 0, false};
      case 'T':
        return Suffix{12, 0, false};
      case 'P':
        return Suffix{15, 0, false};
      case 'E':
        return Suffix{18, 0, false};
      default:
        return std::nullopt;
    }
  }
  if (s.size() == 2 && s[1] == 'i') {
    switch (s[0]) {
      case 'K':
        return Suffix{0, 10, true};
      case 'M':
        return Suffix{0, 20, true};
      case 'G':
        return Suffix{0, 30, true};
      case 'T':
        return Suffix{0, 40, true};
      case 'P':
        return Suffix{0, 50, true};
      case 'E':
        return Suffix{0, 60, true};
      default:
        return std::nullopt;
    }
  }
  return std::nullopt;
}

// The significant digits of "<int>.<frac>" without copying them: digit i of the concatenation.
struct Digits {
  std::string_view int_part;
  std::string_view frac_part;
  size_t begin = 0;  // first significant (non-zero) digit
  size_t end = 0;    // one past the last non-zero digit
  size_t size() const { return end - begin; }
  int At(size_t i) const {
    const size_t k = begin + i;
    return (k < int_part.size() ? int_part[k] : frac_part[k - int_part.size()]) - '0';
  }
};

}  // namespace

QuantityValue QuantityValue::FromNano(__int128 nano) {
  QuantityValue q;
  q.nano_ = nano > kMaxNano ? kMaxNano : (nano < -kMaxNano ? -kMaxNano : nano);
  return q;
}

std::optional<QuantityValue> QuantityValue::Parse(std::string_view text) {
  size_t pos = 0;
  bool negative = false;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    negative = text[pos] == '-';
    ++pos;
  }
  const size_t int_begin = pos;
  while (pos < text.size() && IsDigit(text[pos])) ++pos;
  Digits digits;
  digits.int_part = text.substr(int_begin, pos - int_begin);
  if (pos < text.size() && text[pos] == '.') {
    const size_t frac_begin = ++pos;
    while (pos < text.size() && IsDigit(text[pos])) ++pos;
    digits.frac_part = text.substr(frac_begin, pos - frac_begin);
  }
  if (digits.int_part.empty() && digits.frac_part.empty()) return std::nullopt;

  const std::string_view suffix_text = text.substr(pos);
  Suffix suffix;
  if (auto s = LookupSuffix(suffix_text)) {
    suffix = *s;
  } else if (suffix_text.size() > 1 && (suffix_text[0] == 'e' || suffix_text[0] == 'E')) {
    std::string_view exp = suffix_text.substr(1);
    bool exp_negative = false;
    if (exp[0] == '+' || exp[0] == '-') {
      exp_negative = exp[0] == '-';
      exp.remove_prefix(1);
    }
    if (exp.empty()) return std::nullopt;
    int64_t value = 0;
    for (char c : exp) {
      if (!IsDigit(c)) return std::nullopt;
      value = value * 10 + (c - '0');
      if (value > std::numeric_limits<int32_t>::max()) return std::nullopt;  // as upstream
    }
    suffix.exponent10 = static_cast<int>(exp_negative ? -value : value);
  } else {
    return std::nullopt;
  }

  // value = S * 10^X * 2^k with S the significant digits; in nano units the decimal exponent is
  // P = X + 9.
  const size_t total = digits.int_part.size() + digits.frac_part.size();
  digits.begin = 0;
  while (digits.begin < total && digits.At(0) == 0) ++digits.begin;
  digits.end = total;
  while (digits.end > digits.begin) {
    const size_t k = digits.end - 1;
    const char c = k < digits.int_part.size() ? digits.int_part[k] : digits.frac_part[k - digits.int_part.size()];
    if (c != '0') break;
    --digits.end;
  }
  QuantityValue q;
  if (digits.size() == 0) return q;  // zero in any spelling

  // The exponent of the last significant digit.
  const int64_t last_exponent = static_cast<int64_t>(digits.int_part.size()) - static_cast<int64_t>(digits.end);
  const int64_t p = last_exponent + suffix.exponent10 + 9;
  const int64_t n = static_cast<int64_t>(digits.size());
  const unsigned __int128 multiplier = static_cast<unsigned __int128>(1) << suffix.exponent2;
  const unsigned __int128 limit = static_cast<unsigned __int128>(kMaxNano);
  bool saturated = false;
  unsigned __int128 nano = 0;
  if (p >= 0) {
    if (n + p > kMaxDigits) {
      saturated = true;
    } else {
      for (int64_t i = 0; i < n; ++i) nano = nano * 10 + static_cast<unsigned>(digits.At(static_cast<size_t>(i)));
      nano *= static_cast<unsigned __int128>(Pow10(static_cast<int>(p)));
      if (nano > limit / multiplier) saturated = true;
      nano *= multiplier;
    }
  } else {
    // S * 2^k / 10^a rounded up: the leading n - a digits are whole nano units (times 2^k); the
    // trailing a digits are a fraction that, times 2^k, adds its integer part (computed from the
    // last digit up, with a carry below 2^64) plus one when anything is left over.
    const int64_t a = -p;
    const int64_t whole_digits = n > a ? n - a : 0;
    if (whole_digits > kMaxDigits) {
      saturated = true;
    } else {
      unsigned __int128 whole = 0;
      for (int64_t i = 0; i < whole_digits; ++i)
        whole = whole * 10 + static_cast<unsigned>(digits.At(static_cast<size_t>(i)));
      uint64_t carry = 0;
      bool remainder = false;
      const uint64_t m = static_cast<uint64_t>(multiplier);
      for (int64_t i = n - 1; i >= whole_digits; --i) {
        const uint64_t v = static_cast<uint64_t>(digits.At(static_cast<size_t>(i))) * m + carry;
        remainder |= v % 10 != 0;
        carry = v / 10;
      }
      // The fraction's implicit leading zeros (a > n) keep dividing the carry by ten.
      for (int64_t i = n; i < a && carry != 0; ++i) {
        remainder |= carry % 10 != 0;
        carry /= 10;
      }
      if (whole > limit / multiplier) {
        saturated = true;
      } else {
        nano = whole * multiplier + carry + (remainder ? 1 : 0);
      }
    }
  }
  if (saturated || nano > limit) nano = limit;
  __int128 signed_nano = static_cast<__int128>(nano);
  // Upstream caps binary quantities at the largest int64 number of units ("9Ei" is 2^63-1).
  constexpr __int128 kBinaryCap = static_cast<__int128>(std::numeric_limits<int64_t>::max()) * kNanoPerUnit;
  if (suffix.binary && signed_nano > kBinaryCap) signed_nano = kBinaryCap;
  q.nano_ = negative ? -signed_nano : signed_nano;
  return q;
}

QuantityValue QuantityValue::FromInt(int64_t units) {
  QuantityValue q;
  q.nano_ = static_cast<__int128>(units) * kNanoPerUnit;
  return q;
}

QuantityValue QuantityValue::Add(const QuantityValue& other) const {
  return FromNano(nano_ + other.nano_);  // both within 1e38: the sum fits in 128 bits
}

QuantityValue QuantityValue::Sub(const QuantityValue& other) const { return FromNano(nano_ - other.nano_); }

std::optional<int64_t> QuantityValue::AsInt64() const {
  if (nano_ % kNanoPerUnit != 0) return std::nullopt;
  const __int128 units = nano_ / kNanoPerUnit;
  if (units > std::numeric_limits<int64_t>::max() || units < std::numeric_limits<int64_t>::min()) return std::nullopt;
  return static_cast<int64_t>(units);
}

double QuantityValue::AsApproximateFloat() const {
  // Whole units and the nano remainder apart, so values within int64 units keep full precision.
  const __int128 units = nano_ / kNanoPerUnit;
  const __int128 rest = nano_ % kNanoPerUnit;
  return static_cast<double>(units) + static_cast<double>(rest) / 1e9;
}

}  // namespace kubesched::cel
