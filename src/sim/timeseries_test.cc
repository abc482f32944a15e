// The run over time (sim/timeseries.h) through whole simulations: samples at the time points a
// timeline makes, what each counts (allocation, running and pending pods, nodes used, evictions),
// the sampling interval, and the CSV and JSON Lines written from them.

#include "sim/timeseries.h"

#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/manifest.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "sim/simulation.h"

namespace kubesched::sim {
namespace {

SimulationResult Simulate(const std::string& yaml, std::optional<int64_t> interval_ns = std::nullopt) {
  static const framework::Registry registry = [] {
    framework::Registry r;
    plugins::RegisterInTreePlugins(r);
    return r;
  }();
  auto objects = api::LoadManifestsFromString(yaml, "test.yaml");
  EXPECT_TRUE(objects.has_value()) << objects.error().ToString();
  SimulationOptions opts;
  opts.scheduler.config = config::DefaultConfiguration(registry);
  opts.start_time_ns = 1'700'000'000LL * util::kNanosPerSecond;
  opts.record_timeseries = true;
  opts.timeseries_interval_ns = interval_ns;
  auto r = RunSimulation(std::move(*objects), opts, registry);
  EXPECT_TRUE(r.has_value()) << r.error();
  return std::move(*r);
}

std::string Node(const std::string& name, const std::string& cpu, const std::string& extra = "") {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name + "}\nstatus: {capacity: {cpu: \"" + cpu +
         "\", memory: 8Gi, pods: \"10\"" + extra + "}}\n---\n";
}

std::string Pod(const std::string& name, const std::string& cpu, const std::string& annotations = "",
                const std::string& extra_requests = "", const std::string& priority = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n" +
         (annotations.empty() ? "" : "  annotations: {" + annotations + "}\n") + "spec:\n" + priority +
         "  containers: [{name: c, image: x, resources: {requests: {cpu: \"" + cpu + "\"" + extra_requests +
         "}}}]\n---\n";
}

int64_t Seconds(int64_t s) { return s * util::kNanosPerSecond; }

// The sample taken at `seconds` since the start.
const TimeSample* At(const TimeSeries& ts, int64_t seconds) {
  for (const TimeSample& s : ts.samples) {
    if (s.at_ns == Seconds(seconds)) return &s;
  }
  return nullptr;
}

size_t Column(const TimeSeries& ts, const std::string& resource) {
  return std::find(ts.resources.begin(), ts.resources.end(), resource) - ts.resources.begin();
}

// Two nodes of 2 cpu; a pod of 1 cpu from the start, one of 2 cpu at 10s, one of 3 cpu (fits
// nowhere) at 20s, the first deleted at 30s.
std::string Timeline() {
  return Node("n0", "2", ", example.com/gpu: \"4\"") + Node("n1", "2") +
         Pod("a", "1", "simulate.kubesched.io/delete-after: 30s", ", example.com/gpu: \"1\"") +
         Pod("b", "2", "simulate.kubesched.io/create-after: 10s") +
         Pod("c", "3", "simulate.kubesched.io/create-after: 20s");
}

TEST(TimeSeries, SamplesEachTimePointOfTheTimeline) {
  const SimulationResult r = Simulate(Timeline(), 0);
  ASSERT_TRUE(r.timeseries);
  const TimeSeries& ts = *r.timeseries;
  EXPECT_EQ(ts.start_ns, r.start_time_ns);
  ASSERT_EQ(ts.resources.size(), 4u);
  EXPECT_EQ(ts.resources[0], "cpu");
  EXPECT_EQ(ts.resources[3], "example.com/gpu");

  const TimeSample* t0 = At(ts, 0);
  ASSERT_NE(t0, nullptr);
  EXPECT_EQ(t0->requested[0], 1000);
  EXPECT_EQ(t0->allocatable[0], 4000);
  EXPECT_EQ(t0->requested[2], 1);  // pods
  EXPECT_EQ(t0->allocatable[2], 20);
  EXPECT_EQ(t0->requested[3], 1);
  EXPECT_EQ(t0->allocatable[3], 4);
  EXPECT_EQ(t0->pods_running, 1);
  EXPECT_EQ(t0->nodes, 2);
  EXPECT_EQ(t0->nodes_used, 1);
  EXPECT_EQ(t0->Pending(), 0);

  const TimeSample* t10 = At(ts, 10);
  ASSERT_NE(t10, nullptr);
  EXPECT_EQ(t10->requested[0], 3000);
  EXPECT_EQ(t10->pods_running, 2);
  EXPECT_EQ(t10->nodes_used, 2);

  // c fits nowhere: pending in the unschedulable pool, NodeResourcesFit's rejection.
  const TimeSample* t20 = At(ts, 20);
  ASSERT_NE(t20, nullptr);
  EXPECT_EQ(t20->pods_running, 2);
  EXPECT_EQ(t20->pending_unschedulable, 1);
  EXPECT_EQ(t20->Pending(), 1);
  EXPECT_EQ(t20->unschedulable_by_plugin.at("NodeResourcesFit"), 1);

  // a is deleted (30s grace on the virtual clock: gone at 60s); c still fits nowhere.
  const TimeSample& last = ts.samples.back();
  EXPECT_GE(last.at_ns, Seconds(60));
  EXPECT_EQ(last.pods_running, 1);
  EXPECT_EQ(last.requested[0], 2000);
  EXPECT_EQ(last.requested[3], 0);
  EXPECT_EQ(last.Pending(), 1);
  EXPECT_EQ(last.at_ns, r.virtual_time_ns - r.start_time_ns);
  for (size_t i = 1; i < ts.samples.size(); ++i) EXPECT_GT(ts.samples[i].at_ns, ts.samples[i - 1].at_ns);
}

TEST(TimeSeries, AnIntervalThinsTheSamplesButKeepsTheLast) {
  const SimulationResult every = Simulate(Timeline(), 0);
  const SimulationResult thinned = Simulate(Timeline(), Seconds(25));
  ASSERT_TRUE(every.timeseries && thinned.timeseries);
  EXPECT_LT(thinned.timeseries->samples.size(), every.timeseries->samples.size());
  const auto& s = thinned.timeseries->samples;
  for (size_t i = 1; i + 1 < s.size(); ++i) EXPECT_GE(s[i].at_ns - s[i - 1].at_ns, Seconds(25));
  // On the interval's grid, each with the state the run had then: at 25s a, b and c exist, c
  // pending; at 50s a is terminating (deleted at 30s, gone at 60s).
  for (size_t i = 0; i + 1 < s.size(); ++i) EXPECT_EQ(s[i].at_ns % Seconds(25), 0) << s[i].at_ns;
  const TimeSample* t25 = At(*thinned.timeseries, 25);
  ASSERT_NE(t25, nullptr);
  EXPECT_EQ(t25->pods_running, 2);
  EXPECT_EQ(t25->Pending(), 1);
  const TimeSample* t50 = At(*thinned.timeseries, 50);
  ASSERT_NE(t50, nullptr);
  EXPECT_EQ(t50->pods_running, 2);
  EXPECT_EQ(s.back().at_ns, every.timeseries->samples.back().at_ns);
  EXPECT_EQ(s.back().pods_running, every.timeseries->samples.back().pods_running);
}

TEST(TimeSeries, EvictionsAreCountedAndTimed) {
  const std::string priority =
      "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\n";
  const SimulationResult r =
      Simulate(priority + Node("n0", "2") + Pod("low", "2") +
               Pod("high", "2", "simulate.kubesched.io/create-after: 5s", "", "  priorityClassName: high\n"));
  ASSERT_TRUE(r.timeseries);
  const TimeSeries& ts = *r.timeseries;
  ASSERT_EQ(ts.eviction_ns.size(), 1u);
  EXPECT_EQ(ts.eviction_ns[0], Seconds(5));
  EXPECT_TRUE(ts.move_ns.empty());
  EXPECT_EQ(At(ts, 0)->evictions, 0);
  EXPECT_EQ(ts.samples.back().evictions, 1);
  EXPECT_EQ(ts.samples.back().pods_running, 1);
}

TEST(TimeSeries, CsvHasAColumnPerResourceOverEveryRun) {
  const SimulationResult a = Simulate(Timeline());
  const SimulationResult b = Simulate(Node("n0", "4") + Pod("x", "1"));
  const NamedTimeSeries runs[] = {{"default", &*a.timeseries}, {"my,config.yaml", &*b.timeseries}};
  std::ostringstream out;
  WriteTimeSeriesCsv(runs, out);
  std::istringstream in(out.str());
  std::string header;
  std::getline(in, header);
  EXPECT_TRUE(header.starts_with("configuration,seconds,cpu_requested,cpu_allocatable,memory_requested,"));
  EXPECT_NE(header.find("example.com/gpu_requested,example.com/gpu_allocatable,nodes,nodes_used"), std::string::npos);
  const auto columns = std::count(header.begin(), header.end(), ',');
  size_t rows_a = 0, rows_b = 0;
  for (std::string line; std::getline(in, line);) {
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), columns + (line.starts_with("\"") ? 1 : 0)) << line;
    if (line.starts_with("default,")) ++rows_a;
    if (line.starts_with("\"my,config.yaml\",")) ++rows_b;
  }
  EXPECT_EQ(rows_a, a.timeseries->samples.size());
  EXPECT_EQ(rows_b, b.timeseries->samples.size());
  // The second run has no GPU column of its own: 0 of 0.
  EXPECT_NE(out.str().find("\"my,config.yaml\",0.000,1000,4000,0,8589934592,1,10,0,0,1,1,1,0,"), std::string::npos)
      << out.str();
}

