#include "api/manifest.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>

#include "api/names.h"
#include "api/schema.h"
#include "api/workloads.h"
#include "api/yaml_fields.h"
#include "util/duration.h"

namespace kubesched::api {
namespace {

// ---------------------------------------------------------------------------------------------
// Errors. Parsing code throws FieldError (exceptions never leave this file); the document loop
// turns it into a LoadError with the file, document and object filled in.

struct FieldError {
  std::string path;
  std::string message;
  int line = 0;
};

using yaml_fields::Describe;
using yaml_fields::LineOf;
using yaml_fields::Present;
using yaml_fields::Quote;

[[noreturn]] void Fail(const YAML::Node& at, std::string path, std::string message) {
  throw FieldError{std::move(path), std::move(message), LineOf(at)};
}

// Field paths as the API server prints them: dots between fields, [i] for list items, and
// [key] for map keys that are not plain words ("requests[nvidia.com/gpu]").
std::string Child(std::string base, std::string_view key) {
  yaml_fields::AppendField(base, key);
  return base;
}

std::string Index(std::string base, size_t i) {
  yaml_fields::AppendIndex(base, i);
  return base;
}

// ---------------------------------------------------------------------------------------------
// Typed reads of YAML nodes. Absent and null read as the default, as in the Go API types.

std::string ReadString(const YAML::Node& n, const std::string& path) {
  if (!Present(n)) return "";
  if (!n.IsScalar()) Fail(n, path, "expected a string, got " + Describe(n));
  return n.Scalar();
}

std::optional<int64_t> ParseInteger(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty() || s.front() == '+') return std::nullopt;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

int64_t ReadInt(const YAML::Node& n, const std::string& path, int64_t min, int64_t max) {
  if (!n.IsScalar()) Fail(n, path, "expected an integer, got " + Describe(n));
  auto v = ParseInteger(n.Scalar());
  if (!v) Fail(n, path, "expected an integer, got " + Describe(n));
  if (*v < min || *v > max) {
    Fail(n, path,
         "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " + std::to_string(*v));
  }
  return *v;
}

int32_t ReadInt32(const YAML::Node& n, const std::string& path, int64_t min = std::numeric_limits<int32_t>::min(),
                  int64_t max = std::numeric_limits<int32_t>::max()) {
  return static_cast<int32_t>(ReadInt(n, path, min, max));
}

bool ReadBool(const YAML::Node& n, const std::string& path) {
  if (!Present(n)) return false;
  bool value = false;
  // yaml-cpp accepts the YAML 1.1 spellings (true/yes/on, false/no/off, any case) that the
  // Kubernetes YAML decoder also accepts.
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, value)) {
    Fail(n, path, "expected true or false, got " + Describe(n));
  }
  return value;
}

template <typename Enum, size_t N>
Enum ReadEnum(const YAML::Node& n, const std::string& path, const std::pair<std::string_view, Enum> (&table)[N]) {
  const std::string s = ReadString(n, path);
  for (const auto& [text, value] : table) {
    if (s == text) return value;
  }
  std::string supported;
  for (const auto& [text, value] : table) {
    if (!supported.empty()) supported += ", ";
    supported += Quote(text);
  }
  Fail(n, path, "unsupported value " + Quote(s) + "; supported values: " + supported);
}

std::string Join(const std::vector<std::string>& messages) {
  std::string out;
  for (const std::string& m : messages) out += (out.empty() ? "" : "; ") + m;
  return out;
}

// A mapping node with its field path. Lookups never insert and never throw on absent keys.
class MapView {
 public:
  MapView(YAML::Node node, std::string path) : node_(std::move(node)), path_(std::move(path)) {
    if (Present(node_) && !node_.IsMap()) {
      Fail(node_, path_, "expected a mapping of fields, got " + Describe(node_));
    }
  }

  MapView(const MapView&) = default;
  // Assigning a YAML::Node overwrites the node it refers to, so views are never reassigned.
  MapView& operator=(const MapView&) = delete;

  const std::string& path() const { return path_; }
  const YAML::Node& node() const { return node_; }
  bool empty() const { return !Present(node_) || node_.size() == 0; }

  YAML::Node Get(std::string_view key) const {
    if (!Present(node_)) return YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node& self = node_;
    return self[std::string(key)];
  }
  bool Has(std::string_view key) const { return Present(Get(key)); }
  std::string PathOf(std::string_view key) const { return Child(path_, key); }
  // Where to point at for a field: the field itself, or the enclosing mapping when it is absent.
  YAML::Node At(std::string_view key) const {
    YAML::Node n = Get(key);
    return n.IsDefined() ? n : node_;
  }

  std::string String(std::string_view key) const { return ReadString(Get(key), PathOf(key)); }
  std::string RequiredString(std::string_view key) const {
    std::string s = String(key);
    if (s.empty()) Fail(At(key), PathOf(key), "required field is missing or empty");
    return s;
  }
  bool Bool(std::string_view key) const { return ReadBool(Get(key), PathOf(key)); }
  std::optional<int64_t> OptInt(std::string_view key, int64_t min, int64_t max) const {
    YAML::Node n = Get(key);
    if (!Present(n)) return std::nullopt;
    return ReadInt(n, PathOf(key), min, max);
  }
  std::optional<int32_t> OptInt32(std::string_view key, int64_t min = std::numeric_limits<int32_t>::min(),
                                  int64_t max = std::numeric_limits<int32_t>::max()) const {
    auto v = OptInt(key, min, max);
    if (!v) return std::nullopt;
    return static_cast<int32_t>(*v);
  }
  MapView Map(std::string_view key) const { return MapView(Get(key), PathOf(key)); }
  std::optional<MapView> OptMap(std::string_view key) const {
    if (!Has(key)) return std::nullopt;
    return Map(key);
  }

  // Calls f(item_node, item_path, index) for each item of a list field.
  template <typename F>
  void ForEach(std::string_view key, F&& f) const {
    YAML::Node list = Get(key);
    if (!Present(list)) return;
    const std::string path = PathOf(key);
    if (!list.IsSequence()) Fail(list, path, "expected a list, got " + Describe(list));
    for (size_t i = 0; i < list.size(); ++i) f(list[i], Index(path, i), i);
  }
  std::vector<std::string> StringList(std::string_view key) const {
    std::vector<std::string> out;
    ForEach(key,
            [&](const YAML::Node& item, const std::string& path, size_t) { out.push_back(ReadString(item, path)); });
    return out;
  }
  // Calls f(key, value_node, value_path) for each entry of a map field.
  template <typename F>
  void ForEachEntry(std::string_view key, F&& f) const {
    MapView m = Map(key);
    if (!Present(m.node_)) return;
    for (auto it = m.node_.begin(); it != m.node_.end(); ++it) {
      if (!it->first.IsScalar()) Fail(it->first, m.path_, "map keys must be strings, got " + Describe(it->first));
      const std::string k = it->first.Scalar();
      f(k, it->second, Child(m.path_, k));
    }
  }
  // A label map (metadata.labels, nodeSelector, matchLabels): keys and values checked as the API
  // server checks labels.
  Labels LabelMap(std::string_view key) const {
    Labels out;
    ForEachEntry(key, [&](const std::string& k, const YAML::Node& v, const std::string& path) {
      if (auto errs = IsQualifiedName(k); !errs.empty())
        Fail(v, path, "invalid label key " + Quote(k) + ": " + Join(errs));
      std::string value = ReadString(v, path);
      if (auto errs = IsValidLabelValue(value); !errs.empty()) {
        Fail(v, path, "invalid label value " + Quote(value) + ": " + Join(errs));
      }
      out.Set(k, std::move(value));
    });
    return out;
  }
  // metadata.annotations: keys are qualified names (checked in lower case, as upstream), values
  // are free text.
  Labels AnnotationMap(std::string_view key) const {
    Labels out;
    ForEachEntry(key, [&](const std::string& k, const YAML::Node& v, const std::string& path) {
      std::string lower = k;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
      if (auto errs = IsQualifiedName(lower); !errs.empty()) {
        Fail(v, path, "invalid annotation key " + Quote(k) + ": " + Join(errs));
      }
      out.Set(k, ReadString(v, path));
    });
    return out;
  }

 private:
  YAML::Node node_;
  std::string path_;
};

// ---------------------------------------------------------------------------------------------
// Shared pieces: quantities, selectors, metadata.

ResourceList ReadResourceList(const MapView& parent, std::string_view key) {
  ResourceList out;
  parent.ForEachEntry(key, [&](const std::string& name, const YAML::Node& v, const std::string& path) {
    if (name.empty()) Fail(v, path, "resource names must not be empty");
    if (!Present(v)) Fail(v, path, "expected a quantity such as 500m, 2 or 1Gi, got nothing");
    if (!v.IsScalar()) Fail(v, path, "expected a quantity such as 500m, 2 or 1Gi, got " + Describe(v));
    auto q = Quantity::Parse(v.Scalar());
    if (!q) Fail(v, path, q.error());
    if (q->IsNegative()) Fail(v, path, "must be greater than or equal to 0, got " + Quote(v.Scalar()));
    out.insert_or_assign(name, std::move(*q));
  });
  return out;
}

enum class RequirementKind { kLabel, kNode, kField };

constexpr std::pair<std::string_view, SelectorOperator> kLabelOperators[] = {
    {"In", SelectorOperator::kIn},
    {"NotIn", SelectorOperator::kNotIn},
    {"Exists", SelectorOperator::kExists},
    {"DoesNotExist", SelectorOperator::kDoesNotExist},
};
constexpr std::pair<std::string_view, SelectorOperator> kNodeOperators[] = {
    {"In", SelectorOperator::kIn},         {"NotIn", SelectorOperator::kNotIn},
    {"Exists", SelectorOperator::kExists}, {"DoesNotExist", SelectorOperator::kDoesNotExist},
    {"Gt", SelectorOperator::kGt},         {"Lt", SelectorOperator::kLt},
};
constexpr std::pair<std::string_view, SelectorOperator> kFieldOperators[] = {
    {"In", SelectorOperator::kIn},
    {"NotIn", SelectorOperator::kNotIn},
};

