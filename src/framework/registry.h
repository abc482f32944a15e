#pragma once
// The registry of named plugin factories. Each factory reads its typed args (JSON, null when the
// configuration gives none), applies upstream's defaults, validates, and builds the plugin.

#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "framework/handle.h"
#include "framework/interface.h"

namespace kubesched::framework {

//! Builds a plugin. On invalid args returns a message naming the field (relative to args,
//! e.g. "scoringStrategy.type: Unsupported value: \"Foo\"").
using PluginFactory =
    std::function<std::expected<std::unique_ptr<Plugin>, std::string>(const nlohmann::json& args, Handle& handle)>;

class Registry {
 public:
  //! Fails when the name is taken.
  std::expected<void, std::string> Register(std::string name, PluginFactory factory);
  const PluginFactory* Find(std::string_view name) const;
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, PluginFactory, std::less<>> factories_;
};

}  // namespace kubesched::framework
