#pragma once
// Semantic versions (semver.org 2.0.0), as device attributes of type `version` hold them and CEL's
// semver library compares them (upstream parses them with github.com/blang/semver/v4, strictly:
// no leading "v", no leading zeros in numeric identifiers).

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kubesched::api {

struct SemVer {
  uint64_t major = 0;
  uint64_t minor = 0;
  uint64_t patch = 0;
  //! Pre-release identifiers ("alpha", "1" of 1.0.0-alpha.1), compared as semver says.
  std::vector<std::string> pre_release;
  //! Build metadata (after "+"): kept, ignored when comparing.
  std::vector<std::string> build;

  //! nullopt when `text` is not a valid semantic version.
  static std::optional<SemVer> Parse(std::string_view text);
  std::string String() const;
  //! Precedence per semver 2.0.0 §11 (build metadata ignored).
  std::strong_ordering Compare(const SemVer& other) const;
  bool operator==(const SemVer& other) const { return Compare(other) == std::strong_ordering::equal; }
};

}  // namespace kubesched::api
