#pragma once
// The objects of resource.k8s.io/v1 (Dynamic Resource Allocation with structured parameters):
// DeviceClass, ResourceSlice, ResourceClaim and ResourceClaimTemplate, with the fields the
// DynamicResources plugin, the resourceclaim controller and the CEL device selectors use. Names
// follow the Kubernetes API (k8s.io/api/resource/v1).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "api/labels.h"
#include "api/quantity.h"
#include "api/semver.h"
#include "api/types.h"

namespace kubesched::api {

inline constexpr std::string_view kResourceApiGroup = "resource.k8s.io";
//! Limits of the API (k8s.io/api/resource/v1), checked when objects are decoded.
inline constexpr size_t kResourceSliceMaxDevices = 128;
inline constexpr size_t kResourceSliceMaxSharedCounters = 8;
inline constexpr size_t kResourceSliceMaxAttributesAndCapacitiesPerDevice = 32;
inline constexpr size_t kDeviceRequestsMax = 32;
inline constexpr int64_t kAllocationResultsMaxSize = 32;
inline constexpr size_t kCELSelectorExpressionMaxLength = 10 * 1024;
inline constexpr int64_t kCELSelectorExpressionMaxCost = 1000000;
inline constexpr size_t kResourceClaimReservedForMaxSize = 256;
//! The annotation the resourceclaim controller sets on claims made from a pod's template:
//! "<pod's claim name>" (resource.kubernetes.io/pod-claim-name).
inline constexpr std::string_view kAnnotationPodClaimName = "resource.kubernetes.io/pod-claim-name";

//! A device attribute's or capacity's name: "<domain>/<id>", or "<id>" when the domain is the
//! device's driver. Kept split, with `domain` filled in (the driver's name for a short name).
struct QualifiedName {
  std::string domain;
  std::string id;
  auto operator<=>(const QualifiedName&) const = default;
  //! "<domain>/<id>" (the form allocation results use).
  std::string String() const { return domain.empty() ? id : domain + "/" + id; }
};

//! One of int, bool, string or version (a semantic version 2.0.0).
using DeviceAttributeValue = std::variant<int64_t, bool, std::string, SemVer>;

struct DeviceAttribute {
  QualifiedName name;
  DeviceAttributeValue value;
};

//! capacity[].requestPolicy: how much a request may consume of a shared device's capacity.
struct CapacityRequestPolicyRange {
  Quantity min;
  std::optional<Quantity> max;
  std::optional<Quantity> step;
};
struct CapacityRequestPolicy {
  std::optional<Quantity> default_value;  // `default`
  std::vector<Quantity> valid_values;     // sorted ascending, as validation requires
  std::optional<CapacityRequestPolicyRange> valid_range;
};

struct DeviceCapacity {
  QualifiedName name;
  Quantity value;
  std::optional<CapacityRequestPolicy> request_policy;
};

//! A named amount in a counter set (sharedCounters) or consumed from one (consumesCounters).
struct Counter {
  std::string name;
  Quantity value;
};
struct CounterSet {
  std::string name;
  std::vector<Counter> counters;
};
struct DeviceCounterConsumption {
  std::string counter_set;
  std::vector<Counter> counters;
};

enum class DeviceTaintEffect { kNoSchedule, kNoExecute };
struct DeviceTaint {
  std::string key;
  std::string value;
  DeviceTaintEffect effect = DeviceTaintEffect::kNoSchedule;
};

enum class DeviceTolerationOperator { kExists, kEqual };
struct DeviceToleration {
  std::string key;
  DeviceTolerationOperator op = DeviceTolerationOperator::kEqual;
  std::string value;
  std::optional<DeviceTaintEffect> effect;  // absent: every effect
  std::optional<int64_t> toleration_seconds;
};

struct Device {
  std::string name;
  //! Sorted by name; short names already qualified with the slice's driver.
  std::vector<DeviceAttribute> attributes;
  std::vector<DeviceCapacity> capacity;
  std::vector<DeviceCounterConsumption> consumes_counters;
  //! Per-device node selection (when the slice sets perDeviceNodeSelection): one of these.
  std::optional<std::string> node_name;
  std::optional<NodeSelector> node_selector;
  bool all_nodes = false;
  std::vector<DeviceTaint> taints;
  //! allowMultipleAllocations: the device may be allocated to several claims at once (its
  //! capacity consumed by each), as a shared GPU is.
  bool allow_multiple_allocations = false;
  //! bindsToNode / bindingConditions / bindingFailureConditions (device binding conditions).
  bool binds_to_node = false;
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;

