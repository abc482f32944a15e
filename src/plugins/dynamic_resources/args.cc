#include "plugins/dynamic_resources/args.h"

#include "api/field_path.h"
#include "config/strict_decoder.h"
#include "config/validation.h"
#include "framework/args_writer.h"
#include "util/duration.h"

namespace kubesched::plugins::dynamic_resources {

std::expected<DynamicResourcesArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& json,
                                                                      const std::string& path) {
  DynamicResourcesArgs args;
  std::vector<std::string> errs;
  config::StrictDecoder d(errs);
  const std::string filter_path = api::field_path::Child(path, "filterTimeout");
  const std::string binding_path = api::field_path::Child(path, "bindingTimeout");
  auto duration = [&](std::string_view key, const std::string& field_path, int64_t& out) {
    if (auto text = d.String(json.Find(key), field_path)) {
      auto ns = util::ParseDuration(*text);
      if (!ns) {
        errs.push_back(field_path + ": " + ns.error());
      } else {
        out = *ns;
      }
    }
  };
  if (d.Object(json, path, {"filterTimeout", "bindingTimeout", "apiVersion", "kind"})) {
    duration("filterTimeout", filter_path, args.filter_timeout_ns);
    duration("bindingTimeout", binding_path, args.binding_timeout_ns);
  }
  if (!errs.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errs)});
  // ValidateDynamicResourcesArgs.
  if (args.filter_timeout_ns < 0) {
    errs.push_back(
        config::FieldInvalid(filter_path, util::FormatDuration(args.filter_timeout_ns), "must be zero or positive"));
  }
  if (args.binding_timeout_ns < kMinBindingTimeoutNs) {
    errs.push_back(
        config::FieldInvalid(binding_path, util::FormatDuration(args.binding_timeout_ns), "must be at least 1 second"));
  }
  if (!errs.empty()) return std::unexpected(framework::ArgsErrors{false, std::move(errs)});
  return args;
}

std::expected<DynamicResourcesArgs, std::string> ParseArgs(const framework::ArgsView& args) {
  auto decoded = DecodeArgs(args, "");
  if (!decoded) return std::unexpected(config::AggregateErrors(decoded.error().errors));
  return *decoded;
}

std::string EncodeArgs(const DynamicResourcesArgs& args) {
  framework::ArgsWriter w;
  w.StartObject();
  w.Key("filterTimeout").String(util::FormatDuration(args.filter_timeout_ns));
  w.Key("bindingTimeout").String(util::FormatDuration(args.binding_timeout_ns));
  w.EndObject();
  return std::move(w).Take();
}

}  // namespace kubesched::plugins::dynamic_resources
