#include "config/load.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/default_plugins.h"
#include "plugins/registry.h"
#include "testing/args.h"
#include "testing/fake_handle.h"

namespace kubesched::config {
namespace {

using testing::ArgsJson;

const std::string kHeader = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";

// Names of the upstream in-tree plugins kubesched implements, plus test plugins of unknown kind.
const std::vector<std::string> kInTree = {
    "SchedulingGates",    "PrioritySort",     "NodeUnschedulable",   "NodeName",
    "TaintToleration",    "NodeAffinity",     "NodePorts",           "NodeResourcesFit",
    "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",       "VolumeZone",
    "PodTopologySpread",  "InterPodAffinity", "DefaultPreemption",   "NodeResourcesBalancedAllocation",
    "ImageLocality",      "DefaultBinder",    "NodeDeclaredFeatures"};
const std::vector<std::string> kCustom = {"CustomSort", "AnotherSort", "CustomBind", "CustomPlugin"};

framework::Registry RegistryWith(const std::vector<std::string>& names) {
  framework::Registry registry;
  for (const auto& name : names) {
    auto ok =
        registry.Register(name,
                          [](const framework::ArgsView&,
                             framework::Handle&) -> std::expected<std::unique_ptr<framework::Plugin>, std::string> {
                            return std::unexpected("fake");
                          });
    EXPECT_TRUE(ok.has_value());
  }
  return registry;
}

framework::Registry FullRegistry() {
  std::vector<std::string> names = kInTree;
  names.insert(names.end(), kCustom.begin(), kCustom.end());
  return RegistryWith(names);
}

// The defaults with the full registry: upstream's list without the DRA plugin.
std::vector<PluginRef> DefaultMultiPoint() {
  return {{"SchedulingGates", 0},     {"PrioritySort", 0},
          {"NodeUnschedulable", 0},   {"NodeName", 0},
          {"TaintToleration", 3},     {"NodeAffinity", 2},
          {"NodePorts", 0},           {"NodeResourcesFit", 1},
          {"VolumeRestrictions", 0},  {"NodeVolumeLimits", 0},
          {"VolumeBinding", 0},       {"VolumeZone", 0},
          {"PodTopologySpread", 2},   {"InterPodAffinity", 2},
          {"DefaultPreemption", 0},   {"NodeResourcesBalancedAllocation", 1},
          {"ImageLocality", 1},       {"DefaultBinder", 0},
          {"NodeDeclaredFeatures", 0}};
}

std::vector<PluginRef> Without(std::vector<PluginRef> list, const std::string& name) {
  std::erase_if(list, [&](const PluginRef& p) { return p.name == name; });
  return list;
}

// The source tree, as the build defines it for every test (__FILE__ may be relative: ccache's
// base_dir rewrites paths, and CTest runs the test from another directory).
std::filesystem::path SourceDir() {
  if (const char* dir = std::getenv("KUBESCHED_SOURCE_DIR")) return dir;
  return KUBESCHED_SOURCE_DIR;
}

TEST(LoadTest, DefaultConfiguration) {
  Configuration cfg = DefaultConfiguration(FullRegistry());
  EXPECT_EQ(cfg.parallelism, 16);
  EXPECT_FALSE(cfg.percentage_of_nodes_to_score.has_value());
  EXPECT_EQ(cfg.pod_initial_backoff_seconds, 1);
  EXPECT_EQ(cfg.pod_max_backoff_seconds, 10);
  EXPECT_TRUE(cfg.extenders.empty());
  ASSERT_EQ(cfg.profiles.size(), 1u);
  const Profile& p = cfg.profiles[0];
  EXPECT_EQ(p.scheduler_name, "default-scheduler");
  EXPECT_FALSE(p.percentage_of_nodes_to_score.has_value());
  EXPECT_TRUE(p.plugin_config.empty());
  Plugins want;
  want.multi_point.enabled = DefaultMultiPoint();
  EXPECT_EQ(p.plugins, want);
}

TEST(LoadTest, DefaultsSkipUnregisteredInTreePlugins) {
  std::vector<std::string> names = kInTree;
  for (const char* pending : {"InterPodAffinity", "PodTopologySpread", "ImageLocality", "DefaultPreemption"}) {
    std::erase(names, pending);
  }
  auto cfg = LoadConfigFromString(kHeader, "cfg.yaml", RegistryWith(names));
  ASSERT_TRUE(cfg.has_value()) << cfg.error();
  std::vector<PluginRef> want = {{"SchedulingGates", 0},
                                 {"PrioritySort", 0},
                                 {"NodeUnschedulable", 0},
                                 {"NodeName", 0},
                                 {"TaintToleration", 3},
                                 {"NodeAffinity", 2},
                                 {"NodePorts", 0},
                                 {"NodeResourcesFit", 1},
                                 {"VolumeRestrictions", 0},
                                 {"NodeVolumeLimits", 0},
                                 {"VolumeBinding", 0},
                                 {"VolumeZone", 0},
                                 {"NodeResourcesBalancedAllocation", 1},
                                 {"DefaultBinder", 0},
                                 {"NodeDeclaredFeatures", 0}};
  EXPECT_EQ(cfg->profiles[0].plugins.multi_point.enabled, want);
}

TEST(LoadTest, DefaultsFromFiles) {
  struct Case {
    std::string name;
    std::string text;
  };
  std::vector<Case> cases = {
      {"no profiles", kHeader},
      {"empty profiles", kHeader + "profiles: []\n"},
      {"null profiles", kHeader + "profiles: null\n"},
      {"profile without name", kHeader + "profiles:\n- {}\n"},
      {"profile with empty plugins", kHeader + "profiles:\n- plugins: {}\n  pluginConfig: []\n"},
      {"explicit defaults", kHeader + "parallelism: 16\npodInitialBackoffSeconds: 1\npodMaxBackoffSeconds: 10\n"
                                      "profiles:\n- schedulerName: default-scheduler\n"},
  };
  framework::Registry registry = FullRegistry();
  Configuration want = DefaultConfiguration(registry);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto cfg = LoadConfigFromString(c.text, "cfg.yaml", registry);
    ASSERT_TRUE(cfg.has_value()) << cfg.error();
    EXPECT_EQ(cfg->parallelism, want.parallelism);
    EXPECT_EQ(cfg->pod_initial_backoff_seconds, want.pod_initial_backoff_seconds);
    EXPECT_EQ(cfg->pod_max_backoff_seconds, want.pod_max_backoff_seconds);
    ASSERT_EQ(cfg->profiles.size(), 1u);
    EXPECT_EQ(cfg->profiles[0].scheduler_name, "default-scheduler");
    EXPECT_EQ(cfg->profiles[0].plugins, want.profiles[0].plugins);
    EXPECT_TRUE(cfg->profiles[0].plugin_config.empty());
  }
}

TEST(LoadTest, Merging) {
  auto multi = [](std::vector<PluginRef> enabled, std::vector<PluginRef> disabled = {}) {
    Plugins p;
    p.multi_point = {std::move(enabled), std::move(disabled)};
    return p;
  };
  struct Case {
    std::string name;
    std::string plugins_yaml;  // the profile's `plugins:` block
    Plugins want;
  };
  std::vector<Case> cases;
  cases.push_back({"disable one default", "    multiPoint:\n      disabled:\n      - name: NodePorts\n",
                   multi(Without(DefaultMultiPoint(), "NodePorts"), {{"NodePorts", 0}})});
  {
    Plugins want = multi(DefaultMultiPoint());
    want.score = {{{"NodeResourcesFit", 5}, {"ImageLocality", 3}}, {{"*", 0}}};
    cases.push_back({"disable all scores and enable a subset with weights",
                     "    score:\n      disabled:\n      - name: '*'\n      enabled:\n"
                     "      - name: NodeResourcesFit\n        weight: 5\n"
                     "      - name: ImageLocality\n        weight: 3\n",
                     want});
  }
  {
    std::vector<PluginRef> enabled = DefaultMultiPoint();
    enabled.push_back({"CustomPlugin", 4});
    cases.push_back({"multiPoint addition",
                     "    multiPoint:\n      enabled:\n      - name: CustomPlugin\n        weight: 4\n",
                     multi(enabled)});
  }
  {
    std::vector<PluginRef> enabled = DefaultMultiPoint();
    enabled[4] = {"TaintToleration", 10};
    cases.push_back({"replace a default's weight in place",
                     "    multiPoint:\n      enabled:\n      - name: TaintToleration\n        weight: 10\n",
                     multi(enabled)});
  }
  cases.push_back({"disable all multiPoint defaults and enable a subset",
                   "    multiPoint:\n      disabled: [{name: '*'}]\n"
                   "      enabled: [{name: PrioritySort}, {name: NodeResourcesFit, weight: 2},"
                   " {name: DefaultBinder}]\n",
                   multi({{"PrioritySort", 0}, {"NodeResourcesFit", 2}, {"DefaultBinder", 0}}, {{"*", 0}})});
  {
    Plugins want = multi(DefaultMultiPoint());
    want.filter.enabled = {{"CustomPlugin", 0}};
    want.pre_score.disabled = {{"PodTopologySpread", 0}};
    cases.push_back({"extension point lists are merged with empty defaults",
                     "    filter:\n      enabled:\n      - name: CustomPlugin\n"
                     "    preScore:\n      disabled:\n      - name: PodTopologySpread\n",
                     want});
  }
  {
    Plugins want = multi(Without(DefaultMultiPoint(), "DefaultBinder"), {{"DefaultBinder", 0}});
    want.bind = {{{"CustomBind", 0}}, {}};
    cases.push_back({"replace the binder",
                     "    multiPoint:\n      disabled: [{name: DefaultBinder}]\n"
                     "    bind:\n      enabled: [{name: CustomBind}]\n",
                     want});
  }
  cases.push_back({"disabling DynamicResources", "    multiPoint:\n      disabled:\n      - name: DynamicResources\n",
                   multi(Without(DefaultMultiPoint(), "DynamicResources"), {{"DynamicResources", 0}})});
  cases.push_back(
      {"disabling the volume plugins",
       "    multiPoint:\n      disabled:\n      - name: VolumeBinding\n      - name: VolumeZone\n"
       "      - name: NodeVolumeLimits\n      - name: VolumeRestrictions\n",
       multi(Without(Without(Without(Without(DefaultMultiPoint(), "VolumeBinding"), "VolumeZone"), "NodeVolumeLimits"),
                     "VolumeRestrictions"),
             {{"VolumeBinding", 0}, {"VolumeZone", 0}, {"NodeVolumeLimits", 0}, {"VolumeRestrictions", 0}})});

  framework::Registry registry = FullRegistry();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto cfg = LoadConfigFromString(kHeader + "profiles:\n- plugins:\n" + c.plugins_yaml, "cfg.yaml", registry);
    ASSERT_TRUE(cfg.has_value()) << cfg.error();
    EXPECT_EQ(cfg->profiles[0].plugins, c.want);
  }
}

