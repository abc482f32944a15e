#pragma once
// The meta.k8s.io representations of stored objects: Table (what `kubectl get` prints, rows from
// server/printers.h) and PartialObjectMetadata[List] (metadata only, as controllers and the
// garbage collector ask for).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace kubesched::server {

//! ?includeObject=: what each row carries besides its cells (upstream's default: Metadata).
enum class IncludeObject { kNone, kMetadata, kObject };

struct TableOptions {
  std::string meta_version = "v1";  //!< meta.k8s.io version asked for: v1 or v1beta1
  IncludeObject include = IncludeObject::kMetadata;
  //! Leave the column definitions out: a watch sends them with its first event only.
  bool no_headers = false;
  int64_t now_ns = 0;  //!< Unix time the ages are computed against
};

//! The list metadata a collection response carries.
struct ListMeta {
  uint64_t resource_version = 0;
  std::string continue_token{};
  std::optional<int64_t> remaining_item_count{};
};

//! A Table of `objects` (of `type`): a list's, or one object's (GET, a watch event; then `meta`
//! holds the object's resourceVersion, as upstream's table of one object).
std::string EncodeTable(const store::ResourceType& type, const std::vector<store::ObjectPtr>& objects,
                        const ListMeta& meta, const TableOptions& options);

//! One object's PartialObjectMetadata (its metadata with apiVersion meta.k8s.io/<version>).
std::string EncodePartialObjectMetadata(const store::Object& object, std::string_view meta_version);
//! A PartialObjectMetadataList.
std::string EncodePartialObjectMetadataList(const std::vector<store::ObjectPtr>& objects, const ListMeta& meta,
                                            std::string_view meta_version);

//! Writes the `metadata` of a list (resourceVersion, continue, remainingItemCount) into `w`.
class JsonWriter;
void WriteListMeta(JsonWriter& w, const ListMeta& meta);

}  // namespace kubesched::server
