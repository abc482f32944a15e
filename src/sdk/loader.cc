#include "sdk/loader.h"

#include <dlfcn.h>

#include <exception>
#include <filesystem>
#include <map>
#include <system_error>

#include <fmt/format.h>

#include "sdk/library.h"

namespace kubesched::sdk {
namespace {

using Entry = const kubesched_plugin_library* (*)();

std::string Quoted(const std::string& path) { return fmt::format("\"{}\"", path); }

// Opens the library and reads its description, without calling into it beyond the entry point.
std::expected<const kubesched_plugin_library*, std::string> Open(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) return std::unexpected(fmt::format("plugin library {}: no such file", Quoted(path)));
  if (!fs::is_regular_file(st)) return std::unexpected(fmt::format("plugin library {}: not a file", Quoted(path)));
  // dlopen searches the library path for a name without a slash; a command-line path means
  // this file.
  const std::string file = fs::absolute(path, ec).string();
  // RTLD_LOCAL: two libraries may define classes of the same name without one binding to the
  // other's; the SDK's own symbols come from libkubesched.so, already loaded with the executable.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return std::unexpected(fmt::format("plugin library {}: cannot load it: {}", Quoted(path),
                                       why != nullptr ? why : "unknown dlopen error"));
  }
  dlerror();
  void* symbol = dlsym(handle, kPluginLibraryEntryPoint);
  if (symbol == nullptr) {
    return std::unexpected(fmt::format(
        "plugin library {}: exports no {}, so it is not a kubesched plugin library (define its entry point with "
        "KUBESCHED_PLUGIN_LIBRARY from <sdk/plugin.h>)",
        Quoted(path), kPluginLibraryEntryPoint));
  }
  const kubesched_plugin_library* library = reinterpret_cast<Entry>(symbol)();
  if (library == nullptr || library->magic != kPluginLibraryMagic) {
    return std::unexpected(fmt::format("plugin library {}: its {} does not describe a kubesched plugin library",
                                       Quoted(path), kPluginLibraryEntryPoint));
  }
  const std::string_view version = library->sdk_version != nullptr ? library->sdk_version : "?";
  const std::string_view abi = library->abi != nullptr ? library->abi : "?";
  if (abi != KUBESCHED_SDK_ABI || library->register_plugins == nullptr) {
    return std::unexpected(fmt::format(
        "plugin library {}: built against kubesched SDK {} (ABI {}), but this kubesched's SDK is {} (ABI {}): "
        "rebuild the plugin with this kubesched's SDK (find_package(kubesched) from its install prefix)",
        Quoted(path), version, abi, KUBESCHED_SDK_VERSION, KUBESCHED_SDK_ABI));
  }
  return library;
}

}  // namespace

std::expected<std::vector<LoadedLibrary>, std::string> LoadPluginLibraries(const std::vector<std::string>& paths,
                                                                           framework::Registry& registry) {
  std::vector<LoadedLibrary> loaded;
  std::vector<framework::Registry> registered;
  // Which library registered each name, to name both sides of a clash.
  std::map<std::string, std::string, std::less<>> owner;
  for (const std::string& path : paths) {
    auto library = Open(path);
    if (!library) return std::unexpected(library.error());
    framework::Registry own;
    try {
      (*library)->register_plugins(own);
    } catch (const std::exception& e) {
      return std::unexpected(
          fmt::format("plugin library {}: registering its plugins threw: {}", Quoted(path), e.what()));
    } catch (...) {
      return std::unexpected(
          fmt::format("plugin library {}: registering its plugins threw a non-standard exception", Quoted(path)));
    }
    LoadedLibrary info{path, (*library)->sdk_version, own.Names()};
    if (info.plugins.empty()) {
      return std::unexpected(fmt::format("plugin library {}: registers no plugin", Quoted(path)));
    }
    for (const std::string& name : info.plugins) {
      if (registry.Find(name) != nullptr) {
        return std::unexpected(fmt::format("plugin library {}: registers plugin {}, which is already an in-tree plugin",
                                           Quoted(path), name));
      }
      if (auto it = owner.find(name); it != owner.end()) {
        return std::unexpected(fmt::format("plugin library {}: registers plugin {}, which plugin library {} registers",
                                           Quoted(path), name, Quoted(it->second)));
      }
      owner.emplace(name, path);
    }
    loaded.push_back(std::move(info));
    registered.push_back(std::move(own));
  }
  // Every check passed: nothing below fails.
  for (framework::Registry& own : registered) {
    auto merged = registry.Absorb(std::move(own));
    if (!merged) return std::unexpected(merged.error());
  }
  return loaded;
}

}  // namespace kubesched::sdk
