#pragma once
// Helpers shared by the plugin's translation units; not part of its interface.

#include <initializer_list>
#include <memory>
#include <span>
#include <string_view>

#include "framework/client.h"
#include "framework/node_info.h"
#include "plugins/inter_pod_affinity/inter_pod_affinity.h"

namespace kubesched::plugins::inter_pod_affinity::internal {

//! Resolves the namespaceSelectors of `term_sets` for every namespace a pod on `nodes` is in, plus
//! `own_namespace`: one NamespaceLabels lookup per distinct namespace. Upstream lists the
//! namespaces matching each selector; only namespaces holding pods (or the incoming pod's own)
//! can matter to a match, so the result is the same. Does nothing when no term has a selector.
void ResolveNamespaces(std::span<const framework::NodeInfo* const> nodes, std::string_view own_namespace,
                       const framework::ClusterClient& client, std::initializer_list<IncomingTerms*> term_sets);

//! New, empty caches for InterPodAffinity (defined in filtering.cc).
std::shared_ptr<InterPodAffinity::IncomingCountCache> NewIncomingCountCache();
std::shared_ptr<InterPodAffinity::ExistingCountCache> NewExistingCountCache();

}  // namespace kubesched::plugins::inter_pod_affinity::internal