SelectorRequirement ReadRequirement(const MapView& m, RequirementKind kind) {
  SelectorRequirement r;
  r.key = m.RequiredString("key");
  if (kind == RequirementKind::kField && r.key != kFieldNodeName) {
    Fail(m.At("key"), m.PathOf("key"),
         "unsupported field " + Quote(r.key) + "; matchFields only supports \"metadata.name\"");
  }
  const std::string op_path = m.PathOf("operator");
  if (!m.Has("operator")) Fail(m.At("operator"), op_path, "required field is missing or empty");
  switch (kind) {
    case RequirementKind::kLabel:
      r.op = ReadEnum(m.Get("operator"), op_path, kLabelOperators);
      break;
    case RequirementKind::kNode:
      r.op = ReadEnum(m.Get("operator"), op_path, kNodeOperators);
      break;
    case RequirementKind::kField:
      r.op = ReadEnum(m.Get("operator"), op_path, kFieldOperators);
      break;
  }
  r.values = m.StringList("values");
  const std::string values_path = m.PathOf("values");
  const YAML::Node values_at = m.At("values");
  switch (r.op) {
    case SelectorOperator::kIn:
    case SelectorOperator::kNotIn:
      if (kind == RequirementKind::kField && r.values.size() != 1) {
        Fail(values_at, values_path, "must have exactly one value for a matchFields requirement");
      }
      if (r.values.empty()) Fail(values_at, values_path, "must be non-empty when operator is In or NotIn");
      break;
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      if (!r.values.empty()) Fail(values_at, values_path, "must be empty when operator is Exists or DoesNotExist");
      break;
    case SelectorOperator::kGt:
    case SelectorOperator::kLt:
      if (r.values.size() != 1 || !ParseInteger(r.values.front())) {
        Fail(values_at, values_path, "must be exactly one integer when operator is Gt or Lt");
      }
      break;
  }
  // Sorted and unique, as the header promises and as upstream's selectors store them.
  std::sort(r.values.begin(), r.values.end());
  r.values.erase(std::unique(r.values.begin(), r.values.end()), r.values.end());
  return r;
}

LabelSelector ReadLabelSelector(const MapView& m) {
  LabelSelector s;
  s.match_labels = m.LabelMap("matchLabels");
  m.ForEach("matchExpressions", [&](const YAML::Node& item, const std::string& path, size_t) {
    s.match_expressions.push_back(ReadRequirement(MapView(item, path), RequirementKind::kLabel));
  });
  return s;
}

std::optional<LabelSelector> ReadOptLabelSelector(const MapView& parent, std::string_view key) {
  if (!parent.Has(key)) return std::nullopt;
  return ReadLabelSelector(parent.Map(key));
}

NodeSelectorTerm ReadNodeSelectorTerm(const MapView& m) {
  NodeSelectorTerm t;
  m.ForEach("matchExpressions", [&](const YAML::Node& item, const std::string& path, size_t) {
    t.match_expressions.push_back(ReadRequirement(MapView(item, path), RequirementKind::kNode));
  });
  m.ForEach("matchFields", [&](const YAML::Node& item, const std::string& path, size_t) {
    t.match_fields.push_back(ReadRequirement(MapView(item, path), RequirementKind::kField));
  });
  return t;
}

NodeSelector ReadNodeSelector(const MapView& m) {
  NodeSelector s;
  m.ForEach("nodeSelectorTerms", [&](const YAML::Node& item, const std::string& path, size_t) {
    s.terms.push_back(ReadNodeSelectorTerm(MapView(item, path)));
  });
  if (s.terms.empty()) {
    Fail(m.At("nodeSelectorTerms"), m.PathOf("nodeSelectorTerms"), "must have at least one node selector term");
  }
  return s;
}

std::optional<int64_t> ParseRFC3339(std::string_view s);

std::optional<int64_t> ReadTime(const MapView& m, std::string_view key) {
  if (!m.Has(key)) return std::nullopt;
  const std::string text = m.String(key);
  auto t = ParseRFC3339(text);
  if (!t) {
    Fail(m.At(key), m.PathOf(key), "invalid time " + Quote(text) + "; use RFC 3339, such as \"2024-05-01T12:00:00Z\"");
  }
  return t;
}

// The scenario timeline's annotations (kAnnotationCreateAfter, kAnnotationDeleteAfter): a
// non-negative Go duration each, read by the simulated cluster.
void CheckTimelineAnnotations(const MapView& annotations) {
  for (std::string_view key : {kAnnotationCreateAfter, kAnnotationDeleteAfter}) {
    if (!annotations.Has(key)) continue;
    const YAML::Node& v = annotations.Get(key);
    auto d = util::ParseDuration(ReadString(v, annotations.PathOf(key)));
    if (!d) Fail(v, annotations.PathOf(key), d.error());
    if (*d < 0) Fail(v, annotations.PathOf(key), "must not be negative, got " + Quote(v.Scalar()));
  }
}

ObjectMeta ReadMetadata(const MapView& m) {
  ObjectMeta meta;
  // Timestamps are Unix time, the clock the simulation runs on too.
  if (auto t = ReadTime(m, "creationTimestamp")) meta.creation_timestamp_ns = *t;
  meta.deletion_timestamp_ns = ReadTime(m, "deletionTimestamp");
  meta.name = m.String("name");
  meta.generate_name = m.String("generateName");
  meta.namespace_ = m.String("namespace");
  meta.uid = m.String("uid");
  meta.labels = m.LabelMap("labels");
  meta.annotations = m.AnnotationMap("annotations");
  CheckTimelineAnnotations(m.Map("annotations"));
  m.ForEach("ownerReferences", [&](const YAML::Node& item, const std::string& path, size_t) {
    MapView o(item, path);
    meta.owner_references.push_back(OwnerReference{
        .api_version = o.String("apiVersion"),
        .kind = o.RequiredString("kind"),
        .name = o.RequiredString("name"),
        .uid = o.String("uid"),
        .controller = o.Bool("controller"),
    });
  });
  const size_t controllers = std::count_if(meta.owner_references.begin(), meta.owner_references.end(),
                                           [](const OwnerReference& r) { return r.controller; });
  if (controllers > 1) {
    Fail(m.At("ownerReferences"), m.PathOf("ownerReferences"), "only one reference can have controller set to true");
  }
  return meta;
}

