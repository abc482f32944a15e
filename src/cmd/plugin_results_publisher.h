#pragma once
// `kubesched run --record-plugin-results`: each pod's last attempt per node and plugin written
// to the pod as the annotation scheduler.kubesched.io/plugin-results, and the running profiles
// published in ConfigMap kube-system/kubesched-scheduler-config, as kube-scheduler-simulator
// publishes its results, for a UI to read. All writes happen on one worker thread: a scheduling
// cycle only copies its explanation into a queue.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "profile/profile_config.h"
#include "scheduler/scheduler.h"
#include "store/store.h"

namespace kubesched::cmd {

//! The ConfigMap the configuration is published in.
inline constexpr std::string_view kSchedulerConfigNamespace = "kube-system";
inline constexpr std::string_view kSchedulerConfigMapName = "kubesched-scheduler-config";

class PluginResultsPublisher {
 public:
  //! Writes through `store` (which outlives the publisher). At most `max_queued` pods wait for
  //! their annotation; attempts beyond that are dropped (and logged), never waited for.
  explicit PluginResultsPublisher(store::Store& store, size_t max_queued = 10'000);
  //! Stops the worker; annotations still queued are not written.
  ~PluginResultsPublisher();
  PluginResultsPublisher(const PluginResultsPublisher&) = delete;
  PluginResultsPublisher& operator=(const PluginResultsPublisher&) = delete;

  //! SchedulerOptions::on_explained: copies the attempt into the queue, replacing the pod's
  //! earlier attempt when that is still queued (only the last one is written). Thread-safe.
  void Record(const api::Pod& pod, const scheduler::AttemptExplanation& explanation);
  //! Starts the worker (once; later calls do nothing): it first creates or updates the ConfigMap
  //! with `profiles` (profiles.json) and `config_yaml` (config.yaml: the --config file's text,
  //! empty for the defaults), then writes the queued annotations.
  void Start(std::vector<profile::ProfileConfig> profiles, std::string config_yaml);

 private:
  struct Pending {
    std::string namespace_, name, uid;
    scheduler::AttemptExplanation explanation;
  };
  void Run(std::stop_token stop);
  void PublishConfig();
  void Annotate(const Pending& p);

  store::Store& store_;
  const size_t max_queued_;
  // Set by Start before the worker runs; read by the worker only.
  std::map<std::string, profile::ProfileConfig, std::less<>> profiles_;
  std::vector<profile::ProfileConfig> profile_list_;
  std::string config_yaml_;

  std::mutex mu_;
  std::condition_variable_any cv_;
  std::deque<std::string> order_;                     // uids in arrival order; guarded by mu_
  std::unordered_map<std::string, Pending> pending_;  // by uid; guarded by mu_
  size_t dropped_ = 0;                                // guarded by mu_
  std::jthread worker_;                               // declared last: stopped and joined first
};

}  // namespace kubesched::cmd
