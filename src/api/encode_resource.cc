// The parts of resource.k8s.io objects the scheduler writes: a ResourceClaim's status.

#include "api/encode.h"

namespace kubesched::api {

namespace {

using json::Allocator;
using json::Value;

Value Str(std::string_view s, Allocator& a) { return json::MakeString(s, a); }

Value Strings(const std::vector<std::string>& items, Allocator& a) {
  Value arr(rapidjson::kArrayType);
  for (const auto& s : items) arr.PushBack(Str(s, a), a);
  return arr;
}

Value Opaque(const OpaqueDeviceConfiguration& opaque, Allocator& a) {
  Value o(rapidjson::kObjectType);
  json::Set(o, "driver", Str(opaque.driver, a), a);
  json::Document parameters;
  if (json::Parse(opaque.parameters_json, parameters)) {
    json::Set(o, "parameters", Value(parameters, a), a);
  } else {
    json::Set(o, "parameters", Value(rapidjson::kObjectType), a);
  }
  return o;
}

Value Result(const DeviceRequestAllocationResult& r, Allocator& a) {
  Value o(rapidjson::kObjectType);
  json::Set(o, "request", Str(r.request, a), a);
  json::Set(o, "driver", Str(r.driver, a), a);
  json::Set(o, "pool", Str(r.pool, a), a);
  json::Set(o, "device", Str(r.device, a), a);
  if (r.admin_access) json::Set(o, "adminAccess", Value(true), a);
  if (r.share_id) json::Set(o, "shareID", Str(*r.share_id, a), a);
  if (!r.consumed_capacity.empty()) {
    Value consumed(rapidjson::kObjectType);
    for (const auto& [name, q] : r.consumed_capacity) {
      // Names of the device's own driver are written short, as the slice spells them.
      json::Set(consumed, name.domain == r.driver ? name.id : name.String(), Str(q.text(), a), a);
    }
    json::Set(o, "consumedCapacity", std::move(consumed), a);
  }
  if (!r.binding_conditions.empty()) json::Set(o, "bindingConditions", Strings(r.binding_conditions, a), a);
  if (!r.binding_failure_conditions.empty()) {
    json::Set(o, "bindingFailureConditions", Strings(r.binding_failure_conditions, a), a);
  }
  return o;
}

}  // namespace

json::Value ResourceClaimStatusToValue(const ResourceClaim& claim, json::Allocator& a) {
  Value status(rapidjson::kObjectType);
  if (claim.allocation) {
    Value allocation(rapidjson::kObjectType);
    Value devices(rapidjson::kObjectType);
    Value results(rapidjson::kArrayType);
    for (const auto& r : claim.allocation->devices) results.PushBack(Result(r, a), a);
    json::Set(devices, "results", std::move(results), a);
    if (!claim.allocation->config.empty()) {
      Value config(rapidjson::kArrayType);
      for (const auto& c : claim.allocation->config) {
        Value o(rapidjson::kObjectType);
        json::Set(o, "source", Str(c.source, a), a);
        if (!c.requests.empty()) json::Set(o, "requests", Strings(c.requests, a), a);
        json::Set(o, "opaque", Opaque(c.opaque, a), a);
        config.PushBack(std::move(o), a);
      }
      json::Set(devices, "config", std::move(config), a);
    }
    json::Set(allocation, "devices", std::move(devices), a);
    if (claim.allocation->node_selector) {
      json::Set(allocation, "nodeSelector", NodeSelectorToValue(*claim.allocation->node_selector, a), a);
    }
    json::Set(status, "allocation", std::move(allocation), a);
  } else {
    json::Set(status, "allocation", Value(rapidjson::kNullType), a);
  }
  Value reserved(rapidjson::kArrayType);
  for (const auto& ref : claim.reserved_for) {
    Value o(rapidjson::kObjectType);
    if (!ref.api_group.empty()) json::Set(o, "apiGroup", Str(ref.api_group, a), a);
    json::Set(o, "resource", Str(ref.resource, a), a);
    json::Set(o, "name", Str(ref.name, a), a);
    json::Set(o, "uid", Str(ref.uid, a), a);
    reserved.PushBack(std::move(o), a);
  }
  json::Set(status, "reservedFor", std::move(reserved), a);
  return status;
}

}  // namespace kubesched::api