struct ErrorCase {
  std::string name;
  std::string text;
  std::string want;  // the whole error text
};

void RunErrorCases(const std::vector<ErrorCase>& cases, const framework::Registry& registry) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto cfg = LoadConfigFromString(c.text, "cfg.yaml", registry);
    ASSERT_FALSE(cfg.has_value());
    EXPECT_EQ(cfg.error(), c.want);
  }
}

TEST(LoadTest, ValidationErrors) {
  const std::string two_profiles = kHeader + "profiles:\n- schedulerName: a\n- schedulerName: b\n";
  std::vector<ErrorCase> cases = {
      {"parallelism zero", kHeader + "parallelism: 0\n",
       "cfg.yaml: parallelism: Invalid value: 0: should be an integer value greater than zero"},
      {"parallelism negative", kHeader + "parallelism: -2\n",
       "cfg.yaml: parallelism: Invalid value: -2: should be an integer value greater than zero"},
      {"global percentage above 100", kHeader + "percentageOfNodesToScore: 101\n",
       "cfg.yaml: percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"},
      {"global percentage negative", kHeader + "percentageOfNodesToScore: -1\n",
       "cfg.yaml: percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"},
      {"profile percentage", kHeader + "profiles:\n- percentageOfNodesToScore: 150\n",
       "cfg.yaml: profiles[0].percentageOfNodesToScore: Invalid value: 150: not in valid range [0-100]"},
      {"initial backoff zero", kHeader + "podInitialBackoffSeconds: 0\n",
       "cfg.yaml: podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"},
      {"max backoff below initial", kHeader + "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 4\n",
       "cfg.yaml: podMaxBackoffSeconds: Invalid value: 4: must be greater than or equal to PodInitialBackoffSeconds"},
      {"empty scheduler name", kHeader + "profiles:\n- schedulerName: ''\n",
       "cfg.yaml: profiles[0].schedulerName: Required value"},
      {"names are not defaulted with two profiles", kHeader + "profiles:\n- {}\n- schedulerName: b\n",
       "cfg.yaml: profiles[0].schedulerName: Required value"},
      {"duplicate scheduler name", kHeader + "profiles:\n- schedulerName: a\n- schedulerName: b\n- schedulerName: a\n",
       "cfg.yaml: profiles[2].schedulerName: Duplicate value: \"a\""},
      {"unknown plugin", kHeader + "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: Foo\n",
       "cfg.yaml: profiles[0].plugins.score.enabled[0]: Invalid value: \"Foo\": plugin \"Foo\" does not exist"},
      {"unknown plugin at multiPoint",
       kHeader + "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: CustomPlugin}, {name: Bar}]\n",
       "cfg.yaml: profiles[0].plugins.multiPoint.enabled[1]: Invalid value: \"Bar\": plugin \"Bar\" does not exist"},
      {"plugin removed in v1",
       kHeader + "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: EBSLimits\n",
       "cfg.yaml: profiles[0].plugins.filter.enabled[0]: Invalid value: \"EBSLimits\": was invalid in version "
       "\"kubescheduler.config.k8s.io/v1\" (KubeSchedulerConfiguration is version \"kubescheduler.config.k8s.io/v1\")"},
      {"plugin name missing", kHeader + "profiles:\n- plugins:\n    score:\n      enabled:\n      - weight: 2\n",
       "cfg.yaml: profiles[0].plugins.score.enabled[0].name: Required value"},
      {"negative weight",
       kHeader + "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: ImageLocality\n        weight: -1\n",
       "cfg.yaml: profiles[0].plugins.score.enabled[0].weight: Invalid value: -1: must be greater than or equal to 0"},
      {"plugin enabled twice at one point",
       kHeader + "profiles:\n- plugins:\n    filter:\n      enabled: [{name: CustomPlugin}, {name: CustomPlugin}]\n",
       "cfg.yaml: profiles[0].plugins.filter.enabled[1]: Duplicate value: \"CustomPlugin\""},
      {"duplicate pluginConfig",
       kHeader + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n  - name: NodeResourcesFit\n",
       "cfg.yaml: profiles[0].pluginConfig[1]: Duplicate value: \"NodeResourcesFit\""},
      {"pluginConfig for an unknown plugin", kHeader + "profiles:\n- pluginConfig:\n  - name: Foo\n    args: {}\n",
       "cfg.yaml: profiles[0].pluginConfig[0]: Invalid value: \"Foo\": plugin \"Foo\" does not exist"},
      {"pluginConfig for a removed plugin", kHeader + "profiles:\n- pluginConfig:\n  - name: GCEPDLimits\n",
       "cfg.yaml: profiles[0].pluginConfig[0]: Invalid value: \"GCEPDLimits\": was invalid in version "
       "\"kubescheduler.config.k8s.io/v1\" (KubeSchedulerConfiguration is version \"kubescheduler.config.k8s.io/v1\")"},
      {"pluginConfig without name", kHeader + "profiles:\n- pluginConfig:\n  - args: {}\n",
       "cfg.yaml: profiles[0].pluginConfig[0].name: Required value"},
      {"two queue sort plugins",
       kHeader + "profiles:\n- plugins:\n    queueSort:\n      enabled: [{name: CustomSort}]\n",
       "cfg.yaml: profiles[0].plugins.queueSort: only one queue sort plugin required for profile with scheduler "
       "name \"default-scheduler\", but got 2 (\"CustomSort\", \"PrioritySort\")"},
      {"no queue sort plugin",
       kHeader + "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: PrioritySort}]\n",
       "cfg.yaml: profiles[0].plugins.queueSort: only one queue sort plugin required for profile with scheduler "
       "name \"default-scheduler\", but got 0"},
      {"queue sort disabled at its point",
       kHeader + "profiles:\n- plugins:\n    queueSort:\n      disabled: [{name: '*'}]\n",
       "cfg.yaml: profiles[0].plugins.queueSort: only one queue sort plugin required for profile with scheduler "
       "name \"default-scheduler\", but got 0"},
      {"no bind plugin", kHeader + "profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: DefaultBinder}]\n",
       "cfg.yaml: profiles[0].plugins.bind: at least one bind plugin is needed for profile with scheduler name "
       "\"default-scheduler\""},
      {"queue sort differs between profiles",
       two_profiles + "  plugins:\n    queueSort:\n      enabled: [{name: CustomSort}]\n"
                      "      disabled: [{name: PrioritySort}]\n",
       "cfg.yaml: profiles[1].plugins.queueSort: Invalid value: \"CustomSort\": must be the same for all profiles"},
      {"queue sort set differs between profiles (upstream compares the sets)",
       two_profiles + "  plugins:\n    queueSort:\n      disabled: [{name: CustomSort}]\n",
       "cfg.yaml: profiles[1].plugins.queueSort: Invalid value: \"PrioritySort\": must be the same for all profiles"},
      {"queue sort args differ between profiles",
       kHeader + "profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: PrioritySort\n    args: {x: 1}\n"
                 "- schedulerName: b\n  pluginConfig:\n  - name: NodeResourcesFit\n  - name: PrioritySort\n"
                 "    args: {x: 2}\n",
       "cfg.yaml: profiles[1].pluginConfig[1].args: Invalid value: {\"x\":2}: queueSort must be the same for all "
       "profiles"},
      {"queue sort args missing in one profile",
       kHeader + "profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: PrioritySort\n    args: {x: 1}\n"
                 "- schedulerName: b\n",
       "cfg.yaml: profiles[1].pluginConfig: Invalid value: null: queueSort must be the same for all profiles"},
      {"args of the wrong kind",
       kHeader + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      kind: NodeAffinityArgs\n",
       "cfg.yaml: profiles[0].pluginConfig[0].args.kind: Invalid value: \"NodeAffinityArgs\": args for plugin "
       "NodeResourcesFit must be of kind NodeResourcesFitArgs"},
      {"args of another version",
       kHeader + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                 "      apiVersion: kubescheduler.config.k8s.io/v1beta3\n",
       "cfg.yaml: profiles[0].pluginConfig[0].args.apiVersion: Unsupported value: "
       "\"kubescheduler.config.k8s.io/v1beta3\": supported values: \"kubescheduler.config.k8s.io/v1\""},
      {"args not an object", kHeader + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: [1]\n",
       "cfg.yaml: profiles[0].pluginConfig[0].args: Invalid type: expected object, got array"},
      {"extender without weight", kHeader + "extenders:\n- urlPrefix: http://x\n  prioritizeVerb: prioritize\n",
       "cfg.yaml: extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"},
      {"two binding extenders",
       kHeader + "extenders:\n- urlPrefix: http://x\n  bindVerb: bind\n- urlPrefix: http://y\n  bindVerb: bind\n",
       "cfg.yaml: extenders: Invalid value: \"found 2 extenders implementing bind\": only one extender can implement "
       "bind"},
      {"duplicate extender managed resource",
       kHeader + "extenders:\n- urlPrefix: http://x\n  managedResources: [{name: foo.com/bar}]\n"
                 "- urlPrefix: http://y\n  managedResources: [{name: foo.com/bar}]\n",
       "cfg.yaml: extenders[1].managedResources[0].name: Invalid value: \"foo.com/bar\": duplicate extender managed "
       "resource name"},
      {"all errors are reported at once",
       kHeader + "parallelism: 0\npercentageOfNodesToScore: 200\npodInitialBackoffSeconds: 3\npodMaxBackoffSeconds: 2\n"
                 "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: -5\n  plugins:\n"
                 "    score:\n      enabled: [{name: Foo}]\n- schedulerName: a\n",
       "cfg.yaml: parallelism: Invalid value: 0: should be an integer value greater than zero\n"
       "cfg.yaml: profiles[0].percentageOfNodesToScore: Invalid value: -5: not in valid range [0-100]\n"
       "cfg.yaml: profiles[0].plugins.score.enabled[0]: Invalid value: \"Foo\": plugin \"Foo\" does not exist\n"
       "cfg.yaml: profiles[1].schedulerName: Duplicate value: \"a\"\n"
       "cfg.yaml: percentageOfNodesToScore: Invalid value: 200: not in valid range [0-100]\n"
       "cfg.yaml: podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds"},
  };
  RunErrorCases(cases, FullRegistry());
}

