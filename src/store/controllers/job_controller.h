#pragma once
// The Job controller (pkg/controller/job): keeps min(parallelism, completions - succeeded) pods
// active from the template (NonIndexed: `<job>-<5 chars>`; Indexed: `<job>-<index>-<5 chars>` with
// the batch.kubernetes.io/job-completion-index annotation and label, the lowest indexes neither
// succeeded nor active first, so a replacement takes the index of the pod it replaces). Terminating
// pods are not counted (podReplacementPolicy TerminatingOrFailed), so a replacement is created as
// soon as a deletion starts; failed pods are replaced until more than backoffLimit have failed,
// when the Job fails (condition Failed, reason BackoffLimitExceeded) and its active pods are
// deleted; once completions pods (Indexed: every index) succeeded it is Complete and the rest are
// deleted. A suspended Job has no active pods (they are deleted) and condition Suspended. Status:
// active, ready, succeeded, failed, terminating, completedIndexes, startTime, completionTime,
// conditions. The pods carry job-name and controller-uid labels (old and batch.kubernetes.io/
// forms), which the store's Job defaulting puts into the template and selector as upstream's
// strategy does. Pod-failure policies, success policies, backoff delays, activeDeadlineSeconds and
// the job-tracking finalizer are not modelled.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/controllers/controller.h"
#include "store/controllers/expectations.h"
#include "store/controllers/workload_info.h"

namespace kubesched::store::controllers {

class JobController final : public Controller {
 public:
  explicit JobController(const ControllerContext& ctx);
  std::string_view Name() const override { return "job"; }
  void OnEvent(const WatchEvent& event) override;
  void Resync() override;
  void Flush() override;

 private:
  struct Job {
    WorkloadInfo info;
    int64_t parallelism = 1;
    std::optional<int64_t> completions;
    int64_t backoff_limit = 6;
    bool indexed = false;
    bool suspend = false;
    std::string finished;    //!< "Complete" or "Failed" once a condition says so
    std::string start_time;  //!< status.startTime
  };
  //! The pods of a Job as the controller counts them.
  struct Tally {
    std::vector<PodFactsPtr> active;
    int64_t ready = 0, succeeded = 0, failed = 0, terminating = 0;
    std::vector<int64_t> succeeded_indexes;  //!< sorted, unique
  };
  void OnJob(const WatchEvent& event);
  void OnPod(const WatchEvent& event);
  Tally Count(const Job& job) const;
  //! "Complete", "Failed" or "" from the pods.
  std::string Outcome(const Job& job, const Tally& t) const;
  void Manage(const Job& job);
  void WriteStatus(const Job& job);

  ControllerContext ctx_;
  const ResourceType& pods_;
  const ResourceType& jobs_;
  std::unordered_map<std::string, Job> by_uid_;
  Expectations expectations_;
  std::vector<std::string> dirty_;
};

//! "1,3-5,7": sorted indexes as upstream's status.completedIndexes writes them.
std::string FormatIndexes(const std::vector<int64_t>& sorted);

}  // namespace kubesched::store::controllers
