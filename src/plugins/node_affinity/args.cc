#include "plugins/node_affinity/args.h"

#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>

#include "plugins/helper/validation.h"
#include "plugins/node_affinity/node_selector.h"

namespace kubesched::plugins::node_affinity {
namespace {

using Json = nlohmann::json;

// The args as written, before validation: operators stay strings so that unsupported ones can be
// reported in upstream's words.
struct RawRequirement {
  std::string key;
  std::string op;
  std::vector<std::string> values;
};
struct RawTerm {
  std::vector<RawRequirement> match_expressions;
  std::vector<RawRequirement> match_fields;
  bool Empty() const { return match_expressions.empty() && match_fields.empty(); }
};
struct RawPreferred {
  int32_t weight = 0;
  RawTerm preference;
};
struct RawAffinity {
  std::optional<std::vector<RawTerm>> required;  // nodeSelectorTerms
  std::vector<RawPreferred> preferred;
};

std::optional<api::SelectorOperator> ParseOperator(std::string_view op) {
  if (op == "In") return api::SelectorOperator::kIn;
  if (op == "NotIn") return api::SelectorOperator::kNotIn;
  if (op == "Exists") return api::SelectorOperator::kExists;
  if (op == "DoesNotExist") return api::SelectorOperator::kDoesNotExist;
  if (op == "Gt") return api::SelectorOperator::kGt;
  if (op == "Lt") return api::SelectorOperator::kLt;
  return std::nullopt;
}

// Strict JSON decoding into the raw structs; wrong types and unknown fields are collected as
// decoding errors (upstream's strict decoder fails before validation runs).
class Decoder {
 public:
  std::vector<std::string> errs;

  bool Object(const Json& j, const std::string& path, std::initializer_list<std::string_view> known) {
    if (!j.is_object()) {
      errs.push_back(helper::FieldInvalid(path, j.dump(), "must be an object"));
      return false;
    }
    for (const auto& [k, v] : j.items()) {
      bool ok = false;
      for (auto name : known) ok |= k == name;
      if (!ok) errs.push_back("unknown field " + helper::GoQuote(PathChild(path, k)));
    }
    return true;
  }

  // Present and non-null member, or nullptr.
  static const Json* Member(const Json& obj, std::string_view name) {
    auto it = obj.find(name);
    if (it == obj.end() || it->is_null()) return nullptr;
    return &*it;
  }

  std::string String(const Json& j, const std::string& path) {
    if (j.is_null()) return "";
    if (!j.is_string()) {
      errs.push_back(helper::FieldInvalid(path, j.dump(), "must be a string"));
      return "";
    }
    return j.get<std::string>();
  }

  // Calls each(element, path) for a JSON array (null reads as empty).
  template <typename F>
  void Array(const Json& j, const std::string& path, F&& each) {
    if (j.is_null()) return;
    if (!j.is_array()) {
      errs.push_back(helper::FieldInvalid(path, j.dump(), "must be an array"));
      return;
    }
    for (size_t i = 0; i < j.size(); ++i) each(j[i], PathIndex(path, i));
  }

  RawRequirement Requirement(const Json& j, const std::string& path) {
    RawRequirement r;
    if (!Object(j, path, {"key", "operator", "values"})) return r;
    if (const Json* v = Member(j, "key")) r.key = String(*v, PathChild(path, "key"));
    if (const Json* v = Member(j, "operator")) r.op = String(*v, PathChild(path, "operator"));
    if (const Json* v = Member(j, "values")) {
      Array(*v, PathChild(path, "values"),
            [&](const Json& e, const std::string& p) { r.values.push_back(String(e, p)); });
    }
    return r;
  }

  RawTerm Term(const Json& j, const std::string& path) {
    RawTerm t;
    if (j.is_null() || !Object(j, path, {"matchExpressions", "matchFields"})) return t;
    if (const Json* v = Member(j, "matchExpressions")) {
      Array(*v, PathChild(path, "matchExpressions"),
            [&](const Json& e, const std::string& p) { t.match_expressions.push_back(Requirement(e, p)); });
    }
    if (const Json* v = Member(j, "matchFields")) {
      Array(*v, PathChild(path, "matchFields"),
            [&](const Json& e, const std::string& p) { t.match_fields.push_back(Requirement(e, p)); });
    }
    return t;
  }

