// The kinds of resource.k8s.io/v1 (DeviceClass, ResourceSlice, ResourceClaim,
// ResourceClaimTemplate) and a pod's resource claims, checked as upstream's
// pkg/apis/resource/validation and pkg/apis/core/validation check the fields the scheduler reads.

#include <algorithm>
#include <set>
#include <string>

#include "api/decode_internal.h"
#include "api/names.h"
#include "api/resource_types.h"

namespace kubesched::api::decode {
namespace {

constexpr std::pair<std::string_view, DeviceAllocationMode> kAllocationModes[] = {
    {"ExactCount", DeviceAllocationMode::kExactCount},
    {"All", DeviceAllocationMode::kAll},
};
constexpr std::pair<std::string_view, DeviceTaintEffect> kDeviceTaintEffects[] = {
    {"NoSchedule", DeviceTaintEffect::kNoSchedule},
    {"NoExecute", DeviceTaintEffect::kNoExecute},
};
constexpr std::pair<std::string_view, DeviceTolerationOperator> kDeviceTolerationOperators[] = {
    {"Exists", DeviceTolerationOperator::kExists},
    {"Equal", DeviceTolerationOperator::kEqual},
};

Quantity ReadQuantityValue(const json::Value* v, const Path& path, const Context& ctx) {
  if (!Present(v)) Fail(v, path, "Required value", kFieldValueRequired);
  if (v->IsObject() || v->IsArray()) {
    Fail(v, path, "expected a quantity such as 500m, 2 or 1Gi, got " + Describe(v, ctx));
  }
  const std::string text = v->IsString() ? std::string(json::View(*v)) : ScalarText(*v, ctx);
  auto q = Quantity::Parse(text);
  if (!q) Fail(v, path, q.error());
  if (q->IsNegative()) Fail(v, path, "must be greater than or equal to 0, got " + GoQuote(text));
  return *q;
}

std::optional<Quantity> ReadOptQuantityField(const MapView& m, std::string_view key) {
  if (!m.Has(key)) return std::nullopt;
  return ReadQuantityValue(m.Get(key), m.PathOf(key), m.ctx());
}

// An attribute or capacity name: "<domain>/<id>" or "<id>" (qualified with the driver then).
// Upstream: the id is a C identifier of at most 32 characters, the domain a DNS subdomain of at
// most 63.
QualifiedName ReadQualifiedName(std::string_view text, std::string_view driver, const json::Value* at, const Path& path,
                                bool fully_qualified) {
  QualifiedName name;
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    if (fully_qualified) Fail(at, path, "a fully qualified name must be a domain and a name separated by a slash");
    name.domain = std::string(driver);
    name.id = std::string(text);
  } else {
    name.domain = std::string(text.substr(0, slash));
    name.id = std::string(text.substr(slash + 1));
    if (auto err = IsDNS1123Subdomain(name.domain); !err.empty() || name.domain.size() > 63) {
      Fail(at, path, GoQuote(text) + ": the domain must be a DNS subdomain of at most 63 characters",
           kFieldValueInvalid, true);
    }
  }
  auto c_identifier = [](std::string_view id) {
    if (id.empty() || id.size() > 32) return false;
    if (!(std::isalpha(static_cast<unsigned char>(id[0])) || id[0] == '_')) return false;
    return std::all_of(id.begin(), id.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  };
  if (!c_identifier(name.id)) {
    Fail(at, path,
         GoQuote(text) +
             ": the name must be a C identifier (letters, digits, underscores, not starting with a digit) "
             "of at most 32 characters",
         kFieldValueInvalid, true);
  }
  return name;
}

std::vector<DeviceSelector> ReadSelectors(const MapView& m) {
  std::vector<DeviceSelector> out;
  m.ForEachMapInto("selectors", out, [&](const MapView& s, size_t) {
    const MapView cel = s.Map("cel");
    if (!s.Has("cel")) Fail(s.At("cel"), s.PathOf("cel"), "Required value", kFieldValueRequired);
    std::string expression = cel.RequiredString("expression");
    if (expression.size() > kCELSelectorExpressionMaxLength) {
      Fail(cel.At("expression"), cel.PathOf("expression"),
           "Too long: may not be more than " + std::to_string(kCELSelectorExpressionMaxLength) + " bytes",
           kFieldValueTooLong);
    }
    out.push_back(DeviceSelector{std::move(expression)});
  });
  return out;
}

OpaqueDeviceConfiguration ReadOpaque(const MapView& m) {
  OpaqueDeviceConfiguration c;
  const MapView opaque = m.Map("opaque");
  if (!m.Has("opaque")) Fail(m.At("opaque"), m.PathOf("opaque"), "Required value", kFieldValueRequired);
  c.driver = opaque.RequiredString("driver");
  const json::Value* parameters = opaque.Get("parameters");
  if (!Present(parameters))
    Fail(opaque.At("parameters"), opaque.PathOf("parameters"), "Required value", kFieldValueRequired);
  c.parameters_json = json::Encode(*parameters);
  return c;
}

std::vector<DeviceToleration> ReadDeviceTolerations(const MapView& m) {
  std::vector<DeviceToleration> out;
  m.ForEachMapInto("tolerations", out, [&](const MapView& t, size_t) {
    DeviceToleration tol;
    tol.key = t.String("key");
    tol.op = t.OptEnum("operator", kDeviceTolerationOperators).value_or(DeviceTolerationOperator::kEqual);
    tol.value = t.String("value");
    tol.effect = t.OptEnum("effect", kDeviceTaintEffects);
    tol.toleration_seconds = t.OptInt("tolerationSeconds");
    if (tol.op == DeviceTolerationOperator::kExists && !tol.value.empty()) {
      Fail(t.At("value"), t.PathOf("value"), "value must be empty when `operator` is 'Exists'");
    }
    if (tol.key.empty() && tol.op != DeviceTolerationOperator::kExists) {
      Fail(t.At("operator"), t.PathOf("operator"), "value must be Exists when `key` is empty");
    }
    out.push_back(std::move(tol));
  });
  return out;
}

DeviceSubRequest ReadSubRequest(const MapView& m, bool sub) {
  DeviceSubRequest r;
  if (sub) r.name = m.RequiredString("name");
  r.device_class_name = m.RequiredString("deviceClassName");
  r.selectors = ReadSelectors(m);
  r.allocation_mode = m.OptEnum("allocationMode", kAllocationModes).value_or(DeviceAllocationMode::kExactCount);
  if (r.allocation_mode == DeviceAllocationMode::kExactCount) {
    r.count = m.OptInt("count").value_or(1);
    if (r.count <= 0) Fail(m.At("count"), m.PathOf("count"), "must be greater than zero");
    if (r.count > kAllocationResultsMaxSize) {
      Fail(m.At("count"), m.PathOf("count"),
           "must be less than or equal to " + std::to_string(kAllocationResultsMaxSize));
    }
  } else if (m.Has("count")) {
    Fail(m.At("count"), m.PathOf("count"), "must not be specified when allocationMode is 'All'");
  }
  if (!sub) r.admin_access = m.Has("adminAccess") && m.Bool("adminAccess");
  r.tolerations = ReadDeviceTolerations(m);
  if (auto capacity = m.OptMap("capacity")) {
    capacity->ForEachEntry("requests", [&](std::string_view key, const json::Value* v, const Path& path) {
      QualifiedName name = ReadQualifiedName(key, "", v, path, true);
      r.capacity_requests[std::move(name)] = ReadQuantityValue(v, path, m.ctx());
    });
  }
  return r;
}

void CheckUnique(const std::vector<std::string>& names, const MapView& m, std::string_view key) {
  std::set<std::string_view> seen;
  m.ForEach(key, [&](const json::Value* v, const Path& path, size_t i) {
    if (!seen.insert(names[i]).second) Fail(v, path, "Duplicate value: " + GoQuote(names[i]), kFieldValueDuplicate);
  });
}

// spec.devices of a claim or a template's claim: requests, constraints and config, with names
// unique and references resolved as upstream validates them.
void ReadClaimSpec(const MapView& spec, ResourceClaimSpec& out) {
  const MapView devices = spec.Map("devices");
  std::set<std::string> request_names;  // "<request>" and "<request>/<subrequest>"
  devices.ForEachMapInto("requests", out.requests, [&](const MapView& rm, size_t) {
    DeviceRequest r;
    r.name = rm.RequiredString("name");
    if (auto err = IsDNS1123Label(r.name); !err.empty()) Fail(rm.At("name"), rm.PathOf("name"), Join(err));
    if (!request_names.insert(r.name).second) {
      Fail(rm.At("name"), rm.PathOf("name"), "Duplicate value: " + GoQuote(r.name), kFieldValueDuplicate);
    }
    const bool exactly = rm.Has("exactly");
    const bool first = rm.Has("firstAvailable");
    if (exactly == first) {
      Fail(rm.node(), rm.path(), "exactly one of `exactly` or `firstAvailable` is required",
           exactly ? kFieldValueForbidden : kFieldValueRequired);
    }
    if (exactly) {
      const MapView e = rm.Map("exactly");
      r.exactly = ReadSubRequest(e, false);
    } else {
      std::set<std::string> sub_names;
      rm.ForEachMapInto("firstAvailable", r.first_available, [&](const MapView& sm, size_t) {
        DeviceSubRequest s = ReadSubRequest(sm, true);
        if (!sub_names.insert(s.name).second) {
          Fail(sm.At("name"), sm.PathOf("name"), "Duplicate value: " + GoQuote(s.name), kFieldValueDuplicate);
        }
        request_names.insert(r.name + "/" + s.name);
        r.first_available.push_back(std::move(s));
      });
      if (r.first_available.empty()) {
        Fail(rm.At("firstAvailable"), rm.PathOf("firstAvailable"), "Required value", kFieldValueRequired);
      }
      if (r.first_available.size() > 8) {
        Fail(rm.At("firstAvailable"), rm.PathOf("firstAvailable"), "Too many: must have at most 8 items",
             kFieldValueTooMany);
      }
    }
    out.requests.push_back(std::move(r));
  });
  if (out.requests.size() > kDeviceRequestsMax) {
    Fail(devices.At("requests"), devices.PathOf("requests"),
         "Too many: " + std::to_string(out.requests.size()) + ": must have at most " +
             std::to_string(kDeviceRequestsMax) + " items",
         kFieldValueTooMany);
  }
  auto read_request_refs = [&](const MapView& m) {
    std::vector<std::string> refs = m.StringList("requests");
    m.ForEach("requests", [&](const json::Value* v, const Path& path, size_t i) {
      if (!request_names.contains(refs[i])) {
        Fail(v, path,
             "Invalid value: " + GoQuote(refs[i]) +
                 ": must be the name of a request in the claim or the "
                 "name of a request and a subrequest separated by '/'");
      }
    });
    CheckUnique(refs, m, "requests");
    return refs;
  };
  devices.ForEachMapInto("constraints", out.constraints, [&](const MapView& cm, size_t) {
    DeviceConstraint c;
    c.requests = read_request_refs(cm);
    if (cm.Has("matchAttribute")) {
      c.match_attribute = ReadQualifiedName(cm.String("matchAttribute"), "", cm.Get("matchAttribute"),
                                            cm.PathOf("matchAttribute"), true);
    }
    if (cm.Has("distinctAttribute")) {
      c.distinct_attribute = ReadQualifiedName(cm.String("distinctAttribute"), "", cm.Get("distinctAttribute"),
                                               cm.PathOf("distinctAttribute"), true);
    }
    if (c.match_attribute.has_value() == c.distinct_attribute.has_value()) {
      Fail(cm.node(), cm.path(), "exactly one of `matchAttribute` or `distinctAttribute` is required",
           c.match_attribute ? kFieldValueForbidden : kFieldValueRequired);
    }
    out.constraints.push_back(std::move(c));
  });
  devices.ForEachMapInto("config", out.config, [&](const MapView& cm, size_t) {
    DeviceClaimConfiguration c;
    c.requests = read_request_refs(cm);
    c.opaque = ReadOpaque(cm);
    out.config.push_back(std::move(c));
  });
}

DeviceAttributeValue ReadAttributeValue(const MapView& a) {
  int set = 0;
  DeviceAttributeValue value;
  if (a.Has("int")) {
    value = a.OptInt("int").value();
    ++set;
  }
  if (a.Has("bool")) {
    value = a.Bool("bool");
    ++set;
  }
  if (a.Has("string")) {
    std::string s = a.String("string");
    if (s.size() > 64)
      Fail(a.At("string"), a.PathOf("string"), "Too long: may not be more than 64 bytes", kFieldValueTooLong);
    value = std::move(s);
    ++set;
  }
  if (a.Has("version")) {
    const std::string text = a.String("version");
    auto v = SemVer::Parse(text);
    if (!v)
      Fail(a.At("version"), a.PathOf("version"),
           "Invalid value: " + GoQuote(text) + ": must be a string compatible with semver.org spec 2.0.0");
    value = std::move(*v);
    ++set;
  }
  if (set != 1) {
    Fail(a.node(), a.path(), "exactly one value must be specified",
         set == 0 ? kFieldValueRequired : kFieldValueInvalid);
  }
  return value;
}

std::vector<Counter> ReadCounters(const MapView& m, std::string_view key) {
  std::vector<Counter> out;
  m.ForEachEntry(key, [&](std::string_view name, const json::Value* v, const Path& path) {
    const MapView c(v, path, m.ctx());
    out.push_back(Counter{std::string(name), ReadQuantityValue(c.Get("value"), c.PathOf("value"), m.ctx())});
  });
  std::sort(out.begin(), out.end(), [](const Counter& a, const Counter& b) { return a.name < b.name; });
  return out;
}

Device ReadDevice(const MapView& m, std::string_view driver, bool per_device_node_selection) {
  Device d;
  d.name = m.RequiredString("name");
  if (auto err = IsDNS1123Label(d.name); !err.empty()) Fail(m.At("name"), m.PathOf("name"), Join(err));
  m.ForEachEntry("attributes", [&](std::string_view key, const json::Value* v, const Path& path) {
    QualifiedName name = ReadQualifiedName(key, driver, v, path, false);
    d.attributes.push_back(DeviceAttribute{std::move(name), ReadAttributeValue(MapView(v, path, m.ctx()))});
  });
  m.ForEachEntry("capacity", [&](std::string_view key, const json::Value* v, const Path& path) {
    const MapView c(v, path, m.ctx());
    DeviceCapacity cap;
    cap.name = ReadQualifiedName(key, driver, v, path, false);
    cap.value = ReadQuantityValue(c.Get("value"), c.PathOf("value"), m.ctx());
    if (auto p = c.OptMap("requestPolicy")) {
      CapacityRequestPolicy policy;
      policy.default_value = ReadOptQuantityField(*p, "default");
      p->ForEach("validValues", [&](const json::Value* item, const Path& ipath, size_t) {
        policy.valid_values.push_back(ReadQuantityValue(item, ipath, m.ctx()));
      });
      for (size_t i = 1; i < policy.valid_values.size(); ++i) {
        if (!(policy.valid_values[i - 1] < policy.valid_values[i])) {
          Fail(p->At("validValues"), p->PathOf("validValues"), "must be sorted in ascending order and unique");
        }
      }
      if (auto r = p->OptMap("validRange")) {
        CapacityRequestPolicyRange range;
        range.min = ReadQuantityValue(r->Get("min"), r->PathOf("min"), m.ctx());
        range.max = ReadOptQuantityField(*r, "max");
        range.step = ReadOptQuantityField(*r, "step");
        policy.valid_range = std::move(range);
      }
      if (!policy.valid_values.empty() && policy.valid_range) {
        Fail(p->node(), p->path(), "exactly one of `validValues` or `validRange` may be specified");
      }
      cap.request_policy = std::move(policy);
    }
    d.capacity.push_back(std::move(cap));
  });
  if (d.attributes.size() + d.capacity.size() > kResourceSliceMaxAttributesAndCapacitiesPerDevice) {
    Fail(m.node(), m.path(),
         "Too many: " + std::to_string(d.attributes.size() + d.capacity.size()) +
             ": must have at most 32 attributes and capacities combined",
         kFieldValueTooMany);
  }
  std::sort(d.attributes.begin(), d.attributes.end(),
            [](const DeviceAttribute& a, const DeviceAttribute& b) { return a.name < b.name; });
  std::sort(d.capacity.begin(), d.capacity.end(),
            [](const DeviceCapacity& a, const DeviceCapacity& b) { return a.name < b.name; });
  m.ForEachMapInto("consumesCounters", d.consumes_counters, [&](const MapView& cm, size_t) {
    d.consumes_counters.push_back(
        DeviceCounterConsumption{cm.RequiredString("counterSet"), ReadCounters(cm, "counters")});
  });
  const int selections =
      int(m.Has("nodeName")) + int(m.Has("nodeSelector")) + int(m.Has("allNodes") && m.Bool("allNodes"));
  if (per_device_node_selection) {
    if (selections != 1) {
      Fail(m.node(), m.path(),
           "exactly one of `nodeName`, `nodeSelector` or `allNodes` is required when "
           "`perDeviceNodeSelection` is set");
    }
  } else if (selections != 0) {
    Fail(m.node(), m.path(),
         "`nodeName`, `nodeSelector` and `allNodes` may only be set when `perDeviceNodeSelection` is set",
         kFieldValueForbidden);
  }
  if (m.Has("nodeName")) d.node_name = m.String("nodeName");
  if (auto ns = m.OptMap("nodeSelector")) d.node_selector = ReadNodeSelector(*ns);
  d.all_nodes = m.Has("allNodes") && m.Bool("allNodes");
  m.ForEachMapInto("taints", d.taints, [&](const MapView& t, size_t) {
    d.taints.push_back(DeviceTaint{t.RequiredString("key"), t.String("value"), t.Enum_("effect", kDeviceTaintEffects)});
  });
  d.allow_multiple_allocations = m.Has("allowMultipleAllocations") && m.Bool("allowMultipleAllocations");
  d.binds_to_node = m.Has("bindsToNode") && m.Bool("bindsToNode");
  d.binding_conditions = m.StringList("bindingConditions");
  d.binding_failure_conditions = m.StringList("bindingFailureConditions");
  return d;
}

}  // namespace

void ReadDeviceClass(const MapView& obj, DeviceClass& dc) {
  const MapView spec = obj.Map("spec");
  dc.selectors = ReadSelectors(spec);
  spec.ForEachMapInto("config", dc.config, [&](const MapView& cm, size_t) { dc.config.push_back(ReadOpaque(cm)); });
  if (spec.Has("extendedResourceName")) dc.extended_resource_name = spec.String("extendedResourceName");
}

void ReadResourceSlice(const MapView& obj, ResourceSlice& slice) {
  const MapView spec = obj.Map("spec");
  if (!obj.Has("spec")) Fail(obj.At("spec"), obj.PathOf("spec"), "Required value", kFieldValueRequired);
  slice.driver = spec.RequiredString("driver");
  if (auto err = IsDNS1123Subdomain(slice.driver); !err.empty())
    Fail(spec.At("driver"), spec.PathOf("driver"), Join(err));
  const MapView pool = spec.Map("pool");
  slice.pool.name = pool.RequiredString("name");
  slice.pool.generation = pool.OptInt("generation", 0).value_or(0);
  slice.pool.resource_slice_count = pool.OptInt("resourceSliceCount", 1).value_or(0);
  if (!pool.Has("resourceSliceCount")) {
    Fail(pool.At("resourceSliceCount"), pool.PathOf("resourceSliceCount"), "must be greater than zero");
  }
  const int selections = int(spec.Has("nodeName")) + int(spec.Has("nodeSelector")) +
                         int(spec.Has("allNodes") && spec.Bool("allNodes")) +
                         int(spec.Has("perDeviceNodeSelection") && spec.Bool("perDeviceNodeSelection"));
  if (selections != 1) {
    Fail(spec.node(), spec.path(),
         "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required",
         selections == 0 ? kFieldValueRequired : kFieldValueInvalid);
  }
  if (spec.Has("nodeName")) slice.node_name = spec.String("nodeName");
  if (auto ns = spec.OptMap("nodeSelector")) slice.node_selector = ReadNodeSelector(*ns);
  slice.all_nodes = spec.Has("allNodes") && spec.Bool("allNodes");
  slice.per_device_node_selection = spec.Has("perDeviceNodeSelection") && spec.Bool("perDeviceNodeSelection");
  spec.ForEachMapInto("sharedCounters", slice.shared_counters, [&](const MapView& cm, size_t) {
    CounterSet set{cm.RequiredString("name"), ReadCounters(cm, "counters")};
    if (set.counters.empty()) Fail(cm.At("counters"), cm.PathOf("counters"), "Required value", kFieldValueRequired);
    slice.shared_counters.push_back(std::move(set));
  });
  if (slice.shared_counters.size() > kResourceSliceMaxSharedCounters) {
    Fail(spec.At("sharedCounters"), spec.PathOf("sharedCounters"), "Too many: must have at most 8 items",
         kFieldValueTooMany);
  }
  std::set<std::string> names;
  spec.ForEachMapInto("devices", slice.devices, [&](const MapView& dm, size_t) {
    Device d = ReadDevice(dm, slice.driver, slice.per_device_node_selection);
    if (!names.insert(d.name).second) {
      Fail(dm.At("name"), dm.PathOf("name"), "Duplicate value: " + GoQuote(d.name), kFieldValueDuplicate);
    }
    for (const auto& consumption : d.consumes_counters) {
      const bool known = std::any_of(slice.shared_counters.begin(), slice.shared_counters.end(),
                                     [&](const CounterSet& s) { return s.name == consumption.counter_set; });
      if (!known) {
        Fail(dm.At("consumesCounters"), dm.PathOf("consumesCounters"),
             "must reference a counter set defined in the ResourceSlice sharedCounters: " +
                 GoQuote(consumption.counter_set));
      }
    }
    slice.devices.push_back(std::move(d));
  });
  if (slice.devices.size() > kResourceSliceMaxDevices) {
    Fail(spec.At("devices"), spec.PathOf("devices"), "Too many: must have at most 128 items", kFieldValueTooMany);
  }
}

void ReadResourceClaim(const MapView& obj, ResourceClaim& claim) {
  ReadClaimSpec(obj.Map("spec"), claim.spec);
  const MapView status = obj.Map("status");
  if (auto allocation = status.OptMap("allocation")) {
    AllocationResult result;
    const MapView devices = allocation->Map("devices");
    devices.ForEachMap("results", [&](const MapView& rm, size_t) {
      DeviceRequestAllocationResult r;
      r.request = rm.RequiredString("request");
      r.driver = rm.RequiredString("driver");
      r.pool = rm.RequiredString("pool");
      r.device = rm.RequiredString("device");
      r.admin_access = rm.Has("adminAccess") && rm.Bool("adminAccess");
      if (rm.Has("shareID")) r.share_id = rm.String("shareID");
      rm.ForEachEntry("consumedCapacity", [&](std::string_view key, const json::Value* v, const Path& path) {
        r.consumed_capacity[ReadQualifiedName(key, r.driver, v, path, false)] = ReadQuantityValue(v, path, rm.ctx());
      });
      r.binding_conditions = rm.StringList("bindingConditions");
      r.binding_failure_conditions = rm.StringList("bindingFailureConditions");
      result.devices.push_back(std::move(r));
    });
    devices.ForEachMap("config", [&](const MapView& cm, size_t) {
      result.config.push_back(
          DeviceAllocationConfiguration{cm.RequiredString("source"), cm.StringList("requests"), ReadOpaque(cm)});
    });
    if (auto ns = allocation->OptMap("nodeSelector")) result.node_selector = ReadNodeSelector(*ns);
    claim.allocation = std::move(result);
  }
  status.ForEachMapInto("reservedFor", claim.reserved_for, [&](const MapView& rm, size_t) {
    ResourceClaimConsumerReference ref;
    ref.api_group = rm.String("apiGroup");
    ref.resource = rm.RequiredString("resource");
    ref.name = rm.RequiredString("name");
    ref.uid = rm.RequiredString("uid");
    claim.reserved_for.push_back(std::move(ref));
  });
  if (claim.reserved_for.size() > kResourceClaimReservedForMaxSize) {
    Fail(status.At("reservedFor"), status.PathOf("reservedFor"), "Too many: must have at most 256 items",
         kFieldValueTooMany);
  }
  if (!claim.reserved_for.empty() && !claim.allocation) {
    Fail(status.At("reservedFor"), status.PathOf("reservedFor"), "may not be specified when `allocated` is not set",
         kFieldValueForbidden);
  }
}

void ReadResourceClaimTemplate(const MapView& obj, ResourceClaimTemplate& tmpl) {
  const MapView spec = obj.Map("spec");
  const MapView meta = spec.Map("metadata");
  tmpl.claim_labels = meta.LabelMap("labels");
  tmpl.claim_annotations = meta.AnnotationMap("annotations");
  ReadClaimSpec(spec.Map("spec"), tmpl.spec);
}

void ReadPodResourceClaims(const MapView& pod_spec, PodSpec& s) {
  std::set<std::string> names;
  pod_spec.ForEachMapInto("resourceClaims", s.resource_claims, [&](const MapView& m, size_t) {
    PodResourceClaim c;
    c.name = m.RequiredString("name");
    if (auto err = IsDNS1123Label(c.name); !err.empty()) Fail(m.At("name"), m.PathOf("name"), Join(err));
    if (!names.insert(c.name).second) {
      Fail(m.At("name"), m.PathOf("name"), "Duplicate value: " + GoQuote(c.name), kFieldValueDuplicate);
    }
    if (m.Has("resourceClaimName")) c.resource_claim_name = m.String("resourceClaimName");
    if (m.Has("resourceClaimTemplateName")) c.resource_claim_template_name = m.String("resourceClaimTemplateName");
    if (c.resource_claim_name.has_value() == c.resource_claim_template_name.has_value()) {
      Fail(m.node(), m.path(), "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
           c.resource_claim_name ? kFieldValueInvalid : kFieldValueRequired);
    }
    s.resource_claims.push_back(std::move(c));
  });
  // Containers may only use claims the pod lists (resources.claims[].name), each once.
  auto check = [&](std::string_view key, std::vector<Container>& containers) {
    pod_spec.ForEachMap(key, [&](const MapView& cm, size_t i) {
      const MapView resources = cm.Map("resources");
      std::set<std::pair<std::string, std::string>> seen;
      resources.ForEachMap("claims", [&](const MapView& claim, size_t) {
        ResourceClaimUse use{claim.RequiredString("name"), claim.String("request")};
        if (!names.contains(use.name)) {
          Fail(claim.At("name"), claim.PathOf("name"),
               "Unsupported value: " + GoQuote(use.name) + ": must be the name of one entry in pod.spec.resourceClaims",
               kFieldValueNotSupported);
        }
        if (!seen.emplace(use.name, use.request).second) {
          Fail(claim.node(), claim.path(), "Duplicate value: " + GoQuote(use.name), kFieldValueDuplicate);
        }
        containers[i].resources.claims.push_back(std::move(use));
      });
    });
  };
  check("initContainers", s.init_containers);
  check("containers", s.containers);
}

void ReadPodResourceClaimStatuses(const MapView& status, PodStatus& st) {
  status.ForEachMap("resourceClaimStatuses", [&](const MapView& m, size_t) {
    PodResourceClaimStatus c;
    c.name = m.RequiredString("name");
    if (m.Has("resourceClaimName")) c.resource_claim_name = m.String("resourceClaimName");
    st.resource_claim_statuses.push_back(std::move(c));
  });
}

}  // namespace kubesched::api::decode
