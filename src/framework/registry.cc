#include "framework/registry.h"

namespace kubesched::framework {

std::expected<void, std::string> Registry::Register(std::string name, PluginFactory factory) {
  if (factories_.contains(name)) return std::unexpected("a plugin named " + name + " already exists");
  factories_.emplace(std::move(name), std::move(factory));
  return {};
}

const PluginFactory* Registry::Find(std::string_view name) const {
  auto it = factories_.find(name);
  return it != factories_.end() ? &it->second : nullptr;
}

std::vector<std::string> Registry::Names() const {
  std::vector<std::string> names;
  for (const auto& [n, f] : factories_) names.push_back(n);
  return names;
}

}  // namespace kubesched::framework
