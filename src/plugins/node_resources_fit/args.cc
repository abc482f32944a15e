#include "plugins/node_resources_fit/args.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "plugins/helper/validation.h"

namespace kubesched::plugins::node_resources_fit {

namespace args_util {

namespace {

std::optional<std::string> ReadInt(const nlohmann::json& v, std::string_view path, int64_t& out) {
  if (v.is_null()) {
    out = 0;
    return std::nullopt;
  }
  if (v.is_number_integer()) {
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return fmt::format("{}: value out of range", path);
    }
    out = v.get<int64_t>();
    return std::nullopt;
  }
  // JSON numbers written as 1.0 decode into Go integers; fractions do not.
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d == static_cast<double>(static_cast<int64_t>(d))) {
      out = static_cast<int64_t>(d);
      return std::nullopt;
    }
  }
  return fmt::format("{}: expected an integer", path);
}

std::optional<std::string> ReadString(const nlohmann::json& v, std::string_view path, std::string& out) {
  if (v.is_null()) {
    out.clear();
    return std::nullopt;
  }
  if (!v.is_string()) return fmt::format("{}: expected a string", path);
  out = v.get<std::string>();
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ReadResourceSpecs(const nlohmann::json& value, std::string_view path,
                                             std::vector<ResourceSpec>& out) {
  out.clear();
  if (value.is_null()) return std::nullopt;
  if (!value.is_array()) return fmt::format("{}: expected a list", path);
  for (size_t i = 0; i < value.size(); ++i) {
    std::string p = fmt::format("{}[{}]", path, i);
    const auto& item = value[i];
    if (!item.is_object()) return p + ": expected an object";
    ResourceSpec spec;
    for (const auto& [key, v] : item.items()) {
      std::optional<std::string> err;
      if (key == "name") {
        err = ReadString(v, p + ".name", spec.name);
      } else if (key == "weight") {
        err = ReadInt(v, p + ".weight", spec.weight);
      } else {
        return fmt::format("unknown field {}", helper::GoQuote(p + "." + key));
      }
      if (err) return err;
    }
    out.push_back(std::move(spec));
  }
  return std::nullopt;
}

}  // namespace args_util

namespace {

using helper::GoQuote;
using Json = nlohmann::json;

std::optional<std::string> ReadStringList(const Json& v, std::string_view path, std::vector<std::string>& out) {
  out.clear();
  if (v.is_null()) return std::nullopt;
  if (!v.is_array()) return fmt::format("{}: expected a list of strings", path);
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) return fmt::format("{}[{}]: expected a string", path, i);
    out.push_back(v[i].get<std::string>());
  }
  return std::nullopt;
}

std::optional<std::string> ReadShape(const Json& v, std::string_view path, std::vector<UtilizationShapePoint>& out) {
  out.clear();
  if (v.is_null()) return std::nullopt;
  if (!v.is_array()) return fmt::format("{}: expected a list", path);
  for (size_t i = 0; i < v.size(); ++i) {
    std::string p = fmt::format("{}[{}]", path, i);
    if (!v[i].is_object()) return p + ": expected an object";
    UtilizationShapePoint point;
    for (const auto& [key, value] : v[i].items()) {
      int64_t* target = nullptr;
      if (key == "utilization") {
        target = &point.utilization;
      } else if (key == "score") {
        target = &point.score;
      } else {
        return fmt::format("unknown field {}", GoQuote(p + "." + key));
      }
      if (value.is_null()) continue;
      // Both are int32 upstream.
      if (!value.is_number_integer() || value.get<int64_t>() < INT32_MIN || value.get<int64_t>() > INT32_MAX) {
        return fmt::format("{}.{}: expected a 32-bit integer", p, key);
      }
      *target = value.get<int64_t>();
    }
    out.push_back(point);
  }
  return std::nullopt;
}

std::optional<std::string> ReadScoringStrategy(const Json& v, ScoringStrategy& out) {
  if (!v.is_object()) return std::string("scoringStrategy: expected an object");
  // An explicit scoringStrategy gets no default type (upstream only defaults the whole struct).
  out.type.clear();
  for (const auto& [key, value] : v.items()) {
    if (key == "type") {
      if (value.is_null()) continue;
      if (!value.is_string()) return std::string("scoringStrategy.type: expected a string");
      out.type = value.get<std::string>();
    } else if (key == "resources") {
      if (auto err = args_util::ReadResourceSpecs(value, "scoringStrategy.resources", out.resources)) return err;
    } else if (key == "requestedToCapacityRatio") {
      if (value.is_null()) continue;
      if (!value.is_object()) return std::string("scoringStrategy.requestedToCapacityRatio: expected an object");
      std::vector<UtilizationShapePoint> shape;
      for (const auto& [k, sv] : value.items()) {
        if (k != "shape") {
          return fmt::format("unknown field {}", GoQuote("scoringStrategy.requestedToCapacityRatio." + k));
        }
        if (auto err = ReadShape(sv, "scoringStrategy.requestedToCapacityRatio.shape", shape)) return err;
      }
      out.shape = std::move(shape);
    } else {
      return fmt::format("unknown field {}", GoQuote("scoringStrategy." + key));
    }
  }
  return std::nullopt;
}