  const DeviceAttribute* Attribute(const QualifiedName& name) const;
  const DeviceCapacity* Capacity(const QualifiedName& name) const;
};

struct ResourcePool {
  std::string name;
  int64_t generation = 0;
  int64_t resource_slice_count = 1;
};

struct ResourceSlice {
  ObjectMeta metadata;
  std::string driver;
  ResourcePool pool;
  //! Exactly one of node_name, node_selector, all_nodes and per_device_node_selection.
  std::optional<std::string> node_name;
  std::optional<NodeSelector> node_selector;
  bool all_nodes = false;
  bool per_device_node_selection = false;
  std::vector<Device> devices;
  std::vector<CounterSet> shared_counters;
  ObjectJson json;
};

//! A CEL selector (selectors[].cel.expression).
struct DeviceSelector {
  std::string expression;
  bool operator==(const DeviceSelector&) const = default;
};

//! Opaque driver configuration (opaque.driver, opaque.parameters as JSON text).
struct OpaqueDeviceConfiguration {
  std::string driver;
  std::string parameters_json;
};

struct DeviceClass {
  ObjectMeta metadata;
  std::vector<DeviceSelector> selectors;
  std::vector<OpaqueDeviceConfiguration> config;
  //! spec.extendedResourceName: pods asking for this extended resource get a claim of this class.
  std::optional<std::string> extended_resource_name;
  ObjectJson json;
};

enum class DeviceAllocationMode { kExactCount, kAll };

//! What exactly/firstAvailable[] requests share.
struct DeviceSubRequest {
  std::string name;  // the subrequest's name; empty for `exactly`
  std::string device_class_name;
  std::vector<DeviceSelector> selectors;
  DeviceAllocationMode allocation_mode = DeviceAllocationMode::kExactCount;
  int64_t count = 1;
  bool admin_access = false;
  std::vector<DeviceToleration> tolerations;
  //! capacity.requests: how much of each capacity of a shared device to consume.
  std::map<QualifiedName, Quantity> capacity_requests;
};

struct DeviceRequest {
  std::string name;
  //! Exactly one of these: `exactly` (then first_available is empty) or `firstAvailable`.
  std::optional<DeviceSubRequest> exactly;
  std::vector<DeviceSubRequest> first_available;
};

struct DeviceConstraint {
  std::vector<std::string> requests;  // empty: all of them
  std::optional<QualifiedName> match_attribute;
  std::optional<QualifiedName> distinct_attribute;
};

struct DeviceClaimConfiguration {
  std::vector<std::string> requests;
  OpaqueDeviceConfiguration opaque;
};

struct ResourceClaimSpec {
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  std::vector<DeviceClaimConfiguration> config;
};

//! One allocated device: status.allocation.devices.results[].
struct DeviceRequestAllocationResult {
  std::string request;  // "<request>" or "<request>/<subrequest>"
  std::string driver;
  std::string pool;
  std::string device;
  bool admin_access = false;
  //! shareID: set when the device allows multiple allocations (one per allocation of it).
  std::optional<std::string> share_id;
  std::map<QualifiedName, Quantity> consumed_capacity;
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
  bool operator==(const DeviceRequestAllocationResult&) const = default;
};

struct DeviceAllocationConfiguration {
  std::string source;  // FromClass or FromClaim
  std::vector<std::string> requests;
  OpaqueDeviceConfiguration opaque;
};

struct AllocationResult {
  std::vector<DeviceRequestAllocationResult> devices;
  std::vector<DeviceAllocationConfiguration> config;
  //! The nodes the allocation is usable on (a node-local device: its node).
  std::optional<NodeSelector> node_selector;
};

//! status.reservedFor[]: who uses the claim (pods, by UID).
struct ResourceClaimConsumerReference {
  std::string api_group;
  std::string resource = "pods";
  std::string name;
  std::string uid;
  bool operator==(const ResourceClaimConsumerReference&) const = default;
};

struct ResourceClaim {
  ObjectMeta metadata;
  ResourceClaimSpec spec;
  std::optional<AllocationResult> allocation;
  std::vector<ResourceClaimConsumerReference> reserved_for;
  ObjectJson json;

  std::string Key() const { return metadata.namespace_ + "/" + metadata.name; }
  bool IsReservedFor(std::string_view pod_uid) const;
};

struct ResourceClaimTemplate {
  ObjectMeta metadata;
  //! spec.metadata: labels and annotations the claims made from it get.
  Labels claim_labels;
  Labels claim_annotations;
  ResourceClaimSpec spec;
  ObjectJson json;
};

//! One object of these kinds, as informers hand them to the scheduler.
using ResourceObject = std::variant<std::shared_ptr<const DeviceClass>, std::shared_ptr<const ResourceSlice>,
                                    std::shared_ptr<const ResourceClaim>, std::shared_ptr<const ResourceClaimTemplate>>;

//! The generateName of a claim the resourceclaim controller makes from a template for a pod:
//! "<pod name>-<claim name>-" (both parts cut to fit); the store adds 5 random characters.
std::string ResourceClaimGenerateName(std::string_view pod_name, std::string_view pod_claim_name);

}  // namespace kubesched::api
