#pragma once
// The registry of named plugin factories. Each factory reads its typed args (a JSON view, null when the
// configuration gives none), applies upstream's defaults, validates, and builds the plugin. A
// plugin with typed args also registers their ArgsType (framework/args.h).

#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/args.h"
#include "framework/args_view.h"
#include "framework/handle.h"
#include "framework/interface.h"

namespace kubesched::framework {

//! Builds a plugin. On invalid args returns a message naming the field (relative to args,
//! e.g. "scoringStrategy.type: Unsupported value: \"Foo\"").
using PluginFactory =
    std::function<std::expected<std::unique_ptr<Plugin>, std::string>(const ArgsView& args, Handle& handle)>;

class Registry {
 public:
  //! Fails when the name is taken. `args_type` is given for plugins with typed args.
  std::expected<void, std::string> Register(std::string name, PluginFactory factory,
                                            std::optional<ArgsType> args_type = std::nullopt);
  const PluginFactory* Find(std::string_view name) const;
  //! The plugin's args type, or nullptr when it has none (its args are passed on unchecked) or
  //! is not registered.
  const ArgsType* FindArgsType(std::string_view name) const;
  //! Registered names, sorted.
  std::vector<std::string> Names() const;
  //! Moves every entry of `other` here (plugin libraries register into a registry of their own
  //! first). All or nothing: fails, changing nothing, when a name is taken.
  std::expected<void, std::string> Absorb(Registry other);

 private:
  struct Entry {
    PluginFactory factory;
    std::optional<ArgsType> args_type;
  };
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace kubesched::framework
