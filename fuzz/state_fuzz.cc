// Fuzz target for `kubesched apiserver --state FILE` recovery (MemoryStore::OpenState): the input
// is a snapshot and a journal, split at the first line "--- journal". Both are written where the
// state lives, then opened as a restart after a crash opens them. Never crash, hang, throw or
// leak; a state that opens is also saved and opened again with the same objects and no lower
// resourceVersion (what recovery accepts, it must keep). The files go to /dev/shm when it exists,
// so the syncs cost nothing.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "store/resources.h"
#include "util/clock.h"

namespace {

namespace fs = std::filesystem;

void Check(bool ok) {
  if (!ok) std::abort();
}

const fs::path& Dir() {
  static const fs::path dir = [] {
    fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    fs::path d = base / ("kubesched-state-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

size_t ObjectCount(kubesched::store::Store& store) {
  size_t n = 0;
  for (const kubesched::store::ResourceType* type : kubesched::store::BuiltinResources()) {
    auto listed = store.List(*type, "", {});
    if (listed) n += listed->items.size();
  }
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kubesched;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kSplit = "\n--- journal\n";
  const size_t split = input.find(kSplit);
  const fs::path state = Dir() / "state.json";
  const fs::path journal = Dir() / "state.json.journal";
  fs::remove(state);
  fs::remove(journal);
  std::ofstream(state, std::ios::binary) << input.substr(0, split);
  if (split != std::string_view::npos) {
    std::ofstream(journal, std::ios::binary) << input.substr(split + kSplit.size());
  }

  util::VirtualClock clock(1'700'000'000'000'000'000);
  auto store = store::NewBuiltinStore(clock);
  auto opened = store->OpenState(state.string());
  if (!opened) {
    Check(!opened.error().message.empty());
    return 0;
  }
  const size_t objects = ObjectCount(*store);
  const uint64_t rv = store->ResourceVersion();
  Check(store->CloseState().has_value());

  auto again = store::NewBuiltinStore(clock);
  auto reopened = again->OpenState(state.string());
  Check(reopened.has_value());
  Check(ObjectCount(*again) == objects);
  Check(again->ResourceVersion() >= rv);
  Check(again->CloseState().has_value());
  return 0;
}
