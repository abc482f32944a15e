#include "plugins/pod_topology_spread/args.h"

#include <optional>

#include <fmt/format.h>

#include "config/strict_decoder.h"
#include "config/validation.h"
#include "framework/args_writer.h"

namespace kubesched::plugins::pod_topology_spread {
namespace {

// A default constraint as written, before validation: enums stay strings so that validation can
// report unsupported values in upstream's words.
struct RawConstraint {
  int64_t max_skew = 0;
  std::string topology_key;
  std::string when_unsatisfiable;
  bool has_label_selector = false;
  std::optional<int32_t> min_domains;
  std::optional<std::string> node_affinity_policy;
  std::optional<std::string> node_taints_policy;
  std::vector<std::string> match_label_keys;
};

struct RawArgs {
  std::vector<RawConstraint> constraints;
  std::string defaulting_type;
};

using config::AggregateErrors;
using config::FieldDuplicate;
using config::FieldForbidden;
using config::FieldInvalid;
using config::FieldNotSupported;
using config::FieldRequired;
using util::GoQuote;

// --- JSON decoding ---------------------------------------------------------------------------

RawConstraint DecodeConstraint(config::StrictDecoder& d, const framework::ArgsView& j, const std::string& path) {
  RawConstraint c;
  if (!d.Object(j, path,
                {"maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains", "nodeAffinityPolicy",
                 "nodeTaintsPolicy", "matchLabelKeys"})) {
    return c;
  }
  auto member = [&](std::string_view key) { return j.Find(key); };
  auto child = [&](std::string_view key) { return api::field_path::Child(path, key); };
  c.max_skew = d.Int32(member("maxSkew"), child("maxSkew")).value_or(0);
  c.topology_key = d.String(member("topologyKey"), child("topologyKey")).value_or("");
  c.when_unsatisfiable = d.String(member("whenUnsatisfiable"), child("whenUnsatisfiable")).value_or("");
  const framework::ArgsView selector = member("labelSelector");
  if (d.Object(selector, child("labelSelector"), {"matchLabels", "matchExpressions"})) {
    c.has_label_selector = true;  // forbidden by validation, whatever it holds
    const std::string exprs_path = api::field_path::Child(child("labelSelector"), "matchExpressions");
    const framework::ArgsView exprs = selector.Find("matchExpressions");
    if (d.Array(exprs, exprs_path)) {
      for (size_t i = 0; i < exprs.Size(); ++i)
        d.Object(exprs[i], api::field_path::Index(exprs_path, i), {"key", "operator", "values"});
    }
  }
  c.min_domains = d.Int32(member("minDomains"), child("minDomains"));
  c.node_affinity_policy = d.String(member("nodeAffinityPolicy"), child("nodeAffinityPolicy"));
  c.node_taints_policy = d.String(member("nodeTaintsPolicy"), child("nodeTaintsPolicy"));
  c.match_label_keys = d.StringList(member("matchLabelKeys"), child("matchLabelKeys"));
  return c;
}

RawArgs DecodeRawArgs(config::StrictDecoder& d, const framework::ArgsView& j, const std::string& path) {
  RawArgs raw;
  if (!d.Object(j, path, {"defaultConstraints", "defaultingType", "apiVersion", "kind"})) return raw;
  const std::string constraints_path = api::field_path::Child(path, "defaultConstraints");
  const framework::ArgsView constraints = j.Find("defaultConstraints");
  if (d.Array(constraints, constraints_path)) {
    for (size_t i = 0; i < constraints.Size(); ++i) {
      raw.constraints.push_back(DecodeConstraint(d, constraints[i], api::field_path::Index(constraints_path, i)));
    }
  }
  raw.defaulting_type = d.String(j.Find("defaultingType"), api::field_path::Child(path, "defaultingType")).value_or("");
  return raw;
}

constexpr std::string_view kDoNotSchedule = "DoNotSchedule";
constexpr std::string_view kScheduleAnyway = "ScheduleAnyway";

// ValidatePodTopologySpreadArgs, in upstream's order and wording.
std::vector<std::string> Validate(const RawArgs& args, const std::string& path) {
  std::vector<std::string> errs;
  const std::string type_path = api::field_path::Child(path, "defaultingType");
  if (args.defaulting_type != kSystemDefaulting && args.defaulting_type != kListDefaulting) {
    errs.push_back(FieldNotSupported(type_path, args.defaulting_type, {kSystemDefaulting, kListDefaulting}));
  } else if (args.defaulting_type == kSystemDefaulting && !args.constraints.empty()) {
    errs.push_back(FieldInvalid(type_path, GoQuote(args.defaulting_type), "when .defaultConstraints are not empty"));
  }
  for (size_t i = 0; i < args.constraints.size(); ++i) {
    const RawConstraint& c = args.constraints[i];
    std::string p = api::field_path::Index(api::field_path::Child(path, "defaultConstraints"), i);
    if (c.max_skew <= 0) {
      errs.push_back(FieldInvalid(p + ".maxSkew", std::to_string(c.max_skew), "not in valid range (0, inf)"));
    }
    if (c.topology_key.empty()) {
      errs.push_back(FieldRequired(p + ".topologyKey", "can not be empty"));
    } else {
      for (auto& e : api::IsQualifiedName(c.topology_key)) {
        errs.push_back(FieldInvalid(p + ".topologyKey", GoQuote(c.topology_key), e));
      }
    }
    if (c.when_unsatisfiable.empty()) {
      errs.push_back(FieldRequired(p + ".whenUnsatisfiable", "can not be empty"));
    } else if (c.when_unsatisfiable != kDoNotSchedule && c.when_unsatisfiable != kScheduleAnyway) {
      errs.push_back(
          FieldNotSupported(p + ".whenUnsatisfiable", c.when_unsatisfiable, {kDoNotSchedule, kScheduleAnyway}));
    }
    if (c.has_label_selector) {
      errs.push_back(
          FieldForbidden(p + ".labelSelector", "constraint must not define a selector, as they deduced for each pod"));
    }
    for (size_t k = 0; k < i; ++k) {
      const RawConstraint& other = args.constraints[k];
      if (other.topology_key == c.topology_key && other.when_unsatisfiable == c.when_unsatisfiable) {
        errs.push_back(FieldDuplicate(p, GoQuote(fmt::format("{{{}, {}}}", c.topology_key, c.when_unsatisfiable))));
        break;
      }
    }
    // Not checked by upstream's args validation (the API server checks them on pods); rejecting
    // them here beats silently treating a typo as Ignore.
    for (auto [policy, name] : {std::pair{&c.node_affinity_policy, "nodeAffinityPolicy"},
                                std::pair{&c.node_taints_policy, "nodeTaintsPolicy"}}) {
      if (*policy && **policy != "Honor" && **policy != "Ignore") {
        errs.push_back(FieldNotSupported(p + "." + name, **policy, {"Honor", "Ignore"}));
      }
    }
  }
  return errs;
}

api::TopologySpreadConstraint Convert(const RawConstraint& c) {
  api::TopologySpreadConstraint out;
  out.max_skew = static_cast<int32_t>(c.max_skew);
  out.topology_key = c.topology_key;
  out.when_unsatisfiable = c.when_unsatisfiable == kDoNotSchedule ? api::UnsatisfiableConstraintAction::kDoNotSchedule
                                                                  : api::UnsatisfiableConstraintAction::kScheduleAnyway;
  out.min_domains = c.min_domains;
  auto policy = [](const std::optional<std::string>& p) -> std::optional<api::NodeInclusionPolicy> {
    if (!p) return std::nullopt;
    return *p == "Honor" ? api::NodeInclusionPolicy::kHonor : api::NodeInclusionPolicy::kIgnore;
  };
  out.node_affinity_policy = policy(c.node_affinity_policy);
  out.node_taints_policy = policy(c.node_taints_policy);
  out.match_label_keys = c.match_label_keys;
  return out;
}

}  // namespace

const std::vector<api::TopologySpreadConstraint>& SystemDefaultConstraints() {
  static const std::vector<api::TopologySpreadConstraint> kDefaults = [] {
    std::vector<api::TopologySpreadConstraint> v(2);
    v[0].topology_key = std::string(api::kLabelHostname);
    v[0].when_unsatisfiable = api::UnsatisfiableConstraintAction::kScheduleAnyway;
    v[0].max_skew = 3;
    v[1].topology_key = std::string(api::kLabelTopologyZone);
    v[1].when_unsatisfiable = api::UnsatisfiableConstraintAction::kScheduleAnyway;
    v[1].max_skew = 5;
    return v;
  }();
  return kDefaults;
}

std::expected<PodTopologySpreadArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& json,
                                                                       const std::string& path) {
  std::vector<std::string> errors;
  config::StrictDecoder d(errors);
  RawArgs raw = DecodeRawArgs(d, json, path);
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errors)});
  // v1 defaulting: an unset defaultingType means System.
  if (raw.defaulting_type.empty()) raw.defaulting_type = std::string(kSystemDefaulting);
  if (auto errs = Validate(raw, path); !errs.empty()) {
    return std::unexpected(framework::ArgsErrors{false, std::move(errs)});
  }
  PodTopologySpreadArgs args;
  args.defaulting_type = raw.defaulting_type;
  for (const auto& c : raw.constraints) args.default_constraints.push_back(Convert(c));
  return args;
}

