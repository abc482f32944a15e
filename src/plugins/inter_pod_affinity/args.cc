#include "plugins/inter_pod_affinity/args.h"

#include <fmt/format.h>

#include "config/strict_decoder.h"
#include "config/validation.h"
#include "framework/args_writer.h"

namespace kubesched::plugins::inter_pod_affinity {

std::expected<InterPodAffinityArgs, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& args,
                                                                      const std::string& path) {
  InterPodAffinityArgs out;
  std::vector<std::string> errors;
  config::StrictDecoder d(errors);
  if (d.Object(args, path, {"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods", "apiVersion", "kind"})) {
    // An explicit null keeps the default, as a nil pointer does.
    const std::string weight_path = api::field_path::Child(path, "hardPodAffinityWeight");
    if (auto w = d.Int32(args.Find("hardPodAffinityWeight"), weight_path)) out.hard_pod_affinity_weight = *w;
    if (auto b = d.Bool(args.Find("ignorePreferredTermsOfExistingPods"),
                        api::field_path::Child(path, "ignorePreferredTermsOfExistingPods"))) {
      out.ignore_preferred_terms_of_existing_pods = *b;
    }
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{true, std::move(errors)});

  // ValidateInterPodAffinityArgs.
  const int32_t w = out.hard_pod_affinity_weight;
  if (w < kMinHardPodAffinityWeight || w > kMaxHardPodAffinityWeight) {
    errors.push_back(config::FieldInvalid(
        api::field_path::Child(path, "hardPodAffinityWeight"), std::to_string(w),
        fmt::format("not in valid range [{}, {}]", kMinHardPodAffinityWeight, kMaxHardPodAffinityWeight)));
  }
  if (!errors.empty()) return std::unexpected(framework::ArgsErrors{false, std::move(errors)});
  return out;
}

std::expected<InterPodAffinityArgs, std::string> ParseArgs(const framework::ArgsView& args) {
  auto decoded = DecodeArgs(args, "");
  if (!decoded) return std::unexpected(config::AggregateErrors(decoded.error().errors));
  return *decoded;
}

std::string EncodeArgs(const InterPodAffinityArgs& args) {
  framework::ArgsWriter w;
  w.StartObject();
  w.Key("hardPodAffinityWeight").Int64(args.hard_pod_affinity_weight);
  w.Key("ignorePreferredTermsOfExistingPods").Bool(args.ignore_preferred_terms_of_existing_pods);
  w.EndObject();
  return std::move(w).Take();
}

}  // namespace kubesched::plugins::inter_pod_affinity