TEST(TimeSeries, JsonLinesParseAndCarryThePendingByPlugin) {
  const SimulationResult r = Simulate(Timeline());
  const NamedTimeSeries run{"default", &*r.timeseries};
  std::ostringstream out;
  WriteTimeSeriesJsonLines(std::span<const NamedTimeSeries>(&run, 1), out);
  std::istringstream in(out.str());
  size_t lines = 0;
  bool saw_unschedulable = false;
  for (std::string line; std::getline(in, line); ++lines) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j.at("configuration"), "default");
    EXPECT_EQ(j.at("resources").at("cpu").at("allocatable"), 4000);
    if (j.at("unschedulableByPlugin").contains("NodeResourcesFit")) saw_unschedulable = true;
  }
  EXPECT_EQ(lines, r.timeseries->samples.size());
  EXPECT_TRUE(saw_unschedulable);
}

// With devices: allocated devices and consumed capacity per sample, and FGD's fragmentation rate
// over the workload so far. Two GPUs of 1000 gpuMilli; a pod taking 600 at 0s, another at 10s.
// At 0s: free 400 and 1000, the workload (one 600 share) fits the 1000 one and cannot use the
// 400: 400 of 2000 fragmented (0.2). At 10s: free 400 and 400, a 600 share fits neither: all 800
// free is fragmented (0.4).
TEST(TimeSeries, DevicesAndTheirFragmentation) {
  std::string yaml = Node("gpu-node", "8") + R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-node-gpus}
