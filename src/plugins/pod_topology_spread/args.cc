#include "plugins/pod_topology_spread/args.h"

#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "plugins/helper/validation.h"

namespace kubesched::plugins::pod_topology_spread {
namespace {

using Json = nlohmann::json;

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

using helper::AggregateErrors;
using helper::FieldInvalid;
using helper::FieldNotSupported;
using helper::FieldRequired;
using helper::GoQuote;

// field.Forbidden and field.Duplicate renderings (the shared helper has the others).
std::string Forbidden(std::string_view path, std::string_view detail) {
  return fmt::format("{}: Forbidden: {}", path, detail);
}
std::string Duplicate(std::string_view path, std::string_view value) {
  return fmt::format("{}: Duplicate value: {}", path, GoQuote(value));
}

// --- JSON reading ----------------------------------------------------------------------------

std::optional<std::string> ReadString(const Json& j, const std::string& path, std::string& out) {
  if (j.is_null()) return std::nullopt;
  if (!j.is_string()) return path + ": expected a string";
  out = j.get<std::string>();
  return std::nullopt;
}

std::optional<std::string> ReadInt(const Json& j, const std::string& path, int64_t& out) {
  if (j.is_null()) return std::nullopt;
  if (!j.is_number_integer()) return path + ": expected an integer";
  out = j.get<int64_t>();
  return std::nullopt;
}

std::optional<std::string> ReadConstraint(const Json& j, const std::string& path, RawConstraint& c) {
  if (!j.is_object()) return path + ": expected an object";
  for (const auto& [key, value] : j.items()) {
    std::string p = path + "." + key;
    std::optional<std::string> err;
    if (key == "maxSkew") {
      err = ReadInt(value, p, c.max_skew);
    } else if (key == "topologyKey") {
      err = ReadString(value, p, c.topology_key);
    } else if (key == "whenUnsatisfiable") {
      err = ReadString(value, p, c.when_unsatisfiable);
    } else if (key == "labelSelector") {
      c.has_label_selector = !value.is_null();
    } else if (key == "minDomains") {
      if (!value.is_null()) {
        int64_t v = 0;
        err = ReadInt(value, p, v);
        if (!err && (v < INT32_MIN || v > INT32_MAX)) err = FieldInvalid(p, std::to_string(v), "out of range");
        c.min_domains = static_cast<int32_t>(v);
      }
    } else if (key == "nodeAffinityPolicy" || key == "nodeTaintsPolicy") {
      if (!value.is_null()) {
        std::string v;
        err = ReadString(value, p, v);
        (key == "nodeAffinityPolicy" ? c.node_affinity_policy : c.node_taints_policy) = std::move(v);
      }
    } else if (key == "matchLabelKeys") {
      if (!value.is_null()) {
        if (!value.is_array()) return p + ": expected a list of strings";
        for (size_t i = 0; i < value.size(); ++i) {
          if (!value[i].is_string()) return fmt::format("{}[{}]: expected a string", p, i);
          c.match_label_keys.push_back(value[i].get<std::string>());
        }
      }
    } else {
      return fmt::format("unknown field {}", GoQuote(p));
    }
    if (err) return err;
  }
  return std::nullopt;
}

std::expected<RawArgs, std::string> ReadArgs(const Json& j) {
  RawArgs raw;
  if (j.is_null()) return raw;
  if (!j.is_object()) return std::unexpected("expected an object");
  for (const auto& [key, value] : j.items()) {
    if (key == "defaultConstraints") {
      if (value.is_null()) continue;
      if (!value.is_array()) return std::unexpected("defaultConstraints: expected a list");
      for (size_t i = 0; i < value.size(); ++i) {
        RawConstraint c;
        if (auto err = ReadConstraint(value[i], fmt::format("defaultConstraints[{}]", i), c)) {
          return std::unexpected(*err);
        }
        raw.constraints.push_back(std::move(c));
      }
    } else if (key == "defaultingType") {
      if (auto err = ReadString(value, "defaultingType", raw.defaulting_type)) return std::unexpected(*err);
    } else if (key == "apiVersion" || key == "kind") {
      // Tolerated: args may be written as a typed object.
    } else {
      return std::unexpected(fmt::format("unknown field {}", GoQuote(key)));
    }
  }
  return raw;
}

constexpr std::string_view kDoNotSchedule = "DoNotSchedule";
constexpr std::string_view kScheduleAnyway = "ScheduleAnyway";

// ValidatePodTopologySpreadArgs, in upstream's order and wording.
std::vector<std::string> Validate(const RawArgs& args) {
  std::vector<std::string> errs;
  if (args.defaulting_type != kSystemDefaulting && args.defaulting_type != kListDefaulting) {
    errs.push_back(FieldNotSupported("defaultingType", args.defaulting_type, {kSystemDefaulting, kListDefaulting}));
  } else if (args.defaulting_type == kSystemDefaulting && !args.constraints.empty()) {
    errs.push_back(
        FieldInvalid("defaultingType", GoQuote(args.defaulting_type), "when .defaultConstraints are not empty"));
  }
  for (size_t i = 0; i < args.constraints.size(); ++i) {
    const RawConstraint& c = args.constraints[i];
    std::string p = fmt::format("defaultConstraints[{}]", i);
    if (c.max_skew <= 0) {
      errs.push_back(FieldInvalid(p + ".maxSkew", std::to_string(c.max_skew), "not in valid range (0, inf)"));
    }
    if (c.topology_key.empty()) {
      errs.push_back(FieldRequired(p + ".topologyKey", "can not be empty"));
    } else {
      for (auto& e : helper::IsQualifiedName(c.topology_key)) {
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
          Forbidden(p + ".labelSelector", "constraint must not define a selector, as they deduced for each pod"));
    }
    for (size_t k = 0; k < i; ++k) {
      const RawConstraint& other = args.constraints[k];
      if (other.topology_key == c.topology_key && other.when_unsatisfiable == c.when_unsatisfiable) {
        errs.push_back(Duplicate(p, fmt::format("{{{}, {}}}", c.topology_key, c.when_unsatisfiable)));
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

std::expected<PodTopologySpreadArgs, std::string> ParseArgs(const nlohmann::json& json) {
  auto raw = ReadArgs(json);
  if (!raw) return std::unexpected(raw.error());
  // v1 defaulting: an unset defaultingType means System.
  if (raw->defaulting_type.empty()) raw->defaulting_type = std::string(kSystemDefaulting);
  if (auto errs = Validate(*raw); !errs.empty()) return std::unexpected(AggregateErrors(errs));
  PodTopologySpreadArgs args;
  args.defaulting_type = raw->defaulting_type;
  for (const auto& c : raw->constraints) args.default_constraints.push_back(Convert(c));
  return args;
}

}  // namespace kubesched::plugins::pod_topology_spread
