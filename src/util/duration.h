#pragma once
// Go's time.ParseDuration, for the durations in manifests' annotations ("30s", "1m30s", "500ms").

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

namespace kubesched::util {

//! Parses a Go duration: an optional sign, then one or more decimal numbers (a fraction allowed),
//! each with a unit of ns, us (or µs), ms, s, m or h; "0" alone is zero. Returns nanoseconds, or a
//! message such as `invalid duration "5x": unknown unit "x" (use ns, us, ms, s, m or h)`.
std::expected<int64_t, std::string> ParseDuration(std::string_view text);

}  // namespace kubesched::util

namespace kubesched::util {

//! Go's time.Duration.String(): "15s", "1m30s", "1h0m0s", "500ms", "1.5µs", "0s".
std::string FormatDuration(int64_t ns);

}  // namespace kubesched::util
