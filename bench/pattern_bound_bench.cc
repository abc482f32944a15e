// The pattern-LP bound (optimizer::ComputePatternBound) on the openb production trace: 1,523
// nodes in 27 shapes, 8,152 pods in 151 shapes, four resources (cpu milli, memory MiB, GPU milli,
// pods), every pod worth 1. Three instances:
//   OpenB            the trace as it is; a GPU pod only on a node with GPUs (and, when the pod's
//                    gpu_spec names models, one of those models)
//   OpenBGpuSlots    the same plus a per-GPU limit: a pod's share of a GPU sits on one GPU, so a
//                    node of G GPUs holds at most G * floor(1000 / gpu_milli) / num_gpu of a shape
//                    (still a relaxation of the real per-GPU packing, tighter than summed milli)
//   ManyClasses/N    N distinct node capacities, 3 nodes each, as later batches see partly filled
//                    nodes: openb nodes with a random part of each resource taken
// Counters: bound, lp_value, trivial (every pod placed), iterations, columns, converged; the label
// says what stopped it. OpenB runs with the default time limit (1 s) and relative gaps of 1e-4
// (the default), 1e-3 and 1e-12 (to convergence), ManyClasses with 1 s and 30 s.
//   cmake --build build/release --target kubesched_pattern_bound_bench
//   build/release/bench/kubesched_pattern_bound_bench [--openb=DIR]
// DIR defaults to ../shared/data/openb beside the source tree; without the CSVs the benchmarks
// are skipped with a message.

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <benchmark/benchmark.h>

#include "optimizer/pattern_bound.h"

namespace kubesched {
namespace {

using optimizer::PatternBoundInput;

std::string g_openb_dir = KUBESCHED_OPENB_DIR;

struct Node {
  int64_t cpu = 0, memory = 0, gpus = 0;
  std::string model;
};
struct Pod {
  int64_t cpu = 0, memory = 0, num_gpu = 0, gpu_milli = 0;
  std::string gpu_spec;
};

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

// Each file's rows after the header, or nothing when it cannot be read.
std::optional<std::vector<std::vector<std::string>>> ReadCsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::vector<std::vector<std::string>> rows;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) rows.push_back(SplitCsv(line));
  }
  return rows;
}

struct Trace {
  std::vector<Node> nodes;
  std::vector<Pod> pods;
  std::string error;
};

const Trace& LoadTrace() {
  static const Trace trace = [] {
    Trace t;
    const auto nodes = ReadCsv(g_openb_dir + "/openb_node_list_all_node.csv");
    const auto pods = ReadCsv(g_openb_dir + "/openb_pod_list_default.csv");
    if (!nodes || !pods) {
      t.error = "the openb CSVs are not in " + g_openb_dir + " (--openb=DIR)";
      return t;
    }
    for (const auto& f : *nodes) {
      if (f.size() < 4) continue;
      t.nodes.push_back({std::stoll(f[1]), std::stoll(f[2]), std::stoll(f[3]), f.size() > 4 ? f[4] : ""});
    }
    for (const auto& f : *pods) {
      if (f.size() < 5) continue;
      t.pods.push_back(
          {std::stoll(f[1]), std::stoll(f[2]), std::stoll(f[3]), std::stoll(f[4]), f.size() > 5 ? f[5] : ""});
    }
    return t;
  }();
  return trace;
}

constexpr int64_t kPodsPerNode = 110;

// Whether a pod may go on a node at all: GPU pods need GPUs, of a model the pod names if it names
// any ('|'-separated, as the trace's generator writes them).
bool Allowed(const Pod& pod, const Node& node) {
  if (pod.num_gpu > 0 && node.gpus == 0) return false;
  if (pod.gpu_spec.empty()) return true;
  std::stringstream in(pod.gpu_spec);
  std::string model;
  while (std::getline(in, model, '|')) {
    if (model == node.model) return true;
  }
  return false;
}

// nodes become classes by (capacity, model), pods shapes by their requests.
PatternBoundInput MakeInput(const std::vector<std::pair<Node, int64_t>>& node_classes, const std::vector<Pod>& pods,
                            bool gpu_slots) {
  PatternBoundInput input;
  input.num_resources = 4;
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, std::string>, int64_t> shapes;
  for (const Pod& p : pods) ++shapes[{p.cpu, p.memory, p.num_gpu, p.gpu_milli, p.gpu_spec}];
  std::vector<Pod> shape_pods;
  for (const auto& [key, count] : shapes) {
    const auto& [cpu, memory, num_gpu, gpu_milli, spec] = key;
    input.shapes.push_back({.demand = {cpu, memory, num_gpu * gpu_milli, 1}, .count = count, .weight = 1});
    shape_pods.push_back({cpu, memory, num_gpu, gpu_milli, spec});
  }
  for (const auto& [node, count] : node_classes) {
    PatternBoundInput::NodeClass c{
        .capacity = {node.cpu, node.memory, node.gpus * 1000, kPodsPerNode}, .count = count, .max_per_node = {}};
    for (const Pod& pod : shape_pods) {
      int64_t most = Allowed(pod, node) ? INT32_MAX : 0;
      if (gpu_slots && most > 0 && pod.num_gpu > 0 && pod.gpu_milli > 0) {
        most = node.gpus * (1000 / pod.gpu_milli) / pod.num_gpu;
      }
      c.max_per_node.push_back(static_cast<int32_t>(most));
    }
    input.classes.push_back(std::move(c));
  }
  return input;
}