// RFC 3339 ("2024-05-01T12:00:00Z", fractional seconds and numeric offsets allowed) to Unix ns.
std::optional<int64_t> ParseRFC3339(std::string_view s) {
  auto num = [&](size_t pos, size_t len) -> std::optional<int> {
    if (pos + len > s.size()) return std::nullopt;
    int v = 0;
    for (size_t i = pos; i < pos + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  auto year = num(0, 4), month = num(5, 2), day = num(8, 2), hour = num(11, 2), minute = num(14, 2),
       second = num(17, 2);
  if (!year || !month || !day || !hour || !minute || !second || s.size() < 20 || s[4] != '-' || s[7] != '-' ||
      (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  size_t pos = 19;
  int64_t nanos = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 9) nanos = nanos * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return std::nullopt;
    for (int i = digits; i < 9; ++i) nanos *= 10;
  }
  int64_t offset_seconds = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    auto oh = num(pos + 1, 2), om = num(pos + 4, 2);
    if (!oh || !om || pos + 3 >= s.size() || s[pos + 3] != ':') return std::nullopt;
    offset_seconds = (*oh * 3600 + *om * 60) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  // Days from the civil date (Howard Hinnant's algorithm).
  const int64_t y = *year - (*month <= 2 ? 1 : 0);
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (*month + (*month > 2 ? -3 : 9)) + 2) / 5 + *day - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const int64_t days = era * 146097 + doe - 719468;
  const int64_t seconds = days * 86400 + *hour * 3600 + *minute * 60 + *second - offset_seconds;
  // Nanoseconds in an int64 cover 1678 to 2262; anything else cannot be represented.
  constexpr int64_t kLimit = std::numeric_limits<int64_t>::max() / 1'000'000'000 - 1;
  if (seconds > kLimit || seconds < -kLimit) return std::nullopt;
  return seconds * 1'000'000'000 + nanos;
}

// ---------------------------------------------------------------------------------------------
// Pod spec.

constexpr std::pair<std::string_view, TaintEffect> kTaintEffects[] = {
    {"NoSchedule", TaintEffect::kNoSchedule},
    {"PreferNoSchedule", TaintEffect::kPreferNoSchedule},
    {"NoExecute", TaintEffect::kNoExecute},
};
constexpr std::pair<std::string_view, PreemptionPolicy> kPreemptionPolicies[] = {
    {"PreemptLowerPriority", PreemptionPolicy::kPreemptLowerPriority},
    {"Never", PreemptionPolicy::kNever},
};
constexpr std::pair<std::string_view, UnsatisfiableConstraintAction> kUnsatisfiableActions[] = {
    {"DoNotSchedule", UnsatisfiableConstraintAction::kDoNotSchedule},
    {"ScheduleAnyway", UnsatisfiableConstraintAction::kScheduleAnyway},
};
constexpr std::pair<std::string_view, NodeInclusionPolicy> kInclusionPolicies[] = {
    {"Honor", NodeInclusionPolicy::kHonor},
    {"Ignore", NodeInclusionPolicy::kIgnore},
};
constexpr std::pair<std::string_view, PodPhase> kPodPhases[] = {
    {"Pending", PodPhase::kPending}, {"Running", PodPhase::kRunning}, {"Succeeded", PodPhase::kSucceeded},
    {"Failed", PodPhase::kFailed},   {"Unknown", PodPhase::kUnknown},
};
constexpr std::pair<std::string_view, std::string_view> kProtocols[] = {
    {"TCP", "TCP"},
    {"UDP", "UDP"},
    {"SCTP", "SCTP"},
};
constexpr std::pair<std::string_view, TolerationOperator> kTolerationOperators[] = {
    {"Equal", TolerationOperator::kEqual},
    {"Exists", TolerationOperator::kExists},
};

// Comparison for validation only: exact to a thousandth, which is what the scheduler reads.
bool Exceeds(const Quantity& a, const Quantity& b) { return a.MilliValue() > b.MilliValue(); }

Container ReadContainer(const MapView& m, bool init, bool host_network) {
  Container c;
  c.name = m.RequiredString("name");
  c.image = m.String("image");
  const MapView resources = m.Map("resources");
  c.resources.limits = ReadResourceList(resources, "limits");
  c.resources.requests = ReadResourceList(resources, "requests");
  // API server defaulting: a resource with a limit and no request requests its limit.
  for (const auto& [name, limit] : c.resources.limits) {
    if (!c.resources.requests.contains(name)) c.resources.requests.emplace(name, limit);
  }
  for (const auto& [name, request] : c.resources.requests) {
    auto limit = c.resources.limits.find(name);
    if (limit != c.resources.limits.end() && Exceeds(request, limit->second)) {
      const MapView requests = resources.Map("requests");
      Fail(requests.At(name), requests.PathOf(name),
           "request " + Quote(request.text()) + " must be less than or equal to the limit " +
               Quote(limit->second.text()));
    }
  }
  m.ForEach("ports", [&](const YAML::Node& item, const std::string& path, size_t) {
    MapView p(item, path);
    ContainerPort port;
    port.name = p.String("name");
    if (!p.Has("containerPort")) Fail(p.At("containerPort"), p.PathOf("containerPort"), "required field is missing");
    port.container_port = ReadInt32(p.Get("containerPort"), p.PathOf("containerPort"), 1, 65535);
    port.host_port = p.OptInt32("hostPort", 0, 65535).value_or(0);
    if (p.Has("protocol")) port.protocol = std::string(ReadEnum(p.Get("protocol"), p.PathOf("protocol"), kProtocols));
    port.host_ip = p.String("hostIP");
    if (host_network) {
      // Defaulting for host-network pods: the container port is the host port.
      if (port.host_port == 0) port.host_port = port.container_port;
      if (port.host_port != port.container_port) {
        Fail(p.At("hostPort"), p.PathOf("hostPort"), "must match containerPort when hostNetwork is true");
      }
    }
    c.ports.push_back(std::move(port));
  });
  if (init && m.Has("restartPolicy")) {
    const std::string policy = m.String("restartPolicy");
    if (policy != "Always") {
      Fail(m.At("restartPolicy"), m.PathOf("restartPolicy"),
           "unsupported value " + Quote(policy) + "; init containers only support \"Always\" (a sidecar)");
    }
    c.restart_policy = policy;
  }
  return c;
}

Toleration ReadToleration(const MapView& m) {
  Toleration t;
  t.key = m.String("key");
  if (m.Has("operator")) t.op = ReadEnum(m.Get("operator"), m.PathOf("operator"), kTolerationOperators);
  t.value = m.String("value");
  if (m.Has("effect")) t.effect = ReadEnum(m.Get("effect"), m.PathOf("effect"), kTaintEffects);
  t.toleration_seconds =
      m.OptInt("tolerationSeconds", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
  if (t.key.empty() && t.op != TolerationOperator::kExists) {
    Fail(m.At("operator"), m.PathOf("operator"), "must be Exists when key is empty (which tolerates every taint)");
  }
  if (t.op == TolerationOperator::kExists && !t.value.empty()) {
    Fail(m.At("value"), m.PathOf("value"), "must be empty when operator is Exists");
  }
  if (t.toleration_seconds && t.effect != TaintEffect::kNoExecute) {
    Fail(m.At("effect"), m.PathOf("effect"), "must be NoExecute when tolerationSeconds is set");
  }
  return t;
}

void CheckLabelKeys(const MapView& m, const std::optional<LabelSelector>& selector,
                    const std::vector<std::string>& match_keys, const std::vector<std::string>& mismatch_keys) {
  auto in_selector = [&](const std::string& key) {
    if (!selector) return false;
    if (selector->match_labels.Has(key)) return true;
    return std::any_of(selector->match_expressions.begin(), selector->match_expressions.end(),
                       [&](const SelectorRequirement& r) { return r.key == key; });
  };
  for (const auto* keys : {&match_keys, &mismatch_keys}) {
    const std::string_view field = keys == &match_keys ? "matchLabelKeys" : "mismatchLabelKeys";
    if (!keys->empty() && !selector) {
      Fail(m.At(field), m.PathOf(field), "must not be set when labelSelector is not set");
    }
    for (size_t i = 0; i < keys->size(); ++i) {
      const std::string& key = (*keys)[i];
      const std::string path = Index(m.PathOf(field), i);
      if (key.empty()) Fail(m.At(field), path, "label keys must not be empty");
      if (in_selector(key))
        Fail(m.At(field), path, Quote(key) + " exists in both " + std::string(field) + " and labelSelector");
      if (keys == &match_keys && std::find(mismatch_keys.begin(), mismatch_keys.end(), key) != mismatch_keys.end()) {
        Fail(m.At(field), path, Quote(key) + " exists in both matchLabelKeys and mismatchLabelKeys");
      }
    }
  }
}

PodAffinityTerm ReadPodAffinityTerm(const MapView& m) {
  PodAffinityTerm t;
  t.label_selector = ReadOptLabelSelector(m, "labelSelector");
  t.namespaces = m.StringList("namespaces");
  t.namespace_selector = ReadOptLabelSelector(m, "namespaceSelector");
  t.topology_key = m.RequiredString("topologyKey");
  t.match_label_keys = m.StringList("matchLabelKeys");
  t.mismatch_label_keys = m.StringList("mismatchLabelKeys");
  CheckLabelKeys(m, t.label_selector, t.match_label_keys, t.mismatch_label_keys);
  return t;
}

int32_t ReadWeight(const MapView& m) {
  if (!m.Has("weight")) Fail(m.At("weight"), m.PathOf("weight"), "required field is missing");
  return ReadInt32(m.Get("weight"), m.PathOf("weight"), 1, 100);
}

PodAffinity ReadPodAffinity(const MapView& m) {
  PodAffinity a;
  m.ForEach("requiredDuringSchedulingIgnoredDuringExecution",
            [&](const YAML::Node& item, const std::string& path, size_t) {
              a.required.push_back(ReadPodAffinityTerm(MapView(item, path)));
            });
  m.ForEach("preferredDuringSchedulingIgnoredDuringExecution",
            [&](const YAML::Node& item, const std::string& path, size_t) {
              MapView w(item, path);
              WeightedPodAffinityTerm weighted;
              weighted.weight = ReadWeight(w);
              if (!w.Has("podAffinityTerm")) {
                Fail(w.At("podAffinityTerm"), w.PathOf("podAffinityTerm"), "required field is missing");
              }
              weighted.term = ReadPodAffinityTerm(w.Map("podAffinityTerm"));
              a.preferred.push_back(std::move(weighted));
            });
  return a;
}

Affinity ReadAffinity(const MapView& m) {
  Affinity a;
  if (auto na = m.OptMap("nodeAffinity")) {
    NodeAffinity node_affinity;
    if (auto req = na->OptMap("requiredDuringSchedulingIgnoredDuringExecution")) {
      node_affinity.required = ReadNodeSelector(*req);
    }
    na->ForEach("preferredDuringSchedulingIgnoredDuringExecution",
                [&](const YAML::Node& item, const std::string& path, size_t) {
                  MapView p(item, path);
                  PreferredSchedulingTerm term;
                  term.weight = ReadWeight(p);
                  if (!p.Has("preference"))
                    Fail(p.At("preference"), p.PathOf("preference"), "required field is missing");
                  term.preference = ReadNodeSelectorTerm(p.Map("preference"));
                  node_affinity.preferred.push_back(std::move(term));
                });
    a.node_affinity = std::move(node_affinity);
  }
  if (auto pa = m.OptMap("podAffinity")) a.pod_affinity = ReadPodAffinity(*pa);
  if (auto paa = m.OptMap("podAntiAffinity")) a.pod_anti_affinity = ReadPodAffinity(*paa);
  return a;
}

TopologySpreadConstraint ReadSpreadConstraint(const MapView& m) {
  TopologySpreadConstraint c;
  if (!m.Has("maxSkew")) Fail(m.At("maxSkew"), m.PathOf("maxSkew"), "required field is missing");
  c.max_skew = ReadInt32(m.Get("maxSkew"), m.PathOf("maxSkew"), 1);
  c.topology_key = m.RequiredString("topologyKey");
  if (!m.Has("whenUnsatisfiable")) {
    Fail(m.At("whenUnsatisfiable"), m.PathOf("whenUnsatisfiable"), "required field is missing");
  }
  c.when_unsatisfiable = ReadEnum(m.Get("whenUnsatisfiable"), m.PathOf("whenUnsatisfiable"), kUnsatisfiableActions);
  c.label_selector = ReadOptLabelSelector(m, "labelSelector");
  c.min_domains = m.OptInt32("minDomains", 1);
  if (c.min_domains && c.when_unsatisfiable != UnsatisfiableConstraintAction::kDoNotSchedule) {
    Fail(m.At("minDomains"), m.PathOf("minDomains"), "can only be set when whenUnsatisfiable is DoNotSchedule");
  }
  if (m.Has("nodeAffinityPolicy")) {
    c.node_affinity_policy = ReadEnum(m.Get("nodeAffinityPolicy"), m.PathOf("nodeAffinityPolicy"), kInclusionPolicies);
  }
  if (m.Has("nodeTaintsPolicy")) {
    c.node_taints_policy = ReadEnum(m.Get("nodeTaintsPolicy"), m.PathOf("nodeTaintsPolicy"), kInclusionPolicies);
  }
  c.match_label_keys = m.StringList("matchLabelKeys");
  CheckLabelKeys(m, c.label_selector, c.match_label_keys, {});
  return c;
}

PodSpec ReadPodSpec(const MapView& m) {
  PodSpec s;
  s.node_name = m.String("nodeName");
  s.node_selector = m.LabelMap("nodeSelector");
  s.host_network = m.Bool("hostNetwork");
  if (auto affinity = m.OptMap("affinity")) s.affinity = ReadAffinity(*affinity);
  m.ForEach("tolerations", [&](const YAML::Node& item, const std::string& path, size_t) {
    s.tolerations.push_back(ReadToleration(MapView(item, path)));
  });
  if (std::string name = m.String("schedulerName"); !name.empty()) s.scheduler_name = std::move(name);
  s.priority = m.OptInt32("priority");
  if (auto grace = m.OptInt("terminationGracePeriodSeconds", std::numeric_limits<int64_t>::min(),
                            std::numeric_limits<int64_t>::max())) {
    if (*grace < 0) {
      Fail(m.At("terminationGracePeriodSeconds"), m.PathOf("terminationGracePeriodSeconds"),
           "must be greater than or equal to 0, got " + std::to_string(*grace));
    }
    s.termination_grace_period_seconds = *grace;
  }
  s.priority_class_name = m.String("priorityClassName");
  if (m.Has("preemptionPolicy")) {
    s.preemption_policy = ReadEnum(m.Get("preemptionPolicy"), m.PathOf("preemptionPolicy"), kPreemptionPolicies);
  }
  m.ForEach("schedulingGates", [&](const YAML::Node& item, const std::string& path, size_t) {
    MapView g(item, path);
    std::string name = g.RequiredString("name");
    if (std::find(s.scheduling_gates.begin(), s.scheduling_gates.end(), name) != s.scheduling_gates.end()) {
      Fail(g.At("name"), g.PathOf("name"), "duplicate scheduling gate " + Quote(name));
    }
    s.scheduling_gates.push_back(std::move(name));
  });
  if (!s.scheduling_gates.empty() && !s.node_name.empty()) {
    Fail(m.At("nodeName"), m.PathOf("nodeName"), "cannot be set while the pod has schedulingGates");
  }

  std::set<std::string> container_names;
  auto read_containers = [&](std::string_view key, bool init, std::vector<Container>& out) {
    m.ForEach(key, [&](const YAML::Node& item, const std::string& path, size_t) {
      MapView cm(item, path);
      Container c = ReadContainer(cm, init, s.host_network);
      if (!container_names.insert(c.name).second) {
        Fail(cm.At("name"), cm.PathOf("name"), "duplicate container name " + Quote(c.name));
      }
      out.push_back(std::move(c));
    });
  };
  read_containers("initContainers", true, s.init_containers);
  read_containers("containers", false, s.containers);
  if (s.containers.empty()) {
    Fail(m.At("containers"), m.PathOf("containers"), "must have at least one container");
  }
  s.overhead = ReadResourceList(m, "overhead");
  if (auto r = m.OptMap("resources")) {
    ResourceRequirements pod_level;
    pod_level.requests = ReadResourceList(*r, "requests");
    pod_level.limits = ReadResourceList(*r, "limits");
    for (const auto& [name, q] : pod_level.requests) {
      if (name != kResourceCPU && name != kResourceMemory && !name.starts_with(kHugePagesPrefix)) {
        Fail(r->At("requests"), r->PathOf("requests") + "[" + name + "]",
             "unsupported pod-level resource " + Quote(name) + " (supported: cpu, memory, hugepages-<size>)");
      }
      auto limit = pod_level.limits.find(name);
      if (limit != pod_level.limits.end() && Exceeds(q, limit->second)) {
        Fail(r->At("requests"), r->PathOf("requests") + "[" + name + "]", "must be less than or equal to limit");
      }
    }
    s.resources = std::move(pod_level);
  }

  std::set<std::pair<std::string, UnsatisfiableConstraintAction>> spread_keys;
  m.ForEach("topologySpreadConstraints", [&](const YAML::Node& item, const std::string& path, size_t) {
    MapView cm(item, path);
    TopologySpreadConstraint c = ReadSpreadConstraint(cm);
    if (!spread_keys.emplace(c.topology_key, c.when_unsatisfiable).second) {
      Fail(item, path, "duplicate constraint for topologyKey " + Quote(c.topology_key) + " and whenUnsatisfiable");
    }
    s.topology_spread_constraints.push_back(std::move(c));
  });
  return s;
}

PodStatus ReadPodStatus(const MapView& m) {
  PodStatus st;
  if (m.Has("phase")) st.phase = ReadEnum(m.Get("phase"), m.PathOf("phase"), kPodPhases);
  st.nominated_node_name = m.String("nominatedNodeName");
  st.start_time_ns = ReadTime(m, "startTime");
  m.ForEach("conditions", [&](const YAML::Node& item, const std::string& path, size_t) {
    MapView c(item, path);
    st.conditions.push_back(PodCondition{
        .type = c.RequiredString("type"),
        .status = c.String("status"),
        .reason = c.String("reason"),
        .message = c.String("message"),
    });
  });
  return st;
}

// ---------------------------------------------------------------------------------------------
// Objects.

struct KindInfo {
  std::string_view kind;
  std::string_view group;  // "" for core
  bool namespaced;
};

constexpr KindInfo kKinds[] = {
    {"Node", "", false},
    {"Pod", "", true},
    {"Namespace", "", false},
    {"PriorityClass", "scheduling.k8s.io", false},
    {"PodDisruptionBudget", "policy", true},
    {"Deployment", "apps", true},
    {"ReplicaSet", "apps", true},
    {"ReplicationController", "", true},
    {"StatefulSet", "apps", true},
    {"DaemonSet", "apps", true},
    {"Job", "batch", true},
    {"CronJob", "batch", true},
};

const KindInfo* LookupKind(std::string_view kind) {
  for (const auto& k : kKinds) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

// The API groups Kubernetes serves itself, with their kinds (space separated). A kind kubesched
// does not read is skipped when its group serves it; a kind a built-in group does not serve is a
// mistake (kubectl: "no matches for kind"), such as a typo; any other group is a custom
// resource's, skipped whatever its kind.
struct BuiltinGroup {
  std::string_view group;
  std::string_view kinds;
};

constexpr BuiltinGroup kBuiltinGroups[] = {
    {"",
     "Binding ComponentStatus ConfigMap Endpoints Event LimitRange Namespace Node PersistentVolume "
     "PersistentVolumeClaim Pod PodTemplate ReplicationController ResourceQuota Secret Service ServiceAccount"},
    {"apps", "ControllerRevision DaemonSet Deployment ReplicaSet StatefulSet"},
    {"batch", "CronJob Job"},
    {"autoscaling", "HorizontalPodAutoscaler Scale"},
    {"policy", "Eviction PodDisruptionBudget PodSecurityPolicy"},
    {"extensions", "DaemonSet Deployment Ingress NetworkPolicy PodSecurityPolicy ReplicaSet"},
    {"networking.k8s.io", "IPAddress Ingress IngressClass NetworkPolicy ServiceCIDR"},
    {"rbac.authorization.k8s.io", "ClusterRole ClusterRoleBinding Role RoleBinding"},
    {"storage.k8s.io", "CSIDriver CSINode CSIStorageCapacity StorageClass VolumeAttachment VolumeAttributesClass"},
    {"scheduling.k8s.io", "PriorityClass"},
    {"apiextensions.k8s.io", "CustomResourceDefinition"},
    {"admissionregistration.k8s.io",
     "MutatingAdmissionPolicy MutatingAdmissionPolicyBinding MutatingWebhookConfiguration ValidatingAdmissionPolicy "
     "ValidatingAdmissionPolicyBinding ValidatingWebhookConfiguration"},
    {"apiregistration.k8s.io", "APIService"},
    {"coordination.k8s.io", "Lease LeaseCandidate"},
    {"discovery.k8s.io", "EndpointSlice"},
    {"events.k8s.io", "Event"},
    {"certificates.k8s.io", "CertificateSigningRequest ClusterTrustBundle PodCertificateRequest"},
    {"node.k8s.io", "RuntimeClass"},
    {"flowcontrol.apiserver.k8s.io", "FlowSchema PriorityLevelConfiguration"},
    {"resource.k8s.io", "DeviceClass DeviceTaintRule ResourceClaim ResourceClaimTemplate ResourceSlice"},
    {"authentication.k8s.io", "SelfSubjectReview TokenRequest TokenReview"},
    {"authorization.k8s.io",
     "LocalSubjectAccessReview SelfSubjectAccessReview SelfSubjectRulesReview SubjectAccessReview"},
    {"internal.apiserver.k8s.io", "StorageVersion"},
    {"storagemigration.k8s.io", "StorageVersionMigration"},
};

const BuiltinGroup* LookupBuiltinGroup(std::string_view group) {
  for (const auto& g : kBuiltinGroups) {
    if (g.group == group) return &g;
  }
  return nullptr;
}

std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const size_t space = text.find(' ');
    out.push_back(text.substr(0, space));
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  return out;
}

using Object =
    std::variant<std::shared_ptr<Node>, std::shared_ptr<Pod>, std::shared_ptr<Namespace>,
                 std::shared_ptr<PriorityClass>, std::shared_ptr<PodDisruptionBudget>, std::shared_ptr<Workload>>;

// Where an object came from, for messages raised after parsing (duplicates, priorities).
struct Origin {
  std::string file;
  int document = 0;
  std::string prefix;  // "items[2]" inside a List, else ""
  int line = 0;        // 1-based line of the object within its document
};

struct Entry {
  Origin origin;
  const KindInfo* kind = nullptr;
  Object object;
  ObjectMeta* meta = nullptr;
  //! The pod (or a workload's pod template) uses PersistentVolumeClaims: persistentVolumeClaim or
  //! ephemeral volumes, or a StatefulSet's volumeClaimTemplates.
  bool uses_volume_claims = false;
};

std::string Identity(std::string_view kind, const ObjectMeta& meta, bool namespaced) {
  std::string name = meta.name.empty() ? meta.generate_name : meta.name;
  if (name.empty()) return std::string(kind);
  if (namespaced) return std::string(kind) + " " + meta.namespace_ + "/" + name;
  return std::string(kind) + " " + name;
}

// Reads "<field>" of the object node (for identity before parsing it fully); never throws.
std::string PeekString(const YAML::Node& obj, std::string_view a, std::string_view b = {}) {
  try {
    if (!obj.IsMap()) return "";
    const YAML::Node n = static_cast<const YAML::Node&>(obj)[std::string(a)];
    if (!b.empty()) {
      if (!n.IsDefined() || !n.IsMap()) return "";
      // A new node rather than n.reset(): resetting to an absent (zombie) node throws, which made
      // every object without a generateName cost an exception.
      const YAML::Node m = n[std::string(b)];
      if (!m.IsDefined() || !m.IsScalar()) return "";
      return m.Scalar();
    }
    if (!n.IsDefined() || !n.IsScalar()) return "";
    return n.Scalar();
  } catch (const YAML::Exception&) {
    return "";
  }
}

std::string PeekIdentity(const YAML::Node& obj) {
  const std::string kind = PeekString(obj, "kind");
  if (kind.empty()) return "";
  ObjectMeta meta;
  meta.name = PeekString(obj, "metadata", "name");
  meta.generate_name = PeekString(obj, "metadata", "generateName");
  meta.namespace_ = PeekString(obj, "metadata", "namespace");
  const KindInfo* info = LookupKind(kind);
  const bool namespaced = info != nullptr && info->namespaced;
  if (namespaced && meta.namespace_.empty()) meta.namespace_ = kNamespaceDefault;
  return Identity(kind, meta, namespaced);
}

void ReadNode(const MapView& obj, Node& node) {
  const MapView spec = obj.Map("spec");
  node.spec.unschedulable = spec.Bool("unschedulable");
  std::set<std::pair<std::string, TaintEffect>> seen;
  spec.ForEach("taints", [&](const YAML::Node& item, const std::string& path, size_t) {
    MapView t(item, path);
    Taint taint;
    taint.key = t.RequiredString("key");
    taint.value = t.String("value");
    if (!t.Has("effect")) Fail(t.At("effect"), t.PathOf("effect"), "required field is missing");
    taint.effect = ReadEnum(t.Get("effect"), t.PathOf("effect"), kTaintEffects);
    if (!seen.emplace(taint.key, taint.effect).second) {
      Fail(item, path,
           "duplicate taint " + Quote(taint.key) + " with effect " + std::string(ToString(taint.effect)) +
               "; taints must be unique by key and effect");
    }
    node.spec.taints.push_back(std::move(taint));
  });
  const MapView status = obj.Map("status");
  node.status.capacity = ReadResourceList(status, "capacity");
  // The kubelet always reports a pod capacity (its maxPods); without one no pod would fit.
  if (!node.status.capacity.contains(kResourcePods)) {
    node.status.capacity.emplace(std::string(kResourcePods), Quantity::FromInt(kDefaultMaxPods));
  }
  if (status.Has("allocatable")) {
    node.status.allocatable = ReadResourceList(status, "allocatable");
    if (!node.status.allocatable.contains(kResourcePods)) {
      node.status.allocatable.emplace(std::string(kResourcePods), node.status.capacity.at(std::string(kResourcePods)));
    }
  } else {
    node.status.allocatable = node.status.capacity;
  }
  status.ForEach("images", [&](const YAML::Node& item, const std::string& path, size_t) {
    MapView i(item, path);
    ContainerImage image;
    image.names = i.StringList("names");
    image.size_bytes = i.OptInt("sizeBytes", 0, std::numeric_limits<int64_t>::max()).value_or(0);
    node.status.images.push_back(std::move(image));
  });
  status.ForEach("conditions", [&](const YAML::Node& item, const std::string& path, size_t) {
    MapView c(item, path);
    node.status.conditions.push_back(NodeCondition{.type = c.RequiredString("type"), .status = c.String("status")});
  });
}

std::optional<std::string> ReadIntOrPercent(const MapView& m, std::string_view key) {
  if (!m.Has(key)) return std::nullopt;
  const YAML::Node n = m.Get(key);
  const std::string s = ReadString(n, m.PathOf(key));
  std::string_view digits = s;
  const bool percent = !digits.empty() && digits.back() == '%';
  if (percent) digits.remove_suffix(1);
  auto v = ParseInteger(digits);
  if (!v || *v < 0 || (percent && *v > 100)) {
    Fail(n, m.PathOf(key), "expected a non-negative integer or a percentage such as \"50%\", got " + Describe(n));
  }
  return s;
}

constexpr std::pair<std::string_view, CompletionMode> kCompletionModes[] = {
    {"NonIndexed", CompletionMode::kNonIndexed},
    {"Indexed", CompletionMode::kIndexed},
};

// The spec of a workload: for a CronJob, that of its jobTemplate.
void ReadWorkloadSpec(const MapView& spec, Workload& w) {
  const bool job = w.kind == "Job" || w.kind == "CronJob";
  if (job) {
    auto parallelism = spec.OptInt32("parallelism", 0);
    auto completions = spec.OptInt32("completions", 0);
    // batch/v1 defaulting: both absent → 1 and 1; only parallelism → a work queue, which we run
    // as `parallelism` pods.
    w.replicas = parallelism.value_or(1);
    w.completions = completions.value_or(parallelism.value_or(1));
    w.suspend = spec.Bool("suspend");
    if (spec.Has("completionMode")) {
      w.completion_mode = ReadEnum(spec.Get("completionMode"), spec.PathOf("completionMode"), kCompletionModes);
    }
    if (w.completion_mode == CompletionMode::kIndexed && !completions) {
      Fail(spec.At("completions"), spec.PathOf("completions"), "required when completionMode is Indexed");
    }
  } else if (w.kind != "DaemonSet") {
    w.replicas = spec.OptInt32("replicas", 0).value_or(1);
  }
  if (w.kind == "ReplicationController") {
    // A plain label map, not a LabelSelector.
    if (spec.Has("selector"))
      w.selector = LabelSelector{.match_labels = spec.LabelMap("selector"), .match_expressions = {}};
  } else {
    w.selector = ReadOptLabelSelector(spec, "selector");
  }
  if (!spec.Has("template")) Fail(spec.At("template"), spec.PathOf("template"), "required field is missing");
  const MapView tmpl = spec.Map("template");
  const MapView tmpl_meta = tmpl.Map("metadata");
  w.template_.metadata.labels = tmpl_meta.LabelMap("labels");
  w.template_.metadata.annotations = tmpl_meta.AnnotationMap("annotations");
  CheckTimelineAnnotations(tmpl_meta.Map("annotations"));
  if (!tmpl.Has("spec")) Fail(tmpl.At("spec"), tmpl.PathOf("spec"), "required field is missing");
  w.template_.spec = ReadPodSpec(tmpl.Map("spec"));

  if (job) {
    // The Job controller labels its pods and, unless told otherwise, selects them by uid; the
    // uid is only known later, so LoadManifests finishes this (see FinishJob).
    if (w.selector && !w.selector->Empty() && !w.selector->Matches(w.template_.metadata.labels)) {
      Fail(spec.At("selector"), spec.PathOf("selector"), "does not match the template labels");
    }
    return;
  }
  if (w.kind == "ReplicationController" && (!w.selector || w.selector->Empty())) {
    // Defaulting: a ReplicationController without a selector selects its template's labels.
    if (w.template_.metadata.labels.empty()) {
      Fail(spec.At("selector"), spec.PathOf("selector"),
           "required field is missing (and spec.template.metadata.labels, its default, is empty)");
    }
    w.selector = LabelSelector{.match_labels = w.template_.metadata.labels, .match_expressions = {}};
  }
  if (!w.selector) Fail(spec.At("selector"), spec.PathOf("selector"), "required field is missing");
  if (w.selector->Empty()) {
    Fail(spec.At("selector"), spec.PathOf("selector"), "must not be empty (an empty selector would select every pod)");
  }
  if (!w.selector->Matches(w.template_.metadata.labels)) {
    Fail(spec.At("selector"), spec.PathOf("selector"),
         "does not match the template labels (spec.template.metadata.labels must satisfy spec.selector)");
  }
}

void ReadWorkload(const MapView& obj, Workload& w) {
  const MapView spec = obj.Map("spec");
  if (w.kind != "CronJob") {
    ReadWorkloadSpec(spec, w);
    return;
  }
  spec.RequiredString("schedule");
  if (!spec.Has("jobTemplate")) Fail(spec.At("jobTemplate"), spec.PathOf("jobTemplate"), "required field is missing");
  const MapView job_template = spec.Map("jobTemplate");
  if (!job_template.Has("spec")) {
    Fail(job_template.At("spec"), job_template.PathOf("spec"), "required field is missing");
  }
  ReadWorkloadSpec(job_template.Map("spec"), w);
}

// Whether a pod spec has volumes backed by PersistentVolumeClaims.
bool UsesVolumeClaims(const MapView& pod_spec) {
  bool uses = false;
  pod_spec.ForEach("volumes", [&](const YAML::Node& item, const std::string& path, size_t) {
    const MapView v(item, path);
    if (v.Has("persistentVolumeClaim") || v.Has("ephemeral")) uses = true;
  });
  return uses;
}

void ReadPriorityClass(const MapView& obj, PriorityClass& pc) {
  if (!obj.Has("value")) Fail(obj.At("value"), obj.PathOf("value"), "required field is missing");
  pc.value = ReadInt32(obj.Get("value"), obj.PathOf("value"));
  if (pc.value > kHighestUserDefinablePriority && !pc.metadata.name.starts_with("system-")) {
    Fail(obj.At("value"), obj.PathOf("value"),
         "must be at most " + std::to_string(kHighestUserDefinablePriority) +
             " for a user-defined PriorityClass (higher values are reserved for system-* classes)");
  }
  pc.global_default = obj.Bool("globalDefault");
  if (obj.Has("preemptionPolicy")) {
    pc.preemption_policy = ReadEnum(obj.Get("preemptionPolicy"), obj.PathOf("preemptionPolicy"), kPreemptionPolicies);
  } else {
    pc.preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
  }
}

// What ReadObject made of an object mapping: an entry to load, or the kind of an object skipped.
struct ReadResult {
  std::optional<Entry> entry;
  std::string skipped_kind;
};

// The name rules of the API server: namespaces are DNS-1123 labels, the other kinds kubesched
// reads DNS-1123 subdomains. A generateName is checked as a prefix (a trailing '-' is fine).
void CheckNames(const MapView& meta_view, std::string_view kind, const ObjectMeta& meta, bool namespaced) {
  auto check = [&](std::string_view field, std::string_view what, const std::string& value, bool prefix, bool label) {
    if (value.empty()) return;
    std::string checked = value;
    if (prefix && checked.ends_with('-')) checked.back() = 'a';
    const std::vector<std::string> errs = label ? IsDNS1123Label(checked) : IsDNS1123Subdomain(checked);
    if (!errs.empty()) {
      Fail(meta_view.At(field), meta_view.PathOf(field),
           "invalid " + std::string(what) + " " + Quote(value) + ": " + Join(errs));
    }
  };
  const bool label = kind == "Namespace";
  check("name", "name", meta.name, false, label);
  check("generateName", "generateName", meta.generate_name, true, label);
  if (namespaced) check("namespace", "namespace", meta.namespace_, false, true);
}

// Parses one object mapping (a document or a List item). Kinds kubesched does not read come back
// as skipped; fields are checked against the schema as `validation` says, issues found under
// kWarn appended to `warnings`.
ReadResult ReadObject(const YAML::Node& node, const std::string& prefix, FieldValidation validation,
                      std::vector<FieldIssue>& warnings) {
  const MapView obj(node, prefix);
  if (!Present(node)) Fail(node, prefix, "expected an object with apiVersion and kind, got nothing");
  const std::string kind = obj.RequiredString("kind");
  const std::string api_version = obj.RequiredString("apiVersion");
  const auto slash = api_version.find('/');
  const std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  const std::string version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
  if (version.empty() || group.empty() != (slash == std::string::npos)) {
    Fail(obj.At("apiVersion"), obj.PathOf("apiVersion"),
         "invalid apiVersion " + Quote(api_version) +
             "; expected \"version\" or \"group/version\", such as \"apps/v1\"");
  }
  const BuiltinGroup* builtin = LookupBuiltinGroup(group);
  if (builtin == nullptr) return {std::nullopt, kind};  // a custom resource
  const KindInfo* info = LookupKind(kind);
  if (info == nullptr) {
    const std::vector<std::string_view> served = Words(builtin->kinds);
    if (std::find(served.begin(), served.end(), kind) != served.end()) return {std::nullopt, kind};
    std::string message = "no kind " + Quote(kind) + " is served by apiVersion " + Quote(api_version);
    if (std::string_view close = yaml_fields::Closest(kind, served); !close.empty()) {
      message += " (did you mean " + Quote(close) + "?)";
    }
    Fail(obj.At("kind"), obj.PathOf("kind"), message);
  }
  if (group != info->group) {
    const std::string want = info->group.empty() ? "v1" : std::string(info->group) + "/v1";
    Fail(obj.At("apiVersion"), obj.PathOf("apiVersion"),
         "apiVersion " + Quote(api_version) + " does not serve kind " + kind + "; use " + Quote(want));
  }

  // Unknown fields and duplicate keys, as kubectl's --validate (the API server's field
  // validation) reports them, before the values are read (as the strict decoder does).
  if (validation != FieldValidation::kIgnore) {
    const size_t before = warnings.size();
    CheckFields(node, kind, prefix, warnings);
    if (validation == FieldValidation::kStrict && warnings.size() > before) {
      FieldIssue first = std::move(warnings[before]);
      warnings.resize(before);
      throw FieldError{std::move(first.path), std::move(first.message), first.line};
    }
  }

  const MapView meta_view = obj.Map("metadata");
  ObjectMeta meta = ReadMetadata(meta_view);
  if (meta.name.empty() && meta.generate_name.empty()) {
    Fail(meta_view.At("name"), meta_view.PathOf("name"), "required field is missing (set name or generateName)");
  }
  CheckNames(meta_view, kind, meta, info->namespaced);
  if (info->namespaced) {
    if (meta.namespace_.empty()) meta.namespace_ = kNamespaceDefault;
  } else {
    meta.namespace_.clear();  // cluster-scoped: a namespace in the manifest means nothing
  }

  Entry e;
  e.kind = info;
  if (kind == "Node") {
    auto n = std::make_shared<Node>();
    n->metadata = std::move(meta);
    ReadNode(obj, *n);
    e.meta = &n->metadata;
    e.object = n;
  } else if (kind == "Pod") {
    auto p = std::make_shared<Pod>();
    p->metadata = std::move(meta);
    if (!obj.Has("spec")) Fail(obj.At("spec"), obj.PathOf("spec"), "required field is missing");
    p->spec = ReadPodSpec(obj.Map("spec"));
    p->status = ReadPodStatus(obj.Map("status"));
    e.uses_volume_claims = UsesVolumeClaims(obj.Map("spec"));
    e.meta = &p->metadata;
    e.object = p;
  } else if (kind == "Namespace") {
    auto ns = std::make_shared<Namespace>();
    ns->metadata = std::move(meta);
    e.meta = &ns->metadata;
    e.object = ns;
  } else if (kind == "PriorityClass") {
    auto pc = std::make_shared<PriorityClass>();
    pc->metadata = std::move(meta);
    ReadPriorityClass(obj, *pc);
    e.meta = &pc->metadata;
    e.object = pc;
  } else if (kind == "PodDisruptionBudget") {
    auto pdb = std::make_shared<PodDisruptionBudget>();
    pdb->metadata = std::move(meta);
    const MapView spec = obj.Map("spec");
    pdb->selector = ReadOptLabelSelector(spec, "selector");
    pdb->min_available = ReadIntOrPercent(spec, "minAvailable");
    pdb->max_unavailable = ReadIntOrPercent(spec, "maxUnavailable");
    if (pdb->min_available && pdb->max_unavailable) {
      Fail(spec.At("maxUnavailable"), spec.PathOf("maxUnavailable"),
           "minAvailable and maxUnavailable cannot both be set");
    }
    e.meta = &pdb->metadata;
    e.object = pdb;
  } else {
    auto w = std::make_shared<Workload>();
    w->kind = kind;
    w->metadata = std::move(meta);
    ReadWorkload(obj, *w);
    const MapView spec = obj.Map("spec");
    const MapView pod_spec =
        (kind == "CronJob" ? spec.Map("jobTemplate").Map("spec") : spec).Map("template").Map("spec");
    const YAML::Node claim_templates = spec.Get("volumeClaimTemplates");
    e.uses_volume_claims = UsesVolumeClaims(pod_spec) || (kind == "StatefulSet" && Present(claim_templates) &&
                                                          claim_templates.IsSequence() && claim_templates.size() > 0);
    e.meta = &w->metadata;
    e.object = w;
  }
  return {std::move(e), ""};
}

// ---------------------------------------------------------------------------------------------
// Splitting a stream into documents. yaml-cpp's LoadAll cannot say which document a syntax
// error is in, so we split at document markers ("---" at the start of a line, which YAML forbids
// inside any scalar) and parse each part on its own.

struct RawDocument {
  std::string text;
  int first_line = 0;  // 0-based line in the file where the text starts
};

bool IsDocumentMarker(std::string_view line) {
  if (!line.starts_with("---")) return false;
  return line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r' || line[3] == '\n';
}

bool IsBlank(std::string_view text) {
  // Only whitespace, comments and directives: what may precede the first "---".
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && line[first] != '#' && !(first == 0 && line[0] == '%')) return false;
    pos = end + 1;
  }
  return true;
}

