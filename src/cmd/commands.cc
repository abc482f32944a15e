#include "cmd/commands.h"

#include <iostream>
#include <string>
#include <vector>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "api/manifest.h"
#include "cmd/bench.h"
#include "cmd/output.h"
#include "config/load.h"
#include "framework/registry.h"
#include "plugins/registry.h"
#include "scheduler/simulation.h"

namespace kubesched::cmd {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;
constexpr const char* kVersion = "0.1.0";

void SetVerbosity(int v) {
  auto logger = spdlog::stderr_color_mt("kubesched");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%^%L%$ %H:%M:%S.%f %v");
  // Upstream's klog levels: 0 warnings and errors, 2 useful steady-state info, 4 debug, 5+ trace.
  if (v <= 0)
    spdlog::set_level(spdlog::level::warn);
  else if (v <= 3)
    spdlog::set_level(spdlog::level::info);
  else if (v <= 4)
    spdlog::set_level(spdlog::level::debug);
  else
    spdlog::set_level(spdlog::level::trace);
}

struct SimulateArgs {
  std::vector<std::string> files;
  std::string config;
  uint64_t seed = 1;
  std::string output = "table";
  std::string explain;
  std::string creation_order = "controllers";
  bool recursive = false;
  std::string validate = "strict";
};

int RunSimulate(const SimulateArgs& args) {
  auto format = ParseOutputFormat(args.output);
  if (!format) {
    std::cerr << "error: -o/--output: unsupported value \"" << args.output << "\" (expected table, wide or json)\n";
    return kExitBadInput;
  }
  framework::Registry registry;
  plugins::RegisterInTreePlugins(registry);

  config::Configuration cfg;
  if (!args.config.empty()) {
    auto loaded = config::LoadConfigFile(args.config, registry);
    if (!loaded) {
      std::cerr << "error: " << loaded.error() << "\n";
      return kExitBadInput;
    }
    cfg = std::move(*loaded);
  } else {
    cfg = config::DefaultConfiguration(registry);
  }

  api::LoadOptions load_options;
  load_options.seed = args.seed;
  load_options.recursive = args.recursive;
  // kubectl's --validate: true and false are the older spellings of strict and ignore.
  if (args.validate == "warn") load_options.field_validation = api::FieldValidation::kWarn;
  if (args.validate == "ignore" || args.validate == "false") {
    load_options.field_validation = api::FieldValidation::kIgnore;
  }
  auto objects = api::LoadManifests(args.files, load_options);
  if (!objects) {
    std::cerr << "error: " << objects.error().ToString() << "\n";
    return kExitBadInput;
  }
  if (objects->object_count == 0) {
    std::cerr << "error: no objects passed to simulate\n";
    return kExitBadInput;
  }
  for (const std::string& warning : objects->warnings) std::cerr << "warning: " << warning << "\n";

  scheduler::SimulationOptions sim;
  sim.scheduler.config = std::move(cfg);
  sim.scheduler.seed = args.seed;
  sim.creation_order =
      args.creation_order == "manifest" ? cluster::CreationOrder::kManifest : cluster::CreationOrder::kControllers;
  if (!args.explain.empty()) {
    sim.scheduler.explain_pod = args.explain.find('/') == std::string::npos ? "default/" + args.explain : args.explain;
  }
  auto result = scheduler::RunSimulation(std::move(*objects), sim, registry);
  if (!result) {
    std::cerr << "error: " << result.error() << "\n";
    return kExitBadInput;
  }
  PrintSimulation(*result, *format, std::cout);
  if (!args.explain.empty()) {
    std::cout << "\n";
    if (result->explanation) {
      PrintExplanation(*result->explanation, std::cout);
    } else {
      std::cout << "No scheduling attempt was made for " << sim.scheduler.explain_pod
                << " (no such pending pod, or it is bound already or handled by another scheduler).\n";
    }
  }
  return kExitOk;
}

}  // namespace

int Main(int argc, char** argv) {
  CLI::App app{"kubesched: a Kubernetes scheduler (Scheduling Framework, upstream plugins and configuration)"};
  app.require_subcommand(1);
  int verbosity = 0;
  app.add_option("-v,--v", verbosity, "log verbosity (0-10, as kube-scheduler's --v)");

  SimulateArgs sim;
  CLI::App* simulate = app.add_subcommand(
      "simulate", "schedule the pending pods of Kubernetes manifests on a simulated cluster and show the placement");
  simulate
      ->add_option("-f,--filename", sim.files,
                   "manifests: files (YAML or JSON, multi-document, kind: List), directories (their *.yaml, *.yml "
                   "and *.json files) or - for standard input")
      ->required();
  simulate->add_flag("-R,--recursive", sim.recursive, "also read the subdirectories of directories given to -f");
  simulate
      ->add_option("--validate", sim.validate,
                   "unknown and duplicate fields: strict (an error), warn (a warning each) or ignore; true means "
                   "strict and false ignore, as kubectl")
      ->expected(0, 1)
      ->check(CLI::IsMember({"strict", "warn", "ignore", "true", "false"}))
      ->capture_default_str();
  simulate->add_option("--config", sim.config, "KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1)")
      ->check(CLI::ExistingFile);
  simulate->add_option("--seed", sim.seed, "seed for generated pod names and tie-breaking")->capture_default_str();
  simulate->add_option("-o,--output", sim.output, "output format: table, wide or json")->capture_default_str();
  simulate
      ->add_option("--creation-order", sim.creation_order,
                   "order in which pending pods are created: controllers (pods listed directly in manifest "
                   "order, then the workloads' slow-start batches interleaved as concurrent controllers do, "
                   "drawn from --seed) or manifest (each workload's pods at its position)")
      ->check(CLI::IsMember({"controllers", "manifest"}))
      ->capture_default_str();
  simulate->add_option("--explain", sim.explain,
                       "show each node's Filter verdicts and Score results for this pod's last attempt "
                       "(namespace/name, or name in default)");

  BenchArgs bench_args;
  CLI::App* bench = AddBenchSubcommand(app, bench_args);

  app.add_subcommand("version", "print the version")->callback([] { std::cout << "kubesched " << kVersion << "\n"; });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  SetVerbosity(verbosity);
  if (simulate->parsed()) {
    try {
      return RunSimulate(sim);
    } catch (const std::exception& e) {
      std::cerr << "error: " << e.what() << "\n";
      return kExitFailure;
    }
  }
  if (bench->parsed()) return RunBench(bench_args);
  return kExitOk;
}

}  // namespace kubesched::cmd
