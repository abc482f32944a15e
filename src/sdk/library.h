#pragma once
// What a plugin library exports: one entry point, kubesched_plugin_library_v1, returning a
// description that kubesched reads before it calls anything else in the library (sdk/loader.h).
// Plugin authors write it with KUBESCHED_PLUGIN_LIBRARY:
//
//   KUBESCHED_PLUGIN_LIBRARY(registry) {
//     kubesched::sdk::RegisterPlugin(registry, "NodeNumber", ...);
//   }
//
// The ABI check: C++ has no stable ABI, so a plugin must be built against the very headers of the
// kubesched that loads it. KUBESCHED_SDK_ABI (sdk/abi.h, generated at kubesched's build) is a
// fingerprint of every installed SDK header; a library whose fingerprint differs is refused with
// both versions named, before any of its code runs.

#include <cstdint>

#include "framework/registry.h"
#include "sdk/abi.h"

extern "C" {

//! The entry point's result. The first three fields keep their place and meaning in every SDK
//! version (the check must be readable whatever the library's version); what follows them may
//! change with the ABI fingerprint.
struct kubesched_plugin_library {
  uint32_t magic;           //!< kKubeschedPluginLibraryMagic
  const char* sdk_version;  //!< KUBESCHED_SDK_VERSION the library was built against
  const char* abi;          //!< KUBESCHED_SDK_ABI the library was built against
  //! Registers the library's plugins. Called once, after the ABI check. May throw (the library
  //! is then refused with the exception's message); must not register a name twice.
  void (*register_plugins)(kubesched::framework::Registry& registry);
};

}  // extern "C"

namespace kubesched::sdk {

//! "ksch" in the magic field: tells a kubesched plugin description from a symbol that merely
//! shares the entry point's name.
inline constexpr uint32_t kPluginLibraryMagic = 0x6b736368;
//! The symbol every plugin library exports.
inline constexpr const char* kPluginLibraryEntryPoint = "kubesched_plugin_library_v1";

}  // namespace kubesched::sdk

//! Defines the library's entry point; the block that follows is the body of its registration
//! function, with `registry_name` a kubesched::framework::Registry&. Use once per library.
#define KUBESCHED_PLUGIN_LIBRARY(registry_name)                                                                     \
  static void kubesched_register_plugins_(::kubesched::framework::Registry& registry_name);                         \
  extern "C" __attribute__((visibility("default"))) const kubesched_plugin_library* kubesched_plugin_library_v1() { \
    static const kubesched_plugin_library library{::kubesched::sdk::kPluginLibraryMagic, KUBESCHED_SDK_VERSION,     \
                                                  KUBESCHED_SDK_ABI, &kubesched_register_plugins_};                 \
    return &library;                                                                                                \
  }                                                                                                                 \
  static void kubesched_register_plugins_(::kubesched::framework::Registry& registry_name)
