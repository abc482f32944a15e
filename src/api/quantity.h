#pragma once
// Kubernetes resource.Quantity: parsed exactly (no floating point), read as upstream reads it.

#include <compare>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace kubesched::api {

//! An exact decimal or binary quantity such as "100m", "0.18", "1.5Gi", "12e6".
//! Stored as mantissa * 10^exponent10 * 2^exponent2 with a 128-bit mantissa, so every
//! value a manifest can reasonably hold is represented without rounding.
class Quantity {
 public:
  Quantity() = default;

  //! Parses the Kubernetes quantity grammar: sign, digits, optional fraction, and a suffix
  //! (binary Ki..Ei, decimal n u m "" k M G T P E, or a decimal exponent e/E<int>).
  //! Returns a message that says what was wrong on failure.
  static std::expected<Quantity, std::string> Parse(std::string_view text);

  //! Integer value rounded up (ceiling), as resource.Quantity.Value(). Saturates at int64 limits.
  //! Like upstream, negative values round away from zero ("-1.5" is -2).
  int64_t Value() const;
  //! Value * 1000 rounded up, as resource.Quantity.MilliValue(). Saturates at int64 limits.
  int64_t MilliValue() const;

  bool IsZero() const { return mantissa_ == 0; }
  bool IsNegative() const { return mantissa_ < 0; }

  //! The text the quantity was parsed from (for messages and round-trips).
  const std::string& text() const { return text_; }

  //! Builds a quantity from an integer count (used for defaults and tests).
  static Quantity FromInt(int64_t value);
  static Quantity FromMilli(int64_t milli);

  //! Exact comparison (resource.Quantity.Cmp); spellings of one value ("1Gi", "1073741824") are
  //! equal.
  std::strong_ordering Compare(const Quantity& other) const;
  bool operator==(const Quantity& other) const { return Compare(other) == std::strong_ordering::equal; }
  bool operator<(const Quantity& other) const { return Compare(other) == std::strong_ordering::less; }
  bool operator<=(const Quantity& other) const { return Compare(other) != std::strong_ordering::greater; }
  bool operator>(const Quantity& other) const { return Compare(other) == std::strong_ordering::greater; }
  bool operator>=(const Quantity& other) const { return Compare(other) != std::strong_ordering::less; }
  //! Exact sum and difference (resource.Quantity.Add / Sub), written in canonical form ("2Gi"
  //! reads back as 2147483648, written with the largest decimal suffix that keeps it exact:
  //! "2147483648", "1500m", "3k"). nullopt when the exact result does not fit.
  std::optional<Quantity> Add(const Quantity& other) const;
  std::optional<Quantity> Sub(const Quantity& other) const;

 private:
  __int128 mantissa_ = 0;
  int exponent10_ = 0;
  int exponent2_ = 0;
  std::string text_ = "0";
};

}  // namespace kubesched::api
