// The library's entry point: registers RequiredLabel, with its typed args, under its name.
#include <memory>
#include <stdexcept>

#include "required_label.h"

KUBESCHED_PLUGIN_LIBRARY(registry) {
  using example::RequiredLabel;
  using example::RequiredLabelArgs;
  auto registered = kubesched::sdk::RegisterPlugin<RequiredLabelArgs>(
      registry, std::string(RequiredLabel::kName), example::DecodeArgs, example::EncodeArgs,
      [](const RequiredLabelArgs& args, kubesched::framework::Handle& /*handle*/) {
        return std::make_unique<RequiredLabel>(args);
      });
  if (!registered) throw std::runtime_error(registered.error());
}
