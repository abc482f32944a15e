#pragma once
// Builders for Dynamic Resource Allocation objects in tests (header only, test binaries only), in
// the shape of upstream's structured allocator test helpers (allocatortesting): classes with a
// driver selector, claims with requests and firstAvailable subrequests, slices with devices,
// counter sets and node selection, and the expected allocation results.

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/quantity.h"
#include "api/resource_types.h"
#include "api/types.h"
#include "framework/dra.h"

namespace kubesched::plugins::dynamic_resources::testing {

inline api::Quantity Q(std::string_view text) {
  auto q = api::Quantity::Parse(text);
  return q ? *q : api::Quantity();
}

//! A qualified name "<domain>/<id>" split; a short name gets `driver` as its domain.
inline api::QualifiedName QName(std::string_view name, std::string_view driver = "") {
  const auto slash = name.find('/');
  if (slash == std::string_view::npos) return {std::string(driver), std::string(name)};
  return {std::string(name.substr(0, slash)), std::string(name.substr(slash + 1))};
}

inline api::DeviceSelector Cel(std::string expression) { return api::DeviceSelector{std::move(expression)}; }

// ---------------------------------------------------------------------------------------------
// Classes

class ClassBuilder {
 public:
  explicit ClassBuilder(std::string name) { c_.metadata.name = std::move(name); }
  ClassBuilder& Selector(std::string expression) {
    c_.selectors.push_back(Cel(std::move(expression)));
    return *this;
  }
  //! opaque configuration {"<attribute>":"<attribute>Value"} for `driver`, as deviceConfiguration().
  ClassBuilder& Config(std::string driver, const std::string& attribute) {
    c_.config.push_back({std::move(driver), "{\"" + attribute + "\":\"" + attribute + "Value\"}"});
    return *this;
  }
  std::shared_ptr<api::DeviceClass> Obj() const { return std::make_shared<api::DeviceClass>(c_); }

 private:
  api::DeviceClass c_;
};

//! upstream's class(): selects the devices of `driver`.
inline ClassBuilder MakeClass(std::string name, const std::string& driver) {
  ClassBuilder b(std::move(name));
  b.Selector("device.driver == \"" + driver + "\"");
  return b;
}

//! A class without selectors: every device.
inline ClassBuilder MakeOpenClass(std::string name) { return ClassBuilder(std::move(name)); }

// ---------------------------------------------------------------------------------------------
// Requests and claims

class SubRequestBuilder {
 public:
  SubRequestBuilder(std::string name, std::string class_name, int64_t count) {
    r_.name = std::move(name);
    r_.device_class_name = std::move(class_name);
    r_.count = count;
  }
  SubRequestBuilder& All() {
    r_.allocation_mode = api::DeviceAllocationMode::kAll;
    r_.count = 0;
    return *this;
  }
  SubRequestBuilder& Selector(std::string expression) {
    r_.selectors.push_back(Cel(std::move(expression)));
    return *this;
  }
  SubRequestBuilder& AdminAccess() {
    r_.admin_access = true;
    return *this;
  }
  SubRequestBuilder& Toleration(api::DeviceToleration t) {
    r_.tolerations.push_back(std::move(t));
    return *this;
  }
  //! capacity.requests[name] = value.
  SubRequestBuilder& Capacity(std::string_view name, std::string_view value, std::string_view driver = "") {
    r_.capacity_requests[QName(name, driver)] = Q(value);
    return *this;
  }
  const api::DeviceSubRequest& Obj() const { return r_; }

 private:
  api::DeviceSubRequest r_;
};

//! An `exactly` request (its subrequest name stays empty).
class RequestBuilder {
 public:
  RequestBuilder(std::string name, std::string class_name, int64_t count) : sub_("", std::move(class_name), count) {
    r_.name = std::move(name);
  }
  RequestBuilder& All() {
    sub_.All();
    return *this;
  }
  RequestBuilder& Selector(std::string expression) {
    sub_.Selector(std::move(expression));
    return *this;
  }
  RequestBuilder& AdminAccess() {
    sub_.AdminAccess();
    return *this;
  }
  RequestBuilder& Toleration(api::DeviceToleration t) {
    sub_.Toleration(std::move(t));
    return *this;
  }
  RequestBuilder& Capacity(std::string_view name, std::string_view value, std::string_view driver = "") {
    sub_.Capacity(name, value, driver);
    return *this;
  }
  api::DeviceRequest Obj() const {
    api::DeviceRequest r = r_;
    r.exactly = sub_.Obj();
    return r;
  }

