#pragma once
// GoogleTest printers for framework types, so failed expectations show readable values.
// Header-only: include it from tests that compare these types.

#include <ostream>

#include "framework/events.h"
#include "framework/status.h"

namespace kubesched::framework {

inline void PrintTo(const Status& status, std::ostream* os) {
  *os << ToString(status.code());
  if (!status.reasons().empty()) *os << "(\"" << status.Message() << "\")";
}

inline void PrintTo(QueueingHint hint, std::ostream* os) {
  *os << (hint == QueueingHint::kQueue ? "Queue" : "QueueSkip");
}

}  // namespace kubesched::framework