TEST(LoadTest, InTreePluginNotRegisteredYet) {
  std::vector<std::string> names = kInTree;
  std::erase(names, "InterPodAffinity");
  RunErrorCases(
      {{"enabling it", kHeader + "profiles:\n- plugins:\n    score:\n      enabled: [{name: InterPodAffinity}]\n",
        "cfg.yaml: profiles[0].plugins.score.enabled[0]: Invalid value: \"InterPodAffinity\": plugin "
        "\"InterPodAffinity\" is not available in this kubesched build"}},
      RegistryWith(names));
  // Its args are accepted (and unused), as upstream ignores args of plugins it does not build.
  auto cfg = LoadConfigFromString(kHeader +
                                      "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n"
                                      "    args: {hardPodAffinityWeight: 2}\n",
                                  "cfg.yaml", RegistryWith(names));
  ASSERT_TRUE(cfg.has_value()) << cfg.error();
}

TEST(LoadTest, DecodingErrors) {
  std::vector<ErrorCase> cases = {
      {"unknown field in plugins", kHeader + "profiles:\n- plugins:\n    scor:\n      enabled: []\n",
       "cfg.yaml: unknown field \"profiles[0].plugins.scor\""},
      {"unknown top-level field", kHeader + "paralelism: 4\n", "cfg.yaml: unknown field \"paralelism\""},
      {"unknown field in a plugin entry",
       kHeader + "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: ImageLocality\n        wieght: 2\n",
       "cfg.yaml: unknown field \"profiles[0].plugins.score.enabled[0].wieght\""},
      {"unknown field in pluginConfig",
       kHeader + "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    arg: {}\n",
       "cfg.yaml: unknown field \"profiles[0].pluginConfig[0].arg\""},
      {"unknown field in leaderElection", kHeader + "leaderElection:\n  leaderElect: false\n  leaseDurationn: 15s\n",
       "cfg.yaml: unknown field \"leaderElection.leaseDurationn\""},
      {"unknown field in an extender", kHeader + "extenders:\n- urlPrefix: http://x\n  filterverb: filter\n",
       "cfg.yaml: unknown field \"extenders[0].filterverb\""},
      {"several unknown fields", kHeader + "foo: 1\nprofiles:\n- schedulername: x\n",
       "cfg.yaml: unknown field \"foo\"\ncfg.yaml: unknown field \"profiles[0].schedulername\""},
      {"duplicate field", kHeader + "parallelism: 4\nparallelism: 8\n", "cfg.yaml: duplicate field \"parallelism\""},
      {"quoted number", kHeader + "parallelism: \"16\"\n",
       "cfg.yaml: parallelism: Invalid type: expected int32, got string"},
      {"float for an integer", kHeader + "podMaxBackoffSeconds: 1.5\n",
       "cfg.yaml: podMaxBackoffSeconds: Invalid type: expected int64, got number"},
      {"int32 overflow", kHeader + "parallelism: 4294967296\n",
       "cfg.yaml: parallelism: Invalid value: 4294967296: out of range for int32"},
      {"profiles not a list", kHeader + "profiles:\n  schedulerName: x\n",
       "cfg.yaml: profiles: Invalid type: expected array, got object"},
      {"weight not an integer",
       kHeader + "profiles:\n- plugins:\n    score:\n      enabled: [{name: ImageLocality, weight: high}]\n",
       "cfg.yaml: profiles[0].plugins.score.enabled[0].weight: Invalid type: expected int32, got string"},
      {"wrong apiVersion", "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
       "cfg.yaml: apiVersion: Unsupported value: \"kubescheduler.config.k8s.io/v1beta3\": supported values: "
       "\"kubescheduler.config.k8s.io/v1\""},
      {"wrong kind", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: Pod\n",
       "cfg.yaml: kind: Unsupported value: \"Pod\": supported values: \"KubeSchedulerConfiguration\""},
      {"missing kind", "apiVersion: kubescheduler.config.k8s.io/v1\n", "cfg.yaml: kind: Required value"},
      {"empty file", "", "cfg.yaml: apiVersion: Required value\ncfg.yaml: kind: Required value"},
      {"not a mapping", "- a\n- b\n", "cfg.yaml: Invalid type: expected object, got array"},
      {"yaml syntax error", kHeader + "profiles: [\n",
       "cfg.yaml: yaml: line 4, column 1: flow sequence without a closing bracket"},
      {"decoding errors stop before validation", kHeader + "parallelism: 0\nfoo: 1\n",
       "cfg.yaml: unknown field \"foo\""},
  };
  RunErrorCases(cases, FullRegistry());
}

