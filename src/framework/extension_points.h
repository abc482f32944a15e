#pragma once
// The extension point interfaces of framework/interface.h as a table: which ones a plugin object
// implements, found with dynamic_cast, so that what is reported about a plugin (e.g. by
// `kubesched plugins`) is what the framework will call, not a list kept by hand.

#include <span>
#include <string_view>
#include <vector>

#include "framework/interface.h"

namespace kubesched::framework {

struct ExtensionPointKind {
  //! Upstream's name of the interface: "PreFilter", "Score", "EnqueueExtensions", ...
  std::string_view name;
  bool (*implemented_by)(const Plugin& plugin);
};

//! PreEnqueue, QueueSort, PreFilter, Filter, PostFilter, PreScore, Score, Reserve, Permit,
//! PreBind, Bind, PostBind (the scheduling cycle's order), then EnqueueExtensions.
std::span<const ExtensionPointKind> ExtensionPointKinds();

//! The names of the interfaces `plugin` implements, in ExtensionPointKinds() order.
std::vector<std::string_view> ExtensionPointsOf(const Plugin& plugin);

}  // namespace kubesched::framework
