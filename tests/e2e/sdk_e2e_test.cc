// The plugin SDK end to end (docs/writing-plugins.md): the SDK installed to a temporary prefix, the
// example plugins built out of tree against it with find_package(kubesched) alone, loaded into the
// installed kubesched with --plugin, reproducing the seeds' runs; and the ways loading a plugin
// library fails, each with a clear error and nothing run.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/run_kubesched.h"

namespace kubesched::e2e {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string TestPlugin(const std::string& name) {
  const char* dir = std::getenv("KUBESCHED_BINARY_DIR");
  return std::string(dir != nullptr ? dir : KUBESCHED_BINARY_DIR) + "/test-plugins/" + name + ".so";
}

// pod name -> node ("" when pending), from `simulate -o json`.
std::map<std::string, std::string> Placements(const RunResult& r) {
  std::map<std::string, std::string> out;
  const json j = json::parse(r.out);
  for (const auto& pod : j["pods"]) out[pod["name"]] = pod["node"].is_null() ? "" : pod["node"].get<std::string>();
  return out;
}

std::string Message(const RunResult& r, const std::string& pod_name) {
  const json j = json::parse(r.out);
  for (const auto& pod : j["pods"]) {
    if (pod["name"] == pod_name && pod["message"].is_string()) return pod["message"];
  }
  return "";
}

void ExpectOk(const RunResult& r, const std::string& what) {
  ASSERT_EQ(r.exit_code, 0) << what << "\nstdout:\n" << r.out << "\nstderr:\n" << r.err;
}

// ---------------------------------------------------------------------------------------------
// Installed SDK, example plugins built out of tree.

TEST(PluginSdkE2E, ExamplesBuiltOutOfTreeAgainstTheInstalledSdkReproduceTheSeeds) {
  const fs::path work = fs::temp_directory_path() / ("kubesched-sdk-" + std::to_string(getpid()));
  fs::remove_all(work);
  fs::create_directories(work);
  const std::string prefix = (work / "prefix").string();
  const std::string build = (work / "build").string();

  const std::string binary_dir =
      std::getenv("KUBESCHED_BINARY_DIR") ? std::getenv("KUBESCHED_BINARY_DIR") : KUBESCHED_BINARY_DIR;
  ExpectOk(RunCommand({"cmake", "--install", binary_dir, "--prefix", prefix}), "cmake --install");
  ASSERT_TRUE(fs::exists(prefix + "/include/kubesched/sdk/plugin.h"));
  ASSERT_TRUE(fs::exists(prefix + "/include/kubesched/sdk/abi.h"));

  // Only the installed prefix: the source tree is not on any include path of the examples.
  std::vector<std::string> configure = {"cmake",
                                        "-S",
                                        SourcePath("examples/plugins"),
                                        "-B",
                                        build,
                                        "-G",
                                        "Ninja",
                                        "-DCMAKE_BUILD_TYPE=Release",
                                        "-DCMAKE_PREFIX_PATH=" + prefix};
#ifdef KUBESCHED_SANITIZED
  // libkubesched.so is instrumented: so must be the plugins and the template's test executable
  // (ASan's runtime has to come first in an executable that links it).
  configure.push_back("-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-omit-frame-pointer");
#endif
  if (RunCommand({"sh", "-c", "command -v ccache"}).exit_code == 0) {
    configure.push_back("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache");
  }
  ExpectOk(RunCommand(configure), "configuring the example plugins");
  ExpectOk(RunCommand({"cmake", "--build", build, "-j2"}), "building the example plugins");
  // The template's own unit tests, written with the SDK's fake Handle and builders.
  ExpectOk(RunCommand({"ctest", "--test-dir", build + "/template", "--output-on-failure"}), "the template's tests");

  const std::string kubesched = prefix + "/bin/kubesched";
  auto simulate = [&](std::vector<std::string> args) {
    std::vector<std::string> argv{kubesched, "simulate"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv);
  };
  const std::string node_number = SourcePath("examples/plugins/node_number");

  // Seed 001: NodeNumber in its three stages; pod1 lands on node1 and pod9 on node9 each time.
  for (const std::string stage : {"score", "prescore", "permit"}) {
    SCOPED_TRACE(stage);
    RunResult r =
        simulate({"--plugin", build + "/node_number/" + stage + "/node_number_" + stage + ".so", "--config",
                  node_number + "/config.yaml", "-f", node_number + "/cluster.yaml", "-o", "json", "--v", "2"});
    ExpectOk(r, "NodeNumber " + stage);
    auto placed = Placements(r);
    EXPECT_EQ(placed["pod1"], "node1");
    EXPECT_EQ(placed["pod9"], "node9");
    if (stage == "permit") {
      // Binding waited the node's number of seconds, then the plugin allowed it.
      EXPECT_NE(r.err.find("\"NodeNumber delays binding\" pod=\"default/pod1\" node=\"node1\" seconds=1"),
                std::string::npos)
          << r.err;
      EXPECT_NE(r.err.find("\"NodeNumber delays binding\" pod=\"default/pod9\" node=\"node9\" seconds=9"),
                std::string::npos)
          << r.err;
      EXPECT_NE(r.err.find("\"NodeNumber allows binding\" pod=\"default/pod9\""), std::string::npos) << r.err;
    }
  }
  // Without the plugin, the same pods spread by the default scores alone: NodeNumber made the
  // difference (pod9 does not go to node9 by chance).
  {
    RunResult r = simulate({"-f", node_number + "/cluster.yaml", "-o", "json"});
    ExpectOk(r, "default profile");
    EXPECT_NE(Placements(r)["pod9"], "node9");
  }

  // Seed 000: MyPlugin logs its arg at --v 4: 13 from the configuration, 42 by default.
  const std::string my_plugin = SourcePath("examples/plugins/my_plugin");
  const std::string my_plugin_so = build + "/my_plugin/my_plugin.so";
  {
    RunResult r = simulate({"--plugin", my_plugin_so, "--config", my_plugin + "/config.yaml", "-f",
                            my_plugin + "/cluster.yaml", "--v", "4"});
    ExpectOk(r, "MyPlugin arg 13");
    EXPECT_NE(r.err.find("\"PreFilter of MyPlugin called\" pod=\"default/nginx\" arg=13"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("nginx"), std::string::npos);
  }
  {
    RunResult r = simulate({"--plugin", my_plugin_so, "--config", my_plugin + "/config-default-arg.yaml", "-f",
                            my_plugin + "/cluster.yaml", "--v", "4"});
    ExpectOk(r, "MyPlugin default arg");
    EXPECT_NE(r.err.find("\"PreFilter of MyPlugin called\" pod=\"default/nginx\" arg=42"), std::string::npos) << r.err;
  }
  {
    RunResult r = simulate({"--plugin", my_plugin_so, "--config", my_plugin + "/config.yaml", "-f",
                            my_plugin + "/cluster.yaml", "--v", "3"});
    ExpectOk(r, "MyPlugin at --v 3");
    EXPECT_EQ(r.err.find("PreFilter of MyPlugin called"), std::string::npos) << r.err;
  }
  // A plugin's args are checked like an in-tree plugin's, with their full field path.
  {
    const std::string bad = WriteTempFile("myplugin-bad.yaml", R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: MyPlugin
  pluginConfig:
  - name: MyPlugin
    args:
      arg: thirteen
      colour: red
)");
    RunResult r = simulate({"--plugin", my_plugin_so, "--config", bad, "-f", my_plugin + "/cluster.yaml"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("profiles[0].pluginConfig[0].args.arg: Invalid type: expected int64, got string"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("unknown field \"profiles[0].pluginConfig[0].args.colour\""), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // `kubesched plugins` lists a loaded plugin with its extension points and args defaults.
  {
    RunResult r = RunCommand({kubesched, "plugins", "--plugin", my_plugin_so, "-o", "json"});
    ExpectOk(r, "kubesched plugins");
    bool found = false;
    const json listed = json::parse(r.out);
    for (const auto& p : listed["plugins"]) {
      if (p["name"] != "MyPlugin") continue;
      found = true;
      EXPECT_EQ(p["extensionPoints"], json::array({"PreFilter"})) << p.dump();
      EXPECT_EQ(p["args"]["kind"], "MyPluginArgs");
      EXPECT_EQ(p["args"]["defaults"]["arg"], 42);
    }
    EXPECT_TRUE(found) << r.out;
  }
  // The template: RequiredLabel keeps both pods on the gold node.
  {
    const std::string dir = SourcePath("examples/plugins/template");
    RunResult r = simulate({"--plugin", build + "/template/required_label.so", "--config", dir + "/config.yaml", "-f",
                            dir + "/cluster.yaml", "-o", "json"});
    ExpectOk(r, "template");
    auto placed = Placements(r);
    EXPECT_EQ(placed["web-1"], "gold-1");
    EXPECT_EQ(placed["web-2"], "gold-1");
  }
  fs::remove_all(work);
}

// ---------------------------------------------------------------------------------------------
// Failures: each refused with the file and the reason, exit 2, nothing simulated.

const char* kThrowerConfig = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled:
      - name: Thrower
)";

const char* kTwoPods = R"(apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: boom, namespace: default}
spec:
  containers: [{name: c, image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: fine, namespace: default}
spec:
  containers: [{name: c, image: busybox}]
)";

RunResult SimulateWith(const std::vector<std::string>& plugins, const std::string& config = "") {
  std::vector<std::string> args{"simulate", "-f", WriteTempFile("two-pods.yaml", kTwoPods), "-o", "json"};
  for (const auto& p : plugins) {
    args.push_back("--plugin");
    args.push_back(p);
  }
  if (!config.empty()) {
    args.push_back("--config");
    args.push_back(WriteTempFile("config.yaml", config));
  }
  return RunKubesched(args);
}

void ExpectRefused(const RunResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(PluginSdkE2E, AnExceptionFromAPluginFailsThatPodOnly) {
  RunResult r = SimulateWith({TestPlugin("test_plugins")}, kThrowerConfig);
  ExpectOk(r, "thrower");
  auto placed = Placements(r);
  EXPECT_EQ(placed["fine"], "n1");
  EXPECT_EQ(placed["boom"], "");
  EXPECT_NE(Message(r, "boom").find("Thrower cannot take pod boom"), std::string::npos) << r.out;
}

TEST(PluginSdkE2E, ALibraryBuiltAgainstAnotherSdkIsRefused) {
  ExpectRefused(SimulateWith({TestPlugin("wrong_abi")}),
                "built against kubesched SDK 0.0.1 (ABI 00000000deadbeef), but this kubesched's SDK is");
  ExpectRefused(SimulateWith({TestPlugin("wrong_abi")}), "rebuild the plugin");
}

TEST(PluginSdkE2E, AMissingFileIsRefused) {
  ExpectRefused(SimulateWith({"/nonexistent/plugin.so"}),
                "error: --plugin: plugin library \"/nonexistent/plugin.so\": no such file");
}

TEST(PluginSdkE2E, AFileThatIsNotASharedLibraryIsRefused) {
  const std::string text = WriteTempFile("not-a-library.so", "just text\n");
  ExpectRefused(SimulateWith({text}), "plugin library \"" + text + "\": cannot load it: ");
}

TEST(PluginSdkE2E, ALibraryWithoutTheEntryPointIsRefused) {
  ExpectRefused(SimulateWith({TestPlugin("no_entry_point")}),
                "exports no kubesched_plugin_library_v1, so it is not a kubesched plugin library");
}

TEST(PluginSdkE2E, ARegistrationThatThrowsIsRefused) {
  ExpectRefused(SimulateWith({TestPlugin("throwing_registration")}),
                "registering its plugins threw: this library cannot register today");
}

TEST(PluginSdkE2E, APluginNamedAsAnInTreePluginIsRefused) {
  ExpectRefused(SimulateWith({TestPlugin("test_plugins_clash")}),
                "registers plugin NodeName, which is already an in-tree plugin");
}

TEST(PluginSdkE2E, TwoLibrariesRegisteringTheSameNameAreRefused) {
  ExpectRefused(SimulateWith({TestPlugin("test_plugins"), TestPlugin("test_plugins")}),
                "registers plugin Thrower, which plugin library \"" + TestPlugin("test_plugins") + "\" registers");
}

TEST(PluginSdkE2E, AnUnknownPluginNameInTheConfigurationIsRefused) {
  // Thrower is only known once its library is loaded.
  RunResult r = SimulateWith({}, kThrowerConfig);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(
                "profiles[0].plugins.filter.enabled[0]: Invalid value: \"Thrower\": plugin \"Thrower\" does not exist"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace kubesched::e2e