// The configuration is read with the parser and scalar rules of every other YAML file (go-yaml v2,
// as sigs.k8s.io/yaml reads it upstream): yes/no/on/off are booleans, quoted scalars strings.
TEST(LoadTest, ScalarsResolveAsGoYamlResolvesThem) {
  auto off = LoadConfigFromString(kHeader + "leaderElection:\n  leaderElect: no\n", "cfg.yaml", FullRegistry());
  ASSERT_TRUE(off.has_value()) << off.error();
  EXPECT_FALSE(off->leader_election.leader_elect);
  auto on = LoadConfigFromString(kHeader + "leaderElection:\n  leaderElect: On\n", "cfg.yaml", FullRegistry());
  ASSERT_TRUE(on.has_value()) << on.error();
  EXPECT_TRUE(on->leader_election.leader_elect);
  auto quoted = LoadConfigFromString(kHeader + "leaderElection:\n  leaderElect: \"yes\"\n", "cfg.yaml", FullRegistry());
  ASSERT_FALSE(quoted.has_value());
  EXPECT_EQ(quoted.error(), "cfg.yaml: leaderElection.leaderElect: Invalid type: expected bool, got string");
}

TEST(LoadTest, ComponentBlocksDefaultAsV1) {
  auto cfg = LoadConfigFromString(kHeader, "cfg.yaml", FullRegistry());
  ASSERT_TRUE(cfg.has_value()) << cfg.error();
  EXPECT_TRUE(cfg->leader_election.leader_elect);
  EXPECT_EQ(cfg->leader_election.lease_duration_ns, 15'000'000'000);
  EXPECT_EQ(cfg->leader_election.renew_deadline_ns, 10'000'000'000);
  EXPECT_EQ(cfg->leader_election.retry_period_ns, 2'000'000'000);
  EXPECT_EQ(cfg->leader_election.resource_lock, "leases");
  EXPECT_EQ(cfg->leader_election.resource_name, "kube-scheduler");
  EXPECT_EQ(cfg->leader_election.resource_namespace, "kube-system");
  EXPECT_EQ(cfg->client_connection.qps, 50.0f);
  EXPECT_EQ(cfg->client_connection.burst, 100);
  EXPECT_EQ(cfg->client_connection.kubeconfig, "");
}

TEST(LoadTest, ComponentBlockErrors) {
  std::vector<ErrorCase> cases = {
      {"lease not longer than the renew deadline", kHeader + "leaderElection:\n  leaseDuration: 10s\n",
       "cfg.yaml: leaderElection.leaseDuration: Invalid value: \"10s\": LeaseDuration must be greater than "
       "RenewDeadline"},
      {"zero retry period", kHeader + "leaderElection:\n  retryPeriod: 0s\n",
       "cfg.yaml: leaderElection.retryPeriod: Invalid value: \"0s\": must be greater than zero"},
      {"another lock", kHeader + "leaderElection:\n  resourceLock: endpoints\n",
       "cfg.yaml: leaderElection.resourceLock: Unsupported value: \"endpoints\": supported values: \"leases\""},
      {"bad duration", kHeader + "leaderElection:\n  leaseDuration: 15x\n",
       "cfg.yaml: leaderElection.leaseDuration: invalid duration \"15x\": unknown unit \"x\" (use ns, us, ms, s, m or "
       "h)"},
      {"negative burst", kHeader + "clientConnection:\n  burst: -1\n",
       "cfg.yaml: clientConnection.burst: Invalid value: -1: must be non-negative"},
  };
  RunErrorCases(cases, FullRegistry());
}

TEST(LoadTest, ComponentBlocks) {
  const std::string text = kHeader + R"(clientConnection:
  kubeconfig: /etc/kubernetes/scheduler.conf
  qps: 12.5
  burst: 30
  contentType: application/vnd.kubernetes.protobuf
  acceptContentTypes: ""
leaderElection:
  leaderElect: false
  leaseDuration: 20s
  renewDeadline: 15s
  retryPeriod: 3s
  resourceLock: leases
  resourceName: my-scheduler
  resourceNamespace: sched
enableProfiling: true
enableContentionProfiling: true
delayCacheUntilActive: false
extenders: []
)";
  auto cfg = LoadConfigFromString(text, "cfg.yaml", FullRegistry());
  ASSERT_TRUE(cfg.has_value()) << cfg.error();
  EXPECT_EQ(cfg->profiles.size(), 1u);
  EXPECT_FALSE(cfg->leader_election.leader_elect);
  EXPECT_EQ(cfg->leader_election.lease_duration_ns, 20'000'000'000);
  EXPECT_EQ(cfg->leader_election.renew_deadline_ns, 15'000'000'000);
  EXPECT_EQ(cfg->leader_election.retry_period_ns, 3'000'000'000);
  EXPECT_EQ(cfg->leader_election.resource_name, "my-scheduler");
  EXPECT_EQ(cfg->leader_election.resource_namespace, "sched");
  EXPECT_EQ(cfg->client_connection.kubeconfig, "/etc/kubernetes/scheduler.conf");
  EXPECT_EQ(cfg->client_connection.qps, 12.5f);
  EXPECT_EQ(cfg->client_connection.burst, 30);
}

// Extenders are decoded into their typed form and validated as upstream does; resources an
// extender manages with ignoredByScheduler become every profile's NodeResourcesFit ignoredResources.
TEST(LoadTest, ExtendersAreDecodedAndValidated) {
  auto cfg = LoadConfigFromString(kHeader + R"(extenders:
- urlPrefix: http://127.0.0.1:8888/
  filterVerb: filter
  prioritizeVerb: prioritize
  preemptVerb: preempt
  bindVerb: bind
  weight: 2
  enableHTTPS: true
  tlsConfig: {insecure: true, serverName: x, caData: Zm9v}
  nodeCacheCapable: true
  ignorable: true
  httpTimeout: 1m30s
  managedResources:
  - name: example.com/gpu
    ignoredByScheduler: true
  - name: example.com/fpga
- urlPrefix: http://other/
profiles:
- schedulerName: a
- schedulerName: b
  pluginConfig:
  - name: NodeResourcesFit
    args: {ignoredResources: [x.com/y]}
)",
                                  "cfg.yaml", FullRegistry());
  ASSERT_TRUE(cfg.has_value()) << cfg.error();
  ASSERT_EQ(cfg->extenders.size(), 2u);
  const Extender& e = cfg->extenders[0];
  EXPECT_EQ(e.url_prefix, "http://127.0.0.1:8888/");
  EXPECT_EQ(e.filter_verb, "filter");
  EXPECT_EQ(e.prioritize_verb, "prioritize");
  EXPECT_EQ(e.preempt_verb, "preempt");
  EXPECT_EQ(e.bind_verb, "bind");
  EXPECT_EQ(e.weight, 2);
  EXPECT_TRUE(e.enable_https);
  ASSERT_TRUE(e.tls_config.has_value());
  EXPECT_TRUE(e.tls_config->insecure);
  EXPECT_EQ(e.tls_config->server_name, "x");
  EXPECT_EQ(e.tls_config->ca_data, "Zm9v");
  EXPECT_TRUE(e.node_cache_capable);
  EXPECT_TRUE(e.ignorable);
  EXPECT_EQ(e.http_timeout_ns, 90'000'000'000);
  ASSERT_EQ(e.managed_resources.size(), 2u);
  EXPECT_EQ(e.managed_resources[0], (ExtenderManagedResource{"example.com/gpu", true}));
  EXPECT_EQ(e.managed_resources[1], (ExtenderManagedResource{"example.com/fpga", false}));
  Extender other;
  other.url_prefix = "http://other/";
  EXPECT_EQ(cfg->extenders[1], other);
  // Upstream's buildExtenders replaces each profile's NodeResourcesFit ignoredResources.
  for (const Profile& p : cfg->profiles) {
    EXPECT_EQ(p.ArgsFor("NodeResourcesFit").Find("ignoredResources").Encode(), R"(["example.com/gpu"])")
        << p.scheduler_name;
  }
  RunErrorCases(
      {
          {"two, one of them invalid",
           kHeader + "extenders:\n- urlPrefix: http://x\n  prioritizeVerb: p\n- urlPrefix: http://y\n",
           "cfg.yaml: extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"},
          {"their fields are decoded strictly first",
           kHeader + "extenders:\n- urlPrefix: http://x\n  tlsConfig: {insecure: true, cafile: x}\n",
           "cfg.yaml: unknown field \"extenders[0].tlsConfig.cafile\""},
          {"a timeout that is not a duration", kHeader + "extenders:\n- urlPrefix: http://x\n  httpTimeout: 5\n",
           "cfg.yaml: extenders[0].httpTimeout: Invalid type: expected string, got integer"},
          {"a timeout that does not parse", kHeader + "extenders:\n- urlPrefix: http://x\n  httpTimeout: 5 s\n",
           "cfg.yaml: extenders[0].httpTimeout: invalid duration \"5 s\": unknown unit \" s\" (use ns, us, ms, s, "
           "m or h)"},
      },
      FullRegistry());
}

framework::Registry InTreeRegistry() {
  framework::Registry registry;
  plugins::RegisterInTreePlugins(registry);
  return registry;
}

// Fields kubescheduler.config.k8s.io/v1 does not have are rejected at every level of the file,
// inside every plugin's args too (upstream decodes args strictly), each with its full path.
TEST(LoadTest, UnknownFieldsAtEveryLevel) {
  const std::string profile = kHeader + "profiles:\n- ";
  const std::string args = profile + "pluginConfig:\n  - name: ";
  std::vector<ErrorCase> cases = {
      {"top level", kHeader + "percentageOfNodeToScore: 50\n", "cfg.yaml: unknown field \"percentageOfNodeToScore\""},
      {"healthzBindAddress is not a v1 field", kHeader + "healthzBindAddress: 0.0.0.0:10251\n",
       "cfg.yaml: unknown field \"healthzBindAddress\""},
      {"metricsBindAddress is not a v1 field", kHeader + "metricsBindAddress: 0.0.0.0:10251\n",
       "cfg.yaml: unknown field \"metricsBindAddress\""},
      {"clientConnection", kHeader + "clientConnection:\n  kubeConfig: x\n",
       "cfg.yaml: unknown field \"clientConnection.kubeConfig\""},
      {"profile", profile + "name: x\n", "cfg.yaml: unknown field \"profiles[0].name\""},
      {"plugins", profile + "plugins:\n    filters: {}\n", "cfg.yaml: unknown field \"profiles[0].plugins.filters\""},
      {"plugin set", profile + "plugins:\n    filter:\n      enable: []\n",
       "cfg.yaml: unknown field \"profiles[0].plugins.filter.enable\""},
      {"plugin entry", profile + "plugins:\n    filter:\n      disabled: [{name: NodePorts, weigth: 1}]\n",
       "cfg.yaml: unknown field \"profiles[0].plugins.filter.disabled[0].weigth\""},
      {"pluginConfig entry", args + "NodePorts\n    argz: {}\n",
       "cfg.yaml: unknown field \"profiles[0].pluginConfig[0].argz\""},
      {"NodeResourcesFitArgs", args + "NodeResourcesFit\n    args: {scoringStrategy: {typ: MostAllocated}}\n",
       "cfg.yaml: unknown field \"profiles[0].pluginConfig[0].args.scoringStrategy.typ\""},
      {"NodeResourcesFitArgs resources",
       args + "NodeResourcesFit\n    args: {scoringStrategy: {resources: [{name: cpu, wieght: 2}]}}\n",
       "cfg.yaml: unknown field \"profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].wieght\""},
      {"NodeResourcesFitArgs shape",
       args + "NodeResourcesFit\n    args: {scoringStrategy: {type: RequestedToCapacityRatio, "
              "requestedToCapacityRatio: {shape: [{utilisation: 0, score: 0}]}}}\n",
       "cfg.yaml: unknown field "
       "\"profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[0].utilisation\""},
      {"NodeResourcesBalancedAllocationArgs",
       args + "NodeResourcesBalancedAllocation\n    args: {resources: [{name: cpu}], shape: []}\n",
       "cfg.yaml: unknown field \"profiles[0].pluginConfig[0].args.shape\""},
      {"PodTopologySpreadArgs",
       args + "PodTopologySpread\n    args:\n      defaultingType: List\n      defaultConstraints:\n"
              "      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, matchLabelKey: [a]}\n",
       "cfg.yaml: unknown field \"profiles[0].pluginConfig[0].args.defaultConstraints[0].matchLabelKey\""},
      {"NodeAffinityArgs",
       args + "NodeAffinity\n    args:\n      addedAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n"
              "          nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Exists, value: [x]}]}]\n",
       "cfg.yaml: unknown field \"profiles[0].pluginConfig[0].args.addedAffinity."
       "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].value\""},
      {"InterPodAffinityArgs", args + "InterPodAffinity\n    args: {hardPodAffinityWeigth: 1}\n",
       "cfg.yaml: unknown field \"profiles[0].pluginConfig[0].args.hardPodAffinityWeigth\""},
      {"DefaultPreemptionArgs", args + "DefaultPreemption\n    args: {minCandidateNodesPercent: 5}\n",
       "cfg.yaml: unknown field \"profiles[0].pluginConfig[0].args.minCandidateNodesPercent\""},
      {"VolumeBindingArgs", args + "VolumeBinding\n    args: {bindTimeoutSeconds: 60, bindTimeout: 60}\n",
       "cfg.yaml: unknown field \"profiles[0].pluginConfig[0].args.bindTimeout\""},
      {"DynamicResourcesArgs", args + "DynamicResources\n    args: {filterTimeout: 10s, timeout: 1s}\n",
       "cfg.yaml: unknown field \"profiles[0].pluginConfig[0].args.timeout\""},
      {"args of the wrong type", args + "InterPodAffinity\n    args: {hardPodAffinityWeight: high}\n",
       "cfg.yaml: profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid type: expected int32, got string"},
      {"every decoding error of the file at once, args included",
       kHeader + "foo: 1\nprofiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args: {bar: 2}\n"
                 "  - name: NodeResourcesFit\n    args: {scoringStrategy: {resources: [{name: cpu, weight: x}]}}\n",
       "cfg.yaml: unknown field \"foo\"\n"
       "cfg.yaml: unknown field \"profiles[0].pluginConfig[0].args.bar\"\n"
       "cfg.yaml: profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weight: Invalid type: expected int64, "
       "got string"},
  };
  RunErrorCases(cases, InTreeRegistry());
}

// Args errors are validation errors like the others: every one of them, from every pluginConfig
// entry and profile, in one list with the file name and the full field path, in upstream's order.
TEST(LoadTest, ArgsErrorsAreListedWithTheRest) {
  const std::string text = kHeader + R"(parallelism: 0
profiles:
- schedulerName: a
  pluginConfig:
  - name: DefaultPreemption
    args:
      minCandidateNodesPercentage: 200
      minCandidateNodesAbsolute: -1
  - name: NodeResourcesFit
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeResourcesFitArgs
      scoringStrategy:
        type: Sideways
        resources:
        - name: cpu
          weight: 500
  - name: ImageLocality
    args: {anything: goes}
- schedulerName: b
  percentageOfNodesToScore: 101
  pluginConfig:
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: 101}
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Equals}]}]
  - name: NodeResourcesBalancedAllocation
    args: {resources: [{name: cpu, weight: 2}]}
)";
  RunErrorCases(
      {{"all args errors", text,
        "cfg.yaml: parallelism: Invalid value: 0: should be an integer value greater than zero\n"
        "cfg.yaml: profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 200: not in valid "
        "range [0, 100]\n"
        "cfg.yaml: profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: -1: not in valid range "
        "[0, inf)\n"
        "cfg.yaml: profiles[0].pluginConfig[1].args.scoringStrategy.type: Unsupported value: \"Sideways\": supported "
        "values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"\n"
        "cfg.yaml: profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weight: Invalid value: 500: resource "
        "weight of cpu not in valid range (0, 100]\n"
        "cfg.yaml: profiles[1].percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]\n"
        "cfg.yaml: profiles[1].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range "
        "[0, 100]\n"
        "cfg.yaml: profiles[1].pluginConfig[1].args.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid "
        "range (0, inf)\n"
        "cfg.yaml: profiles[1].pluginConfig[2].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: \"Equals\": supported values: \"In\", "
        "\"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\"\n"
        "cfg.yaml: profiles[1].pluginConfig[3].args.resources[0].weight: Invalid value: 2: must be 1"}},
      InTreeRegistry());
}

