// A stand-in for libFuzzer's main() so fuzz targets also build and run with GCC: it feeds every
// file of the given corpus directories (or files) to LLVMFuzzerTestOneInput, then a fixed number
// of pseudo-random mutations of each. Mutations come from a fixed seed, so a failure reproduces
// with the same command line; the input that crashed is written to ./crash-standalone first.
//
//   manifest_fuzz_standalone [--mutations=N] [--max-seconds=S] [--seed=N] [--max-len=B] PATH...

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

struct Options {
  uint64_t mutations = 1000;
  double max_seconds = 10;
  uint64_t seed = 1;
  size_t max_len = 16 * 1024;
  std::vector<std::string> paths;
};

// SplitMix64: tiny, fast, and the same sequence everywhere.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }

 private:
  uint64_t state_;
};

// Tokens that matter to YAML, JSON and quantities: mutating with them reaches deeper than bytes.
constexpr std::string_view kTokens[] = {
    "\n",
    "\n- ",
    ": ",
    "---\n",
    "{",
    "}",
    "[",
    "]",
    ",",
    "\"",
    "'",
    "#",
    "&a ",
    "*a",
    "!!str ",
    "|\n  ",
    ">\n  ",
    "  ",
    "\t",
    "null",
    "true",
    "~",
    "-1",
    "0",
    "2147483648",
    "9223372036854775807",
    "1e309",
    "Ki",
    "Mi",
    "Gi",
    "Ei",
    "m",
    "n",
    "e-3",
    "E+18",
    ".",
    "-",
    "+",
    "kind: ",
    "apiVersion: v1\n",
    "metadata:\n  name: x\n",
    "spec:\n",
    "containers:\n- name: c\n",
    "replicas: ",
    "items:\n",
    "List",
    "Pod",
    "Node",
    "Deployment",
    "DaemonSet",
    "StatefulSet",
    "Job",
    "ReplicaSet",
    "PriorityClass",
    "operator: ",
    "In",
    "Gt",
    "Exists",
    "values: [",
    "effect: ",
    "NoExecute",
    "priorityClassName: ",
    "hostNetwork: true\n",
    "\xEF\xBB\xBF",
    std::string_view("\0", 1),
};

std::string Mutate(std::string input, Random& rng, const std::vector<std::string>& corpus, size_t max_len) {
  const int steps = 1 + static_cast<int>(rng.Below(4));
  for (int s = 0; s < steps; ++s) {
    switch (rng.Below(8)) {
      case 0:  // flip a bit
        if (!input.empty()) input[rng.Below(input.size())] ^= static_cast<char>(1u << rng.Below(8));
        break;
      case 1:  // random byte
        input.insert(input.begin() + static_cast<std::ptrdiff_t>(rng.Below(input.size() + 1)),
                     static_cast<char>(rng.Below(256)));
        break;
      case 2:  // delete a range
        if (!input.empty()) {
          const size_t pos = rng.Below(input.size());
          input.erase(pos, 1 + rng.Below(std::min<size_t>(16, input.size() - pos)));
        }
        break;
      case 3:  // duplicate a range
        if (!input.empty()) {
          const size_t pos = rng.Below(input.size());
          const std::string piece = input.substr(pos, 1 + rng.Below(64));
          input.insert(rng.Below(input.size() + 1), piece);
        }
        break;
      case 4:
      case 5: {  // insert a token
        const std::string_view token = kTokens[rng.Below(std::size(kTokens))];
        input.insert(rng.Below(input.size() + 1), token);
        break;
      }
      case 6:  // overwrite with a token
        if (!input.empty()) {
          const std::string_view token = kTokens[rng.Below(std::size(kTokens))];
          const size_t pos = rng.Below(input.size());
          input.replace(pos, std::min(token.size(), input.size() - pos), token);
        }
        break;
      case 7:  // splice with another corpus entry
        if (!corpus.empty()) {
          const std::string& other = corpus[rng.Below(corpus.size())];
          const size_t cut = rng.Below(input.size() + 1);
          const size_t from = rng.Below(other.size() + 1);
          input = input.substr(0, cut) + other.substr(from);
        }
        break;
    }
  }
  if (input.size() > max_len) input.resize(max_len);
  return input;
}

std::string current_input;

// On a crash (a trap from a failed check, a sanitizer abort, a segfault) save the input first,
// then die with the same signal so the test still fails.
extern "C" void OnCrash(int sig) {
  const int fd = ::open("crash-standalone", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    [[maybe_unused]] auto n = ::write(fd, current_input.data(), current_input.size());
    ::close(fd);
  }
  static constexpr char kMessage[] = "standalone fuzz driver: crashed; input saved to ./crash-standalone\n";
  [[maybe_unused]] auto n = ::write(2, kMessage, sizeof kMessage - 1);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void Run(const std::string& input) {
  current_input = input;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

bool ParseOptions(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&](std::string_view name) -> const char* {
      return arg.starts_with(name) ? argv[i] + name.size() : nullptr;
    };
    if (const char* v = value("--mutations=")) {
      options.mutations = std::strtoull(v, nullptr, 10);
    } else if (const char* v = value("--max-seconds=")) {
      options.max_seconds = std::strtod(v, nullptr);
    } else if (const char* v = value("--seed=")) {
      options.seed = std::strtoull(v, nullptr, 10);
    } else if (const char* v = value("--max-len=")) {
      options.max_len = std::strtoull(v, nullptr, 10);
    } else if (arg.starts_with("-")) {
      std::cerr << "unknown option " << arg << "\n";
      return false;
    } else {
      options.paths.emplace_back(arg);
    }
  }
  return !options.paths.empty();
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, options)) {
    std::cerr << "usage: " << argv[0] << " [--mutations=N] [--max-seconds=S] [--seed=N] [--max-len=B] PATH...\n";
    return 2;
  }
  std::vector<std::string> files;
  for (const std::string& path : options.paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file()) files.push_back(entry.path().string());
      }
    } else {
      files.push_back(path);
    }
  }
  std::sort(files.begin(), files.end());  // directory order is not stable; runs must be
  std::vector<std::string> corpus;
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::cerr << "cannot read " << file << "\n";
      return 2;
    }
    corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (corpus.empty()) {
    std::cerr << "no corpus files found\n";
    return 2;
  }
  for (int sig : {SIGILL, SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGTRAP}) std::signal(sig, OnCrash);

  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  uint64_t runs = 0;
  for (const std::string& input : corpus) {
    Run(input);
    ++runs;
  }
  // Mutations go round the corpus so a time limit still covers every seed file.
  Random rng(options.seed);
  bool timed_out = false;
  for (uint64_t round = 0; round < options.mutations && !timed_out; ++round) {
    for (size_t i = 0; i < corpus.size(); ++i) {
      Run(Mutate(corpus[i], rng, corpus, options.max_len));
      ++runs;
      if (options.max_seconds > 0 && elapsed() > options.max_seconds) {
        timed_out = true;
        break;
      }
    }
  }
  std::printf("standalone fuzz driver: %llu inputs from %zu corpus files in %.1f s%s\n",
              static_cast<unsigned long long>(runs), corpus.size(), elapsed(),
              timed_out ? " (stopped at --max-seconds)" : "");
  return 0;
}