 private:
  api::DeviceRequest r_;
  SubRequestBuilder sub_;
};

inline api::DeviceRequest FirstAvailable(std::string name, std::vector<SubRequestBuilder> subs) {
  api::DeviceRequest r;
  r.name = std::move(name);
  for (auto& s : subs) r.first_available.push_back(s.Obj());
  return r;
}

inline api::DeviceConstraint MatchAttribute(std::string_view attribute, std::vector<std::string> requests = {}) {
  api::DeviceConstraint c;
  c.requests = std::move(requests);
  c.match_attribute = QName(attribute);
  return c;
}

inline api::DeviceConstraint DistinctAttribute(std::string_view attribute, std::vector<std::string> requests = {}) {
  api::DeviceConstraint c;
  c.requests = std::move(requests);
  c.distinct_attribute = QName(attribute);
  return c;
}

class ClaimBuilder {
 public:
  explicit ClaimBuilder(std::string name, std::string ns = "") {
    c_.metadata.name = std::move(name);
    c_.metadata.namespace_ = std::move(ns);
  }
  ClaimBuilder& UID(std::string uid) {
    c_.metadata.uid = std::move(uid);
    return *this;
  }
  ClaimBuilder& Request(api::DeviceRequest r) {
    c_.spec.requests.push_back(std::move(r));
    return *this;
  }
  ClaimBuilder& Request(const RequestBuilder& r) { return Request(r.Obj()); }
  ClaimBuilder& Constraint(api::DeviceConstraint c) {
    c_.spec.constraints.push_back(std::move(c));
    return *this;
  }
  ClaimBuilder& Config(std::vector<std::string> requests, std::string driver, const std::string& attribute) {
    api::DeviceClaimConfiguration cfg;
    cfg.requests = std::move(requests);
    cfg.opaque = {std::move(driver), "{\"" + attribute + "\":\"" + attribute + "Value\"}"};
    c_.spec.config.push_back(std::move(cfg));
    return *this;
  }
  //! Adds the toleration to every `exactly` request, as upstream's withTolerations.
  ClaimBuilder& Toleration(const api::DeviceToleration& t) {
    for (auto& r : c_.spec.requests) {
      if (r.exactly) r.exactly->tolerations.push_back(t);
    }
    return *this;
  }
  api::DeviceRequest& MutableRequest(size_t i) { return c_.spec.requests[i]; }
  std::shared_ptr<api::ResourceClaim> Obj() const { return std::make_shared<api::ResourceClaim>(c_); }