  RawAffinity Affinity(const Json& j, const std::string& path) {
    RawAffinity a;
    static constexpr std::string_view kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
    static constexpr std::string_view kPreferred = "preferredDuringSchedulingIgnoredDuringExecution";
    if (!Object(j, path, {kRequired, kPreferred})) return a;
    if (const Json* v = Member(j, kRequired)) {
      std::string p = PathChild(path, kRequired);
      a.required.emplace();
      if (Object(*v, p, {"nodeSelectorTerms"})) {
        if (const Json* terms = Member(*v, "nodeSelectorTerms")) {
          Array(*terms, PathChild(p, "nodeSelectorTerms"),
                [&](const Json& e, const std::string& tp) { a.required->push_back(Term(e, tp)); });
        }
      }
    }
    if (const Json* v = Member(j, kPreferred)) {
      Array(*v, PathChild(path, kPreferred), [&](const Json& e, const std::string& p) {
        RawPreferred pref;
        if (Object(e, p, {"weight", "preference"})) {
          if (const Json* w = Member(e, "weight")) {
            if (w->is_number_integer() && w->get<int64_t>() >= std::numeric_limits<int32_t>::min() &&
                w->get<int64_t>() <= std::numeric_limits<int32_t>::max()) {
              pref.weight = static_cast<int32_t>(w->get<int64_t>());
            } else {
              errs.push_back(helper::FieldInvalid(PathChild(p, "weight"), w->dump(), "must be a 32-bit integer"));
            }
          }
          if (const Json* t = Member(e, "preference")) pref.preference = Term(*t, PathChild(p, "preference"));
        }
        a.preferred.push_back(std::move(pref));
      });
    }
    return a;
  }
};

// Validation as nodeaffinity.NewNodeSelector / NewPreferredSchedulingTerms with a path option.
void ValidateTerm(const RawTerm& t, const std::string& path, std::vector<std::string>& errs) {
  const std::string expr_path = PathChild(path, "matchExpressions");
  for (size_t i = 0; i < t.match_expressions.size(); ++i) {
    const auto& r = t.match_expressions[i];
    std::string p = PathIndex(expr_path, i);
    auto op = ParseOperator(r.op);
    if (!op) {
      errs.push_back(helper::FieldNotSupported(PathChild(p, "operator"), r.op,
                                               {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}));
      continue;
    }
    ValidateLabelRequirement({r.key, *op, r.values}, p, errs);
  }
  const std::string fields_path = PathChild(path, "matchFields");
  for (size_t i = 0; i < t.match_fields.size(); ++i) {
    const auto& r = t.match_fields[i];
    std::string p = PathIndex(fields_path, i);
    if (r.op != "In" && r.op != "NotIn") {
      errs.push_back(helper::FieldNotSupported(PathChild(p, "operator"), r.op, {"In", "NotIn"}));
      continue;
    }
    ValidateFieldRequirement({r.key, *ParseOperator(r.op), r.values}, p, errs);
  }
}

std::vector<api::SelectorRequirement> Convert(const std::vector<RawRequirement>& reqs) {
  std::vector<api::SelectorRequirement> out;
  out.reserve(reqs.size());
  for (const auto& r : reqs) out.push_back({r.key, ParseOperator(r.op).value_or(api::SelectorOperator::kIn), r.values});
  return out;
}

api::NodeSelectorTerm Convert(const RawTerm& t) { return {Convert(t.match_expressions), Convert(t.match_fields)}; }

}  // namespace

std::expected<api::NodeAffinity, std::string> DecodeNodeAffinity(const Json& json, const std::string& path) {
  Decoder d;
  RawAffinity raw = d.Affinity(json, path);
  if (!d.errs.empty()) return std::unexpected(helper::AggregateErrors(d.errs));

  std::vector<std::string> errs;
  if (raw.required) {
    const std::string terms_path =
        PathChild(PathChild(path, "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms");
    for (size_t i = 0; i < raw.required->size(); ++i) {
      const RawTerm& t = (*raw.required)[i];
      if (!t.Empty()) ValidateTerm(t, PathIndex(terms_path, i), errs);  // empty terms select nothing
    }
  }
  const std::string preferred_path = PathChild(path, "preferredDuringSchedulingIgnoredDuringExecution");
  for (size_t i = 0; i < raw.preferred.size(); ++i) {
    const RawPreferred& p = raw.preferred[i];
    // Upstream skips terms it will never use before parsing them.
    if (p.weight == 0 || p.preference.Empty()) continue;
    ValidateTerm(p.preference, PathIndex(preferred_path, i), errs);
  }
  if (!errs.empty()) return std::unexpected(helper::AggregateErrors(errs));

  api::NodeAffinity out;
  if (raw.required) {
    out.required.emplace();
    for (const auto& t : *raw.required) out.required->terms.push_back(Convert(t));
  }
  for (const auto& p : raw.preferred) out.preferred.push_back({p.weight, Convert(p.preference)});
  return out;
}

std::expected<NodeAffinityArgs, std::string> ParseArgs(const Json& args) {
  NodeAffinityArgs out;
  if (args.is_null()) return out;
  Decoder d;
  if (!d.Object(args, "", {"addedAffinity", "apiVersion", "kind"}))
    return std::unexpected(helper::AggregateErrors(d.errs));
  if (!d.errs.empty()) return std::unexpected(helper::AggregateErrors(d.errs));
  if (const Json* added = Decoder::Member(args, "addedAffinity")) {
    auto affinity = DecodeNodeAffinity(*added, "addedAffinity");
    if (!affinity) return std::unexpected(affinity.error());
    out.added_affinity = std::move(*affinity);
  }
  return out;
}

}  // namespace kubesched::plugins::node_affinity
