#pragma once
// DefaultBinder: binds the pod to its node through the cluster client (upstream's defaultbinder).

#include <expected>
#include <memory>
#include <string>
#include <string_view>

#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"

namespace kubesched::plugins::default_binder {

class DefaultBinder final : public framework::BindPlugin {
 public:
  static constexpr std::string_view kName = "DefaultBinder";

  explicit DefaultBinder(framework::Handle& handle) : handle_(handle) {}
  std::string_view Name() const override { return kName; }
  //! Binds through handle.client(): Success, or Error with the client's message when the pod
  //! is gone or already bound (any client failure). Never Skip: it handles every pod.
  framework::Status Bind(framework::CycleState& state, const framework::PodInfo& pod,
                         const std::string& node_name) override;

 private:
  framework::Handle& handle_;
};

//! Takes no args (ignored).
std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& args,
                                                                   framework::Handle& handle);

}  // namespace kubesched::plugins::default_binder
