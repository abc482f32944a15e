#pragma once
// Typed decoding of Kubernetes objects from the JSON DOM (api/json.h), one object at a time, for
// every path that receives objects: the manifest loader, the store and API server (create and
// update bodies, 422 causes), watch streams and extender bodies.
//
// Decoding checks the object's kind and apiVersion, its metadata (names as the API server checks
// them) and every field kubesched models, applies the defaults the typed objects carry
// (namespace "default", requests from limits, allocatable from capacity, ...; api/defaults.h does
// the same on the DOM), and keeps the object's JSON as given (Object::json). It does not check
// fields against the schema (api/schema.h), resolve priorities (api/admission.h) or assign names.

#include <cstddef>
#include <expected>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "api/field_error.h"
#include "api/json.h"
#include "api/resource_types.h"
#include "api/storage_types.h"
#include "api/types.h"
#include "api/yaml.h"

namespace kubesched::api {

//! An object of a kind kubesched reads.
using Object =
    std::variant<std::shared_ptr<Node>, std::shared_ptr<Pod>, std::shared_ptr<Namespace>,
                 std::shared_ptr<PriorityClass>, std::shared_ptr<PodDisruptionBudget>, std::shared_ptr<Workload>,
                 std::shared_ptr<PodGroup>, std::shared_ptr<PersistentVolumeClaim>, std::shared_ptr<PersistentVolume>,
                 std::shared_ptr<StorageClass>, std::shared_ptr<CSINode>, std::shared_ptr<CSIDriver>,
                 std::shared_ptr<CSIStorageCapacity>, std::shared_ptr<DeviceClass>, std::shared_ptr<ResourceSlice>,
                 std::shared_ptr<ResourceClaim>, std::shared_ptr<ResourceClaimTemplate>>;

struct DecodeOptions {
  //! The written form of YAML scalars (api/yaml.h), so "version: 1.10" reads as "1.10".
  const yaml::ScalarTexts* texts = nullptr;
  //! Set the object's `json` to the compact encoding of the value decoded.
  bool keep_json = true;
};

template <typename T>
using Decoded = std::expected<std::shared_ptr<T>, FieldErrors>;

//! One object of the given kind; a value of another kind is an error on "kind".
Decoded<Pod> DecodePod(const json::Value& object, const DecodeOptions& options = {});
Decoded<Node> DecodeNode(const json::Value& object, const DecodeOptions& options = {});
//! A Pod object's status alone, read as DecodePod reads it into Pod::status (the same field
//! errors, with paths from the object's root). For writes that change only a pod's status (the
//! store's status subresource): the rest of the typed view can be kept from the version before,
//! whose metadata and spec are the same JSON, and only the status read again.
std::expected<PodStatus, FieldErrors> DecodePodStatus(const json::Value& pod);
Decoded<Namespace> DecodeNamespace(const json::Value& object, const DecodeOptions& options = {});
Decoded<PriorityClass> DecodePriorityClass(const json::Value& object, const DecodeOptions& options = {});
Decoded<PodDisruptionBudget> DecodePodDisruptionBudget(const json::Value& object, const DecodeOptions& options = {});
Decoded<PodGroup> DecodePodGroup(const json::Value& object, const DecodeOptions& options = {});
Decoded<PersistentVolumeClaim> DecodePersistentVolumeClaim(const json::Value& object,
                                                           const DecodeOptions& options = {});
Decoded<PersistentVolume> DecodePersistentVolume(const json::Value& object, const DecodeOptions& options = {});
Decoded<StorageClass> DecodeStorageClass(const json::Value& object, const DecodeOptions& options = {});
Decoded<CSINode> DecodeCSINode(const json::Value& object, const DecodeOptions& options = {});
Decoded<CSIDriver> DecodeCSIDriver(const json::Value& object, const DecodeOptions& options = {});
Decoded<CSIStorageCapacity> DecodeCSIStorageCapacity(const json::Value& object, const DecodeOptions& options = {});
Decoded<DeviceClass> DecodeDeviceClass(const json::Value& object, const DecodeOptions& options = {});
Decoded<ResourceSlice> DecodeResourceSlice(const json::Value& object, const DecodeOptions& options = {});
Decoded<ResourceClaim> DecodeResourceClaim(const json::Value& object, const DecodeOptions& options = {});
Decoded<ResourceClaimTemplate> DecodeResourceClaimTemplate(const json::Value& object,
                                                           const DecodeOptions& options = {});
//! Deployment, ReplicaSet, ReplicationController, StatefulSet, DaemonSet, Job or CronJob.
Decoded<Workload> DecodeWorkload(const json::Value& object, const DecodeOptions& options = {});

//! Any kind kubesched reads, by its kind and apiVersion. A kind it does not read (a Service, a
//! custom resource) is an error on "kind" with reason FieldValueNotSupported.
std::expected<Object, FieldErrors> DecodeObject(const json::Value& object, const DecodeOptions& options = {});

//! Each item of a List (kind List or a typed list such as PodList) on its own, so one bad item
//! is reported (its errors' fields start "items[i]") and the rest still decode. An error for
//! the list itself (no items) comes back as the only element.
std::vector<std::expected<Object, FieldErrors>> DecodeList(const json::Value& list, const DecodeOptions& options = {});

//! The object's metadata, whatever its kind.
ObjectMeta& MetaOf(const Object& object);

}  // namespace kubesched::api