// The same configuration as YAML and as JSON.
TEST(LoadTest, JsonForm) {
  const std::string yaml = kHeader + R"(parallelism: 8
percentageOfNodesToScore: 30
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 20
profiles:
- schedulerName: packer
  percentageOfNodesToScore: 70
  plugins:
    multiPoint:
      enabled:
      - name: NodeResourcesFit
        weight: 4
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
)";
  const std::string js = R"({
  "apiVersion": "kubescheduler.config.k8s.io/v1",
  "kind": "KubeSchedulerConfiguration",
  "parallelism": 8,
  "percentageOfNodesToScore": 30,
  "podInitialBackoffSeconds": 2,
  "podMaxBackoffSeconds": 20,
  "profiles": [{
    "schedulerName": "packer",
    "percentageOfNodesToScore": 70,
    "plugins": {
      "multiPoint": {"enabled": [{"name": "NodeResourcesFit", "weight": 4}]},
      "score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}
    },
    "pluginConfig": [{
      "name": "NodeResourcesFit",
      "args": {"scoringStrategy": {"type": "MostAllocated",
               "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}
    }]
  }]
})";
  framework::Registry registry = FullRegistry();
  auto from_yaml = LoadConfigFromString(yaml, "cfg.yaml", registry);
  auto from_json = LoadConfigFromString(js, "cfg.json", registry);
  ASSERT_TRUE(from_yaml.has_value()) << from_yaml.error();
  ASSERT_TRUE(from_json.has_value()) << from_json.error();
  for (const Configuration* cfg : {&*from_yaml, &*from_json}) {
    EXPECT_EQ(cfg->parallelism, 8);
    EXPECT_EQ(cfg->percentage_of_nodes_to_score, 30);
    EXPECT_EQ(cfg->pod_initial_backoff_seconds, 2);
    EXPECT_EQ(cfg->pod_max_backoff_seconds, 20);
    ASSERT_EQ(cfg->profiles.size(), 1u);
    const Profile& p = cfg->profiles[0];
    EXPECT_EQ(p.scheduler_name, "packer");
    EXPECT_EQ(p.percentage_of_nodes_to_score, 70);
    std::vector<PluginRef> multi = DefaultMultiPoint();
    multi[7] = {"NodeResourcesFit", 4};
    EXPECT_EQ(p.plugins.multi_point.enabled, multi);
    EXPECT_EQ(p.plugins.score.disabled, (std::vector<PluginRef>{{"NodeResourcesBalancedAllocation", 0}}));
    EXPECT_EQ(p.ArgsFor("NodeResourcesFit").Find("scoringStrategy").Find("type").GetString(), "MostAllocated");
    EXPECT_EQ(p.ArgsFor("NodeResourcesFit").Find("scoringStrategy").Find("resources")[1].Find("weight").GetInt64(), 1);
  }
  EXPECT_EQ(from_yaml->profiles[0].plugins, from_json->profiles[0].plugins);
  EXPECT_EQ(from_yaml->profiles[0].plugin_config, from_json->profiles[0].plugin_config);

  auto bad = LoadConfigFromString(R"({"apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration", "profiles": [{"plugins": {"scor": {}}}]})",
                                  "cfg.json", registry);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error(), "cfg.json: unknown field \"profiles[0].plugins.scor\"");
}

