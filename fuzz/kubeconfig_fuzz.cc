// Fuzz target for the kubeconfig loader (client/kubeconfig.h), which `run`, `--authentication-
// kubeconfig` and `--authorization-kubeconfig` read: the input is written as a kubeconfig file and
// loaded for its current context and for a context named "x". Never crash, hang, throw or leak;
// a failure is an error naming the file. (Files the input names, such as a certificate-authority,
// are read as they would be; nothing is executed: exec users are refused.)

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "client/kubeconfig.h"

namespace {

namespace fs = std::filesystem;

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fs::path path = [] {
    fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    return base / ("kubesched-kubeconfig-fuzz-" + std::to_string(::getpid()));
  }();
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      << std::string_view(reinterpret_cast<const char*>(data), size);
  for (const char* context : {"", "x"}) {
    auto loaded = kubesched::client::LoadKubeconfig(path.string(), context);
    if (!loaded) {
      Check(loaded.error().find(path.string()) != std::string::npos);
    } else {
      Check(!loaded->server.empty());
    }
  }
  return 0;
}