 private:
  api::ResourceClaim c_;
};

// ---------------------------------------------------------------------------------------------
// Devices and slices

class DeviceBuilder {
 public:
  explicit DeviceBuilder(std::string name) { d_.name = std::move(name); }
  //! Attributes and capacities are qualified with the slice's driver when the slice is built.
  DeviceBuilder& Attr(std::string name, api::DeviceAttributeValue value) {
    attributes_.emplace_back(std::move(name), std::move(value));
    return *this;
  }
  DeviceBuilder& Version(std::string name, std::string_view version) {
    return Attr(std::move(name), api::SemVer::Parse(version).value_or(api::SemVer{}));
  }
  DeviceBuilder& Cap(std::string name, std::string_view value) {
    capacities_.push_back({std::move(name), Q(value), std::nullopt});
    return *this;
  }
  DeviceBuilder& Cap(std::string name, std::string_view value, api::CapacityRequestPolicy policy) {
    capacities_.push_back({std::move(name), Q(value), std::move(policy)});
    return *this;
  }
  //! upstream's withCapacityRequestPolicyRange: default 2, range min 2 step 2 max 4.
  DeviceBuilder& CapRange(std::string name, std::string_view value) {
    api::CapacityRequestPolicy p;
    p.default_value = Q("2");
    p.valid_range = api::CapacityRequestPolicyRange{Q("2"), Q("4"), Q("2")};
    return Cap(std::move(name), value, std::move(p));
  }
  //! upstream's withCapacityRequestPolicyValidValues: default first, then the others.
  DeviceBuilder& CapValues(std::string name, std::string_view value, std::string_view default_value,
                           std::vector<std::string_view> more = {}) {
    api::CapacityRequestPolicy p;
    p.default_value = Q(default_value);
    p.valid_values.push_back(Q(default_value));
    for (auto v : more) p.valid_values.push_back(Q(v));
    return Cap(std::move(name), value, std::move(p));
  }
  //! consumesCounters from `set`; with capacity_from_counters also as capacities (upstream's
  //! fromCounters devices).
  DeviceBuilder& Consumes(std::string set, std::vector<std::pair<std::string, std::string>> counters,
                          bool capacity_from_counters = true) {
    api::DeviceCounterConsumption c;
    c.counter_set = std::move(set);
    for (auto& [name, value] : counters) {
      c.counters.push_back({name, Q(value)});
      if (capacity_from_counters) capacities_.push_back({name, Q(value), std::nullopt});
    }
    d_.consumes_counters.push_back(std::move(c));
    return *this;
  }
  DeviceBuilder& Taint(std::string key, std::string value, api::DeviceTaintEffect effect) {
    d_.taints.push_back({std::move(key), std::move(value), effect});
    return *this;
  }
  DeviceBuilder& MultiAlloc() {
    d_.allow_multiple_allocations = true;
    return *this;
  }
  DeviceBuilder& BindingConditions(std::vector<std::string> conditions, std::vector<std::string> failure) {
    d_.binding_conditions = std::move(conditions);
    d_.binding_failure_conditions = std::move(failure);
    return *this;
  }
  DeviceBuilder& BindsToNode() {
    d_.binds_to_node = true;
    return *this;
  }
  DeviceBuilder& NodeName(std::string node) {
    d_.node_name = std::move(node);
    return *this;
  }
  DeviceBuilder& AllNodes() {
    d_.all_nodes = true;
    return *this;
  }
  DeviceBuilder& NodeSelector(api::NodeSelector s) {
    d_.node_selector = std::move(s);
    return *this;
  }

  api::Device Build(const std::string& driver) const {
    api::Device d = d_;
    for (const auto& [name, value] : attributes_) d.attributes.push_back({QName(name, driver), value});
    std::sort(d.attributes.begin(), d.attributes.end(),
              [](const api::DeviceAttribute& a, const api::DeviceAttribute& b) { return a.name < b.name; });
    for (const auto& c : capacities_) {
      api::QualifiedName name = QName(c.name, driver);
      // As upstream's fromCounters devices: a later counter of the same name wins.
      auto same = std::find_if(d.capacity.begin(), d.capacity.end(),
                               [&](const api::DeviceCapacity& have) { return have.name == name; });
      if (same != d.capacity.end()) {
        *same = {std::move(name), c.value, c.policy};
        continue;
      }
      d.capacity.push_back({std::move(name), c.value, c.policy});
    }
    std::sort(d.capacity.begin(), d.capacity.end(),
              [](const api::DeviceCapacity& a, const api::DeviceCapacity& b) { return a.name < b.name; });
    return d;
  }

