#include "framework/extension_points.h"

#include <array>

namespace kubesched::framework {
namespace {

template <class Interface>
bool Implements(const Plugin& plugin) {
  return dynamic_cast<const Interface*>(&plugin) != nullptr;
}

constexpr std::array<ExtensionPointKind, 13> kKinds = {{
    {"PreEnqueue", &Implements<PreEnqueuePlugin>},
    {"QueueSort", &Implements<QueueSortPlugin>},
    {"PreFilter", &Implements<PreFilterPlugin>},
    {"Filter", &Implements<FilterPlugin>},
    {"PostFilter", &Implements<PostFilterPlugin>},
    {"PreScore", &Implements<PreScorePlugin>},
    {"Score", &Implements<ScorePlugin>},
    {"Reserve", &Implements<ReservePlugin>},
    {"Permit", &Implements<PermitPlugin>},
    {"PreBind", &Implements<PreBindPlugin>},
    {"Bind", &Implements<BindPlugin>},
    {"PostBind", &Implements<PostBindPlugin>},
    {"EnqueueExtensions", &Implements<EnqueueExtensions>},
}};

}  // namespace

std::span<const ExtensionPointKind> ExtensionPointKinds() { return kKinds; }

std::vector<std::string_view> ExtensionPointsOf(const Plugin& plugin) {
  std::vector<std::string_view> out;
  for (const auto& kind : kKinds) {
    if (kind.implemented_by(plugin)) out.push_back(kind.name);
  }
  return out;
}

}  // namespace kubesched::framework
