#pragma once
// SchedulingGates: keeps pods that carry spec.schedulingGates out of the active queue until every
// gate has been removed (upstream's schedulinggates plugin).

#include <expected>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"

namespace kubesched::plugins::scheduling_gates {

class SchedulingGates final : public framework::PreEnqueuePlugin, public framework::EnqueueExtensions {
 public:
  static constexpr std::string_view kName = "SchedulingGates";

  std::string_view Name() const override { return kName; }
  //! Success for an ungated pod; otherwise UnschedulableAndUnresolvable
  //! "waiting for scheduling gates: [g1 g2]".
  framework::Status PreEnqueue(const api::Pod& pod) override;
  //! Pod updates that eliminate scheduling gates; the hint queues only the gated pod itself and
  //! only once no gate remains.
  std::vector<framework::ClusterEventWithHint> EventsToRegister() const override;
};

framework::QueueingHint IsSchedulableAfterUpdatePodSchedulingGatesEliminated(const api::Pod& pod,
                                                                             const framework::EventObjects& event);

//! Takes no args (ignored).
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::scheduling_gates
