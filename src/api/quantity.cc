#include "api/quantity.h"
#include "util/go_quote.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace kubesched::api {
namespace {

// Parsing rounds the magnitude up to a multiple of 10^-9, as upstream does ("3.001n" is 4n):
// Value and MilliValue are ceilings, so rounding first never changes them, and it bounds how many
// digits the mantissa needs.
constexpr int64_t kNanoExponent = -9;

// A __int128 holds every integer below 1.7e38; 38 decimal digits always fit.
constexpr size_t kMaxMantissaDigits = 38;

// Exponents past this magnitude saturate or round to the smallest unit anyway; clamping keeps
// the stored exponent in an int whatever the input says.
constexpr int64_t kExponentClamp = 1000;

struct Suffix {
  int64_t exponent10 = 0;
  int exponent2 = 0;
  bool binary = false;
};

std::optional<Suffix> LookupSuffix(std::string_view s) {
  // By length and letter rather than by a table of strings: every quantity read looks its suffix up.
  const auto decimal = [](int64_t exponent10) { return Suffix{exponent10, 0, false}; };
  const auto binary = [](int exponent2) { return Suffix{0, exponent2, true}; };
  if (s.empty()) return decimal(0);
  if (s.size() == 1) {
    switch (s[0]) {
      case 'n':
        return decimal(-9);
      case 'u':
        return decimal(-6);
      case 'm':
        return decimal(-3);
      case 'k':
        return decimal(3);
      case 'M':
        return decimal(6);
      case 'G':
        return decimal(9);
      case 'T':
        return decimal(12);
      case 'P':
        return decimal(15);
      case 'E':
        return decimal(18);
      default:
        return std::nullopt;
    }
  }
  if (s.size() == 2 && s[1] == 'i') {
    switch (s[0]) {
      case 'K':
        return binary(10);
      case 'M':
        return binary(20);
      case 'G':
        return binary(30);
      case 'T':
        return binary(40);
      case 'P':
        return binary(50);
      case 'E':
        return binary(60);
      default:
        return std::nullopt;
    }
  }
  return std::nullopt;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string Fail(std::string_view text, std::string_view why) {
  return "invalid quantity " + util::GoQuote(text) + ": " + std::string(why);
}

__int128 Pow10(int k) {
  __int128 r = 1;
  for (int i = 0; i < k; ++i) r *= 10;
  return r;
}

// Multiplies a little-endian decimal digit vector by 2^shift (shift <= 60). digit * 2^60 plus
// the carry stays below 10 * 2^60 < 2^64, so 64-bit arithmetic is exact.
void MultiplyByPowerOfTwo(std::vector<uint8_t>& digits, int shift) {
  if (shift == 0) return;
  const uint64_t factor = uint64_t{1} << shift;
  uint64_t carry = 0;
  for (auto& d : digits) {
    const uint64_t v = uint64_t{d} * factor + carry;
    d = static_cast<uint8_t>(v % 10);
    carry = v / 10;
  }
  while (carry > 0) {
    digits.push_back(static_cast<uint8_t>(carry % 10));
    carry /= 10;
  }
}

// ceil(|m| * 10^e) with the sign of m applied afterwards (so rounding is away from zero, as
// upstream's Quantity.ScaledValue), or nullopt when the magnitude passes what __int128 holds.
std::optional<__int128> ScaleAwayFromZero(__int128 m, int64_t e) {
  if (m == 0) return 0;
  const bool negative = m < 0;
  __int128 mag = negative ? -m : m;
  if (e >= 0) {
    constexpr __int128 kLimit = static_cast<__int128>(~static_cast<unsigned __int128>(0) >> 1) / 10;
    for (int64_t i = 0; i < e; ++i) {
      if (mag > kLimit) return std::nullopt;
      mag *= 10;
    }
  } else {
    const int64_t k = -e;
    if (k > static_cast<int64_t>(kMaxMantissaDigits)) {
      mag = 1;  // |m| < 10^38 <= 10^k, so the quotient is 0 with a remainder
    } else {
      const __int128 div = Pow10(static_cast<int>(k));
      const bool remainder = mag % div != 0;
      mag = mag / div + (remainder ? 1 : 0);
    }
  }
  return negative ? -mag : mag;
}

int64_t SaturateToInt64(std::optional<__int128> v, bool negative) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  if (!v) return negative ? kMin : kMax;
  if (*v > kMax) return kMax;
  if (*v < kMin) return kMin;
  return static_cast<int64_t>(*v);
}

// A parsed magnitude, mantissa * 10^exponent10, before the sign and the cap on binary quantities.
struct Scaled {
  __int128 mantissa = 0;
  int exponent10 = 0;
};

// Any number of digits: rounded up to whole nano units, saturated past 10^38 of them.
Scaled ScaleLarge(std::string_view int_digits, std::string_view frac_digits, const Suffix& suffix) {
  // value = digits * 10^exponent10 * 2^exponent2, digits kept little-endian without the leading
  // and trailing zeros that carry no information.
  std::vector<uint8_t> digits;
  digits.reserve(int_digits.size() + frac_digits.size());
  for (auto it = frac_digits.rbegin(); it != frac_digits.rend(); ++it) digits.push_back(*it - '0');
  for (auto it = int_digits.rbegin(); it != int_digits.rend(); ++it) digits.push_back(*it - '0');
  int64_t exponent10 = suffix.exponent10 - static_cast<int64_t>(frac_digits.size());
  while (!digits.empty() && digits.back() == 0) digits.pop_back();

  if (digits.empty()) return {};  // zero in any spelling

  size_t trailing = 0;
  while (digits[trailing] == 0) ++trailing;
  digits.erase(digits.begin(), digits.begin() + static_cast<std::ptrdiff_t>(trailing));
  exponent10 += static_cast<int64_t>(trailing);

  MultiplyByPowerOfTwo(digits, suffix.exponent2);

  // Round the magnitude up to whole nano units.
  if (exponent10 < kNanoExponent) {
    const uint64_t drop = static_cast<uint64_t>(kNanoExponent - exponent10);
    if (drop >= digits.size()) {
      digits.assign(1, 1);
    } else {
      const bool fraction = std::any_of(digits.begin(), digits.begin() + static_cast<std::ptrdiff_t>(drop),
                                        [](uint8_t d) { return d != 0; });
      digits.erase(digits.begin(), digits.begin() + static_cast<std::ptrdiff_t>(drop));
      if (fraction) {
        size_t i = 0;
        while (i < digits.size() && digits[i] == 9) digits[i++] = 0;
        if (i == digits.size())
          digits.push_back(1);
        else
          ++digits[i];
      }
    }
    exponent10 = kNanoExponent;
    trailing = 0;
    while (trailing < digits.size() && digits[trailing] == 0) ++trailing;
    digits.erase(digits.begin(), digits.begin() + static_cast<std::ptrdiff_t>(trailing));
    exponent10 += static_cast<int64_t>(trailing);
  }

  if (digits.size() > kMaxMantissaDigits || exponent10 > kExponentClamp) {
    // At least 10^38 nano units, far past int64: any such value saturates Value and MilliValue.
    return {1, static_cast<int>(kExponentClamp)};
  }
  __int128 mantissa = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) mantissa = mantissa * 10 + *it;
  return {mantissa, static_cast<int>(exponent10)};
}