TEST(LoadTest, PercentageOfNodesToScore) {
  struct Case {
    std::string name;
    std::string text;
    std::optional<int32_t> global;
    std::vector<std::optional<int32_t>> per_profile;
  };
  std::vector<Case> cases = {
      {"unset", kHeader, std::nullopt, {std::nullopt}},
      {"global only", kHeader + "percentageOfNodesToScore: 40\n", 40, {std::nullopt}},
      {"zero means adaptive and is valid", kHeader + "percentageOfNodesToScore: 0\n", 0, {std::nullopt}},
      {"bounds are valid",
       kHeader + "percentageOfNodesToScore: 100\nprofiles:\n- schedulerName: a\n  percentageOfNodesToScore: 0\n"
                 "- schedulerName: b\n  percentageOfNodesToScore: 100\n",
       100,
       {0, 100}},
      {"per profile overrides",
       kHeader + "percentageOfNodesToScore: 10\nprofiles:\n- schedulerName: a\n  percentageOfNodesToScore: 55\n"
                 "- schedulerName: b\n",
       10,
       {55, std::nullopt}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto cfg = LoadConfigFromString(c.text, "cfg.yaml", FullRegistry());
    ASSERT_TRUE(cfg.has_value()) << cfg.error();
    EXPECT_EQ(cfg->percentage_of_nodes_to_score, c.global);
    ASSERT_EQ(cfg->profiles.size(), c.per_profile.size());
    for (size_t i = 0; i < c.per_profile.size(); ++i) {
      EXPECT_EQ(cfg->profiles[i].percentage_of_nodes_to_score, c.per_profile[i]);
    }
  }
}

TEST(LoadTest, BackoffSeconds) {
  struct Case {
    std::string name;
    std::string text;
    int64_t initial;
    int64_t max;
  };
  std::vector<Case> cases = {
      {"defaults", kHeader, 1, 10},
      {"both set", kHeader + "podInitialBackoffSeconds: 3\npodMaxBackoffSeconds: 60\n", 3, 60},
      {"equal is valid", kHeader + "podInitialBackoffSeconds: 7\npodMaxBackoffSeconds: 7\n", 7, 7},
      {"initial only, below the default max", kHeader + "podInitialBackoffSeconds: 5\n", 5, 10},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto cfg = LoadConfigFromString(c.text, "cfg.yaml", FullRegistry());
    ASSERT_TRUE(cfg.has_value()) << cfg.error();
    EXPECT_EQ(cfg->pod_initial_backoff_seconds, c.initial);
    EXPECT_EQ(cfg->pod_max_backoff_seconds, c.max);
  }
}

TEST(LoadTest, TwoProfiles) {
  const std::string text = kHeader + R"(profiles:
- schedulerName: default-scheduler
- schedulerName: no-scoring-scheduler
  plugins:
    preScore:
      disabled:
      - name: '*'
    score:
      disabled:
      - name: '*'
  pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - {key: pool, operator: In, values: [batch]}
)";
  auto cfg = LoadConfigFromString(text, "cfg.yaml", FullRegistry());
  ASSERT_TRUE(cfg.has_value()) << cfg.error();
  ASSERT_EQ(cfg->profiles.size(), 2u);
  EXPECT_EQ(cfg->profiles[0].scheduler_name, "default-scheduler");
  EXPECT_EQ(cfg->profiles[1].scheduler_name, "no-scoring-scheduler");
  Plugins first;
  first.multi_point.enabled = DefaultMultiPoint();
  EXPECT_EQ(cfg->profiles[0].plugins, first);
  Plugins second = first;
  second.pre_score.disabled = {{"*", 0}};
  second.score.disabled = {{"*", 0}};
  EXPECT_EQ(cfg->profiles[1].plugins, second);
  EXPECT_TRUE(cfg->profiles[0].ArgsFor("NodeAffinity").IsNull());
  EXPECT_EQ(cfg->profiles[1]
                .ArgsFor("NodeAffinity")
                .Find("addedAffinity")
                .Find("requiredDuringSchedulingIgnoredDuringExecution")
                .Find("nodeSelectorTerms")[0]
                .Find("matchExpressions")[0]
                .Find("values")[0]
                .GetString(),
            "batch");
}

