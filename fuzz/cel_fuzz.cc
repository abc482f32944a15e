// Fuzz target for the CEL device selectors: the first line of the input is compiled as an
// expression and, when it compiles, evaluated against a fixed device. Never crashes, hangs or
// leaks; a result is either a match decision or an error with a message; the cost stays within
// the limit; compiling the same text twice gives the same outcome; evaluating twice too.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/quantity.h"
#include "api/resource_types.h"
#include "api/semver.h"
#include "cel/cel.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

struct Fixture {
  std::vector<kubesched::api::DeviceAttribute> attributes;
  std::vector<kubesched::api::DeviceCapacity> capacity;
  kubesched::cel::DeviceView view;

  Fixture() {
    using kubesched::api::DeviceAttribute;
    using kubesched::api::DeviceCapacity;
    using kubesched::api::Quantity;
    using kubesched::api::SemVer;
    // Sorted by (domain, id), as api::Device keeps them.
    attributes.push_back({{"dra.example.com", "count"}, int64_t{4}});
    attributes.push_back({{"dra.example.com", "healthy"}, true});
    attributes.push_back({{"dra.example.com", "model"}, std::string("a100")});
    attributes.push_back({{"dra.example.com", "version"}, *SemVer::Parse("1.2.3-rc.1+build")});
    attributes.push_back({{"other.example.com", "numa"}, int64_t{-1}});
    DeviceCapacity memory;
    memory.name = {"dra.example.com", "memory"};
    memory.value = *Quantity::Parse("40Gi");
    capacity.push_back(memory);
    DeviceCapacity cores;
    cores.name = {"dra.example.com", "cores"};
    cores.value = *Quantity::Parse("1500m");
    capacity.insert(capacity.begin(), cores);
    view = kubesched::cel::DeviceView{"dra.example.com", attributes, capacity, true};
  }
};

// A lower limit than the API's keeps each input fast; the limit logic is the same.
constexpr int64_t kCostLimit = 100000;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Fixture fixture;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  text = text.substr(0, text.find('\n'));

  const auto compiled = kubesched::cel::CompileDeviceSelector(text);
  Check(compiled.error.has_value() != (compiled.program != nullptr));
  if (compiled.error) {
    Check(!compiled.error->message.empty());
    Check(!compiled.error->text.empty());
    Check(compiled.error->offset <= text.size());
    const auto again = kubesched::cel::CompileDeviceSelector(text);
    Check(again.error && again.error->message == compiled.error->message &&
          again.error->offset == compiled.error->offset);
    return 0;
  }
  const auto first = kubesched::cel::Evaluate(*compiled.program, fixture.view, kCostLimit);
  Check(first.cost >= 0);
  if (first.error) {
    Check(!first.error->message.empty());
    Check(!first.matches);
  } else {
    Check(first.cost <= kCostLimit);
  }
  // Evaluation is a pure function of the program and the device.
  const auto second = kubesched::cel::Evaluate(*compiled.program, fixture.view, kCostLimit);
  Check(second.matches == first.matches && second.cost == first.cost &&
        second.error.has_value() == first.error.has_value());
  if (first.error) Check(second.error->message == first.error->message);
  return 0;
}
