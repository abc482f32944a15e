#include "plugins/volume_binding/args.h"

#include <fmt/format.h>

#include "api/field_path.h"
#include "config/strict_decoder.h"
#include "config/validation.h"
#include "framework/args_writer.h"

namespace kubesched::plugins::volume_binding {
namespace {

// Go's %#v of a []config.UtilizationShapePoint, as field.Invalid renders the rejected shape.
std::string GoShape(const std::vector<UtilizationShapePoint>& shape) {
  std::string out = "[]config.UtilizationShapePoint{";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out +=
        fmt::format("config.UtilizationShapePoint{{Utilization:{}, Score:{}}}", shape[i].utilization, shape[i].score);
  }
  return out + "}";
}

// validateFunctionShape, in upstream's order and wording.
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
    const std::string point = api::field_path::Index(path, i);
    if (shape[i].utilization < 0 || shape[i].utilization > 100) {
      errs.push_back(config::FieldInvalid(api::field_path::Child(point, "utilization"),
                                          std::to_string(shape[i].utilization), "not in valid range [0, 100]"));
    }
    if (shape[i].score < 0 || shape[i].score > kMaxCustomPriorityScore) {
      errs.push_back(config::FieldInvalid(api::field_path::Child(point, "score"), std::to_string(shape[i].score),
                                          fmt::format("not in valid range [0, {}]", kMaxCustomPriorityScore)));
    }
  }
}

}  // namespace

std::expected<VolumeBindingArgs, framework::ArgsErrors> DecodeArgsWithFeatures(const framework::ArgsView& json,
                                                                               const std::string& path,
                                                                               const Features& features) {
  VolumeBindingArgs args;
  std::vector<std::string> errs;
  config::StrictDecoder d(errs);
  const std::string timeout_path = api::field_path::Child(path, "bindTimeoutSeconds");
  const std::string shape_path = api::field_path::Child(path, "shape");
  if (d.Object(json, path, {"bindTimeoutSeconds", "shape", "apiVersion", "kind"})) {
    // SetDefaults_VolumeBindingArgs: an absent (nil) timeout is 600; an explicit 0 stays.
    if (auto v = d.Int64(json.Find("bindTimeoutSeconds"), timeout_path)) args.bind_timeout_seconds = *v;
    const framework::ArgsView& shape = json.Find("shape");
    if (d.Array(shape, shape_path)) {
      args.shape.emplace();
      for (size_t i = 0; i < shape.Size(); ++i) {
        const std::string p = api::field_path::Index(shape_path, i);
        UtilizationShapePoint point;
        if (d.Object(shape[i], p, {"utilization", "score"})) {
          point.utilization =
              d.Int32(shape[i].Find("utilization"), api::field_path::Child(p, "utilization")).value_or(0);
          point.score = d.Int32(shape[i].Find("score"), api::field_path::Child(p, "score")).value_or(0);
        }
        args.shape->push_back(point);
      }
    }
  }
  if (!errs.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errs)});

  // The default shape exists only with the feature: scores decrease with utilization, so the
  // nodes with the most free capacity are preferred.
  if (features.storage_capacity_scoring && (!args.shape || args.shape->empty())) {
    args.shape = std::vector<UtilizationShapePoint>{{0, static_cast<int32_t>(kMaxCustomPriorityScore)}, {100, 0}};
  }

  // ValidateVolumeBindingArgsWithOptions.
  if (args.bind_timeout_seconds < 0) {
    errs.push_back(config::FieldInvalid(timeout_path, std::to_string(args.bind_timeout_seconds),
                                        "invalid BindTimeoutSeconds, should not be a negative value"));
  }
  if (features.storage_capacity_scoring) {
    ValidateShape(*args.shape, shape_path, errs);
  } else if (args.shape) {
    // Rejected rather than ignored, so that it cannot take effect unnoticed once the gate is on.
    errs.push_back(
        config::FieldInvalid(shape_path, GoShape(*args.shape),
                             "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"));
  }
  if (!errs.empty()) return std::unexpected(framework::ArgsErrors{false, std::move(errs)});
  return args;
}

std::expected<VolumeBindingArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& args,
                                                                   const std::string& path) {
  return DecodeArgsWithFeatures(args, path, Features());
}

std::expected<VolumeBindingArgs, std::string> ParseArgs(const framework::ArgsView& args, const Features& features) {
  auto decoded = DecodeArgsWithFeatures(args, "", features);
  if (!decoded) return std::unexpected(config::AggregateErrors(decoded.error().errors));
  return *decoded;
}

std::string EncodeArgs(const VolumeBindingArgs& args) {
  framework::ArgsWriter w;
  w.StartObject();
  w.Key("bindTimeoutSeconds").Int64(args.bind_timeout_seconds);
  if (args.shape && !args.shape->empty()) {
    w.Key("shape").StartArray();
    for (const auto& p : *args.shape) {
      w.StartObject().Key("utilization").Int64(p.utilization).Key("score").Int64(p.score).EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  return std::move(w).Take();
}

}  // namespace kubesched::plugins::volume_binding
