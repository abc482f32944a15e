// A plugin library that says it was built against another SDK (its ABI fingerprint differs): kubesched
// must refuse it, naming both versions, without calling its registration.
#include <cstdio>
#include <cstdlib>

#include "sdk/library.h"

namespace {

void RegisterNothing(kubesched::framework::Registry&) {
  std::fputs("wrong_abi: registration must not run\n", stderr);
  std::abort();
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const kubesched_plugin_library* kubesched_plugin_library_v1() {
  static const kubesched_plugin_library library{kubesched::sdk::kPluginLibraryMagic, "0.0.1", "00000000deadbeef",
                                                &RegisterNothing};
  return &library;
}
