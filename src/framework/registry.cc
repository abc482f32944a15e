#include "framework/registry.h"

namespace kubesched::framework {

std::expected<void, std::string> Registry::Register(std::string name, PluginFactory factory,
                                                    std::optional<ArgsType> args_type) {
  if (entries_.contains(name)) return std::unexpected("a plugin named " + name + " already exists");
  entries_.emplace(std::move(name), Entry{std::move(factory), std::move(args_type)});
  return {};
}

const PluginFactory* Registry::Find(std::string_view name) const {
  auto it = entries_.find(name);
  return it != entries_.end() ? &it->second.factory : nullptr;
}

const ArgsType* Registry::FindArgsType(std::string_view name) const {
  auto it = entries_.find(name);
  return it != entries_.end() && it->second.args_type ? &*it->second.args_type : nullptr;
}

std::vector<std::string> Registry::Names() const {
  std::vector<std::string> names;
  for (const auto& [n, e] : entries_) names.push_back(n);
  return names;
}

std::expected<void, std::string> Registry::Absorb(Registry other) {
  for (const auto& [name, entry] : other.entries_) {
    if (entries_.contains(name)) return std::unexpected("a plugin named " + name + " already exists");
  }
  entries_.merge(other.entries_);
  return {};
}

}  // namespace kubesched::framework
