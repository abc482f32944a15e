#include "cmd/plugins.h"

#include <algorithm>
#include <expected>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cmd/cli.h"
#include "cmd/plugin_registry.h"
#include "config/default_plugins.h"
#include "framework/args_view.h"
#include "framework/args_writer.h"
#include "framework/extension_points.h"
#include "framework/handle.h"
#include "framework/registry.h"
#include "plugins/registry.h"
#include "util/clock.h"
#include "util/parallelizer.h"

namespace kubesched::cmd {
namespace {

// A Handle for building plugins that never run: factories may keep it, nothing calls it.
class InertHandle final : public framework::Handle {
 public:
  std::pair<framework::PreFilterResult, framework::Status> RunPreFilterPlugins(framework::CycleState&,
                                                                               const framework::PodInfo&) override {
    return {{}, Unavailable()};
  }
  framework::Status RunPreFilterExtensionAddPod(framework::CycleState&, const framework::PodInfo&,
                                                const framework::PodInfo&, const framework::NodeInfo&) override {
    return Unavailable();
  }
  framework::Status RunPreFilterExtensionRemovePod(framework::CycleState&, const framework::PodInfo&,
                                                   const framework::PodInfo&, const framework::NodeInfo&) override {
    return Unavailable();
  }
  framework::Status RunFilterPlugins(const framework::CycleState&, const framework::PodInfo&,
                                     const framework::NodeInfo&) override {
    return Unavailable();
  }
  framework::Status RunFilterPluginsWithNominatedPods(framework::CycleState&, const framework::PodInfo&,
                                                      const framework::NodeInfo&) override {
    return Unavailable();
  }
  const framework::NodeInfoLister& SnapshotSharedLister() const override { return lister_; }
  void IterateOverWaitingPods(const std::function<void(framework::WaitingPod&)>&) override {}
  std::shared_ptr<framework::WaitingPod> GetWaitingPod(std::string_view) override { return nullptr; }
  bool RejectWaitingPod(std::string_view) override { return false; }
  framework::ClusterClient& client() override { return client_; }
  framework::PodNominator& nominator() override { return nominator_; }
  const util::Clock& clock() const override { return clock_; }
  util::Parallelizer& parallelizer() override { return parallelizer_; }
  std::string_view profile_name() const override { return ""; }

 private:
  static framework::Status Unavailable() { return framework::Status::Error("no cluster: plugin only described"); }

  struct EmptyLister final : framework::NodeInfoLister {
    std::span<const framework::NodeInfo* const> List() const override { return {}; }
    std::span<const framework::NodeInfo* const> HavePodsWithAffinityList() const override { return {}; }
    std::span<const framework::NodeInfo* const> HavePodsWithRequiredAntiAffinityList() const override { return {}; }
    const framework::NodeInfo* Get(std::string_view) const override { return nullptr; }
    std::shared_ptr<const framework::TopologyDomains> Domains(std::string_view) const override { return nullptr; }
  };
  struct NoClient final : framework::ClusterClient {
    framework::Status Bind(const api::Pod&, const std::string&) override { return Unavailable(); }
    framework::Status DeletePod(const api::Pod&, std::string_view) override { return Unavailable(); }
    framework::Status SetNominatedNodeName(const api::Pod&, const std::string&) override { return Unavailable(); }
    framework::Status SetPodScheduledCondition(const api::Pod&, const api::PodCondition&) override {
      return Unavailable();
    }
    std::optional<api::Labels> NamespaceLabels(std::string_view) const override { return std::nullopt; }
    std::vector<std::shared_ptr<const api::PodDisruptionBudget>> ListPodDisruptionBudgets() const override {
      return {};
    }
  };
  struct NoNominator final : framework::PodNominator {
    void AddNominatedPod(framework::PodInfoPtr, const std::string&) override {}
    void DeleteNominatedPodIfExists(const api::Pod&) override {}
    std::vector<framework::PodInfoPtr> NominatedPodsForNode(const std::string&) const override { return {}; }
    bool HasNominatedPods() const override { return false; }
  };