std::vector<RawDocument> SplitDocuments(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8 byte order mark
  std::vector<RawDocument> docs;
  RawDocument current;
  int line_no = 0;
  size_t pos = 0;
  bool any_marker = false;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const size_t next = end == std::string_view::npos ? text.size() : end + 1;
    std::string_view line = text.substr(pos, next - pos);
    if (IsDocumentMarker(line)) {
      // The part before the first marker is a document only if it has content.
      if (any_marker || !IsBlank(current.text)) docs.push_back(std::move(current));
      any_marker = true;
      current = RawDocument{};
      current.first_line = line_no;
    }
    current.text.append(line);
    ++line_no;
    pos = next;
  }
  if (any_marker || !IsBlank(current.text)) docs.push_back(std::move(current));
  return docs;
}

// ---------------------------------------------------------------------------------------------
// The loader.

constexpr int32_t kNoPriority = 0;

// One document parsed on its own (possibly on another thread): its objects, or the error that
// stopped it. Applied to the Loader in document order, so the first error reported is the first
// in the file, as when parsing sequentially.
struct ParsedDocument {
  std::vector<Entry> entries;
  std::vector<std::string> skipped_kinds;  // one per object skipped
  std::vector<LoadError> warnings;         // fields reported under FieldValidation::kWarn
  int line_offset = 0;
  std::optional<LoadError> error;
};

