// Edge coverage for AFL++ from GCC's own instrumentation (KUBESCHED_FUZZ_ENGINE=afl).
//
// The build compiles every object with -fsanitize-coverage=trace-pc, so GCC calls
// __sanitizer_cov_trace_pc() at the start of each basic block. This hook turns the sequence of
// blocks into AFL's edge coverage: it hashes the block's address into the shared-memory bitmap
// that AFL++'s runtime (afl-compiler-rt.o) maps, the same (prev >> 1) ^ cur scheme as AFL's own
// instrumentation. Addresses are taken relative to the executable's start so a block hashes the
// same in every run of the binary (it is position-independent). AFL++'s GCC plugin would do this
// inline and faster, but Debian's afl++ 4.04c plugin refuses the current GCC 12 build ("GCC and
// plugin have incompatible versions"); GCC's hook works with any GCC. See fuzz/README.md.
//
// Without afl-fuzz, __afl_area_ptr points at the runtime's private dummy map: a harmless no-op.

#include <cstddef>
#include <cstdint>

extern "C" {
extern std::uint8_t* __afl_area_ptr;   // afl-compiler-rt.o
extern const char __executable_start;  // the linker's: the first byte of the executable

namespace {
constexpr std::uintptr_t kMapMask = (1u << 16) - 1;  // AFL's default MAP_SIZE (64 KiB)
thread_local std::uintptr_t previous_block = 0;
}  // namespace

__attribute__((no_sanitize_coverage, no_sanitize("address", "undefined"))) void __sanitizer_cov_trace_pc() {
  const std::uintptr_t pc = reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)) -
                            reinterpret_cast<std::uintptr_t>(&__executable_start);
  // Multiplicative hash: block starts are a few bytes apart, their low bits alone would collide.
  const std::uintptr_t block = ((pc * 0x9E3779B97F4A7C15ull) >> 40) & kMapMask;
  std::uint8_t& counter = __afl_area_ptr[block ^ previous_block];
  counter = static_cast<std::uint8_t>(counter + 1 + (counter == 0xFF));  // never wraps to zero
  previous_block = block >> 1;
}
}
