#pragma once
// Reading request bodies into objects and writing objects in the negotiated representation: the
// pieces every verb handler shares.

#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "api/json.h"
#include "server/http_types.h"
#include "server/media_type.h"
#include "server/status.h"
#include "server/table.h"
#include "store/store.h"

namespace kubesched::server {

//! Decodes a create/update body for `type`: Content-Type application/json (415 otherwise), valid
//! JSON (400), an object whose apiVersion and kind, when given, are the resource's (400), filled
//! in when absent as upstream defaults them from the endpoint.
std::expected<api::json::Document, ApiError> DecodeObjectBody(const HttpRequest& request,
                                                              const store::ResourceType& type);

//! Checks a body's metadata.namespace against the request's (filling it in when absent) and, when
//! `name` is given, metadata.name against the URL's (400 on a mismatch, as upstream).
std::expected<void, ApiError> CheckBodyIdentity(api::json::Document& body, const store::ResourceType& type,
                                                std::string_view namespace_, std::string_view name);

//! One object in `output`'s representation.
std::string EncodeObject(const store::Object& object, const store::ResourceType& type, const ObjectOutput& output,
                         const TableOptions& table);
//! A list (<Kind>List, Table or PartialObjectMetadataList).
std::string EncodeList(const std::vector<store::ObjectPtr>& items, const ListMeta& meta,
                       const store::ResourceType& type, const ObjectOutput& output, const TableOptions& table);

//! metadata.name of a body ("" when absent).
std::string_view BodyName(const api::json::Value& body);

}  // namespace kubesched::server
