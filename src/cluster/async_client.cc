#include "cluster/async_client.h"

#include "util/log.h"

namespace kubesched::cluster {

using framework::Status;

AsyncClient::AsyncClient(framework::ClusterClient& inner, size_t workers) : inner_(inner) {
  for (size_t i = 0; i < std::max<size_t>(workers, 1); ++i) {
    auto worker = std::make_unique<Worker>();
    Worker* w = worker.get();
    worker->thread = std::thread([w] { Loop(*w); });
    workers_.push_back(std::move(worker));
  }
}

AsyncClient::~AsyncClient() {
  for (auto& w : workers_) {
    {
      std::lock_guard lock(w->mu);
      w->stopping = true;
    }
    w->cv.notify_all();
  }
  for (auto& w : workers_) w->thread.join();
}

void AsyncClient::Loop(Worker& worker) {
  std::unique_lock lock(worker.mu);
  for (;;) {
    worker.cv.wait(lock, [&] { return worker.stopping || !worker.tasks.empty(); });
    if (worker.tasks.empty()) return;  // stopping, and everything queued is done
    std::function<void()> task = std::move(worker.tasks.front());
    worker.tasks.pop_front();
    ++worker.running;
    lock.unlock();
    task();
    lock.lock();
    --worker.running;
    worker.cv.notify_all();
  }
}

void AsyncClient::Enqueue(const std::string& uid, std::function<void()> task) {
  Worker& w = *workers_[std::hash<std::string>{}(uid) % workers_.size()];
  {
    std::lock_guard lock(w.mu);
    w.tasks.push_back(std::move(task));
  }
  w.cv.notify_all();
}

void AsyncClient::Flush() {
  for (auto& w : workers_) {
    std::unique_lock lock(w->mu);
    w->cv.wait(lock, [&] { return w->tasks.empty() && w->running == 0; });
  }
}

Status AsyncClient::Bind(const api::Pod& pod, const std::string& node_name) { return inner_.Bind(pod, node_name); }

Status AsyncClient::DeletePod(const api::Pod& pod, std::string_view reason) {
  auto copy = std::make_shared<const api::Pod>(pod);
  Enqueue(pod.metadata.uid, [this, copy, reason = std::string(reason)] {
    if (Status s = inner_.DeletePod(*copy, reason); !s.IsSuccess()) {
      KS_LOG.ErrorS(s.Message(), "Error deleting pod", "pod", log::KObj(*copy));
    }
  });
  return {};
}

Status AsyncClient::DeletePodForMove(const api::Pod& pod, const std::string& destination_node,
                                     std::string_view reason) {
  auto copy = std::make_shared<const api::Pod>(pod);
  Enqueue(pod.metadata.uid, [this, copy, destination_node, reason = std::string(reason)] {
    if (Status s = inner_.DeletePodForMove(*copy, destination_node, reason); !s.IsSuccess()) {
      KS_LOG.ErrorS(s.Message(), "Error deleting pod", "pod", log::KObj(*copy));
    }
  });
  return {};
}

Status AsyncClient::SetNominatedNodeName(const api::Pod& pod, const std::string& node_name) {
  auto copy = std::make_shared<const api::Pod>(pod);
  Enqueue(pod.metadata.uid, [this, copy, node_name] {
    if (Status s = inner_.SetNominatedNodeName(*copy, node_name); !s.IsSuccess()) {
      KS_LOG.ErrorS(s.Message(), "Error updating pod", "pod", log::KObj(*copy));
    }
  });
  return {};
}

Status AsyncClient::SetPodScheduledCondition(const api::Pod& pod, const api::PodCondition& condition) {
  auto copy = std::make_shared<const api::Pod>(pod);
  Enqueue(pod.metadata.uid, [this, copy, condition] {
    if (Status s = inner_.SetPodScheduledCondition(*copy, condition); !s.IsSuccess()) {
      KS_LOG.ErrorS(s.Message(), "Error updating pod", "pod", log::KObj(*copy));
    }
  });
  return {};
}

Status AsyncClient::SetPodGroupCondition(const api::PodGroup& group, const api::PodCondition& condition) {
  auto copy = std::make_shared<const api::PodGroup>(group);
  // Ordered with the group's other writes (keyed by the group, not a pod).
  Enqueue("podgroup/" + group.Key(), [this, copy, condition] {
    if (Status s = inner_.SetPodGroupCondition(*copy, condition); !s.IsSuccess()) {
      KS_LOG.ErrorS(s.Message(), "Error updating pod group", "podGroup", copy->Key());
    }
  });
  return {};
}

std::optional<api::Labels> AsyncClient::NamespaceLabels(std::string_view name) const {
  return inner_.NamespaceLabels(name);
}

std::vector<std::shared_ptr<const api::PodDisruptionBudget>> AsyncClient::ListPodDisruptionBudgets() const {
  return inner_.ListPodDisruptionBudgets();
}

std::optional<api::LabelSelector> AsyncClient::ControllerSelector(const api::Pod& pod) const {
  return inner_.ControllerSelector(pod);
}

}  // namespace kubesched::cluster
