#pragma once
// Object metadata as the API server writes it: RFC 3339 timestamps, random v4 uids, and the
// Object versions the store keeps (canonical JSON plus what selectors and views need).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "api/json.h"
#include "api/workloads.h"
#include "store/store.h"

namespace kubesched::store {

//! A random (version 4) UUID, as the API server gives every object.
std::string NewUid(api::Rng& rng);

//! Builds the stored version of `doc` (whose metadata.resourceVersion is set to `rv` first):
//! its compact JSON, sorted labels, selectable fields and typed view. `decoded`: the view
//! ResourceType::decode made of `doc` while validating it (completed here); null to decode now.
std::shared_ptr<Object> MakeObject(const ResourceType& type, api::json::Document& doc, uint64_t rv,
                                   std::shared_ptr<void> decoded = nullptr);
//! A copy of `object` whose JSON says resourceVersion `rv` (a deletion's last version).
ObjectPtr WithResourceVersion(const Object& object, uint64_t rv);
//! Parses a stored object's JSON (which the store wrote, so it parses).
api::json::Document ParseObject(const Object& object);

//! The checks every write of a `type` object runs after defaulting and admission: metadata
//! (name, labels), then the kind's own (ResourceType::decode, which also gives the view, or
//! ResourceType::validate). `old`: the stored version on update, null on create. Used by the
//! store and by the API server's dry run alike.
//! `old_doc`: old's JSON as a DOM, when the caller has it: a write that leaves all but the status
//! as it was is then checked with ResourceType::decode_status.
DecodeResult ValidateObject(const ResourceType& type, const api::json::Value& doc, const Object* old,
                            const api::json::Value* old_doc = nullptr);

//! Whether two values encode to the same text (json::Encode(a) == json::Encode(b)), without
//! encoding them: the same types, numbers and strings, and object members in the same order.
bool SameJson(const api::json::Value& a, const api::json::Value& b);
//! Whether two objects have the same members but `status`, each the same JSON (in any order).
bool SameExceptStatus(const api::json::Value& a, const api::json::Value& b);

//! metadata of a document (created when absent).
api::json::Value& Metadata(api::json::Document& doc);
//! A decimal resourceVersion; nullopt unless the text is a whole non-negative number.
std::optional<uint64_t> ParseResourceVersion(std::string_view text);

}  // namespace kubesched::store
