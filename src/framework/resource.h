#pragma once
// Resource: the scheduler's view of an amount of resources (a pod's request, a node's allocatable
// or requested), with upstream's rules for computing a pod's effective request.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/types.h"

namespace kubesched::framework {

//! Requests assumed for a container that does not set them, when scoring (upstream's
//! DefaultMilliCPURequest and DefaultMemoryRequest).
inline constexpr int64_t kDefaultMilliCPURequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;

struct Resource {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int64_t ephemeral_storage = 0;
  int64_t allowed_pod_number = 0;
  //! Extended resources and hugepages, sorted by name.
  std::vector<std::pair<std::string, int64_t>> scalar;

  //! Reads a ResourceList: cpu in milli, everything else in units (Value(), rounded up).
  static Resource FromList(const api::ResourceList& list);

  void Add(const Resource& other);
  //! Subtracts; values may go negative (callers compare, as upstream).
  void Sub(const Resource& other);
  //! Per-resource maximum, as used for init containers.
  void SetMax(const Resource& other);

  int64_t Scalar(std::string_view name) const;
  void SetScalar(std::string_view name, int64_t value);
  void AddScalar(std::string_view name, int64_t value);
  //! The amount of any resource by its Kubernetes name ("cpu" in milli).
  int64_t Get(std::string_view name) const;
  bool IsZero() const;

  bool operator==(const Resource&) const = default;
};

//! Whether a resource name is a scalar resource the scheduler accounts for
//! (extended resources such as nvidia.com/gpu, hugepages-*, attachable-volumes-*).
bool IsScalarResourceName(std::string_view name);

//! Options for ComputePodRequests.
struct PodRequestOptions {
  //! When true, containers with no cpu or memory request count kDefaultMilliCPURequest /
  //! kDefaultMemoryRequest for it (upstream's NonMissingContainerRequests, used in scoring).
  bool non_missing_defaults = false;
};

//! A pod's effective request, as upstream's resourcehelper.PodRequests: the sum of app
//! containers and restartable (sidecar) init containers, against the largest of each ordinary
//! init container plus the sidecars started before it, plus pod overhead.
Resource ComputePodRequests(const api::PodSpec& spec, PodRequestOptions options = {});

}  // namespace kubesched::framework
