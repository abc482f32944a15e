#include "store/controllers/daemon_placement.h"

#include <algorithm>
#include <optional>

#include "api/workloads.h"
#include "store/controllers/object_util.h"

namespace kubesched::store::controllers {

namespace json = api::json;

namespace {

// A term's requirements, or nullopt when one of them cannot be read (an unknown operator): the
// term then matches no node.
std::optional<std::vector<api::SelectorRequirement>> Requirements(const json::Value* list) {
  std::vector<api::SelectorRequirement> out;
  if (list == nullptr || !list->IsArray()) return out;
  for (const auto& r : list->GetArray()) {
    auto op = api::ParseSelectorOperator(json::GetString(r, "operator"));
    if (!op) return std::nullopt;
    api::SelectorRequirement req{std::string(json::GetString(r, "key")), *op, {}};
    if (const json::Value* values = json::Find(r, "values"); values && values->IsArray()) {
      for (const auto& v : values->GetArray()) req.values.emplace_back(json::View(v));
    }
    out.push_back(std::move(req));
  }
  return out;
}

std::optional<api::NodeSelectorTerm> Term(const json::Value& term) {
  auto expressions = Requirements(json::Find(term, "matchExpressions"));
  auto fields = Requirements(json::Find(term, "matchFields"));
  if (!expressions || !fields) return std::nullopt;
  // Nodes have one selectable field.
  for (const auto& r : *fields) {
    if (r.key != api::kFieldNodeName) return std::nullopt;
  }
  return api::NodeSelectorTerm{std::move(*expressions), std::move(*fields)};
}

std::optional<api::Toleration> ReadToleration(const json::Value& t) {
  api::Toleration out;
  out.key = std::string(json::GetString(t, "key"));
  out.value = std::string(json::GetString(t, "value"));
  const std::string_view op = json::GetString(t, "operator");
  if (op == "Exists") {
    out.op = api::TolerationOperator::kExists;
  } else if (op.empty() || op == "Equal") {
    out.op = api::TolerationOperator::kEqual;
  } else {
    return std::nullopt;
  }
  if (const std::string_view effect = json::GetString(t, "effect"); !effect.empty()) {
    out.effect = api::ParseTaintEffect(effect);
    if (!out.effect) return std::nullopt;
  }
  return out;
}

}  // namespace

DaemonPlacement ParseDaemonPlacement(const json::Value& pod_template) {
  DaemonPlacement p;
  const json::Value* spec = json::Find(pod_template, "spec");
  if (spec == nullptr) return p;
  p.node_name = std::string(json::GetString(*spec, "nodeName"));
  if (const json::Value* sel = json::Find(*spec, "nodeSelector"); sel && sel->IsObject()) {
    for (const auto& m : sel->GetObject())
      p.node_selector.Set(std::string(json::View(m.name)), std::string(json::View(m.value)));
  }
  if (const json::Value* required =
          At(*spec, {"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"})) {
    p.required.emplace();
    if (const json::Value* terms = json::Find(*required, "nodeSelectorTerms"); terms && terms->IsArray()) {
      for (const auto& t : terms->GetArray()) {
        if (auto term = Term(t)) p.required->terms.push_back(std::move(*term));
      }
    }
  }
  if (const json::Value* tolerations = json::Find(*spec, "tolerations"); tolerations && tolerations->IsArray()) {
    for (const auto& t : tolerations->GetArray()) {
      if (auto toleration = ReadToleration(t)) p.tolerations.push_back(std::move(*toleration));
    }
  }
  const json::Value* hn = json::Find(*spec, "hostNetwork");
  for (api::Toleration& t : api::DaemonSetTolerations(hn && hn->IsTrue())) p.tolerations.push_back(std::move(t));
  return p;
}

void AddDaemonTolerations(json::Value& spec, json::Allocator& a) {
  const json::Value* hn = json::Find(spec, "hostNetwork");
  const bool host_network = hn && hn->IsTrue();
  json::Value* tolerations = json::Find(spec, "tolerations");
  if (tolerations == nullptr || !tolerations->IsArray()) {
    tolerations = &json::Set(spec, "tolerations", json::Value(rapidjson::kArrayType), a);
  }
  for (const api::Toleration& t : api::DaemonSetTolerations(host_network)) {
    const std::string_view effect = api::ToString(*t.effect);
    json::Value tol(rapidjson::kObjectType);
    json::Set(tol, "key", json::MakeString(t.key, a), a);
    json::Set(tol, "operator", json::MakeString("Exists", a), a);
    json::Set(tol, "effect", json::MakeString(effect, a), a);
    const bool present = std::any_of(tolerations->Begin(), tolerations->End(), [&](const json::Value& have) {
      return json::GetString(have, "key") == t.key && json::GetString(have, "operator") == "Exists" &&
             json::GetString(have, "effect") == effect && json::Find(have, "value") == nullptr &&
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
