#pragma once
// Content negotiation: which of the representations kubectl asks for in its Accept header the
// test bed sends. kubectl `get` asks for a Table ("application/json;as=Table;v=v1;g=meta.k8s.io,
// application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"), discovery for the
// aggregated APIGroupDiscoveryList ("application/json;g=apidiscovery.k8s.io;v=v2;
// as=APIGroupDiscoveryList,...;v=v2beta1;...,application/json"), controllers for
// PartialObjectMetadata. The first acceptable one wins, as upstream's negotiation does for
// clients that list types in preference order.

#include <expected>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "server/status.h"

namespace kubesched::server {

struct MediaType {
  std::string type;                           //!< "application/json", "*/*"
  std::map<std::string, std::string> params;  //!< as, v, g (other parameters kept too)
};

//! The media types of an Accept header, in the order given (q-values are not weighed: kubectl
//! never sends them).
std::vector<MediaType> ParseAccept(std::string_view accept);

enum class ObjectFormat {
  kObject,                     //!< the object or its List, as stored
  kTable,                      //!< meta.k8s.io Table
  kPartialObjectMetadata,      //!< meta.k8s.io PartialObjectMetadata (GET, WATCH)
  kPartialObjectMetadataList,  //!< meta.k8s.io PartialObjectMetadataList (LIST)
};

struct ObjectOutput {
  ObjectFormat format = ObjectFormat::kObject;
  std::string meta_version;  //!< "v1" or "v1beta1" for the meta.k8s.io formats
  std::string content_type = "application/json";
};

//! The representation of objects to send for `accept` ("" or "*/*": the object as JSON).
//! `list` says whether the request lists (PartialObjectMetadataList) or gets one object.
//! Fails with 406 when nothing acceptable can be produced.
std::expected<ObjectOutput, ApiError> NegotiateObjectOutput(std::string_view accept, bool list);

enum class DiscoveryFormat { kLegacy, kAggregatedV2, kAggregatedV2Beta1 };
struct DiscoveryOutput {
  DiscoveryFormat format = DiscoveryFormat::kLegacy;
  std::string content_type = "application/json";
};
//! Whether /api and /apis answer with the aggregated discovery document, and which version.
DiscoveryOutput NegotiateDiscovery(std::string_view accept);

//! The media type of a Content-Type header without parameters, lower case:
//! "application/merge-patch+json; charset=utf-8" -> "application/merge-patch+json".
std::string BaseMediaType(std::string_view content_type);

}  // namespace kubesched::server