  EmptyLister lister_;
  NoClient client_;
  NoNominator nominator_;
  util::RealClock clock_;
  util::Parallelizer parallelizer_{1};
};

struct PluginDescription {
  std::string name;
  std::vector<std::string_view> extension_points;
  bool in_default_profile = false;
  std::optional<int32_t> weight;          // the default profile's score weight, for score plugins in it
  std::string args_kind;                  // "" when the plugin has no args type
  framework::ArgsDocument args_defaults;  // the args with every default, as a configuration file spells them
};

std::expected<std::vector<PluginDescription>, std::string> DescribePlugins(const framework::Registry& registry) {
  // The default profile's plugins first, in its order; the others by name.
  const config::Plugins defaults = config::DefaultPlugins(registry);
  std::vector<std::string> names;
  for (const auto& ref : defaults.multi_point.enabled) names.push_back(ref.name);
  for (const auto& name : registry.Names()) {
    if (std::ranges::find(names, name) == names.end()) names.push_back(name);
  }

  InertHandle handle;
  std::vector<PluginDescription> out;
  for (const auto& name : names) {
    auto plugin = (*registry.Find(name))(framework::ArgsView(), handle);
    if (!plugin) return std::unexpected(fmt::format("plugin {}: default args: {}", name, plugin.error()));
    PluginDescription d;
    d.name = name;
    d.extension_points = framework::ExtensionPointsOf(**plugin);
    auto ref = std::ranges::find(defaults.multi_point.enabled, name, &config::PluginRef::name);
    d.in_default_profile = ref != defaults.multi_point.enabled.end();
    bool scores = std::ranges::find(d.extension_points, std::string_view("Score")) != d.extension_points.end();
    if (d.in_default_profile && scores) d.weight = ref->weight == 0 ? 1 : ref->weight;  // as the runtime does
    if (const framework::ArgsType* type = registry.FindArgsType(name)) {
      auto args = type->decode(framework::ArgsView(), "");
      if (!args) return std::unexpected(fmt::format("plugin {}: default args: {}", name, args.error().errors.front()));
      d.args_kind = type->kind;
      auto defaults = framework::ArgsDocument::Parse(*args);
      if (!defaults) return std::unexpected(fmt::format("plugin {}: default args: {}", name, defaults.error()));
      d.args_defaults = std::move(*defaults);
    }
    out.push_back(std::move(d));
  }
  return out;
}

// A value inside a flattened args line: strings bare, lists and objects in YAML's flow style.
std::string FlowValue(const framework::ArgsView& v) {
  if (v.IsString()) return std::string(v.GetString());
  if (v.IsArray()) {
    std::vector<std::string> items;
    for (size_t i = 0; i < v.Size(); ++i) items.push_back(FlowValue(v[i]));
    return fmt::format("[{}]", fmt::join(items, ", "));
  }
  if (v.IsObject()) {
    std::vector<std::string> items;
    for (const auto [key, item] : v.Members()) items.push_back(fmt::format("{}: {}", key, FlowValue(item)));
    return fmt::format("{{{}}}", fmt::join(items, ", "));
  }
  return v.Encode();
}

// "scoringStrategy.type=LeastAllocated, ...": nested objects flattened into dotted paths.
void FlattenArgs(const framework::ArgsView& v, const std::string& prefix, std::vector<std::string>& out) {
  if (v.IsObject() && v.Size() > 0) {
    for (const auto [key, item] : v.Members()) {
      FlattenArgs(item, prefix.empty() ? std::string(key) : fmt::format("{}.{}", prefix, key), out);
    }
    return;
  }
  out.push_back(fmt::format("{}={}", prefix, FlowValue(v)));
}

void PrintTable(const std::vector<PluginDescription>& plugins, std::ostream& os) {
  std::vector<std::string> points;
  size_t name_width = 4;
  size_t points_width = 16;
  for (const auto& p : plugins) {
    points.push_back(fmt::format("{}", fmt::join(p.extension_points, ", ")));
    name_width = std::max(name_width, p.name.size());
    points_width = std::max(points_width, points.back().size());
  }
  os << fmt::format("{:<{}}   {:<{}}   {:<7}   {:<6}   {}\n", "NAME", name_width, "EXTENSION POINTS", points_width,
                    "DEFAULT", "WEIGHT", "ARGS");
  for (size_t i = 0; i < plugins.size(); ++i) {
    const PluginDescription& p = plugins[i];
    os << fmt::format("{:<{}}   {:<{}}   {:<7}   {:<6}   {}\n", p.name, name_width, points[i], points_width,
                      p.in_default_profile ? "yes" : "no", p.weight ? std::to_string(*p.weight) : "-",
                      p.args_kind.empty() ? "-" : p.args_kind);
  }
  os << fmt::format("\nArgs ({}) and their defaults:\n", "kubescheduler.config.k8s.io/v1");
  for (const PluginDescription& p : plugins) {
    if (p.args_kind.empty()) continue;
    std::vector<std::string> fields;
    FlattenArgs(p.args_defaults.View(), "", fields);
    os << fmt::format("  {}: {}\n", p.args_kind, fmt::join(fields, ", "));
  }
}

// Written compact, then indented as `-o json` output has always been (two spaces, fields in order).
void PrintJson(const std::vector<PluginDescription>& plugins, std::ostream& os) {
  framework::ArgsWriter w;
  w.StartObject().Key("plugins").StartArray();
  for (const PluginDescription& p : plugins) {
    w.StartObject();
    w.Key("name").String(p.name);
    w.Key("extensionPoints").StartArray();
    for (std::string_view point : p.extension_points) w.String(point);
    w.EndArray();
    w.Key("defaultProfile").Bool(p.in_default_profile);
    w.Key("weight");
    if (p.weight) {
      w.Int64(*p.weight);
    } else {
      w.Null();
    }
    w.Key("args");
    if (p.args_kind.empty()) {
      w.Null();
    } else {
      w.StartObject().Key("kind").String(p.args_kind).Key("defaults").Json(p.args_defaults.View().Encode());
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray().EndObject();
  auto doc = framework::ArgsDocument::Parse(w.text());
  os << (doc ? doc->View().EncodePretty() : w.text()) << "\n";
}

}  // namespace

CLI::App* AddPluginsSubcommand(CLI::App& app, PluginsFlags& args) {
  CLI::App* plugins = app.add_subcommand("plugins",
                                         "list the plugins (in-tree and those of --plugin libraries): extension "
                                         "points, default profile and score weight, args and their defaults");
  plugins->add_option("-o,--output", args.output, "output format: table or json")
      ->check(OneOf({"table", "json"}))
      ->capture_default_str();
  AddPluginOption(plugins, args.plugins);
  return plugins;
}

int PluginsCommand(const PluginsFlags& args) {
  auto registry = MakeRegistry(args.plugins);
  if (!registry) {
    std::cerr << "error: --plugin: " << registry.error() << "\n";
    return 2;
  }
  auto described = DescribePlugins(*registry);
  if (!described) {
    std::cerr << "error: " << described.error() << "\n";
    return 1;
  }
  if (args.output == "json") {
    PrintJson(*described, std::cout);
  } else {
    PrintTable(*described, std::cout);
  }
  return 0;
}

}  // namespace kubesched::cmd
