#include "plugins/node_affinity/args.h"

#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>

#include "config/strict_decoder.h"
#include "config/validation.h"
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

// Strict JSON decoding into the raw structs; unknown fields and wrong types are collected as
// decoding errors (upstream's strict decoder fails before validation runs).
class Decoder {
 public:
  explicit Decoder(std::vector<std::string>& errs) : d_(errs) {}

  RawRequirement Requirement(const Json& j, const std::string& path) {
    RawRequirement r;
    if (!d_.Object(j, path, {"key", "operator", "values"})) return r;
    r.key = d_.String(config::Member(j, "key"), api::field_path::Child(path, "key")).value_or("");
    r.op = d_.String(config::Member(j, "operator"), api::field_path::Child(path, "operator")).value_or("");
    r.values = d_.StringList(config::Member(j, "values"), api::field_path::Child(path, "values"));
    return r;
  }

  std::vector<RawRequirement> Requirements(const Json& j, const std::string& path) {
    std::vector<RawRequirement> out;
    if (!d_.Array(j, path)) return out;
    for (size_t i = 0; i < j.size(); ++i) out.push_back(Requirement(j[i], api::field_path::Index(path, i)));
    return out;
  }

  RawTerm Term(const Json& j, const std::string& path) {
    RawTerm t;
    if (!d_.Object(j, path, {"matchExpressions", "matchFields"})) return t;
    t.match_expressions =
        Requirements(config::Member(j, "matchExpressions"), api::field_path::Child(path, "matchExpressions"));
    t.match_fields = Requirements(config::Member(j, "matchFields"), api::field_path::Child(path, "matchFields"));
    return t;
  }

  RawAffinity Affinity(const Json& j, const std::string& path) {
    RawAffinity a;
    static constexpr std::string_view kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
    static constexpr std::string_view kPreferred = "preferredDuringSchedulingIgnoredDuringExecution";
    if (!d_.Object(j, path, {kRequired, kPreferred})) return a;
    const Json& required = config::Member(j, kRequired);
    const std::string required_path = api::field_path::Child(path, kRequired);
    if (d_.Object(required, required_path, {"nodeSelectorTerms"})) {
      a.required.emplace();
      const Json& terms = config::Member(required, "nodeSelectorTerms");
      const std::string terms_path = api::field_path::Child(required_path, "nodeSelectorTerms");
      if (d_.Array(terms, terms_path)) {
        for (size_t i = 0; i < terms.size(); ++i)
          a.required->push_back(Term(terms[i], api::field_path::Index(terms_path, i)));
      }
    }
    const Json& preferred = config::Member(j, kPreferred);
    const std::string preferred_path = api::field_path::Child(path, kPreferred);
    if (d_.Array(preferred, preferred_path)) {
      for (size_t i = 0; i < preferred.size(); ++i) {
        const std::string p = api::field_path::Index(preferred_path, i);
        RawPreferred pref;
        if (d_.Object(preferred[i], p, {"weight", "preference"})) {
          pref.weight =
              d_.Int32(config::Member(preferred[i], "weight"), api::field_path::Child(p, "weight")).value_or(0);
          pref.preference = Term(config::Member(preferred[i], "preference"), api::field_path::Child(p, "preference"));
        }
        a.preferred.push_back(std::move(pref));
      }
    }
    return a;
  }

 private:
  config::StrictDecoder d_;
};

