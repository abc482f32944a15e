#pragma once
// LeaderElector: leader election on a coordination.k8s.io/v1 Lease, as client-go's
// leaderelection package runs it for kube-scheduler. A candidate tries every retryPeriod (with
// jitter) to create the Lease or take it over once its holder has not renewed it for
// leaseDuration, as measured on the candidate's own clock from when it last saw the record change
// (so clock skew between candidates does not matter). The leader renews every retryPeriod; if it
// cannot renew within renewDeadline it has lost the lease and must stop at once. Writes are
// optimistic (the Lease's resourceVersion), so two candidates never both win.

#include <atomic>
#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>

#include "store/store.h"
#include "util/clock.h"

namespace kubesched::client {

struct LeaderElectionOptions {
  std::string lease_namespace = "kube-system";
  std::string lease_name = "kube-scheduler";
  //! This candidate's holderIdentity (kube-scheduler: hostname + "_" + a uuid).
  std::string identity;
  int64_t lease_duration_ns = 15'000'000'000;
  int64_t renew_deadline_ns = 10'000'000'000;
  int64_t retry_period_ns = 2'000'000'000;
  //! On a graceful stop, give the lease up (holder cleared) so another candidate takes over at
  //! once rather than after leaseDuration.
  bool release_on_cancel = true;
};

class LeaderElector {
 public:
  //! `store`: where the Lease lives (the remote store: Leases are read and written by REST).
  //! `clock`: Unix time, for the Lease's timestamps and the expiry measurements.
  LeaderElector(store::Store& store, const util::Clock& clock, LeaderElectionOptions options);

  //! Campaigns until elected, then calls `on_started_leading` (on this thread; it should return
  //! promptly, starting the work elsewhere) and renews until the lease is lost or `stop` is
  //! requested. Returns true when it stopped because of `stop` (lease released when configured),
  //! false when leadership was lost or never gained before `stop`.
  bool Run(std::stop_token stop, const std::function<void()>& on_started_leading);
  bool IsLeader() const { return leader_.load(); }
  //! The holder the last observed record named ("" when none).
  std::string ObservedHolder() const;

 private:
  //! One attempt to acquire or renew; true when this candidate holds the lease afterwards.
  bool TryAcquireOrRenew();
  void Release();
  //! Records the record this candidate just wrote as the one observed.
  void ObserveOwnRecord(const std::string& renew_time, int64_t now_ns);

  store::Store& store_;
  const util::Clock& clock_;
  LeaderElectionOptions options_;
  const store::ResourceType* leases_;
  std::atomic<bool> leader_{false};
  // The record as last seen, and when (our clock) it last changed.
  mutable std::mutex mu_;
  std::string observed_holder_;
  std::string observed_renew_time_;
  std::string observed_resource_version_;
  int64_t observed_at_ns_ = 0;
};

//! kube-scheduler's identity: the hostname, "_", a random uuid.
std::string LeaderElectionIdentity();

}  // namespace kubesched::client
