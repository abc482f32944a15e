#pragma once
// Status: the outcome of running a plugin, as upstream's framework.Status. Success is the
// default and costs nothing to create or copy.

#include <cstdint>
#include <initializer_list>
#include <memory>
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
  Status(Code code, const StaticReasons& reasons) : code_(code), reasons_(&reasons.reasons()) {}
  explicit Status(Code code) : code_(code) {}
  Status(Code code, std::string reason) : code_(code) { Own(std::vector<std::string>{std::move(reason)}); }
  Status(Code code, std::vector<std::string> reasons) : code_(code) {
    if (!reasons.empty()) Own(std::move(reasons));
  }
  // Copies share the reasons (they are immutable once made): copying a status, as the scheduler
  // does for every node a remembered verdict covers, never copies strings.
  Status(const Status&) = default;
  Status& operator=(const Status&) = default;
  Status(Status&& other) noexcept
      : code_(other.code_), reasons_(other.reasons_), owned_(std::move(other.owned_)), plugin_(other.plugin_) {
    other.reasons_ = nullptr;
  }
  Status& operator=(Status&& other) noexcept {
    code_ = other.code_;
    reasons_ = other.reasons_;
    owned_ = std::move(other.owned_);
    plugin_ = other.plugin_;
    if (this != &other) other.reasons_ = nullptr;
    return *this;
  }

  static Status Success() { return Status(); }
  static Status Error(std::string message) { return Status(Code::kError, std::move(message)); }
  static Status Unschedulable(std::string reason) { return Status(Code::kUnschedulable, std::move(reason)); }
  static Status UnschedulableAndUnresolvable(std::string reason) {
    return Status(Code::kUnschedulableAndUnresolvable, std::move(reason));
  }
  static Status Skip() { return Status(Code::kSkip); }
  static Status Wait() { return Status(Code::kWait); }
  //! Wait with the reason the pod waits (shown while it waits and when the wait times out).
  static Status Wait(std::string reason) { return Status(Code::kWait, std::move(reason)); }

  Code code() const { return code_; }
  bool IsSuccess() const { return code_ == Code::kSuccess; }
  bool IsError() const { return code_ == Code::kError; }
  bool IsSkip() const { return code_ == Code::kSkip; }
  bool IsWait() const { return code_ == Code::kWait; }
  //! Unschedulable, UnschedulableAndUnresolvable or Pending: the pod was rejected, not failed.
  bool IsRejected() const {
    return code_ == Code::kUnschedulable || code_ == Code::kUnschedulableAndUnresolvable || code_ == Code::kPending;
  }

  const std::vector<std::string>& reasons() const { return reasons_ ? *reasons_ : NoReasons(); }
  //! Adds a reason to this status only (copies made before keep theirs).
  void AppendReason(std::string reason) {
    std::vector<std::string> next(reasons());
    next.push_back(std::move(reason));
    Own(std::move(next));
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
  static const std::vector<std::string>& NoReasons();
  void Own(std::vector<std::string> reasons) {
    owned_ = std::make_shared<const std::vector<std::string>>(std::move(reasons));
    reasons_ = owned_.get();
  }

  Code code_ = Code::kSuccess;
  //! The reasons: a StaticReasons' or owned_'s (shared by copies, never changed); null: none.
  const std::vector<std::string>* reasons_ = nullptr;
  std::shared_ptr<const std::vector<std::string>> owned_;
  // Plugin names are string constants with static storage (each plugin's kName).
  std::string_view plugin_;
};

}  // namespace kubesched::framework
