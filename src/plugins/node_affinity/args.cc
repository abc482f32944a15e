#include "plugins/node_affinity/args.h"

#include <initializer_list>
#include <limits>

#include "config/strict_decoder.h"
#include "config/validation.h"
#include "framework/args_writer.h"
#include "plugins/node_affinity/node_selector.h"

namespace kubesched::plugins::node_affinity {
namespace {

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

  RawRequirement Requirement(const framework::ArgsView& j, const std::string& path) {
    RawRequirement r;
    if (!d_.Object(j, path, {"key", "operator", "values"})) return r;
    r.key = d_.String(j.Find("key"), api::field_path::Child(path, "key")).value_or("");
    r.op = d_.String(j.Find("operator"), api::field_path::Child(path, "operator")).value_or("");
    r.values = d_.StringList(j.Find("values"), api::field_path::Child(path, "values"));
    return r;
  }

  std::vector<RawRequirement> Requirements(const framework::ArgsView& j, const std::string& path) {
    std::vector<RawRequirement> out;
    if (!d_.Array(j, path)) return out;
    for (size_t i = 0; i < j.Size(); ++i) out.push_back(Requirement(j[i], api::field_path::Index(path, i)));
    return out;
  }

  RawTerm Term(const framework::ArgsView& j, const std::string& path) {
    RawTerm t;
    if (!d_.Object(j, path, {"matchExpressions", "matchFields"})) return t;
    t.match_expressions = Requirements(j.Find("matchExpressions"), api::field_path::Child(path, "matchExpressions"));
    t.match_fields = Requirements(j.Find("matchFields"), api::field_path::Child(path, "matchFields"));
    return t;
  }

  RawAffinity Affinity(const framework::ArgsView& j, const std::string& path) {
    RawAffinity a;
    static constexpr std::string_view kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
    static constexpr std::string_view kPreferred = "preferredDuringSchedulingIgnoredDuringExecution";
    if (!d_.Object(j, path, {kRequired, kPreferred})) return a;
    const framework::ArgsView& required = j.Find(kRequired);
    const std::string required_path = api::field_path::Child(path, kRequired);
    if (d_.Object(required, required_path, {"nodeSelectorTerms"})) {
      a.required.emplace();
      const framework::ArgsView& terms = required.Find("nodeSelectorTerms");
      const std::string terms_path = api::field_path::Child(required_path, "nodeSelectorTerms");
      if (d_.Array(terms, terms_path)) {
        for (size_t i = 0; i < terms.Size(); ++i)
          a.required->push_back(Term(terms[i], api::field_path::Index(terms_path, i)));
      }
    }
    const framework::ArgsView& preferred = j.Find(kPreferred);
    const std::string preferred_path = api::field_path::Child(path, kPreferred);
    if (d_.Array(preferred, preferred_path)) {
      for (size_t i = 0; i < preferred.Size(); ++i) {
        const std::string p = api::field_path::Index(preferred_path, i);
        RawPreferred pref;
        if (d_.Object(preferred[i], p, {"weight", "preference"})) {
          pref.weight = d_.Int32(preferred[i].Find("weight"), api::field_path::Child(p, "weight")).value_or(0);
          pref.preference = Term(preferred[i].Find("preference"), api::field_path::Child(p, "preference"));
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

std::expected<api::NodeAffinity, framework::ArgsErrors> DecodeNodeAffinityStrict(const framework::ArgsView& json,
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

std::expected<api::NodeAffinity, std::string> DecodeNodeAffinity(const framework::ArgsView& json,
                                                                 const std::string& path) {
  auto decoded = DecodeNodeAffinityStrict(json, path);
  if (!decoded) return std::unexpected(config::AggregateErrors(decoded.error().errors));
  return *decoded;
}

std::expected<NodeAffinityArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& args,
                                                                  const std::string& path) {
  NodeAffinityArgs out;
  std::vector<std::string> errs;
  config::StrictDecoder d(errs);
  if (!d.Object(args, path, {"addedAffinity", "apiVersion", "kind"})) {
    if (!errs.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errs)});
    return out;  // null: no added affinity
  }
  const framework::ArgsView& added = args.Find("addedAffinity");
  if (added.IsNull()) {
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

std::expected<NodeAffinityArgs, std::string> ParseArgs(const framework::ArgsView& args) {
  auto decoded = DecodeArgs(args, "");
  if (!decoded) return std::unexpected(config::AggregateErrors(decoded.error().errors));
  return *decoded;
}

namespace {

void EncodeRequirements(framework::ArgsWriter& w, const std::vector<api::SelectorRequirement>& reqs) {
  w.StartArray();
  for (const auto& r : reqs) {
    w.StartObject();
    w.Key("key").String(r.key);
    w.Key("operator").String(api::ToString(r.op));
    if (!r.values.empty()) w.Key("values").StringList(r.values);
    w.EndObject();
  }
  w.EndArray();
}

void EncodeTerm(framework::ArgsWriter& w, const api::NodeSelectorTerm& t) {
  w.StartObject();
  if (!t.match_expressions.empty()) EncodeRequirements(w.Key("matchExpressions"), t.match_expressions);
  if (!t.match_fields.empty()) EncodeRequirements(w.Key("matchFields"), t.match_fields);
  w.EndObject();
}

}  // namespace

std::string EncodeArgs(const NodeAffinityArgs& args) {
  framework::ArgsWriter w;
  w.StartObject();
  w.Key("addedAffinity");
  if (!args.added_affinity) {
    w.Null();
  } else {
    w.StartObject();
    if (args.added_affinity->required) {
      w.Key("requiredDuringSchedulingIgnoredDuringExecution").StartObject().Key("nodeSelectorTerms").StartArray();
      for (const auto& t : args.added_affinity->required->terms) EncodeTerm(w, t);
      w.EndArray().EndObject();
    }
    if (!args.added_affinity->preferred.empty()) {
      w.Key("preferredDuringSchedulingIgnoredDuringExecution").StartArray();
      for (const auto& p : args.added_affinity->preferred) {
        w.StartObject().Key("weight").Int64(p.weight).Key("preference");
        EncodeTerm(w, p.preference);
        w.EndObject();
      }
      w.EndArray();
    }
    w.EndObject();
  }
  w.EndObject();
  return std::move(w).Take();
}

}  // namespace kubesched::plugins::node_affinity
