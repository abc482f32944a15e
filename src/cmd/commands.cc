#include "cmd/commands.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "api/manifest.h"
#include "api/names.h"
#include "cmd/apiserver.h"
#include "cmd/bench.h"
#include "cmd/cli.h"
#include "cmd/extender.h"
#include "cmd/output.h"
#include "cmd/plugin_registry.h"
#include "cmd/plugins.h"
#include "cmd/run.h"
#include "cmd/version.h"
#include "config/load.h"
#include "framework/registry.h"
#include "plugins/registry.h"
#include "report/report.h"
#include "sim/simulation.h"
#include "util/atomic_file.h"
#include "util/duration.h"
#include "util/log.h"

namespace kubesched::cmd {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;

struct SimulateFlags {
  std::vector<std::string> files;
  std::string config;
  uint64_t seed = 1;
  std::string output = "table";
  std::string explain;
  std::string creation_order = "controllers";
  bool recursive = false;
  std::string namespace_;  // -n: for objects that name no namespace
  std::string validate = "strict";
  std::vector<std::string> compare;  // two configurations ("default" or a file)
  std::string report;                // --report: the HTML report's path, or empty
  std::vector<std::string> plugins;  // --plugin: plugin libraries to load
  std::string timeseries;            // --timeseries: where the run over time goes, or empty
  std::string timeseries_format;     // csv or jsonl; empty: from the file's extension
  std::string timeseries_interval;   // a Go duration, or empty (see SimulationOptions)
};

// The time series' format: as given, else JSON Lines for a .jsonl or .ndjson file, else CSV.
std::string TimeSeriesFormat(const SimulateFlags& args) {
  if (!args.timeseries_format.empty()) return args.timeseries_format;
  const std::string ext = std::filesystem::path(args.timeseries).extension().string();
  return ext == ".jsonl" || ext == ".ndjson" ? "jsonl" : "csv";
}

int WriteTimeSeries(const SimulateFlags& args, std::span<const sim::NamedTimeSeries> runs) {
  std::ostringstream out;
  if (TimeSeriesFormat(args) == "jsonl") {
    sim::WriteTimeSeriesJsonLines(runs, out);
  } else {
    sim::WriteTimeSeriesCsv(runs, out);
  }
  if (auto written = util::WriteFileAtomically(args.timeseries, out.str()); !written) {
    std::cerr << "error: --timeseries: cannot write the time series: " << written.error() << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

// "3d 04:05:06" (days only when there are some).
std::string VirtualTime(int64_t ns) {
  const int64_t s = ns / util::kNanosPerSecond;
  const int64_t days = s / 86400;
  const std::string clock = fmt::format("{:02}:{:02}:{:02}", s % 86400 / 3600, s % 3600 / 60, s % 60);
  return days > 0 ? fmt::format("{}d {}", days, clock) : clock;
}

// A progress line on standard error while a long run advances, when it is a terminal; the
// line is cleared when the run ends (Clear).
struct ProgressLine {
  bool tty = isatty(STDERR_FILENO) != 0;
  std::string run;  // the configuration, with --compare
  bool shown = false;
  void Show(int64_t elapsed_ns, int64_t timeline_ns, size_t attempts) {
    if (!tty) return;
    std::string line =
        fmt::format("simulating{}: virtual time {}", run.empty() ? "" : " " + run, VirtualTime(elapsed_ns));
    if (timeline_ns > 0) {
      line += fmt::format(
          " of {} ({:.0f}%)", VirtualTime(timeline_ns),
          100.0 * static_cast<double>(std::min(elapsed_ns, timeline_ns)) / static_cast<double>(timeline_ns));
    }
    line += fmt::format(", {} attempts", attempts);
    std::cerr << "\r\033[K" << line << std::flush;
    shown = true;
  }
  void Clear() {
    if (shown) std::cerr << "\r\033[K" << std::flush;
    shown = false;
  }
};

// Whether the report can be written where asked, checked before anything runs: the path must
// name a file (not a directory) in an existing directory we may write to. The write itself can
// still fail; WriteFileAtomically reports that.
std::optional<std::string> ReportPathProblem(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  if (path.empty() || !target.has_filename()) return "not a file name";
  std::error_code ec;
  if (fs::is_directory(target, ec)) return "is a directory";
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) return "no such directory " + dir.string();
  if (access(dir.c_str(), W_OK | X_OK) != 0) return "directory " + dir.string() + " is not writable";
  return std::nullopt;
}

int WriteReport(const SimulateFlags& args, std::span<const report::Run> runs) {
  report::ReportOptions options;
  options.inputs = args.files;
  options.seed = args.seed;
  const std::string html = report::RenderReport(runs, options);
  if (auto written = util::WriteFileAtomically(args.report, html); !written) {
    std::cerr << "error: --report: cannot write the report: " << written.error() << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

// The process ends right after the command: what it would only take apart (the simulated cluster
// and the scheduler) stays reachable from here until exit instead.
void KeepUntilExit(std::shared_ptr<void> state) {
  static auto* kept = new std::vector<std::shared_ptr<void>>();  // never freed, on purpose
  kept->push_back(std::move(state));
}

// The output files' paths and the sampling interval, checked before anything runs (an error
// printed, false, when one is wrong).
bool CheckOutputFlags(const SimulateFlags& args, std::optional<int64_t>& interval_ns) {
  if (!args.report.empty()) {
    if (auto problem = ReportPathProblem(args.report)) {
      std::cerr << "error: --report: cannot write \"" << args.report << "\": " << *problem << "\n";
      return false;
    }
  }
  if (!args.timeseries.empty()) {
    if (auto problem = ReportPathProblem(args.timeseries)) {
      std::cerr << "error: --timeseries: cannot write \"" << args.timeseries << "\": " << *problem << "\n";
      return false;
    }
  }
  if (!args.timeseries_interval.empty()) {
    auto parsed = util::ParseDuration(args.timeseries_interval);
    if (!parsed || *parsed < 0) {
      std::cerr << "error: --timeseries-interval: invalid duration \"" << args.timeseries_interval << "\""
                << (parsed ? ": negative" : ": " + parsed.error()) << "\n";
      return false;
    }
    interval_ns = *parsed;
  }
  return true;
}

// What the flags ask of one run under `cfg`.
sim::SimulationOptions SimulationOptionsOf(const SimulateFlags& args, config::Configuration cfg,
                                           std::optional<int64_t> interval_ns, ProgressLine& progress) {
  sim::SimulationOptions sim;
  sim.scheduler.config = std::move(cfg);
  sim.scheduler.seed = args.seed;
  sim.creation_order =
      args.creation_order == "manifest" ? cluster::CreationOrder::kManifest : cluster::CreationOrder::kControllers;
  sim.record_timeseries = !args.timeseries.empty() || !args.report.empty();
  sim.timeseries_interval_ns = interval_ns;
  sim.on_progress = [&progress](int64_t elapsed, int64_t timeline, size_t attempts) {
    progress.Show(elapsed, timeline, attempts);
  };
  return sim;
}

// The configurations to run: --compare's two, else --config's, else those the input holds (a
// scenario's: one, or two to compare), else upstream's defaults. Each is named as the output
// shows it; an error is printed and false returned when one cannot be loaded.
bool LoadConfigurations(const SimulateFlags& args, const std::vector<api::EmbeddedConfiguration>& embedded,
                        const framework::Registry& registry, std::vector<std::string>& names,
                        std::vector<config::Configuration>& configs) {
  if (args.compare.empty() && args.config.empty() && !embedded.empty()) {
    if (embedded.size() > 2) {
      std::cerr << "error: the input holds " << embedded.size()
                << " KubeSchedulerConfiguration documents; a scenario gives one, or two to compare\n";
      return false;
    }
    for (const api::EmbeddedConfiguration& e : embedded) {
      auto loaded = config::LoadConfigFromString(e.text, e.source, registry);
      if (!loaded) {
        std::cerr << "error: " << loaded.error() << "\n";
        return false;
      }
      names.push_back(e.source);
      configs.push_back(std::move(*loaded));
    }
    return true;
  }
  for (const api::EmbeddedConfiguration& e : embedded) {
    std::cerr << "warning: " << e.source
              << ": KubeSchedulerConfiguration not used: " << (args.compare.empty() ? "--config" : "--compare")
              << " given\n";
  }
  names = args.compare;
  if (names.empty()) names.push_back(args.config.empty() ? "default" : args.config);
  for (const std::string& name : names) {
    if (name == "default" && (!args.compare.empty() || args.config.empty())) {
      configs.push_back(config::DefaultConfiguration(registry));
      continue;
    }
    auto loaded = config::LoadConfigFile(name, registry);
    if (!loaded) {
      std::cerr << "error: " << loaded.error() << "\n";
      return false;
    }
    configs.push_back(std::move(*loaded));
  }
  return true;
}

int SimulateCommand(const SimulateFlags& args) {
  auto format = ParseOutputFormat(args.output);
  if (!format) {
    std::cerr << "error: -o/--output: unsupported value \"" << args.output << "\" (expected table, wide or json)\n";
    return kExitBadInput;
  }
  std::optional<int64_t> interval_ns;
  if (!CheckOutputFlags(args, interval_ns)) return kExitBadInput;
  ProgressLine progress;
  auto made = MakeRegistry(args.plugins);
  if (!made) {
    std::cerr << "error: --plugin: " << made.error() << "\n";
    return kExitBadInput;
  }
  const framework::Registry& registry = *made;

  api::LoadOptions load_options;
  load_options.seed = args.seed;
  load_options.recursive = args.recursive;
  load_options.namespace_ = args.namespace_;
  // kubectl's --validate: true and false are the older spellings of strict and ignore.
  if (args.validate == "warn") load_options.field_validation = api::FieldValidation::kWarn;
  if (args.validate == "ignore" || args.validate == "false") {
    load_options.field_validation = api::FieldValidation::kIgnore;
  }
  // Reads the manifests (each run afresh: the same seed gives the same objects and names).
  auto load = [&](bool warn) -> std::optional<api::ClusterObjects> {
    auto objects = api::LoadManifests(args.files, load_options);
    if (!objects) {
      std::cerr << "error: " << objects.error().ToString() << "\n";
      return std::nullopt;
    }
    if (objects->object_count == 0) {
      std::cerr << "error: no objects passed to simulate\n";
      return std::nullopt;
    }
    if (warn) {
      for (const std::string& warning : objects->warnings) std::cerr << "warning: " << warning << "\n";
    }
    return std::move(*objects);
  };
  auto first = load(/*warn=*/true);
  if (!first) return kExitBadInput;
  // Every configuration is loaded (and rejected) before anything runs.
  std::vector<std::string> names;
  std::vector<config::Configuration> configs;
  if (!LoadConfigurations(args, first->scheduler_configurations, registry, names, configs)) return kExitBadInput;
  auto options = [&](config::Configuration cfg) {
    return SimulationOptionsOf(args, std::move(cfg), interval_ns, progress);
  };

  if (configs.size() > 1) {
    std::vector<ComparedRun> runs;
    for (size_t i = 0; i < configs.size(); ++i) {
      auto objects = i == 0 ? std::move(first) : load(/*warn=*/false);
      if (!objects) return kExitBadInput;
      progress.run = names[i];
      auto result = sim::RunSimulation(std::move(*objects), options(std::move(configs[i])), registry);
      progress.Clear();
      if (!result) {
        std::cerr << "error: " << names[i] << ": " << result.error() << "\n";
        return kExitBadInput;
      }
      result->run_state.reset();  // the next run needs the memory
      runs.push_back({names[i], std::move(*result)});
    }
    PrintComparison(runs, *format, std::cout);
    if (!args.timeseries.empty()) {
      std::vector<sim::NamedTimeSeries> series;
      for (const ComparedRun& r : runs) series.push_back({r.name, &*r.result.timeseries});
      if (const int rc = WriteTimeSeries(args, series); rc != kExitOk) return rc;
    }
    if (!args.report.empty()) {
      std::vector<report::Run> report_runs;
      for (const ComparedRun& r : runs) report_runs.push_back({r.name, &r.result});
      return WriteReport(args, report_runs);
    }
    return kExitOk;
  }

  auto& objects = first;
  sim::SimulationOptions sim = options(std::move(configs.front()));
  if (!args.explain.empty()) {
    sim.scheduler.explain_pod = args.explain.find('/') == std::string::npos ? "default/" + args.explain : args.explain;
  }
  auto result = sim::RunSimulation(std::move(*objects), sim, registry);
  progress.Clear();
  if (!result) {
    std::cerr << "error: " << result.error() << "\n";
    return kExitBadInput;
  }
  KeepUntilExit(std::move(result->run_state));
  if (!args.explain.empty() && !result->explanation) {
    // A pod the run never had is a mistake in the command line, not a pod left alone.
    const std::string& wanted = sim.scheduler.explain_pod;
    const bool known = std::ranges::any_of(result->pods, [&](const auto& p) {
      return p->metadata.namespace_.size() + 1 + p->metadata.name.size() == wanted.size() &&
             wanted.starts_with(p->metadata.namespace_) && wanted[p->metadata.namespace_.size()] == '/' &&
             wanted.ends_with(p->metadata.name);
    });
    if (!known) {
      std::cerr << "error: --explain: pod \"" << wanted
                << "\" not found: no manifest or workload makes it (give namespace/name for another namespace)\n";
      return kExitBadInput;
    }
  }
  PrintSimulation(*result, *format, std::cout);
  if (!args.explain.empty() && *format == OutputFormat::kJson && !result->explanation) {
    std::cerr << "No scheduling attempt was made for " << sim.scheduler.explain_pod
              << " (no such pending pod, or it is bound already or handled by another scheduler).\n";
  }
  if (!args.explain.empty() && *format != OutputFormat::kJson) {
    std::cout << "\n";
    if (result->explanation) {
      PrintExplanation(*result->explanation, std::cout);
    } else {
      std::cout << "No scheduling attempt was made for " << sim.scheduler.explain_pod
                << " (no such pending pod, or it is bound already or handled by another scheduler).\n";
    }
  }
  if (!args.timeseries.empty()) {
    const sim::NamedTimeSeries series{names.front(), &*result->timeseries};
    if (const int rc = WriteTimeSeries(args, std::span<const sim::NamedTimeSeries>(&series, 1)); rc != kExitOk) {
      return rc;
    }
  }
  if (!args.report.empty()) {
    const report::Run run{names.front(), &*result};
    return WriteReport(args, std::span<const report::Run>(&run, 1));
  }
  return kExitOk;
}

}  // namespace

int Main(int argc, char** argv) {
  // A peer that closes a connection (an extender, the API server, a kubectl client) must be an
  // error on that write, not SIGPIPE ending the process: OpenSSL writes to its socket without
  // MSG_NOSIGNAL (found by ExtenderE2E: simulate speaking HTTP to an HTTPS-only extender, killed).
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"kubesched: a Kubernetes scheduler (Scheduling Framework, upstream plugins and configuration)"};
  app.require_subcommand(0, 1);
  app.fallthrough();  // global flags (-v) after the subcommand too, as kubectl's
  int verbosity = 0;
  app.add_option("-v,--v", verbosity, "log verbosity (0-10, as kube-scheduler's --v)")
      ->check(IntegerInRange(0, 10, "an integer from 0 to 10"));
  bool show_version = false;
  app.add_flag("--version", show_version, "print the version and exit");

  SimulateFlags sim;
  CLI::App* simulate = app.add_subcommand(
      "simulate", "schedule the pending pods of Kubernetes manifests on a simulated cluster and show the placement");
  simulate
      ->add_option("-f,--filename", sim.files,
                   "manifests: files (YAML or JSON, multi-document, kind: List), directories (their *.yaml, *.yml "
                   "and *.json files) or - for standard input")
      ->required();
  simulate->add_flag("-R,--recursive", sim.recursive, "also read the subdirectories of directories given to -f");
  simulate
      ->add_option("-n,--namespace", sim.namespace_,
                   "the namespace of namespaced objects that name none (as kubectl apply -n; an object naming "
                   "another namespace is an error)")
      ->check(CLI::Validator(
          [](const std::string& ns) {
            const std::vector<std::string> problems = api::IsDNS1123Label(ns);
            return problems.empty() ? std::string() : "invalid namespace \"" + ns + "\": " + problems.front();
          },
          "NAME"));
  simulate
      ->add_option("--validate", sim.validate,
                   "unknown and duplicate fields: strict (an error), warn (a warning each) or ignore; true means "
                   "strict and false ignore, as kubectl")
      ->expected(0, 1)
      ->check(CLI::IsMember({"strict", "warn", "ignore", "true", "false"}))
      ->capture_default_str();
  CLI::Option* config_opt =
      simulate->add_option("--config", sim.config, "KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1)")
          ->check(CLI::ExistingFile);
  CLI::Option* compare_opt =
      simulate
          ->add_option("--compare", sim.compare,
                       "run the manifests under two configurations (files, or default) and show the placements "
                       "side by side")
          ->expected(2)
          ->check(CLI::ExistingFile | CLI::IsMember({"default"}))
          ->excludes(config_opt);
  simulate->add_option("--seed", sim.seed, "seed for generated pod names and tie-breaking")
      ->check(NonNegativeInteger())
      ->capture_default_str();
  simulate->add_option("-o,--output", sim.output, "output format: table, wide or json")
      ->check(OneOf({"table", "wide", "json"}))
      ->capture_default_str();
  simulate
      ->add_option("--creation-order", sim.creation_order,
                   "order in which pending pods are created: controllers (pods listed directly in manifest "
                   "order, then the workloads' slow-start batches interleaved as concurrent controllers do, "
                   "drawn from --seed) or manifest (each workload's pods at its position)")
      ->check(OneOf({"controllers", "manifest"}, "{controllers,manifest}"))
      ->capture_default_str();
  simulate
      ->add_option("--explain", sim.explain,
                   "show each node's Filter verdicts and Score results for this pod's last attempt "
                   "(namespace/name, or name in default)")
      ->excludes(compare_opt);
  simulate->add_option("--report", sim.report,
                       "also write a self-contained HTML report of the placement to this file (both "
                       "configurations side by side with --compare), with charts of the run over time");
  simulate->add_option("--timeseries", sim.timeseries,
                       "also write the run over time to this file: allocation per resource, pods running and "
                       "pending, nodes used, evictions and moves, sampled as the virtual clock advances (CSV, or "
                       "JSON Lines for a .jsonl file; every configuration's with --compare)");
  simulate->add_option("--timeseries-format", sim.timeseries_format, "csv or jsonl (default: from the file name)")
      ->check(OneOf({"csv", "jsonl"}));
  simulate->add_option("--timeseries-interval", sim.timeseries_interval,
                       "the least virtual time between two samples, a Go duration (default: every time point "
                       "the run stops at; with a timeline, a 2,000th of its span)");

  AddPluginOption(simulate, sim.plugins);

  BenchFlags bench_args;
  CLI::App* bench = AddBenchSubcommand(app, bench_args);

  ApiserverFlags apiserver_args;
  CLI::App* apiserver = AddApiserverSubcommand(app, apiserver_args);

  RunFlags run_args;
  CLI::App* run_cmd = AddRunSubcommand(app, run_args);

  ExtenderFlags extender_args;
  CLI::App* extender_cmd = AddExtenderSubcommand(app, extender_args);

  PluginsFlags plugins_args;
  CLI::App* plugins_cmd = AddPluginsSubcommand(app, plugins_args);

  CLI::App* version =
      app.add_subcommand("version", "print kubesched's version and the Kubernetes version whose behaviour it follows");

  if (auto exit_code = ParseCommandLine(app, argc, argv, std::cout, std::cerr)) return *exit_code;
  if (show_version || version->parsed()) {
    std::cout << VersionText();
    return kExitOk;
  }
  if (app.get_subcommands().empty()) {  // as kubectl: the usage, successfully
    std::cout << app.help();
    return kExitOk;
  }
  log::SetVerbosity(verbosity);
  if (simulate->parsed()) {
    try {
      return SimulateCommand(sim);
    } catch (const std::exception& e) {
      std::cerr << "error: " << e.what() << "\n";
      return kExitFailure;
    }
  }
  if (bench->parsed()) return BenchCommand(bench_args);
  if (apiserver->parsed()) return ApiserverCommand(apiserver_args);
  if (run_cmd->parsed()) return RunCommand(run_args);
  if (extender_cmd->parsed()) return ExtenderCommand(extender_args);
  if (plugins_cmd->parsed()) return PluginsCommand(plugins_args);
  return kExitOk;
}

}  // namespace kubesched::cmd
