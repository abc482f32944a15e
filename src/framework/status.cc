#include "framework/status.h"

namespace kubesched::framework {

std::string_view ToString(Code code) {
  switch (code) {
    case Code::kSuccess:
      return "Success";
    case Code::kError:
      return "Error";
    case Code::kUnschedulable:
      return "Unschedulable";
    case Code::kUnschedulableAndUnresolvable:
      return "UnschedulableAndUnresolvable";
    case Code::kWait:
      return "Wait";
    case Code::kSkip:
      return "Skip";
    case Code::kPending:
      return "Pending";
  }
  return "Unknown";
}

const std::vector<std::string>& Status::NoReasons() {
  static const std::vector<std::string> kNone;
  return kNone;
}

std::string Status::Message() const {
  std::string out;
  const std::vector<std::string>& rs = reasons();
  for (size_t i = 0; i < rs.size(); ++i) {
    if (i > 0) out += ", ";
    out += rs[i];
  }
  return out;
}

}  // namespace kubesched::framework
