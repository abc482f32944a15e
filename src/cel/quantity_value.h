#pragma once
// The exact value of a Kubernetes quantity for CEL's quantity library (k8s.io/apiserver's
// library.Quantity): comparisons, add/sub, isInteger/asInteger. Upstream computes with
// resource.Quantity (inf.Dec, arbitrary precision); api::Quantity keeps no public exact value, so
// the library counts nano units in 128 bits, which is exact for every quantity below 1e29
// (upstream rounds every parsed quantity up to a whole nano unit, so nothing finer exists).

#include <cstdint>
#include <optional>
#include <string_view>

namespace kubesched::cel {

class QuantityValue {
 public:
  //! Values saturate here (1e38 nano = 1e29 units, far past int64 and any real capacity).
  static constexpr __int128 kMaxNano =
      static_cast<__int128>(10'000'000'000'000'000'000ULL) * static_cast<__int128>(10'000'000'000'000'000'000ULL);

  QuantityValue() = default;

  //! Parses the quantity grammar api::Quantity::Parse accepts ("1.5Gi", "100m", "12e6"), rounding
  //! the magnitude up to a whole nano unit and capping binary quantities at 2^63-1 units as
  //! upstream's ParseQuantity does. Allocates nothing. nullopt when the grammar is not met.
  static std::optional<QuantityValue> Parse(std::string_view text);
  static QuantityValue FromInt(int64_t units);
  //! A count of nano units, saturated at kMaxNano.
  static QuantityValue FromNano(__int128 nano);

  __int128 nano() const { return nano_; }
  int Sign() const { return nano_ < 0 ? -1 : (nano_ > 0 ? 1 : 0); }
  //! -1, 0 or 1, as resource.Quantity.Cmp.
  int Compare(const QuantityValue& other) const { return nano_ < other.nano_ ? -1 : (nano_ > other.nano_ ? 1 : 0); }
  QuantityValue Add(const QuantityValue& other) const;
  QuantityValue Sub(const QuantityValue& other) const;
  //! The value as an int64 when it is a whole number within int64 (resource.Quantity.AsInt64).
  std::optional<int64_t> AsInt64() const;
  double AsApproximateFloat() const;

 private:
  __int128 nano_ = 0;
};

}  // namespace kubesched::cel
