#pragma once
// AsyncClient: a ClusterClient whose status writes and deletions happen on worker threads, so
// that an API round trip never holds up a scheduling cycle (kubesched run). Binds stay
// synchronous (they run in the binding cycle, off the scheduling thread, and their outcome
// matters); reads go straight to the wrapped client's listers. Writes for one pod keep their
// order (one worker per pod, chosen by uid); a write that fails is logged, as upstream logs a
// failed status update and lets the next attempt try again.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "framework/client.h"

namespace kubesched::cluster {

class AsyncClient final : public framework::ClusterClient {
 public:
  //! `inner` must outlive this client. `workers`: threads writing concurrently.
  explicit AsyncClient(framework::ClusterClient& inner, size_t workers = 4);
  //! Finishes the queued writes, then joins the workers.
  ~AsyncClient() override;

  framework::Status Bind(const api::Pod& pod, const std::string& node_name) override;
  //! Queued; success means queued.
  framework::Status DeletePod(const api::Pod& pod, std::string_view reason) override;
  framework::Status DeletePodForMove(const api::Pod& pod, const std::string& destination_node,
                                     std::string_view reason) override;
  framework::Status SetNominatedNodeName(const api::Pod& pod, const std::string& node_name) override;
  framework::Status SetPodScheduledCondition(const api::Pod& pod, const api::PodCondition& condition) override;
  framework::Status SetPodGroupCondition(const api::PodGroup& group, const api::PodCondition& condition) override;
  //! Synchronous (VolumeBinding's PreBind waits for the outcome in the binding cycle).
  framework::Status BindVolumeToClaim(const api::PersistentVolume& volume,
                                      const api::PersistentVolumeClaim& claim) override {
    return inner_.BindVolumeToClaim(volume, claim);
  }
  framework::Status SelectNodeForClaim(const api::PersistentVolumeClaim& claim, const std::string& node_name) override {
    return inner_.SelectNodeForClaim(claim, node_name);
  }
  framework::Status UpdateResourceClaimStatus(const api::ResourceClaim& claim) override {
    return inner_.UpdateResourceClaimStatus(claim);
  }
  std::optional<api::Labels> NamespaceLabels(std::string_view name) const override;
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> ListPodDisruptionBudgets() const override;
  std::optional<api::LabelSelector> ControllerSelector(const api::Pod& pod) const override;
  //! Events are already asynchronous (the recorder queues them).
  bool RecordsEvents() const override { return inner_.RecordsEvents(); }
  void RecordEvent(const framework::EventRecord& event) override { inner_.RecordEvent(event); }

  //! Waits until every write queued so far is done (tests).
  void Flush();

 private:
  struct Worker {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> tasks;  // guarded by mu
    size_t running = 0;                       // guarded by mu: a task is executing
    bool stopping = false;                    // guarded by mu
    std::thread thread;
  };
  void Enqueue(const std::string& uid, std::function<void()> task);
  static void Loop(Worker& worker);

  framework::ClusterClient& inner_;
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace kubesched::cluster