TEST(LoadTest, PluginConfigLookupAndTypeMeta) {
  const std::string text = kHeader + R"(profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeResourcesFitArgs
      ignoredResources: [example.com/foo]
  - name: DefaultPreemption
  - name: VolumeBinding
    args:
      bindTimeoutSeconds: 300
)";
  auto cfg = LoadConfigFromString(text, "cfg.yaml", FullRegistry());
  ASSERT_TRUE(cfg.has_value()) << cfg.error();
  const Profile& p = cfg->profiles[0];
  EXPECT_EQ(PluginConfigIndex(p, "NodeResourcesFit"), 0u);
  EXPECT_EQ(PluginConfigIndex(p, "DefaultPreemption"), 1u);
  EXPECT_EQ(PluginConfigIndex(p, "VolumeBinding"), 2u);
  EXPECT_EQ(PluginConfigIndex(p, "ImageLocality"), std::nullopt);
  // TypeMeta is checked and removed: the factory sees only the args' own fields.
  EXPECT_EQ(p.ArgsFor("NodeResourcesFit"), ArgsJson(R"({"ignoredResources": ["example.com/foo"]})").View());
  EXPECT_TRUE(p.ArgsFor("DefaultPreemption").IsNull());
  EXPECT_TRUE(p.ArgsFor("ImageLocality").IsNull());
}

