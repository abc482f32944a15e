#include "plugins/queue_sort/queue_sort.h"

namespace kubesched::plugins::queue_sort {

bool PrioritySort::Less(const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) const {
  int32_t pa = a.pod().Priority();
  int32_t pb = b.pod().Priority();
  return pa > pb || (pa == pb && a.timestamp_ns < b.timestamp_ns);
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& /*args*/,
                                                                   framework::Handle& /*handle*/) {
  return std::make_unique<PrioritySort>();
}

}  // namespace kubesched::plugins::queue_sort
