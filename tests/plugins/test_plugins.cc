// Plugins for the SDK's failure tests (tests/e2e/sdk_e2e_test.cc), one library:
// - Thrower (Filter): throws std::runtime_error for a pod named "boom", passes every other pod;
//   its exception must become an Error status for that pod only.
// - NodeName: the name of an in-tree plugin, registered only when the library is built with
//   KUBESCHED_TEST_CLASH (the duplicate-name test builds it that way).
#include <memory>
#include <stdexcept>

#include "sdk/plugin.h"

namespace {

using kubesched::framework::CycleState;
using kubesched::framework::NodeInfo;
using kubesched::framework::PodInfo;
using kubesched::framework::Status;

class Thrower final : public kubesched::framework::FilterPlugin {
 public:
  std::string_view Name() const override { return "Thrower"; }
  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo&) override {
    if (pod.pod().metadata.name == "boom") throw std::runtime_error("Thrower cannot take pod boom");
    return Status();
  }
};

class Clash final : public kubesched::framework::FilterPlugin {
 public:
  std::string_view Name() const override { return "NodeName"; }
  Status Filter(const CycleState&, const PodInfo&, const NodeInfo&) override { return Status(); }
};

}  // namespace

KUBESCHED_PLUGIN_LIBRARY(registry) {
  auto ok = kubesched::sdk::RegisterPlugin(registry, "Thrower",
                                           [](kubesched::framework::Handle&) { return std::make_unique<Thrower>(); });
  if (!ok) throw std::runtime_error(ok.error());
#ifdef KUBESCHED_TEST_CLASH
  ok = kubesched::sdk::RegisterPlugin(registry, "NodeName",
                                      [](kubesched::framework::Handle&) { return std::make_unique<Clash>(); });
  if (!ok) throw std::runtime_error(ok.error());
#endif
}