// The common case, the same value without a vector of digits: at most 18 digits (they fit an
// int64) and nothing to round; nullopt otherwise.
constexpr size_t kMaxSmallDigits = 18;
std::optional<Scaled> ScaleSmall(std::string_view int_digits, std::string_view frac_digits, const Suffix& suffix) {
  if (int_digits.size() + frac_digits.size() > kMaxSmallDigits) return std::nullopt;
  uint64_t digits = 0;
  for (char c : int_digits) digits = digits * 10 + static_cast<uint64_t>(c - '0');
  for (char c : frac_digits) digits = digits * 10 + static_cast<uint64_t>(c - '0');
  if (digits == 0) return Scaled{};  // zero in any spelling
  int64_t exponent10 = suffix.exponent10 - static_cast<int64_t>(frac_digits.size());
  while (digits % 10 == 0) {
    digits /= 10;
    ++exponent10;
  }
  if (exponent10 < kNanoExponent || exponent10 > kExponentClamp) return std::nullopt;
  // digits < 10^18 < 2^60 and exponent2 <= 60: the product fits.
  return Scaled{static_cast<__int128>(digits) << suffix.exponent2, static_cast<int>(exponent10)};
}

}  // namespace

std::expected<Quantity, std::string> Quantity::Parse(std::string_view text) {
  // Grammar (k8s.io/apimachinery resource.Quantity):
  //   quantity ::= [+-] number suffix
  //   number   ::= digits | digits "." | digits "." digits | "." digits
  //   suffix   ::= "" | n u m k M G T P E | Ki Mi Gi Ti Pi Ei | (e|E) [+-] digits
  // Upstream's parser also accepts a number with no digits at all ("", "." and "m" parse as
  // zero), contrary to its documented grammar; we follow the grammar, because such a value in a
  // manifest is almost certainly a typo.
  if (text.empty()) return std::unexpected(Fail(text, "empty value; write a number such as 500m, 2, 1.5Gi or 1e3"));
  size_t pos = 0;
  bool negative = false;
  if (text[pos] == '+' || text[pos] == '-') {
    negative = text[pos] == '-';
    ++pos;
  }
  const size_t int_begin = pos;
  while (pos < text.size() && IsDigit(text[pos])) ++pos;
  const std::string_view int_digits = text.substr(int_begin, pos - int_begin);
  std::string_view frac_digits;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const size_t frac_begin = pos;
    while (pos < text.size() && IsDigit(text[pos])) ++pos;
    frac_digits = text.substr(frac_begin, pos - frac_begin);
  }
  if (int_digits.empty() && frac_digits.empty()) {
    return std::unexpected(Fail(text, "expected a number such as 500m, 2, 1.5Gi or 1e3"));
  }

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
    if (exp.empty() || !std::all_of(exp.begin(), exp.end(), IsDigit)) {
      return std::unexpected(Fail(text, "the exponent \"" + std::string(suffix_text) +
                                            "\" must be e or E followed by an integer, such as e3 or e-3"));
    }
    // Upstream rejects exponents outside int32 rather than truncating them.
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(exp.data(), exp.data() + exp.size(), value);
    if (ec != std::errc() || value > std::numeric_limits<int32_t>::max()) {
      return std::unexpected(Fail(text, "the exponent is out of range"));
    }
    suffix.exponent10 = exp_negative ? -value : value;
  } else {
    return std::unexpected(Fail(text, "unknown suffix \"" + std::string(suffix_text) +
                                          "\"; use one of n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, "
                                          "Pi, Ei or an exponent such as e3 (no space before it)"));
  }

  const std::optional<Scaled> small = ScaleSmall(int_digits, frac_digits, suffix);
  const Scaled value = small ? *small : ScaleLarge(int_digits, frac_digits, suffix);
  Quantity q;
  q.text_ = std::string(text);
  q.mantissa_ = value.mantissa;
  q.exponent10_ = value.exponent10;

  // Upstream caps binary quantities at the largest int64 ("9Ei" is 2^63-1), but not decimal ones.
  if (suffix.binary) {
    auto units = ScaleAwayFromZero(q.mantissa_, q.exponent10_);
    if (!units || *units > std::numeric_limits<int64_t>::max()) {
      q.mantissa_ = std::numeric_limits<int64_t>::max();
      q.exponent10_ = 0;
    }
  }
  if (negative) q.mantissa_ = -q.mantissa_;
  return q;
}