struct Abort {};  // the document's error is already set

// Runs f, turning a FieldError into out.error; false when anything failed.
template <typename F>
bool Guard(ParsedDocument& out, const Origin& origin, const std::string& identity, F&& f) {
  try {
    f();
    return true;
  } catch (const Abort&) {
    return false;
  } catch (const FieldError& e) {
    out.error =
        LoadError{origin.file, origin.document, identity, e.path, e.message, e.line > 0 ? e.line + out.line_offset : 0};
    return false;
  } catch (const YAML::Exception& e) {
    out.error =
        LoadError{origin.file, origin.document, identity, origin.prefix, std::string("malformed YAML: ") + e.what(), 0};
    return false;
  }
}

ParsedDocument ParseDocument(const RawDocument& doc, const std::string& file, int index, FieldValidation validation) {
  ParsedDocument out;
  YAML::Node root;
  try {
    root.reset(YAML::Load(doc.text));
  } catch (const YAML::ParserException& e) {
    out.error = LoadError{file, index, "", "", "YAML syntax error: " + e.msg, doc.first_line + e.mark.line + 1};
    if (e.mark.line < 0) out.error->line = 0;
    return out;
  } catch (const YAML::Exception& e) {
    out.error = LoadError{file, index, "", "", std::string("cannot parse YAML: ") + e.what(), 0};
    return out;
  } catch (const std::exception& e) {
    out.error = LoadError{file, index, "", "", std::string("cannot parse YAML: ") + e.what(), 0};
    return out;
  }
  if (!Present(root)) return out;  // empty document
  out.line_offset = doc.first_line;
  std::vector<FieldIssue> issues;
  auto read = [&](const YAML::Node& node, const std::string& prefix, Origin origin, const std::string& identity) {
    issues.clear();
    ReadResult r = ReadObject(node, prefix, validation, issues);
    for (FieldIssue& issue : issues) {
      out.warnings.push_back(LoadError{file, index, identity, std::move(issue.path), std::move(issue.message),
                                       issue.line > 0 ? issue.line + out.line_offset : 0});
    }
    if (!r.entry) {
      out.skipped_kinds.push_back(std::move(r.skipped_kind));
      return;
    }
    r.entry->origin = std::move(origin);
    out.entries.push_back(std::move(*r.entry));
  };
  Origin origin{file, index, "", LineOf(root)};
  const std::string identity = PeekIdentity(root);
  Guard(out, origin, identity, [&] {
    if (!root.IsMap()) Fail(root, "", "expected an object with apiVersion and kind, got " + Describe(root));
    const std::string kind = PeekString(root, "kind");
    // kind: List, and typed lists such as PodList or ServiceList (what `kubectl get -o yaml` prints).
    const bool typed_list = kind.ends_with("List") &&
                            (LookupKind(kind.substr(0, kind.size() - 4)) != nullptr || MapView(root, "").Has("items"));
    if (kind == "List" || typed_list) {
      const MapView list(root, "");
      list.ForEach("items", [&](const YAML::Node& item, const std::string& path, size_t) {
        Origin item_origin{file, index, path, LineOf(item)};
        // Errors inside an item name the item, not the List.
        const std::string item_identity = PeekIdentity(item);
        if (!Guard(out, item_origin, item_identity, [&] { read(item, path, item_origin, item_identity); })) {
          throw Abort{};
        }
      });
      if (!list.Has("items")) Fail(list.At("items"), "items", "required field is missing");
      return;
    }
    read(root, "", origin, identity);
  });
  return out;
}

