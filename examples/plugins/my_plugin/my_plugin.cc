// MyPlugin, from seed 000 §3 ("Sviluppo di un Plugin"): a PreFilter plugin with one argument,
// `arg`, read from the profile's pluginConfig (default 42), which logs at verbosity 4 each time
// its PreFilter runs. It restricts nothing: every node stays a candidate.
//
//   kubesched simulate --plugin build/my_plugin.so --config config.yaml -f cluster.yaml --v 4
//   I1124 20:32:12.123456   12345 my_plugin.cc:41] "PreFilter of MyPlugin called" pod="default/nginx" arg=13

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <utility>

#include <sdk/plugin.h>

namespace {

using namespace kubesched;

// The plugin's args (upstream's MyPluginArgs), with their default: the initialiser, as
// SetDefaults_MyPluginArgs sets it in the seed.
struct MyPluginArgs {
  int64_t arg = 42;
};

void DecodeArgs(sdk::ArgsDecoder& d, MyPluginArgs& args) { d.Int64("arg", args.arg); }

void EncodeArgs(sdk::ArgsEncoder& e, const MyPluginArgs& args) { e.Int64("arg", args.arg); }

class MyPlugin final : public framework::PreFilterPlugin {
 public:
  static constexpr std::string_view kName = "MyPlugin";

  explicit MyPlugin(int64_t arg) : arg_(arg) {}

  std::string_view Name() const override { return kName; }

  std::pair<framework::PreFilterResult, framework::Status> PreFilter(
      framework::CycleState& /*state*/, const framework::PodInfo& pod,
      std::span<const framework::NodeInfo* const> /*nodes*/) override {
    KS_LOG_V(4).InfoS("PreFilter of MyPlugin called", "pod", kubesched::log::KObj(pod.pod()), "arg", arg_);
    return {framework::PreFilterResult{}, framework::Status::Success()};
  }

 private:
  int64_t arg_;
};

}  // namespace

KUBESCHED_PLUGIN_LIBRARY(registry) {
  auto registered = sdk::RegisterPlugin<MyPluginArgs>(
      registry, std::string(MyPlugin::kName), DecodeArgs, EncodeArgs,
      [](const MyPluginArgs& args, framework::Handle& /*handle*/) { return std::make_unique<MyPlugin>(args.arg); });
  if (!registered) throw std::runtime_error(registered.error());
}