// Validation as nodeaffinity.NewNodeSelector / NewPreferredSchedulingTerms with a path option.
void ValidateTerm(const RawTerm& t, const std::string& path, std::vector<std::string>& errs) {
  const std::string expr_path = api::field_path::Child(path, "matchExpressions");
  for (size_t i = 0; i < t.match_expressions.size(); ++i) {
    const auto& r = t.match_expressions[i];
    std::string p = api::field_path::Index(expr_path, i);
    auto op = ParseOperator(r.op);
    if (!op) {
      errs.push_back(config::FieldNotSupported(api::field_path::Child(p, "operator"), r.op,
                                               {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}));
      continue;
    }
    ValidateLabelRequirement({r.key, *op, r.values}, p, errs);
  }
  const std::string fields_path = api::field_path::Child(path, "matchFields");
  for (size_t i = 0; i < t.match_fields.size(); ++i) {
    const auto& r = t.match_fields[i];
    std::string p = api::field_path::Index(fields_path, i);
    if (r.op != "In" && r.op != "NotIn") {
      errs.push_back(config::FieldNotSupported(api::field_path::Child(p, "operator"), r.op, {"In", "NotIn"}));
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

std::expected<api::NodeAffinity, framework::ArgsErrors> DecodeNodeAffinityStrict(const Json& json,
                                                                                 const std::string& path) {
  std::vector<std::string> errs;
  RawAffinity raw = Decoder(errs).Affinity(json, path);
  if (!errs.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errs)});

  if (raw.required) {
    const std::string terms_path = api::field_path::Child(
        api::field_path::Child(path, "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms");
    for (size_t i = 0; i < raw.required->size(); ++i) {
      const RawTerm& t = (*raw.required)[i];
      if (!t.Empty()) ValidateTerm(t, api::field_path::Index(terms_path, i), errs);  // empty terms select nothing
    }
  }
  const std::string preferred_path = api::field_path::Child(path, "preferredDuringSchedulingIgnoredDuringExecution");
  for (size_t i = 0; i < raw.preferred.size(); ++i) {
    const RawPreferred& p = raw.preferred[i];
    // Upstream skips terms it will never use before parsing them.
    if (p.weight == 0 || p.preference.Empty()) continue;
    ValidateTerm(p.preference, api::field_path::Index(preferred_path, i), errs);
  }
  if (!errs.empty()) return std::unexpected(framework::ArgsErrors{false, std::move(errs)});

  api::NodeAffinity out;
  if (raw.required) {
    out.required.emplace();
    for (const auto& t : *raw.required) out.required->terms.push_back(Convert(t));
  }
  for (const auto& p : raw.preferred) out.preferred.push_back({p.weight, Convert(p.preference)});
  return out;
}

}  // namespace

std::expected<api::NodeAffinity, std::string> DecodeNodeAffinity(const Json& json, const std::string& path) {
  auto decoded = DecodeNodeAffinityStrict(json, path);
  if (!decoded) return std::unexpected(config::AggregateErrors(decoded.error().errors));
  return *decoded;
}

std::expected<NodeAffinityArgs, framework::ArgsErrors> DecodeArgs(const Json& args, const std::string& path) {
  NodeAffinityArgs out;
  std::vector<std::string> errs;
  config::StrictDecoder d(errs);
  if (!d.Object(args, path, {"addedAffinity", "apiVersion", "kind"})) {
    if (!errs.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errs)});
    return out;  // null: no added affinity
  }
  const Json& added = config::Member(args, "addedAffinity");
  if (added.is_null()) {
    if (!errs.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errs)});
    return out;
  }
  auto affinity = DecodeNodeAffinityStrict(added, api::field_path::Child(path, "addedAffinity"));
  if (!errs.empty()) {  // unknown fields beside addedAffinity: decoding errors, listed with its own
    if (!affinity && affinity.error().decoding) {
      errs.insert(errs.end(), affinity.error().errors.begin(), affinity.error().errors.end());
    }
    return std::unexpected(framework::ArgsErrors{true, std::move(errs)});
  }
  if (!affinity) return std::unexpected(std::move(affinity.error()));
  out.added_affinity = std::move(*affinity);
  return out;
}

std::expected<NodeAffinityArgs, std::string> ParseArgs(const Json& args) {
  auto decoded = DecodeArgs(args, "");
  if (!decoded) return std::unexpected(config::AggregateErrors(decoded.error().errors));
  return *decoded;
}

namespace {

nlohmann::ordered_json EncodeRequirements(const std::vector<api::SelectorRequirement>& reqs) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& r : reqs) {
    nlohmann::ordered_json e = nlohmann::ordered_json::object();
    e["key"] = r.key;
    e["operator"] = api::ToString(r.op);
    if (!r.values.empty()) e["values"] = r.values;
    out.push_back(std::move(e));
  }
  return out;
}

nlohmann::ordered_json EncodeTerm(const api::NodeSelectorTerm& t) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  if (!t.match_expressions.empty()) out["matchExpressions"] = EncodeRequirements(t.match_expressions);
  if (!t.match_fields.empty()) out["matchFields"] = EncodeRequirements(t.match_fields);
  return out;
}

}  // namespace

nlohmann::ordered_json EncodeArgs(const NodeAffinityArgs& args) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  if (!args.added_affinity) {
    out["addedAffinity"] = nullptr;
    return out;
  }
  nlohmann::ordered_json affinity = nlohmann::ordered_json::object();
  if (args.added_affinity->required) {
    nlohmann::ordered_json terms = nlohmann::ordered_json::array();
    for (const auto& t : args.added_affinity->required->terms) terms.push_back(EncodeTerm(t));
    affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {{"nodeSelectorTerms", std::move(terms)}};
  }
  if (!args.added_affinity->preferred.empty()) {
    nlohmann::ordered_json preferred = nlohmann::ordered_json::array();
    for (const auto& p : args.added_affinity->preferred) {
      preferred.push_back({{"weight", p.weight}, {"preference", EncodeTerm(p.preference)}});
    }
    affinity["preferredDuringSchedulingIgnoredDuringExecution"] = std::move(preferred);
  }
  out["addedAffinity"] = std::move(affinity);
  return out;
}

}  // namespace kubesched::plugins::node_affinity
