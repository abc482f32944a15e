#pragma once
// ?dryRun=All: a write checked as the store would check it (defaulting, admission, validation,
// existence and resourceVersion preconditions) and answered with the object it would store,
// without storing it. The store has no dry-run mode of its own, so these run the resource's
// hooks here; what the store does on top of them (metadata.name syntax, generated names'
// uniqueness) is not repeated.

#include <string_view>

#include "api/json.h"
#include "store/store.h"

namespace kubesched::server {

store::Result<store::ObjectPtr> DryRunCreate(const store::Store& store, const store::ResourceType& type,
                                             std::string_view namespace_, api::json::Document body);
store::Result<store::ObjectPtr> DryRunUpdate(const store::Store& store, const store::ResourceType& type,
                                             std::string_view namespace_, std::string_view name,
                                             api::json::Document body, const store::UpdateRequest& request);
store::Result<store::ObjectPtr> DryRunPatch(const store::Store& store, const store::ResourceType& type,
                                            std::string_view namespace_, std::string_view name,
                                            store::PatchType patch_type, std::string_view patch,
                                            std::string_view subresource, const store::Store::PatchDecoder& decode);
//! The object as it stands (NotFound when absent; preconditions checked).
store::Result<store::ObjectPtr> DryRunDelete(const store::Store& store, const store::ResourceType& type,
                                             std::string_view namespace_, std::string_view name,
                                             const store::DeleteOptions& options);

}  // namespace kubesched::server