// Parses documents on up to the machine's cores: YAML parsing dominates loading large manifests
// (a trace of thousands of pods), and documents are independent.
std::vector<ParsedDocument> ParseDocuments(const std::vector<RawDocument>& docs, const std::string& file,
                                           FieldValidation validation) {
  std::vector<ParsedDocument> parsed(docs.size());
  constexpr size_t kMinDocumentsPerThread = 64;
  const size_t threads =
      std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), docs.size() / kMinDocumentsPerThread);
  std::atomic<size_t> next{0};
  auto work = [&] {
    constexpr size_t kBatch = 16;
    while (true) {
      const size_t begin = next.fetch_add(kBatch);
      if (begin >= docs.size()) return;
      const size_t end = std::min(docs.size(), begin + kBatch);
      for (size_t i = begin; i < end; ++i)
        parsed[i] = ParseDocument(docs[i], file, static_cast<int>(i) + 1, validation);
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return parsed;
}

class Loader {
 public:
  explicit Loader(const LoadOptions& options) : options_(options), rng_(options.seed) {}

  // Parses one source; false (with error_ set) on the first problem.
  bool AddSource(std::string_view text, const std::string& name) {
    std::vector<ParsedDocument> docs = ParseDocuments(SplitDocuments(text), name, options_.field_validation);
    for (ParsedDocument& doc : docs) {
      if (doc.error) {
        error_ = std::move(*doc.error);
        return false;
      }
      for (Entry& e : doc.entries) {
        entries_.push_back(std::move(e));
        line_offsets_.push_back(doc.line_offset);
      }
      for (LoadError& w : doc.warnings) warnings_.push_back(w.ToString());
      for (std::string& kind : doc.skipped_kinds) {
        ++skipped_total_;
        auto it = std::find_if(skipped_.begin(), skipped_.end(), [&](const auto& s) { return s.first == kind; });
        if (it == skipped_.end()) {
          skipped_.emplace_back(std::move(kind), 1);
        } else {
          ++it->second;
        }
      }
    }
    return true;
  }

  std::expected<ClusterObjects, LoadError> Finish();

  LoadError error_;

 private:
  // An error found after parsing; it points at the object's first line.
  LoadError ErrorAt(size_t entry, const std::string& field, const std::string& message) const {
    const Entry& e = entries_[entry];
    const int line = e.origin.line;
    std::string path = e.origin.prefix;
    if (!field.empty()) path = path.empty() ? field : path + "." + field;
    return LoadError{e.origin.file, e.origin.document, Identity(e.kind->kind, *e.meta, e.kind->namespaced),
                     path,          message,           line > 0 ? line + line_offsets_[entry] : 0};
  }

  std::string Where(size_t entry) const {
    const Entry& e = entries_[entry];
    return e.origin.file + " document " + std::to_string(e.origin.document);
  }

  std::optional<LoadError> AssignNames();
  std::optional<LoadError> ResolvePriorities();
  std::optional<LoadError> ResolvePriority(size_t entry, PodSpec& spec, const std::string& spec_path);
  void FinishJob(Workload& w);

  const LoadOptions& options_;
  Rng rng_;
  std::vector<Entry> entries_;
  std::vector<int> line_offsets_;
  // "kind/namespace/name" → entry index, for duplicate detection.
  std::unordered_map<std::string, size_t> keys_;
  std::unordered_map<std::string, const PriorityClass*> priority_classes_;
  const PriorityClass* global_default_ = nullptr;
  std::vector<std::string> warnings_;
  // Kinds skipped, in order of first appearance, with how many objects of each.
  std::vector<std::pair<std::string, size_t>> skipped_;
  size_t skipped_total_ = 0;
};

std::optional<LoadError> Loader::AssignNames() {
  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    ObjectMeta& meta = *e.meta;
    const std::string prefix = std::string(e.kind->kind) + "/" + meta.namespace_ + "/";
    if (meta.name.empty()) {
      // generateName: the API server retries until the name is free.
      do {
        meta.name = GenerateName(meta.generate_name, rng_);
      } while (keys_.contains(prefix + meta.name));
    }
    auto [it, inserted] = keys_.emplace(prefix + meta.name, i);
    if (!inserted) {
      return ErrorAt(i, "metadata.name",
                     "duplicate " + std::string(e.kind->kind) + " " + Quote(meta.name) + " (first defined in " +
                         Where(it->second) + ")");
    }
    if (meta.uid.empty()) meta.uid = GenerateUID(e.kind->kind, meta.namespace_, meta.name);
    if (meta.creation_timestamp_ns == 0) meta.creation_timestamp_ns = options_.creation_timestamp_ns;
    if (auto* node = std::get_if<std::shared_ptr<Node>>(&e.object)) {
      // The kubelet labels its node with its hostname.
      if (!(*node)->metadata.labels.Has(kLabelHostname)) {
        (*node)->metadata.labels.Set(std::string(kLabelHostname), (*node)->metadata.name);
      }
    } else if (auto* ns = std::get_if<std::shared_ptr<Namespace>>(&e.object)) {
      (*ns)->metadata.labels.Set(std::string(kLabelMetadataName), (*ns)->metadata.name);
    } else if (auto* w = std::get_if<std::shared_ptr<Workload>>(&e.object)) {
      if ((*w)->kind == "Job") FinishJob(**w);
    }
  }
  return std::nullopt;
}

