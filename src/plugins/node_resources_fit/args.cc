#include "plugins/node_resources_fit/args.h"

#include <fmt/format.h>

#include "config/validation.h"
#include "framework/args_writer.h"

namespace kubesched::plugins::node_resources_fit {

using util::GoQuote;

namespace args_util {

std::vector<ResourceSpec> DecodeResourceSpecs(config::StrictDecoder& d, const framework::ArgsView& value,
                                              std::string_view path) {
  std::vector<ResourceSpec> out;
  if (!d.Array(value, path)) return out;
  for (size_t i = 0; i < value.Size(); ++i) {
    std::string p = api::field_path::Index(path, i);
    ResourceSpec spec;
    if (d.Object(value[i], p, {"name", "weight"})) {
      spec.name = d.String(value[i].Find("name"), api::field_path::Child(p, "name")).value_or("");
      spec.weight = d.Int64(value[i].Find("weight"), api::field_path::Child(p, "weight")).value_or(0);
    }
    out.push_back(std::move(spec));
  }
  return out;
}

void EncodeResourceSpecs(framework::ArgsWriter& w, const std::vector<ResourceSpec>& resources) {
  w.StartArray();
  for (const auto& r : resources) w.StartObject().Key("name").String(r.name).Key("weight").Int64(r.weight).EndObject();
  w.EndArray();
}

}  // namespace args_util

namespace {

std::vector<UtilizationShapePoint> DecodeShape(config::StrictDecoder& d, const framework::ArgsView& v,
                                               std::string_view path) {
  std::vector<UtilizationShapePoint> out;
  if (!d.Array(v, path)) return out;
  for (size_t i = 0; i < v.Size(); ++i) {
    std::string p = api::field_path::Index(path, i);
    UtilizationShapePoint point;
    if (d.Object(v[i], p, {"utilization", "score"})) {  // both int32 upstream
      point.utilization = d.Int32(v[i].Find("utilization"), api::field_path::Child(p, "utilization")).value_or(0);
      point.score = d.Int32(v[i].Find("score"), api::field_path::Child(p, "score")).value_or(0);
    }
    out.push_back(point);
  }
  return out;
}

void DecodeScoringStrategy(config::StrictDecoder& d, const framework::ArgsView& v, const std::string& path,
                           ScoringStrategy& out) {
  // An explicit scoringStrategy gets no default type (upstream only defaults the whole struct).
  out.type.clear();
  if (!d.Object(v, path, {"type", "resources", "requestedToCapacityRatio"})) return;
  out.type = d.String(v.Find("type"), api::field_path::Child(path, "type")).value_or("");
  out.resources = args_util::DecodeResourceSpecs(d, v.Find("resources"), api::field_path::Child(path, "resources"));
  const std::string ratio_path = api::field_path::Child(path, "requestedToCapacityRatio");
  const framework::ArgsView& ratio = v.Find("requestedToCapacityRatio");
  if (d.Object(ratio, ratio_path, {"shape"})) {
    out.shape = DecodeShape(d, ratio.Find("shape"), api::field_path::Child(ratio_path, "shape"));
  }
}

// validateFunctionShape. Upstream reports the points under "scoringStrategy.shape" (not
// ".requestedToCapacityRatio.shape"); kept for identical messages.
void ValidateShape(const std::vector<UtilizationShapePoint>& shape, const std::string& path,
                   std::vector<std::string>& errs) {
  if (shape.empty()) {
    errs.push_back(config::FieldRequired(path, "at least one point must be specified"));
    return;
  }
  for (size_t i = 1; i < shape.size(); ++i) {
    if (shape[i - 1].utilization >= shape[i].utilization) {
      errs.push_back(config::FieldInvalid(api::field_path::Child(api::field_path::Index(path, i), "utilization"),
                                          std::to_string(shape[i].utilization),
                                          "values must be sorted in increasing order"));
      break;
    }
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].utilization < 0 || shape[i].utilization > 100) {
      errs.push_back(config::FieldInvalid(api::field_path::Child(api::field_path::Index(path, i), "utilization"),
                                          std::to_string(shape[i].utilization), "not in valid range [0, 100]"));
    }
    if (shape[i].score < 0 || shape[i].score > kMaxCustomPriorityScore) {
      errs.push_back(config::FieldInvalid(api::field_path::Child(api::field_path::Index(path, i), "score"),
                                          std::to_string(shape[i].score),
                                          fmt::format("not in valid range [0, {}]", kMaxCustomPriorityScore)));
    }
  }
}