spec:
  driver: gpu.example.com
  nodeName: gpu-node
  pool: {name: gpu-node, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, allowMultipleAllocations: true, capacity: {gpuMilli: {value: "1000"}}}
  - {name: gpu-1, allowMultipleAllocations: true, capacity: {gpuMilli: {value: "1000"}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: share-600, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.example.com
          capacity: {requests: {gpu.example.com/gpuMilli: "600"}}
---
)";
  for (const auto& [name, after] : {std::pair{"first", "0s"}, std::pair{"second", "10s"}}) {
    yaml +=
        std::string("apiVersion: v1\nkind: Pod\nmetadata:\n  name: ") + name +
        "\n  namespace: default\n  annotations: {simulate.kubesched.io/create-after: " + after +
        "}\nspec:\n  containers:\n  - name: main\n    image: busybox\n    resources:\n      requests: {cpu: 100m}\n"
        "      claims: [{name: gpu}]\n  resourceClaims:\n  - {name: gpu, resourceClaimTemplateName: share-600}\n---\n";
  }
  const SimulationResult r = Simulate(yaml, 0);
  ASSERT_TRUE(r.timeseries);
  const TimeSeries& ts = *r.timeseries;
  const size_t devices = Column(ts, "devices"), milli = Column(ts, "devices/gpuMilli");
  ASSERT_LT(milli, ts.resources.size()) << "the consumable capacity has a column";
  const TimeSample* t0 = At(ts, 0);
  const TimeSample* t10 = At(ts, 10);
  ASSERT_NE(t0, nullptr);
  ASSERT_NE(t10, nullptr);
  EXPECT_EQ(t0->allocatable[devices], 2);
  EXPECT_EQ(t0->requested[devices], 1);
  EXPECT_EQ(t0->requested[milli], 600);
  EXPECT_EQ(t0->allocatable[milli], 2000);
  EXPECT_DOUBLE_EQ(t0->device_fragmentation, 0.2);
  EXPECT_EQ(t10->requested[devices], 2);
  EXPECT_EQ(t10->requested[milli], 1200);
  EXPECT_DOUBLE_EQ(t10->device_fragmentation, 0.4);
  // Without devices there is no rate.
  EXPECT_EQ(Simulate(Timeline(), 0).timeseries->samples.back().device_fragmentation, -1);
}

}  // namespace
}  // namespace kubesched::sim