void Loader::FinishJob(Workload& w) {
  // What the Job API strategy does on create: label the template with the job's name and uid and,
  // without a selector of its own, select by uid.
  Labels& labels = w.template_.metadata.labels;
  labels.Set(std::string(kLabelControllerUID), w.metadata.uid);
  labels.Set(std::string(kLabelBatchControllerUID), w.metadata.uid);
  labels.Set(std::string(kLabelJobName), w.metadata.name);
  labels.Set(std::string(kLabelBatchJobName), w.metadata.name);
  if (!w.selector || w.selector->Empty()) {
    LabelSelector s;
    s.match_labels.Set(std::string(kLabelBatchControllerUID), w.metadata.uid);
    w.selector = std::move(s);
  }
}

std::optional<LoadError> Loader::ResolvePriority(size_t entry, PodSpec& spec, const std::string& spec_path) {
  // The Priority admission plugin: a named class gives its value (and preemption policy);
  // without a name the globalDefault class does, else 0.
  struct Class {
    int32_t value;
    std::optional<PreemptionPolicy> policy;
  };
  std::optional<Class> resolved;
  if (!spec.priority_class_name.empty()) {
    const std::string& name = spec.priority_class_name;
    if (auto it = priority_classes_.find(name); it != priority_classes_.end()) {
      resolved = Class{it->second->value, it->second->preemption_policy};
    } else if (name == kSystemClusterCritical) {
      resolved = Class{kSystemClusterCriticalPriority, PreemptionPolicy::kPreemptLowerPriority};
    } else if (name == kSystemNodeCritical) {
      resolved = Class{kSystemNodeCriticalPriority, PreemptionPolicy::kPreemptLowerPriority};
    } else {
      std::string known;
      for (const Entry& e : entries_) {
        if (auto* pc = std::get_if<std::shared_ptr<PriorityClass>>(&e.object))
          known += ", " + Quote((*pc)->metadata.name);
      }
      return ErrorAt(entry, spec_path + ".priorityClassName",
                     "no PriorityClass named " + Quote(name) + "; defined: " + Quote(kSystemClusterCritical) + ", " +
                         Quote(kSystemNodeCritical) + known);
    }
  } else if (!spec.priority) {
    resolved = global_default_ != nullptr ? Class{global_default_->value, global_default_->preemption_policy}
                                          : Class{kNoPriority, std::nullopt};
  }
  if (resolved) {
    // A pod may restate the priority its class gives, but not contradict it (as upstream).
    if (spec.priority && *spec.priority != resolved->value) {
      return ErrorAt(entry, spec_path + ".priority",
                     "priority " + std::to_string(*spec.priority) + " contradicts priorityClassName " +
                         Quote(spec.priority_class_name) + " (value " + std::to_string(resolved->value) +
                         "); drop spec.priority");
    }
    spec.priority = resolved->value;
    if (!spec.preemption_policy) spec.preemption_policy = resolved->policy;
  }
  // An explicit spec.priority without a class is kept as written: convenient for simulations.
  if (!spec.preemption_policy) spec.preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
  return std::nullopt;
}

std::optional<LoadError> Loader::ResolvePriorities() {
  for (size_t i = 0; i < entries_.size(); ++i) {
    auto* pc = std::get_if<std::shared_ptr<PriorityClass>>(&entries_[i].object);
    if (pc == nullptr) continue;
    priority_classes_.emplace((*pc)->metadata.name, pc->get());
    if ((*pc)->global_default) {
      if (global_default_ != nullptr) {
        return ErrorAt(i, "globalDefault", "only one PriorityClass may be marked globalDefault");
      }
      global_default_ = pc->get();
    }
  }
  for (size_t i = 0; i < entries_.size(); ++i) {
    std::optional<LoadError> err;
    if (auto* pod = std::get_if<std::shared_ptr<Pod>>(&entries_[i].object)) {
      err = ResolvePriority(i, (*pod)->spec, "spec");
    } else if (auto* w = std::get_if<std::shared_ptr<Workload>>(&entries_[i].object)) {
      // A CronJob's pods only exist once a schedule fires, which a snapshot never sees.
      if ((*w)->kind != "CronJob") err = ResolvePriority(i, (*w)->template_.spec, "spec.template.spec");
    }
    if (err) return err;
  }
  return std::nullopt;
}

// The key a controller reference is filed under: the owner's uid, or (a reference without one, as
// hand-written manifests may have) its kind, namespace and name.
std::string OwnerKey(const OwnerReference& ref, const std::string& namespace_) {
  if (!ref.uid.empty()) return "uid:" + ref.uid;
  return "ref:" + ref.kind + "/" + namespace_ + "/" + ref.name;
}