// validateFunctionShape. Upstream reports the points under "scoringStrategy.shape" (not
// ".requestedToCapacityRatio.shape"); kept for identical messages.
void ValidateShape(const std::vector<UtilizationShapePoint>& shape, std::vector<std::string>& errs) {
  constexpr std::string_view kPath = "scoringStrategy.shape";
  if (shape.empty()) {
    errs.push_back(helper::FieldRequired(kPath, "at least one point must be specified"));
    return;
  }
  for (size_t i = 1; i < shape.size(); ++i) {
    if (shape[i - 1].utilization >= shape[i].utilization) {
      errs.push_back(helper::FieldInvalid(fmt::format("{}[{}].utilization", kPath, i),
                                          std::to_string(shape[i].utilization),
                                          "values must be sorted in increasing order"));
      break;
    }
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].utilization < 0 || shape[i].utilization > 100) {
      errs.push_back(helper::FieldInvalid(fmt::format("{}[{}].utilization", kPath, i),
                                          std::to_string(shape[i].utilization), "not in valid range [0, 100]"));
    }
    if (shape[i].score < 0 || shape[i].score > kMaxCustomPriorityScore) {
      errs.push_back(helper::FieldInvalid(fmt::format("{}[{}].score", kPath, i), std::to_string(shape[i].score),
                                          fmt::format("not in valid range [0, {}]", kMaxCustomPriorityScore)));
    }
  }
}

// ValidateNodeResourcesFitArgs, in upstream's order and wording.
std::vector<std::string> Validate(const NodeResourcesFitArgs& args) {
  std::vector<std::string> errs;
  for (size_t i = 0; i < args.ignored_resources.size(); ++i) {
    const std::string& res = args.ignored_resources[i];
    for (const auto& e : helper::IsQualifiedName(res)) {
      errs.push_back(helper::FieldInvalid(fmt::format("ignoredResources[{}]", i), GoQuote(res), e));
    }
  }
  for (size_t i = 0; i < args.ignored_resource_groups.size(); ++i) {
    const std::string& group = args.ignored_resource_groups[i];
    std::string p = fmt::format("ignoredResourceGroups[{}]", i);
    if (group.find('/') != std::string::npos) {
      errs.push_back(helper::FieldInvalid(p, GoQuote(group), "resource group name can't contain '/'"));
    }
    for (const auto& e : helper::IsQualifiedName(group)) errs.push_back(helper::FieldInvalid(p, GoQuote(group), e));
  }
  const ScoringStrategy& s = args.scoring_strategy;
  if (s.type != kLeastAllocated && s.type != kMostAllocated && s.type != kRequestedToCapacityRatio) {
    errs.push_back(helper::FieldNotSupported("scoringStrategy.type", s.type,
                                             {kLeastAllocated, kMostAllocated, kRequestedToCapacityRatio}));
  }
  for (size_t i = 0; i < s.resources.size(); ++i) {
    const ResourceSpec& r = s.resources[i];
    if (r.weight <= 0 || r.weight > 100) {
      errs.push_back(helper::FieldInvalid(fmt::format("scoringStrategy.resources[{}].weight", i),
                                          std::to_string(r.weight),
                                          fmt::format("resource weight of {} not in valid range (0, 100]", r.name)));
    }
  }
  if (s.shape) {
    ValidateShape(*s.shape, errs);
  } else if (s.type == kRequestedToCapacityRatio) {
    // Upstream dereferences the missing requestedToCapacityRatio and panics; report it instead.
    errs.push_back(helper::FieldRequired("scoringStrategy.shape", "at least one point must be specified"));
  }
  return errs;
}

}  // namespace

std::vector<ResourceSpec> DefaultResources() { return {{"cpu", 1}, {"memory", 1}}; }

std::expected<NodeResourcesFitArgs, std::string> ParseNodeResourcesFitArgs(const nlohmann::json& json) {
  NodeResourcesFitArgs args;
  bool has_strategy = false;
  if (!json.is_null()) {
    if (!json.is_object()) return std::unexpected("expected an object");
    for (const auto& [key, value] : json.items()) {
      std::optional<std::string> err;
      if (key == "ignoredResources") {
        err = ReadStringList(value, "ignoredResources", args.ignored_resources);
      } else if (key == "ignoredResourceGroups") {
        err = ReadStringList(value, "ignoredResourceGroups", args.ignored_resource_groups);
      } else if (key == "scoringStrategy") {
        if (value.is_null()) continue;
        has_strategy = true;
        err = ReadScoringStrategy(value, args.scoring_strategy);
      } else if (key == "apiVersion" || key == "kind") {
        // Tolerated: args may be written as a typed object.
      } else {
        err = fmt::format("unknown field {}", GoQuote(key));
      }
      if (err) return std::unexpected(*err);
    }
  }
  // v1 defaulting (SetDefaults_NodeResourcesFitArgs).
  if (!has_strategy) args.scoring_strategy.type = std::string(kLeastAllocated);
  if (args.scoring_strategy.resources.empty()) args.scoring_strategy.resources = DefaultResources();
  for (auto& r : args.scoring_strategy.resources) {
    if (r.weight == 0) r.weight = 1;
  }
  if (auto errs = Validate(args); !errs.empty()) return std::unexpected(helper::AggregateErrors(errs));
  return args;
}

}  // namespace kubesched::plugins::node_resources_fit
