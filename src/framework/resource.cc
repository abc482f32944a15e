#include "framework/resource.h"

#include <algorithm>

namespace kubesched::framework {
namespace {

auto FindScalar(std::vector<std::pair<std::string, int64_t>>& v, std::string_view name) {
  return std::lower_bound(v.begin(), v.end(), name, [](const auto& e, std::string_view n) { return e.first < n; });
}

}  // namespace

bool IsScalarResourceName(std::string_view name) {
  if (name == api::kResourceCPU || name == api::kResourceMemory || name == api::kResourceEphemeralStorage ||
      name == api::kResourcePods) {
    return false;
  }
  if (name.starts_with(api::kHugePagesPrefix) || name.starts_with("attachable-volumes-")) return true;
  // Prefixed native resources (anything in a kubernetes.io/ namespace) are scalar too, as in
  // upstream's schedutil.IsScalarResourceName (v1helper.IsPrefixedNativeResource).
  if (name.find("kubernetes.io/") != std::string_view::npos) return true;
  // Extended resources are fully qualified names outside the kubernetes.io/ namespace
  // (requests.* quota names excluded), e.g. nvidia.com/gpu.
  if (name.find('/') == std::string_view::npos) return false;
  return !name.starts_with("requests.");
}

Resource Resource::FromList(const api::ResourceList& list) {
  Resource r;
  for (const auto& [name, q] : list) {
    if (name == api::kResourceCPU) {
      r.milli_cpu += q.MilliValue();
    } else if (name == api::kResourceMemory) {
      r.memory += q.Value();
    } else if (name == api::kResourceEphemeralStorage) {
      r.ephemeral_storage += q.Value();
    } else if (name == api::kResourcePods) {
      r.allowed_pod_number += q.Value();
    } else if (IsScalarResourceName(name)) {
      r.AddScalar(name, q.Value());
    }
  }
  return r;
}

void Resource::Add(const Resource& o) {
  milli_cpu += o.milli_cpu;
  memory += o.memory;
  ephemeral_storage += o.ephemeral_storage;
  allowed_pod_number += o.allowed_pod_number;
  for (const auto& [name, v] : o.scalar) AddScalar(name, v);
}

void Resource::Sub(const Resource& o) {
  milli_cpu -= o.milli_cpu;
  memory -= o.memory;
  ephemeral_storage -= o.ephemeral_storage;
  allowed_pod_number -= o.allowed_pod_number;
  for (const auto& [name, v] : o.scalar) AddScalar(name, -v);
}

void Resource::SetMax(const Resource& o) {
  milli_cpu = std::max(milli_cpu, o.milli_cpu);
  memory = std::max(memory, o.memory);
  ephemeral_storage = std::max(ephemeral_storage, o.ephemeral_storage);
  allowed_pod_number = std::max(allowed_pod_number, o.allowed_pod_number);
  for (const auto& [name, v] : o.scalar) {
    if (v > Scalar(name)) SetScalar(name, v);
  }
}

int64_t Resource::Scalar(std::string_view name) const {
  // Nodes and pods carry a handful of scalar resources: a scan comparing lengths first beats a
  // binary search of string comparisons (this runs per node in Filter).
  constexpr size_t kLinearScan = 8;
  if (scalar.size() <= kLinearScan) {
    for (const auto& [n, v] : scalar) {
      if (n.size() == name.size() && std::string_view(n) == name) return v;
    }
    return 0;
  }
  auto it = std::lower_bound(scalar.begin(), scalar.end(), name,
                             [](const auto& e, std::string_view n) { return e.first < n; });
  return (it != scalar.end() && it->first == name) ? it->second : 0;
}

void Resource::SetScalar(std::string_view name, int64_t value) {
  auto it = FindScalar(scalar, name);
  if (it != scalar.end() && it->first == name) {
    it->second = value;
  } else {
    scalar.insert(it, {std::string(name), value});
  }
}

void Resource::AddScalar(std::string_view name, int64_t value) {
  auto it = FindScalar(scalar, name);
  if (it != scalar.end() && it->first == name) {
    it->second += value;
  } else {
    scalar.insert(it, {std::string(name), value});
  }
}

int64_t Resource::Get(std::string_view name) const {
  if (name == api::kResourceCPU) return milli_cpu;
  if (name == api::kResourceMemory) return memory;
  if (name == api::kResourceEphemeralStorage) return ephemeral_storage;
  if (name == api::kResourcePods) return allowed_pod_number;
  return Scalar(name);
}

bool Resource::IsZero() const {
  if (milli_cpu != 0 || memory != 0 || ephemeral_storage != 0 || allowed_pod_number != 0) return false;
  for (const auto& [n, v] : scalar) {
    if (v != 0) return false;
  }
  return true;
}

namespace {

Resource ContainerRequests(const api::Container& c, PodRequestOptions options) {
  Resource r = Resource::FromList(c.resources.requests);
  if (options.non_missing_defaults) {
    if (!c.resources.requests.contains(api::kResourceCPU)) r.milli_cpu = kDefaultMilliCPURequest;
    if (!c.resources.requests.contains(api::kResourceMemory)) r.memory = kDefaultMemoryRequest;
  }
  return r;
}

}  // namespace

Resource ComputePodRequests(const api::PodSpec& spec, PodRequestOptions options) {
  Resource reqs;
  for (const auto& c : spec.containers) reqs.Add(ContainerRequests(c, options));

  // Sidecars (restartable init containers) keep running, so they add to the steady state and to
  // every later init container; ordinary init containers run one at a time.
  Resource restartable_sum;
  Resource init_max;
  for (const auto& c : spec.init_containers) {
    Resource container = ContainerRequests(c, options);
    if (c.restart_policy && *c.restart_policy == "Always") {
      reqs.Add(container);
      restartable_sum.Add(container);
      container = restartable_sum;
    } else {
      container.Add(restartable_sum);
    }
    init_max.SetMax(container);
  }
  reqs.SetMax(init_max);

  // Pod-level requests (upstream's PodRequests with PodLevelResources, on by default since 1.34)
  // replace the containers' sum for cpu, memory and hugepages. The API server defaults a missing
  // pod-level request from the pod-level limit when no container requests that resource (when
  // one does, the default is the containers' sum, which changes nothing here).
  if (spec.resources) {
    auto container_requests = [&](std::string_view name) {
      auto has = [&](const api::Container& c) { return c.resources.requests.contains(name); };
      return std::any_of(spec.containers.begin(), spec.containers.end(), has) ||
             std::any_of(spec.init_containers.begin(), spec.init_containers.end(), has);
    };
    auto apply = [&](const std::string& name, const api::Quantity& q) {
      if (name == api::kResourceCPU) {
        reqs.milli_cpu = q.MilliValue();
      } else if (name == api::kResourceMemory) {
        reqs.memory = q.Value();
      } else if (name.starts_with(api::kHugePagesPrefix)) {
        reqs.SetScalar(name, q.Value());
      }
    };
    for (const auto& [name, q] : spec.resources->requests) apply(name, q);
    for (const auto& [name, q] : spec.resources->limits) {
      if (!spec.resources->requests.contains(name) && !container_requests(name)) apply(name, q);
    }
  }

  if (!spec.overhead.empty()) {
    Resource overhead = Resource::FromList(spec.overhead);
    reqs.Add(overhead);
  }
  return reqs;
}

}  // namespace kubesched::framework