const OwnerReference* ControllerRef(const ObjectMeta& meta) {
  for (const OwnerReference& ref : meta.owner_references) {
    if (ref.controller) return &ref;
  }
  return nullptr;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::expected<ClusterObjects, LoadError> Loader::Finish() {
  if (auto err = AssignNames()) return std::unexpected(*err);
  if (auto err = ResolvePriorities()) return std::unexpected(*err);

  ClusterObjects out;
  out.warnings = std::move(warnings_);
  out.object_count = entries_.size() + skipped_total_;
  std::vector<std::shared_ptr<const Node>> nodes;
  // What the input already has for a controller (a cluster dump), by OwnerKey: its pods, and the
  // Deployments whose ReplicaSets are listed. Controllers create only what is missing.
  std::unordered_map<std::string, std::vector<const Pod*>> owned_pods;
  std::unordered_set<std::string> deployments_with_replica_sets;
  for (const Entry& e : entries_) {
    if (auto* n = std::get_if<std::shared_ptr<Node>>(&e.object)) nodes.push_back(*n);
    const OwnerReference* ref = ControllerRef(*e.meta);
    if (ref == nullptr) continue;
    if (auto* p = std::get_if<std::shared_ptr<Pod>>(&e.object)) {
      owned_pods[OwnerKey(*ref, e.meta->namespace_)].push_back(p->get());
    } else if (auto* w = std::get_if<std::shared_ptr<Workload>>(&e.object);
               w != nullptr && (*w)->kind == "ReplicaSet" && ref->kind == "Deployment") {
      deployments_with_replica_sets.insert(OwnerKey(*ref, e.meta->namespace_));
    }
  }
  auto keys_of = [](const Workload& w) {
    return std::array<std::string, 2>{"uid:" + w.metadata.uid,
                                      "ref:" + w.kind + "/" + w.metadata.namespace_ + "/" + w.metadata.name};
  };

  int64_t next_index = 0;
  std::set<std::string> declared_namespaces;
  std::vector<std::string> used_namespaces;  // in order of first use
  std::set<std::string> used_set;
  auto use_namespace = [&](const std::string& ns) {
    if (used_set.insert(ns).second) used_namespaces.push_back(ns);
  };
  size_t pending_with_claims = 0;
  auto add_pod = [&](std::shared_ptr<Pod> pod, bool uses_volume_claims) {
    pod->metadata.creation_index = next_index++;
    if (pod->metadata.creation_timestamp_ns == 0) pod->metadata.creation_timestamp_ns = options_.creation_timestamp_ns;
    if (uses_volume_claims && pod->spec.node_name.empty()) ++pending_with_claims;
    out.pods.push_back(std::move(pod));
  };
  std::vector<std::string> cron_jobs;

  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    if (e.kind->namespaced) use_namespace(e.meta->namespace_);
    std::visit(
        [&](auto& obj) {
          using T = std::decay_t<decltype(*obj)>;
          if constexpr (!std::is_same_v<T, Pod>) obj->metadata.creation_index = next_index++;
          if constexpr (std::is_same_v<T, Node>) {
            out.nodes.push_back(obj);
          } else if constexpr (std::is_same_v<T, Pod>) {
            ApplyMatchLabelKeys(*obj);
            add_pod(obj, e.uses_volume_claims);
          } else if constexpr (std::is_same_v<T, Namespace>) {
            declared_namespaces.insert(obj->metadata.name);
            out.namespaces.push_back(obj);
          } else if constexpr (std::is_same_v<T, PriorityClass>) {
            out.priority_classes.push_back(obj);
          } else if constexpr (std::is_same_v<T, PodDisruptionBudget>) {
            out.pdbs.push_back(obj);
          } else if (obj->kind == "CronJob") {
            cron_jobs.push_back(obj->metadata.namespace_ + "/" + obj->metadata.name);
          } else {
            out.workloads.push_back(obj);
          }
        },
        e.object);
    if (out.pods.size() > options_.max_pods) {
      return std::unexpected(
          ErrorAt(i, "", "more than " + std::to_string(options_.max_pods) + " pods in total (LoadOptions.max_pods)"));
    }

    auto* wp = std::get_if<std::shared_ptr<Workload>>(&e.object);
    if (wp == nullptr || !options_.expand_workloads) continue;
    const Workload& w = **wp;
    if (w.kind == "CronJob") continue;
    std::vector<const Pod*> owned;
    bool has_replica_sets = false;
    for (const std::string& key : keys_of(w)) {
      if (auto it = owned_pods.find(key); it != owned_pods.end()) {
        for (const Pod* p : it->second) {
          if (std::find(owned.begin(), owned.end(), p) == owned.end()) owned.push_back(p);
        }
      }
      has_replica_sets = has_replica_sets || deployments_with_replica_sets.contains(key);
    }
    // A Deployment whose ReplicaSets are in the input creates no pods itself: its ReplicaSets do.
    if (w.kind == "Deployment" && has_replica_sets) continue;
    int64_t expected = w.kind == "DaemonSet" ? static_cast<int64_t>(nodes.size()) : w.replicas;
    if (w.kind == "Job") expected = std::min<int64_t>(w.replicas, w.completions);
    if (out.pods.size() + static_cast<size_t>(std::max<int64_t>(expected, 0)) > options_.max_pods) {
      const std::string field = w.kind == "Job" ? "spec.parallelism" : "spec.replicas";
      return std::unexpected(ErrorAt(i, field,
                                     std::to_string(expected) + " pods would make more than " +
                                         std::to_string(options_.max_pods) + " pods in total (LoadOptions.max_pods)"));
    }
    for (std::shared_ptr<Pod> pod : ExpandWorkload(w, nodes, rng_, owned)) {
      std::string key = "Pod/" + pod->metadata.namespace_ + "/" + pod->metadata.name;
      while (keys_.contains(key)) {
        if (w.kind == "StatefulSet") {
          return std::unexpected(ErrorAt(i, "metadata.name",
                                         "StatefulSet pod " + Quote(pod->metadata.name) +
                                             " clashes with a pod of the same name (first defined in " +
                                             Where(keys_.at(key)) + ")"));
        }
        // A random name that is taken: the controller would retry with another one.
        pod = NewPodForWorkload(w, rng_, pod.get());
        key = "Pod/" + pod->metadata.namespace_ + "/" + pod->metadata.name;
      }
      keys_.emplace(key, i);
      add_pod(std::move(pod), e.uses_volume_claims);
    }
  }

  if (!skipped_.empty()) {
    std::string kinds;
    for (const auto& [kind, count] : skipped_)
      kinds += (kinds.empty() ? "" : ", ") + std::to_string(count) + " " + kind;
    out.warnings.push_back("skipped " + kinds + (skipped_total_ == 1 ? " object" : " objects") +
                           " kubesched does not simulate");
  }
  if (!cron_jobs.empty()) {
    out.warnings.push_back((cron_jobs.size() == 1 ? "CronJob " : "CronJobs ") + JoinNames(cron_jobs) +
                           (cron_jobs.size() == 1 ? " creates" : " create") +
                           " no pods: a snapshot has no schedule to run them on");
  }
  if (pending_with_claims > 0) {
    out.warnings.push_back(std::to_string(pending_with_claims) +
                           (pending_with_claims == 1 ? " pod to schedule uses" : " pods to schedule use") +
                           " PersistentVolumeClaims: volume constraints (binding, volume node affinity and zones, "
                           "attach limits) are not evaluated");
  }

  // Namespaces used without a Namespace object exist in any cluster that accepted the objects.
  for (const std::string& ns : used_namespaces) {
    if (declared_namespaces.contains(ns)) continue;
    auto n = std::make_shared<Namespace>();
    n->metadata.name = ns;
    n->metadata.uid = GenerateUID("Namespace", "", ns);
    n->metadata.labels.Set(std::string(kLabelMetadataName), ns);
    n->metadata.creation_timestamp_ns = options_.creation_timestamp_ns;
    n->metadata.creation_index = next_index++;
    out.namespaces.push_back(std::move(n));
  }
  return out;
}

// What messages call standard input (kubectl's name for it).
constexpr std::string_view kStdinName = "STDIN";

bool IsManifestFile(const std::filesystem::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

// kubectl's walk of a path given to -f: a directory stands for its manifest files in name order,
// its subdirectories walked in place when recursive (else skipped); symbolic links to directories
// are not followed inside a directory, as filepath.Walk does not. Anything else is a file.
std::optional<std::string> ExpandPath(const std::string& path, bool recursive, std::vector<std::string>& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path == "-" || !fs::is_directory(path, ec)) {
    out.push_back(path);
    return std::nullopt;
  }
  auto walk = [&](auto& self, const fs::path& dir) -> std::optional<std::string> {
    std::vector<fs::directory_entry> entries;
    std::error_code walk_ec;
    for (fs::directory_iterator it(dir, walk_ec), end; !walk_ec && it != end; it.increment(walk_ec)) {
      entries.push_back(*it);
    }
    if (walk_ec) return "cannot read directory " + dir.string() + ": " + walk_ec.message();
    std::sort(entries.begin(), entries.end(), [](const fs::directory_entry& a, const fs::directory_entry& b) {
      return a.path().filename() < b.path().filename();
    });
    for (const fs::directory_entry& e : entries) {
      std::error_code type_ec;
      if (e.is_directory(type_ec) && !e.is_symlink(type_ec)) {
        if (!recursive) continue;
        if (auto err = self(self, e.path())) return err;
      } else if (IsManifestFile(e.path())) {
        out.push_back(e.path().string());
      }
    }
    return std::nullopt;
  };
  return walk(walk, fs::path(path));
}

std::optional<std::string> ReadFile(const std::string& path, std::string& out) {
  if (path == "-") {
    out.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string("cannot open file: ") + std::strerror(errno);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::string("cannot read file: ") + std::strerror(errno);
  out = std::move(ss).str();
  return std::nullopt;
}

}  // namespace

std::string LoadError::ToString() const {
  std::string out = file.empty() ? "<input>" : file;
  if (document > 0) out += ": document " + std::to_string(document);
  if (!object.empty()) out += " (" + object + ")";
  out += ": ";
  if (!field.empty()) out += field + ": ";
  out += message;
  if (line > 0) out += " (line " + std::to_string(line) + ")";
  return out;
}

std::expected<ClusterObjects, LoadError> LoadManifestSources(const std::vector<ManifestSource>& sources,
                                                             const LoadOptions& options) {
  try {
    Loader loader(options);
    for (const ManifestSource& s : sources) {
      if (!loader.AddSource(s.text, s.name)) return std::unexpected(loader.error_);
    }
    return loader.Finish();
  } catch (const std::exception& e) {
    // Nothing should get here; if something does, it is still an error and not a crash.
    return std::unexpected(LoadError{"", 0, "", "", std::string("internal error while loading: ") + e.what(), 0});
  }
}

std::expected<ClusterObjects, LoadError> LoadManifests(const std::vector<std::string>& files,
                                                       const LoadOptions& options) {
  std::vector<std::string> paths;
  for (const std::string& file : files) {
    if (auto err = ExpandPath(file, options.recursive, paths))
      return std::unexpected(LoadError{file, 0, "", "", *err, 0});
  }
  std::vector<ManifestSource> sources;
  sources.reserve(paths.size());
  for (const std::string& path : paths) {
    ManifestSource s{path == "-" ? std::string(kStdinName) : path, ""};
    if (auto err = ReadFile(path, s.text)) return std::unexpected(LoadError{path, 0, "", "", *err, 0});
    sources.push_back(std::move(s));
  }
  return LoadManifestSources(sources, options);
}

std::expected<ClusterObjects, LoadError> LoadManifestsFromString(std::string_view text, std::string_view source_name,
                                                                 const LoadOptions& options) {
  return LoadManifestSources({ManifestSource{std::string(source_name), std::string(text)}}, options);
}

}  // namespace kubesched::api
