#pragma once
// PrioritySort: the default QueueSort plugin. Higher priority pods are scheduled first; among
// equal priorities the pod queued earlier goes first (upstream's queuesort.PrioritySort).

#include <expected>
#include <memory>
#include <string>
#include <string_view>

#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"

namespace kubesched::plugins::queue_sort {

class PrioritySort final : public framework::QueueSortPlugin {
 public:
  static constexpr std::string_view kName = "PrioritySort";

  std::string_view Name() const override { return kName; }
  //! a before b when a's priority is higher, or equal and a was queued strictly earlier.
  bool Less(const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) const override;
};

//! Takes no args (ignored).
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::queue_sort