std::expected<PodTopologySpreadArgs, std::string> ParseArgs(const framework::ArgsView& json) {
  auto decoded = DecodeArgs(json, "");
  if (!decoded) return std::unexpected(AggregateErrors(decoded.error().errors));
  return *decoded;
}

std::string EncodeArgs(const PodTopologySpreadArgs& args) {
  framework::ArgsWriter w;
  w.StartObject();
  w.Key("defaultConstraints").StartArray();
  for (const auto& c : args.default_constraints) {
    w.StartObject();
    w.Key("maxSkew").Int64(c.max_skew);
    w.Key("topologyKey").String(c.topology_key);
    w.Key("whenUnsatisfiable")
        .String(c.when_unsatisfiable == api::UnsatisfiableConstraintAction::kDoNotSchedule ? kDoNotSchedule
                                                                                           : kScheduleAnyway);
    if (c.min_domains) w.Key("minDomains").Int64(*c.min_domains);
    auto policy = [](api::NodeInclusionPolicy p) { return p == api::NodeInclusionPolicy::kHonor ? "Honor" : "Ignore"; };
    if (c.node_affinity_policy) w.Key("nodeAffinityPolicy").String(policy(*c.node_affinity_policy));
    if (c.node_taints_policy) w.Key("nodeTaintsPolicy").String(policy(*c.node_taints_policy));
    if (!c.match_label_keys.empty()) w.Key("matchLabelKeys").StringList(c.match_label_keys);
    w.EndObject();
  }
  w.EndArray();
  w.Key("defaultingType").String(args.defaulting_type);
  w.EndObject();
  return std::move(w).Take();
}

}  // namespace kubesched::plugins::pod_topology_spread