 private:
  struct Capacity {
    std::string name;
    api::Quantity value;
    std::optional<api::CapacityRequestPolicy> policy;
  };
  api::Device d_;
  std::vector<std::pair<std::string, api::DeviceAttributeValue>> attributes_;
  std::vector<Capacity> capacities_;
};

inline DeviceBuilder MakeDevice(std::string name) { return DeviceBuilder(std::move(name)); }

inline api::NodeSelector LabelSelector(std::string key, std::vector<std::string> values) {
  api::SelectorRequirement r;
  r.key = std::move(key);
  r.op = api::SelectorOperator::kIn;
  r.values = std::move(values);
  std::sort(r.values.begin(), r.values.end());
  api::NodeSelectorTerm t;
  t.match_expressions.push_back(std::move(r));
  return api::NodeSelector{{std::move(t)}};
}

//! upstream's localNodeSelector: matchFields metadata.name In [node].
inline api::NodeSelector LocalSelector(std::string node) {
  api::NodeSelector s = LabelSelector("metadata.name", {std::move(node)});
  std::swap(s.terms[0].match_fields, s.terms[0].match_expressions);
  return s;
}

class SliceBuilder {
 public:
  SliceBuilder(std::string name, std::string driver, std::string pool) {
    s_.metadata.name = std::move(name);
    s_.driver = std::move(driver);
    s_.pool.name = std::move(pool);
    s_.pool.generation = 1;
    s_.pool.resource_slice_count = 1;
  }
  SliceBuilder& Node(std::string node) {
    s_.node_name = std::move(node);
    return *this;
  }
  SliceBuilder& AllNodes() {
    s_.all_nodes = true;
    return *this;
  }
  SliceBuilder& Selector(api::NodeSelector selector) {
    s_.node_selector = std::move(selector);
    return *this;
  }
  SliceBuilder& PerDevice() {
    s_.per_device_node_selection = true;
    return *this;
  }
  SliceBuilder& Count(int64_t n) {
    s_.pool.resource_slice_count = n;
    return *this;
  }
  SliceBuilder& Generation(int64_t g) {
    s_.pool.generation = g;
    return *this;
  }
  SliceBuilder& Device(const DeviceBuilder& d) {
    s_.devices.push_back(d.Build(s_.driver));
    return *this;
  }
  SliceBuilder& CounterSet(std::string name, std::vector<std::pair<std::string, std::string>> counters) {
    api::CounterSet set;
    set.name = std::move(name);
    for (auto& [n, v] : counters) set.counters.push_back({n, Q(v)});
    s_.shared_counters.push_back(std::move(set));
    return *this;
  }
  std::shared_ptr<api::ResourceSlice> Obj() const { return std::make_shared<api::ResourceSlice>(s_); }

 private:
  api::ResourceSlice s_;
};

// ---------------------------------------------------------------------------------------------
// Nodes and what is allocated

//! upstream's node(): labels region=<region> and planet=earth.
inline api::Node MakeTestNode(std::string name, std::string region) {
  api::Node n;
  n.metadata.name = std::move(name);
  n.metadata.labels.Set("region", std::move(region));
  n.metadata.labels.Set("planet", "earth");
  return n;
}

inline framework::DeviceId DevId(std::string driver, std::string pool, std::string device) {
  return framework::DeviceId{std::move(driver), std::move(pool), std::move(device)};
}

//! The capacity consumed on one device: capacity name (short names qualified with the device's
//! driver) -> quantity.
struct ConsumedOn {
  framework::DeviceId device;
  std::vector<std::pair<std::string, std::string>> capacity;
};

//! An AllocatedState with `devices` allocated exclusively and `consumed` capacity on shared ones.
inline framework::AllocatedState MakeAllocated(std::vector<framework::DeviceId> devices,
                                               std::vector<ConsumedOn> consumed = {}) {
  framework::AllocatedState s;
  for (auto& d : devices) s.allocated_devices.insert(std::move(d));
  for (auto& c : consumed) {
    auto& on = s.consumed_capacity[c.device];
    for (const auto& [name, value] : c.capacity) on[QName(name, c.device.driver)] = Q(value);
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Expected results

struct ExpectedDevice {
  std::string request;
  std::string driver;
  std::string pool;
  std::string device;
  bool admin_access = false;
  bool shared = false;                          // a share ID is expected
  std::map<std::string, std::string> consumed;  // capacity name ("<domain>/<id>") -> quantity
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
};

struct ExpectedConfig {
  std::string source;
  std::vector<std::string> requests;
  std::string driver;
  std::string parameters;
};

struct ExpectedAllocation {
  std::optional<api::NodeSelector> node_selector;
  std::vector<ExpectedDevice> devices;  // in any order
  std::vector<ExpectedConfig> config;   // in order
};

}  // namespace kubesched::plugins::dynamic_resources::testing
