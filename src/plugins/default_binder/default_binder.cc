#include "plugins/default_binder/default_binder.h"

namespace kubesched::plugins::default_binder {

framework::Status DefaultBinder::Bind(framework::CycleState& /*state*/, const framework::PodInfo& pod,
                                      const std::string& node_name) {
  framework::Status status = handle_.client().Bind(pod.pod(), node_name);
  if (status.IsSuccess()) return status;
  // Upstream turns any API failure into an Error status (framework.AsStatus); a failed bind is
  // never "not handled" (Skip) nor a scheduling rejection.
  return framework::Status::Error(status.Message());
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& /*args*/,
                                                                   framework::Handle& handle) {
  return std::make_unique<DefaultBinder>(handle);
}

}  // namespace kubesched::plugins::default_binder
