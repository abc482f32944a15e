#pragma once
// Status: the outcome of running a plugin, as upstream's framework.Status. Success is the
// default and costs nothing to create or copy.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace kubesched::framework {

//! Upstream's seven status codes, with their meanings.
enum class Code : uint8_t {
  kSuccess,                       //!< the plugin ran correctly and found the pod schedulable
  kError,                         //!< an internal error; the pod is retried with backoff
  kUnschedulable,                 //!< the pod cannot go here now; preemption may help
  kUnschedulableAndUnresolvable,  //!< the pod cannot go here and preemption will not help
  kWait,                          //!< Permit only: hold the pod until allowed, rejected or timed out
  kSkip,                          //!< PreFilter/PreScore: skip this plugin's later points; Bind: not handled
  kPending,                       //!< the pod waits for something outside the scheduler
};

std::string_view ToString(Code code);

//! Reasons with static storage duration that many statuses share (a plugin's fixed rejection
//! messages): a Status built from them refers to them instead of allocating its own copy, which
//! matters when a reason is reported for thousands of nodes per second.
class StaticReasons {
 public:
  explicit StaticReasons(std::initializer_list<std::string_view> reasons) : reasons_(reasons.begin(), reasons.end()) {}
  explicit StaticReasons(std::vector<std::string> reasons) : reasons_(std::move(reasons)) {}
  StaticReasons(const StaticReasons&) = delete;
  StaticReasons& operator=(const StaticReasons&) = delete;
  const std::vector<std::string>& reasons() const { return reasons_; }

 private:
  std::vector<std::string> reasons_;
};

class Status {
 public:
  Status() = default;
  //! Refers to `reasons`, which must outlive every copy of the status (use statics).
  Status(Code code, const StaticReasons& reasons) : code_(code), static_reasons_(&reasons.reasons()) {}
  explicit Status(Code code) : code_(code) {}
  Status(Code code, std::string reason) : code_(code) { reasons_.push_back(std::move(reason)); }
  Status(Code code, std::vector<std::string> reasons) : code_(code), reasons_(std::move(reasons)) {}

  static Status Success() { return Status(); }
  static Status Error(std::string message) { return Status(Code::kError, std::move(message)); }
  static Status Unschedulable(std::string reason) { return Status(Code::kUnschedulable, std::move(reason)); }
  static Status UnschedulableAndUnresolvable(std::string reason) {
    return Status(Code::kUnschedulableAndUnresolvable, std::move(reason));
  }
  static Status Skip() { return Status(Code::kSkip); }
  static Status Wait() { return Status(Code::kWait); }

  Code code() const { return code_; }
  bool IsSuccess() const { return code_ == Code::kSuccess; }
  bool IsError() const { return code_ == Code::kError; }
  bool IsSkip() const { return code_ == Code::kSkip; }
  bool IsWait() const { return code_ == Code::kWait; }
  //! Unschedulable, UnschedulableAndUnresolvable or Pending: the pod was rejected, not failed.
  bool IsRejected() const {
    return code_ == Code::kUnschedulable || code_ == Code::kUnschedulableAndUnresolvable || code_ == Code::kPending;
  }

  const std::vector<std::string>& reasons() const { return static_reasons_ ? *static_reasons_ : reasons_; }
  void AppendReason(std::string reason) {
    if (static_reasons_) {
      reasons_ = *static_reasons_;
      static_reasons_ = nullptr;
    }
    reasons_.push_back(std::move(reason));
  }
  //! The reasons joined with ", ", as Status.Message().
  std::string Message() const;

  //! The plugin that produced the status (set by the framework runtime).
  std::string_view plugin() const { return plugin_; }
  Status& WithPlugin(std::string_view plugin) {
    plugin_ = plugin;
    return *this;
  }

  bool operator==(const Status& other) const { return code_ == other.code_ && reasons() == other.reasons(); }

 private:
  Code code_ = Code::kSuccess;
  //! When set, the reasons (shared, immutable); reasons_ is then empty.
  const std::vector<std::string>* static_reasons_ = nullptr;
  std::vector<std::string> reasons_;
  // Plugin names are string constants with static storage (each plugin's kName).
  std::string_view plugin_;
};

}  // namespace kubesched::framework
