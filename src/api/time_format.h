#pragma once
// metav1.Time's wire form: RFC 3339 ("2024-05-01T12:00:00Z"), read and written as Unix
// nanoseconds, the clock the simulation runs on.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kubesched::api {

//! RFC 3339 (fractional seconds and numeric offsets allowed) to Unix nanoseconds; nullopt when
//! malformed or outside what int64 nanoseconds hold (years 1678 to 2262).
std::optional<int64_t> ParseRFC3339(std::string_view s);

//! Unix nanoseconds as metav1.Time marshals them: UTC, whole seconds ("2024-05-01T12:00:00Z").
std::string FormatRFC3339(int64_t unix_ns);
//! Unix nanoseconds as metav1.MicroTime marshals them (an Event's eventTime and
//! series.lastObservedTime, a Lease's renewTime): UTC with six fractional digits ("2024-05-01T12:00:00.123456Z").
std::string FormatRFC3339Micro(int64_t unix_ns);

}  // namespace kubesched::api