TEST(LoadTest, ScalarsKeepTheirYamlTypes) {
  const std::string text = kHeader + R"(profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      quoted: "10"
      number: 10
      float: 0.5
      flag: true
      empty: null
      tilde: ~
      text: MostAllocated
      big: 9223372036854775807
)";
  auto cfg = LoadConfigFromString(text, "cfg.yaml", FullRegistry());
  ASSERT_TRUE(cfg.has_value()) << cfg.error();
  const framework::ArgsView args = cfg->profiles[0].ArgsFor("NodeAffinity");
  EXPECT_TRUE(args.Find("quoted").IsString());
  EXPECT_EQ(args.Find("quoted").GetString(), "10");
  EXPECT_EQ(args.Find("number").GetInt64(), 10);
  EXPECT_TRUE(args.Find("number").IsInt64());
  EXPECT_TRUE(args.Find("float").IsDouble());
  EXPECT_EQ(args.Find("float").GetDouble(), 0.5);
  EXPECT_TRUE(args.Find("flag").IsBool());
  EXPECT_TRUE(args.Find("flag").GetBool());
  EXPECT_TRUE(args.Find("empty").IsNull());
  EXPECT_TRUE(args.Find("tilde").IsNull());
  EXPECT_EQ(args.Find("text").GetString(), "MostAllocated");
  EXPECT_EQ(args.Find("big").GetInt64(), INT64_MAX);
}

TEST(LoadTest, ConfigFiles) {
  framework::Registry registry = FullRegistry();
  auto missing = LoadConfigFile("/nonexistent/kubesched.yaml", registry);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error(), "/nonexistent/kubesched.yaml: cannot open: No such file or directory");
  auto directory = LoadConfigFile("/", registry);
  ASSERT_FALSE(directory.has_value());
  EXPECT_EQ(directory.error(), "/: is a directory");

  std::filesystem::path dir = SourceDir() / "examples" / "configs";
  {
    SCOPED_TRACE("most-allocated.yaml");
    auto cfg = LoadConfigFile((dir / "most-allocated.yaml").string(), registry);
    ASSERT_TRUE(cfg.has_value()) << cfg.error();
    ASSERT_EQ(cfg->profiles.size(), 1u);
    const Profile& p = cfg->profiles[0];
    EXPECT_EQ(p.scheduler_name, "default-scheduler");
    EXPECT_EQ(p.plugins.multi_point.enabled, DefaultMultiPoint());
    EXPECT_EQ(p.ArgsFor("NodeResourcesFit"), ArgsJson(R"({"scoringStrategy": {"type": "MostAllocated",
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}})")
                                                 .View());
    EXPECT_TRUE(p.ArgsFor("PodTopologySpread").IsNull());
  }
  {
    SCOPED_TRACE("most-allocated-no-spread.yaml");
    auto cfg = LoadConfigFile((dir / "most-allocated-no-spread.yaml").string(), registry);
    ASSERT_TRUE(cfg.has_value()) << cfg.error();
    ASSERT_EQ(cfg->profiles.size(), 1u);
    const Profile& p = cfg->profiles[0];
    EXPECT_EQ(p.plugins.multi_point.enabled, DefaultMultiPoint());
    EXPECT_EQ(p.ArgsFor("NodeResourcesFit").Find("scoringStrategy").Find("type").GetString(), "MostAllocated");
    EXPECT_EQ(p.ArgsFor("PodTopologySpread"),
              ArgsJson(R"({"defaultingType": "List", "defaultConstraints": []})").View());
  }
}

// With the real in-tree registry: the defaults are upstream's order restricted to what is
// implemented, the examples load, and every args block they carry is accepted by its factory.
TEST(LoadTest, InTreeRegistry) {
  framework::Registry registry;
  plugins::RegisterInTreePlugins(registry);
  Configuration defaults = DefaultConfiguration(registry);
  const auto& enabled = defaults.profiles[0].plugins.multi_point.enabled;
  for (const char* name : {"PrioritySort", "NodeResourcesFit", "DefaultBinder"}) {
    EXPECT_TRUE(std::ranges::any_of(enabled, [&](const PluginRef& p) { return p.name == name; })) << name;
  }
  size_t next = 0;
  auto upstream = UpstreamDefaultPlugins();
  for (const PluginRef& p : enabled) {
    EXPECT_NE(registry.Find(p.name), nullptr) << p.name;
    EXPECT_EQ(ClassifyUpstreamPlugin(p.name), UpstreamPlugin::kInTree) << p.name;
    auto it = std::find(upstream.begin() + next, upstream.end(), p);  // same weight, upstream order
    ASSERT_NE(it, upstream.end()) << p.name;
    next = it - upstream.begin() + 1;
  }

  std::filesystem::path dir = SourceDir() / "examples" / "configs";
  for (const char* file : {"most-allocated.yaml", "most-allocated-no-spread.yaml"}) {
    SCOPED_TRACE(file);
    auto cfg = LoadConfigFile((dir / file).string(), registry);
    ASSERT_TRUE(cfg.has_value()) << cfg.error();
    for (const PluginConfig& pc : cfg->profiles[0].plugin_config) {
      const framework::PluginFactory* factory = registry.Find(pc.name);
      if (factory == nullptr) continue;  // an in-tree plugin not implemented yet
      testing::FakeHandle handle;
      auto plugin = (*factory)(pc.args.View(), handle);
      EXPECT_TRUE(plugin.has_value()) << pc.name << ": " << plugin.error();
    }
  }
}

}  // namespace
}  // namespace kubesched::config
