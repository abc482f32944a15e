#pragma once
// The three patch formats the API server accepts on PATCH: JSON Patch (RFC 6902), JSON Merge
// Patch (RFC 7386) and the strategic merge patch kubectl sends (apimachinery's strategicpatch),
// each applied in place to an object's JSON. Errors: 400 for a patch that does not parse, 422
// for one that cannot be applied (a failed "test", a missing path).

#include <string_view>

#include "api/json.h"
#include "store/store.h"

namespace kubesched::store {

Result<void> ApplyJsonPatch(api::json::Document& doc, std::string_view patch);
Result<void> ApplyMergePatch(api::json::Document& doc, std::string_view patch);
//! The same with the patch already parsed.
Result<void> ApplyMergePatch(api::json::Document& doc, const api::json::Value& patch);
//! Lists merge by the keys upstream's struct tags give (containers by name, ports by
//! containerPort, conditions by type, ...); other lists are replaced, as for kinds without
//! strategic information. Directives: `$patch: replace|delete|merge`, `$setElementOrder/<list>`,
//! `$retainKeys`, `$deleteFromPrimitiveList/<list>`.
Result<void> ApplyStrategicMergePatch(api::json::Document& doc, std::string_view patch);

Result<void> ApplyPatch(PatchType type, api::json::Document& doc, std::string_view patch);

}  // namespace kubesched::store