// ValidateNodeResourcesFitArgs, in upstream's order and wording.
std::vector<std::string> Validate(const NodeResourcesFitArgs& args, const std::string& path) {
  std::vector<std::string> errs;
  for (size_t i = 0; i < args.ignored_resources.size(); ++i) {
    const std::string& res = args.ignored_resources[i];
    for (const auto& e : api::IsQualifiedName(res)) {
      errs.push_back(config::FieldInvalid(api::field_path::Index(api::field_path::Child(path, "ignoredResources"), i),
                                          GoQuote(res), e));
    }
  }
  for (size_t i = 0; i < args.ignored_resource_groups.size(); ++i) {
    const std::string& group = args.ignored_resource_groups[i];
    std::string p = api::field_path::Index(api::field_path::Child(path, "ignoredResourceGroups"), i);
    if (group.find('/') != std::string::npos) {
      errs.push_back(config::FieldInvalid(p, GoQuote(group), "resource group name can't contain '/'"));
    }
    for (const auto& e : api::IsQualifiedName(group)) errs.push_back(config::FieldInvalid(p, GoQuote(group), e));
  }
  const ScoringStrategy& s = args.scoring_strategy;
  const std::string strategy_path = api::field_path::Child(path, "scoringStrategy");
  if (s.type != kLeastAllocated && s.type != kMostAllocated && s.type != kRequestedToCapacityRatio) {
    errs.push_back(config::FieldNotSupported(api::field_path::Child(strategy_path, "type"), s.type,
                                             {kLeastAllocated, kMostAllocated, kRequestedToCapacityRatio}));
  }
  for (size_t i = 0; i < s.resources.size(); ++i) {
    const ResourceSpec& r = s.resources[i];
    if (r.weight <= 0 || r.weight > 100) {
      errs.push_back(config::FieldInvalid(
          api::field_path::Child(api::field_path::Index(api::field_path::Child(strategy_path, "resources"), i),
                                 "weight"),
          std::to_string(r.weight), fmt::format("resource weight of {} not in valid range (0, 100]", r.name)));
    }
  }
  if (s.shape) {
    ValidateShape(*s.shape, api::field_path::Child(strategy_path, "shape"), errs);
  } else if (s.type == kRequestedToCapacityRatio) {
    // Upstream dereferences the missing requestedToCapacityRatio and panics; report it instead.
    errs.push_back(
        config::FieldRequired(api::field_path::Child(strategy_path, "shape"), "at least one point must be specified"));
  }
  return errs;
}

}  // namespace

std::vector<ResourceSpec> DefaultResources() { return {{"cpu", 1}, {"memory", 1}}; }

std::expected<NodeResourcesFitArgs, framework::ArgsErrors> DecodeNodeResourcesFitArgs(const framework::ArgsView& json,
                                                                                      const std::string& path) {
  NodeResourcesFitArgs args;
  std::vector<std::string> errors;
  config::StrictDecoder d(errors);
  bool has_strategy = false;
  if (d.Object(json, path, {"ignoredResources", "ignoredResourceGroups", "scoringStrategy", "apiVersion", "kind"})) {
    args.ignored_resources =
        d.StringList(json.Find("ignoredResources"), api::field_path::Child(path, "ignoredResources"));
    args.ignored_resource_groups =
        d.StringList(json.Find("ignoredResourceGroups"), api::field_path::Child(path, "ignoredResourceGroups"));
    if (const framework::ArgsView& strategy = json.Find("scoringStrategy"); !strategy.IsNull()) {
      has_strategy = true;
      DecodeScoringStrategy(d, strategy, api::field_path::Child(path, "scoringStrategy"), args.scoring_strategy);
    }
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errors)});

  // v1 defaulting (SetDefaults_NodeResourcesFitArgs).
  if (!has_strategy) args.scoring_strategy.type = std::string(kLeastAllocated);
  if (args.scoring_strategy.resources.empty()) args.scoring_strategy.resources = DefaultResources();
  for (auto& r : args.scoring_strategy.resources) {
    if (r.weight == 0) r.weight = 1;
  }
  if (auto errs = Validate(args, path); !errs.empty()) {
    return std::unexpected(framework::ArgsErrors{false, std::move(errs)});
  }
  return args;
}

std::expected<NodeResourcesFitArgs, std::string> ParseNodeResourcesFitArgs(const framework::ArgsView& json) {
  auto decoded = DecodeNodeResourcesFitArgs(json, "");
  if (!decoded) return std::unexpected(config::AggregateErrors(decoded.error().errors));
  return *decoded;
}

std::string EncodeNodeResourcesFitArgs(const NodeResourcesFitArgs& args) {
  framework::ArgsWriter w;
  w.StartObject();
  w.Key("ignoredResources").StringList(args.ignored_resources);
  w.Key("ignoredResourceGroups").StringList(args.ignored_resource_groups);
  w.Key("scoringStrategy").StartObject();
  w.Key("type").String(args.scoring_strategy.type);
  args_util::EncodeResourceSpecs(w.Key("resources"), args.scoring_strategy.resources);
  w.Key("requestedToCapacityRatio");
  if (args.scoring_strategy.shape) {
    w.StartObject().Key("shape").StartArray();
    for (const auto& p : *args.scoring_strategy.shape) {
      w.StartObject().Key("utilization").Int64(p.utilization).Key("score").Int64(p.score).EndObject();
    }
    w.EndArray().EndObject();
  } else {
    w.Null();
  }
  w.EndObject();  // scoringStrategy
  w.EndObject();
  return std::move(w).Take();
}

}  // namespace kubesched::plugins::node_resources_fit
