#pragma once
// `kubesched bench`: upstream kube-scheduler's scheduler_perf workloads, generated in memory,
// created in the object store and run against the real scheduling loop (default configuration,
// all in-tree plugins) through the store's client and informers, so that every bind is a store
// write; it reports throughput as scheduler_perf defines it plus per-attempt latency percentiles
// and peak RSS.

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kubesched::cmd {

struct BenchFlags {
  //! Workload names ("SchedulingBasic" selects every variant, "SchedulingBasic/500Nodes" one).
  //! Empty: the default set (see `kubesched bench --list`).
  std::vector<std::string> workloads;
  std::optional<int> nodes;      //!< overrides every selected workload's node count
  std::optional<int> pods;       //!< overrides every selected workload's measured pod count
  std::string output = "table";  //!< table or json
  bool list = false;             //!< list the workloads and exit
  bool all = false;              //!< every workload, not just the default set
};

//! Registers the `bench` subcommand on `app`, filling `args` when parsed.
CLI::App* AddBenchSubcommand(CLI::App& app, BenchFlags& args);

//! Runs the selected workloads and prints the results; returns the process exit code
//! (0 ok, 2 bad arguments).
int BenchCommand(const BenchFlags& args);

}  // namespace kubesched::cmd