std::vector<std::pair<Node, int64_t>> OpenBClasses(const Trace& trace) {
  std::map<std::tuple<int64_t, int64_t, int64_t, std::string>, int64_t> classes;
  for (const Node& n : trace.nodes) ++classes[{n.cpu, n.memory, n.gpus, n.model}];
  std::vector<std::pair<Node, int64_t>> out;
  for (const auto& [key, count] : classes) {
    const auto& [cpu, memory, gpus, model] = key;
    out.push_back({Node{cpu, memory, gpus, model}, count});
  }
  return out;
}

// n distinct capacities: random openb nodes with a random part of each resource already taken
// (whole GPUs, whole cores, GiB of memory, some pods), 3 nodes of each.
std::vector<std::pair<Node, int64_t>> PartlyFilledClasses(const Trace& trace, int n) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> taken(0, 0.8);
  std::set<std::tuple<int64_t, int64_t, int64_t, std::string>> seen;
  std::vector<std::pair<Node, int64_t>> out;
  while (static_cast<int>(out.size()) < n) {
    Node node = trace.nodes[rng() % trace.nodes.size()];
    const double f = taken(rng);
    node.cpu -= static_cast<int64_t>(f * static_cast<double>(node.cpu) / 1000) * 1000;
    node.memory -= static_cast<int64_t>(taken(rng) * static_cast<double>(node.memory) / 1024) * 1024;
    node.gpus -= static_cast<int64_t>(f * static_cast<double>(node.gpus));
    if (seen.insert({node.cpu, node.memory, node.gpus, node.model}).second) out.push_back({node, 3});
  }
  return out;
}

void Run(benchmark::State& state, const PatternBoundInput& input, double time_limit_seconds,
         double relative_gap = optimizer::PatternBoundOptions{}.relative_gap) {
  optimizer::PatternBoundOptions options;
  options.time_limit_seconds = time_limit_seconds;
  options.relative_gap = relative_gap;
  optimizer::PatternBoundResult last;
  for (auto _ : state) {
    auto result = optimizer::ComputePatternBound(input, options);
    if (!result) {
      state.SkipWithError(result.error().c_str());
      return;
    }
    last = std::move(*result);
  }
  double trivial = 0;
  for (const auto& shape : input.shapes) trivial += shape.weight * static_cast<double>(shape.count);
  state.counters["bound"] = last.bound;
  state.counters["lp_value"] = last.lp_value;
  state.counters["trivial"] = trivial;
  state.counters["iterations"] = last.iterations;
  state.counters["columns"] = last.columns;
  state.counters["converged"] = last.converged ? 1 : 0;
  state.counters["classes"] = static_cast<double>(input.classes.size());
  state.counters["shapes"] = static_cast<double>(input.shapes.size());
  state.SetLabel(last.stopped_by);
}

void BM_OpenB(benchmark::State& state) {
  const Trace& trace = LoadTrace();
  if (!trace.error.empty()) {
    state.SkipWithError(trace.error.c_str());
    return;
  }
  Run(state, MakeInput(OpenBClasses(trace), trace.pods, false), 1,
      std::pow(10.0, -static_cast<double>(state.range(0))));
}
// The argument n: relative_gap 10^-n (4 is the default; 12 runs to convergence).
BENCHMARK(BM_OpenB)->Arg(4)->Arg(3)->Arg(12)->Unit(benchmark::kMillisecond);

void BM_OpenBGpuSlots(benchmark::State& state) {
  const Trace& trace = LoadTrace();
  if (!trace.error.empty()) {
    state.SkipWithError(trace.error.c_str());
    return;
  }
  Run(state, MakeInput(OpenBClasses(trace), trace.pods, true), 1);
}
BENCHMARK(BM_OpenBGpuSlots)->Unit(benchmark::kMillisecond);

void BM_ManyClasses(benchmark::State& state) {
  const Trace& trace = LoadTrace();
  if (!trace.error.empty()) {
    state.SkipWithError(trace.error.c_str());
    return;
  }
  Run(state, MakeInput(PartlyFilledClasses(trace, static_cast<int>(state.range(0))), trace.pods, false),
      static_cast<double>(state.range(1)) / 1000);
}
// Classes, then the time limit in ms: the default (1 s), and long enough to see where it ends.
BENCHMARK(BM_ManyClasses)->ArgsProduct({{100, 500}, {1000, 30'000}})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kubesched

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--openb=")) {
      kubesched::g_openb_dir = std::string(arg.substr(8));
    } else {
      rest.push_back(argv[i]);
    }
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