int64_t Quantity::Value() const { return SaturateToInt64(ScaleAwayFromZero(mantissa_, exponent10_), mantissa_ < 0); }

int64_t Quantity::MilliValue() const {
  return SaturateToInt64(ScaleAwayFromZero(mantissa_, static_cast<int64_t>(exponent10_) + 3), mantissa_ < 0);
}

Quantity Quantity::FromInt(int64_t value) {
  Quantity q;
  q.mantissa_ = value;
  q.text_ = std::to_string(value);
  return q;
}

Quantity Quantity::FromMilli(int64_t milli) {
  Quantity q;
  q.mantissa_ = milli;
  q.exponent10_ = -3;
  q.text_ = milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
  return q;
}

namespace {

// a * 10^k, or nullopt when it passes what __int128 holds.
std::optional<__int128> ScaleUp(__int128 a, int k) {
  constexpr __int128 kMax = static_cast<__int128>(~static_cast<unsigned __int128>(0) >> 1);
  for (int i = 0; i < k; ++i) {
    if (a > kMax / 10 || a < -(kMax / 10)) return std::nullopt;
    a *= 10;
  }
  return a;
}

// The two mantissas at the smaller exponent of the two, or nullopt when one does not fit.
std::optional<std::pair<__int128, __int128>> Align(__int128 m1, int e1, __int128 m2, int e2) {
  const int e = std::min(e1, e2);
  auto a = ScaleUp(m1, e1 - e);
  auto b = ScaleUp(m2, e2 - e);
  if (!a || !b) return std::nullopt;
  return std::pair{*a, *b};
}

std::string Int128Text(__int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string digits;
  while (u != 0) {
    digits.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  if (negative) digits.push_back('-');
  return std::string(digits.rbegin(), digits.rend());
}

}  // namespace

std::strong_ordering Quantity::Compare(const Quantity& other) const {
  const int sa = (mantissa_ > 0) - (mantissa_ < 0);
  const int sb = (other.mantissa_ > 0) - (other.mantissa_ < 0);
  if (sa != sb || sa == 0) return sa <=> sb;
  if (auto aligned = Align(mantissa_, exponent10_, other.mantissa_, other.exponent10_)) {
    return aligned->first <=> aligned->second;
  }
  // One side is so much larger that aligning overflows: the one with the larger exponent (whose
  // scaled mantissa overflowed) has the larger magnitude.
  const bool a_larger = exponent10_ > other.exponent10_;
  return sa > 0 ? (a_larger ? std::strong_ordering::greater : std::strong_ordering::less)
                : (a_larger ? std::strong_ordering::less : std::strong_ordering::greater);
}

std::optional<Quantity> Quantity::Add(const Quantity& other) const {
  auto aligned = Align(mantissa_, exponent10_, other.mantissa_, other.exponent10_);
  if (!aligned) return std::nullopt;
  const __int128 a = aligned->first, b = aligned->second;
  __int128 sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  Quantity q;
  q.mantissa_ = sum;
  q.exponent10_ = std::min(exponent10_, other.exponent10_);
  // Canonical text: drop trailing zeros into the exponent, then the largest exact suffix.
  while (q.mantissa_ != 0 && q.mantissa_ % 10 == 0) {
    q.mantissa_ /= 10;
    ++q.exponent10_;
  }
  if (q.mantissa_ == 0) q.exponent10_ = 0;
  static constexpr std::pair<int, std::string_view> kSuffixes[] = {
      {18, "E"}, {15, "P"}, {12, "T"}, {9, "G"}, {6, "M"}, {3, "k"}, {0, ""}, {-3, "m"}, {-6, "u"}, {-9, "n"}};
  q.text_.clear();
  for (const auto& [exp, suffix] : kSuffixes) {
    if (q.exponent10_ >= exp) {
      auto scaled = ScaleUp(q.mantissa_, q.exponent10_ - exp);
      if (scaled) q.text_ = Int128Text(*scaled) + std::string(suffix);
      break;
    }
  }
  if (q.text_.empty()) q.text_ = Int128Text(q.mantissa_) + "e" + std::to_string(q.exponent10_);
  return q;
}

std::optional<Quantity> Quantity::Sub(const Quantity& other) const {
  Quantity negated = other;
  negated.mantissa_ = -other.mantissa_;
  return Add(negated);
}

}  // namespace kubesched::api
