#include "store/controllers/daemon_placement.h"

#include <algorithm>
#include <charconv>

#include "api/workloads.h"
#include "store/controllers/object_util.h"

namespace kubesched::store::controllers {

namespace json = api::json;

namespace {

struct Added {
  std::string_view key;
  std::string_view effect;
  bool host_network_only;
};
constexpr Added kDaemonTolerations[] = {
    {api::kTaintNodeNotReady, "NoExecute", false},           {api::kTaintNodeUnreachable, "NoExecute", false},
    {api::kTaintNodeDiskPressure, "NoSchedule", false},      {api::kTaintNodeMemoryPressure, "NoSchedule", false},
    {api::kTaintNodePIDPressure, "NoSchedule", false},       {api::kTaintNodeUnschedulable, "NoSchedule", false},
    {api::kTaintNodeNetworkUnavailable, "NoSchedule", true},
};

std::vector<DaemonPlacement::Requirement> Requirements(const json::Value* list) {
  std::vector<DaemonPlacement::Requirement> out;
  if (list == nullptr || !list->IsArray()) return out;
  for (const auto& r : list->GetArray()) {
    DaemonPlacement::Requirement req{
        std::string(json::GetString(r, "key")), std::string(json::GetString(r, "operator")), {}};
    if (const json::Value* values = json::Find(r, "values"); values && values->IsArray()) {
      for (const auto& v : values->GetArray()) req.values.emplace_back(json::View(v));
    }
    out.push_back(std::move(req));
  }
  return out;
}

const std::string* Label(const LabelPairs& labels, std::string_view key) {
  auto it = std::lower_bound(labels.begin(), labels.end(), key,
                             [](const auto& pair, std::string_view k) { return pair.first < k; });
  return it != labels.end() && it->first == key ? &it->second : nullptr;
}

std::optional<int64_t> Integer(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// nodeaffinity's requirement matching (labels.Requirement.Matches for expressions).
bool Matches(const DaemonPlacement::Requirement& r, const std::string* value) {
  auto in = [&] { return value && std::find(r.values.begin(), r.values.end(), *value) != r.values.end(); };
  if (r.op == "In") return in();
  if (r.op == "NotIn") return !in();
  if (r.op == "Exists") return value != nullptr;
  if (r.op == "DoesNotExist") return value == nullptr;
  if (r.op == "Gt" || r.op == "Lt") {
    if (value == nullptr || r.values.size() != 1) return false;
    auto have = Integer(*value), bound = Integer(r.values[0]);
    if (!have || !bound) return false;
    return r.op == "Gt" ? *have > *bound : *have < *bound;
  }
  return false;
}

bool TermMatches(const DaemonPlacement::Term& t, const NodeFacts& node) {
  // An empty term selects no node.
  if (t.expressions.empty() && t.fields.empty()) return false;
  for (const auto& r : t.expressions) {
    if (!Matches(r, Label(node.labels(), r.key))) return false;
  }
  for (const auto& r : t.fields) {
    if (r.key != api::kFieldNodeName) return false;
    if (!Matches(r, &node.name())) return false;
  }
  return true;
}

bool Tolerates(const DaemonPlacement::Toleration& t, const NodeTaint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.op == "Exists") return true;
  return (t.op.empty() || t.op == "Equal") && t.value == taint.value;
}

}  // namespace

DaemonPlacement ParseDaemonPlacement(const json::Value& pod_template) {
  DaemonPlacement p;
  const json::Value* spec = json::Find(pod_template, "spec");
  if (spec == nullptr) return p;
  p.node_name = std::string(json::GetString(*spec, "nodeName"));
  if (const json::Value* sel = json::Find(*spec, "nodeSelector"); sel && sel->IsObject()) {
    for (const auto& m : sel->GetObject()) p.node_selector.emplace_back(json::View(m.name), json::View(m.value));
    std::sort(p.node_selector.begin(), p.node_selector.end());
  }
  if (const json::Value* required =
          At(*spec, {"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"})) {
    p.has_required_affinity = true;
    if (const json::Value* terms = json::Find(*required, "nodeSelectorTerms"); terms && terms->IsArray()) {
      for (const auto& t : terms->GetArray()) {
        p.required_terms.push_back(
            {Requirements(json::Find(t, "matchExpressions")), Requirements(json::Find(t, "matchFields"))});
      }
    }
  }
  if (const json::Value* tolerations = json::Find(*spec, "tolerations"); tolerations && tolerations->IsArray()) {
    for (const auto& t : tolerations->GetArray()) {
      p.tolerations.push_back({std::string(json::GetString(t, "key")), std::string(json::GetString(t, "operator")),
                               std::string(json::GetString(t, "value")), std::string(json::GetString(t, "effect"))});
    }
  }
  const json::Value* hn = json::Find(*spec, "hostNetwork");
  const bool host_network = hn && hn->IsTrue();
  for (const Added& t : kDaemonTolerations) {
    if (t.host_network_only && !host_network) continue;
    p.tolerations.push_back({std::string(t.key), "Exists", "", std::string(t.effect)});
  }
  return p;
}

DaemonVerdict EvaluateDaemonPlacement(const DaemonPlacement& p, const NodeFacts& node) {
  if (!p.node_name.empty() && p.node_name != node.name()) return {};
  for (const auto& [key, value] : p.node_selector) {
    const std::string* have = Label(node.labels(), key);
    if (have == nullptr || *have != value) return {};
  }
  if (p.has_required_affinity && std::none_of(p.required_terms.begin(), p.required_terms.end(),
                                              [&](const auto& t) { return TermMatches(t, node); })) {
    return {};
  }
  bool untolerated_no_schedule = false, untolerated_no_execute = false;
  for (const NodeTaint& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (std::any_of(p.tolerations.begin(), p.tolerations.end(), [&](const auto& t) { return Tolerates(t, taint); })) {
      continue;
    }
    (taint.effect == "NoExecute" ? untolerated_no_execute : untolerated_no_schedule) = true;
  }
  if (untolerated_no_schedule || untolerated_no_execute) return {false, !untolerated_no_execute};
  return {true, true};
}

void AddDaemonTolerations(json::Value& spec, json::Allocator& a) {
  const json::Value* hn = json::Find(spec, "hostNetwork");
  const bool host_network = hn && hn->IsTrue();
  json::Value* tolerations = json::Find(spec, "tolerations");
  if (tolerations == nullptr || !tolerations->IsArray()) {
    tolerations = &json::Set(spec, "tolerations", json::Value(rapidjson::kArrayType), a);
  }
  for (const Added& t : kDaemonTolerations) {
    if (t.host_network_only && !host_network) continue;
    json::Value tol(rapidjson::kObjectType);
    json::Set(tol, "key", json::MakeString(t.key, a), a);
    json::Set(tol, "operator", json::MakeString("Exists", a), a);
    json::Set(tol, "effect", json::MakeString(t.effect, a), a);
    const bool present = std::any_of(tolerations->Begin(), tolerations->End(), [&](const json::Value& have) {
      return json::GetString(have, "key") == t.key && json::GetString(have, "operator") == "Exists" &&
             json::GetString(have, "effect") == t.effect && json::Find(have, "value") == nullptr &&
             json::Find(have, "tolerationSeconds") == nullptr;
    });
    if (!present) tolerations->PushBack(tol, a);
  }
}

void PinToNode(json::Value& spec, std::string_view node, json::Allocator& a) {
  json::Value requirement(rapidjson::kObjectType);
  json::Set(requirement, "key", json::MakeString(api::kFieldNodeName, a), a);
  json::Set(requirement, "operator", json::MakeString("In", a), a);
  json::Value values(rapidjson::kArrayType);
  values.PushBack(json::MakeString(node, a), a);
  json::Set(requirement, "values", std::move(values), a);
  json::Value fields(rapidjson::kArrayType);
  fields.PushBack(requirement, a);
  json::Value term(rapidjson::kObjectType);
  json::Set(term, "matchFields", std::move(fields), a);
  json::Value terms(rapidjson::kArrayType);
  terms.PushBack(term, a);
  json::Value& required = json::Child(json::Child(json::Child(spec, "affinity", a), "nodeAffinity", a),
                                      "requiredDuringSchedulingIgnoredDuringExecution", a);
  required.SetObject();
  json::Set(required, "nodeSelectorTerms", std::move(terms), a);
}

}  // namespace kubesched::store::controllers
