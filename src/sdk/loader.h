#pragma once
// Loads plugin libraries (`--plugin PATH`) into the process and adds their plugins to a registry,
// under the names they register, beside the in-tree ones. Libraries stay loaded for the life of
// the process: their plugins' code and the objects they made must outlive every profile.

#include <expected>
#include <string>
#include <vector>

#include "framework/registry.h"

namespace kubesched::sdk {

struct LoadedLibrary {
  std::string path;                  //!< as given on the command line
  std::string sdk_version;           //!< the SDK version it was built against
  std::vector<std::string> plugins;  //!< the names it registered, sorted
};

//! Loads each library in order, checks its entry point and ABI fingerprint, and has it register
//! its plugins; then adds them all to `registry`. All or nothing: on any error (a file that does
//! not exist or is not a shared library, no entry point, another SDK's ABI, a registration that
//! throws or registers nothing, a name already taken by an in-tree plugin or another library)
//! `registry` is unchanged and the error names the library and the reason.
std::expected<std::vector<LoadedLibrary>, std::string> LoadPluginLibraries(const std::vector<std::string>& paths,
                                                                           framework::Registry& registry);

}  // namespace kubesched::sdk
