#include "framework/runtime/framework.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <map>
#include <ranges>
#include <span>
#include <type_traits>

#include <fmt/format.h>

#include "framework/statistics.h"
#include "util/log.h"

namespace kubesched::framework::runtime {
namespace {

ArgsView ArgsFor(const config::Profile& profile, std::string_view name, std::optional<size_t>* index) {
  for (size_t i = 0; i < profile.plugin_config.size(); ++i) {
    if (profile.plugin_config[i].name == name) {
      *index = i;
      return profile.plugin_config[i].args.View();
    }
  }
  return ArgsView();
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += " ";
    out += names[i];
  }
  return out + "]";
}

// An exception escaping a plugin (plugin libraries are anyone's code) must not cross into the
// scheduling loop: each call into a plugin goes through Guard, which turns it into an Error
// status for the pod being scheduled ("<point>: exception: <what>"), so the pod is retried after
// backoff and kubesched carries on. Costs nothing unless something throws.
Status Thrown(std::string_view point) {
  try {
    throw;
  } catch (const std::exception& e) {
    return Status::Error(fmt::format("{}: exception: {}", point, e.what()));
  } catch (...) {
    return Status::Error(fmt::format("{}: non-standard exception", point));
  }
}

template <class R>
R FailedWith(Status s) {
  if constexpr (std::is_same_v<R, Status>) {
    return s;
  } else if constexpr (std::is_same_v<R, std::pair<Status, std::chrono::nanoseconds>>) {
    return {std::move(s), std::chrono::nanoseconds(0)};
  } else {
    return {typename R::first_type{}, std::move(s)};
  }
}

template <class F>
auto Guard(std::string_view point, F&& call) -> decltype(call()) {
  try {
    return call();
  } catch (...) {
    if constexpr (std::is_void_v<decltype(call())>) {
      // Unreserve and PostBind report nothing: the failure is logged and the cycle goes on.
      KS_LOG.ErrorS(Thrown(point).Message(), "Plugin threw; the cycle goes on");
    } else {
      return FailedWith<decltype(call())>(Thrown(point));
    }
  }
}

// The status a plugin call or an extension point returned, for the metrics' status label.
Code CodeOf(const Status& s) { return s.code(); }
template <class T>
Code CodeOf(const std::pair<T, Status>& r) {
  return r.second.code();
}
Code CodeOf(const std::pair<Status, std::chrono::nanoseconds>& r) { return r.first.code(); }

// A plugin call through Guard, timed for scheduler_plugin_execution_duration_seconds in the
// cycles the scheduler samples (CycleState::record_plugin_metrics; never without a recorder).
template <class F>
auto Observed(metrics::Recorder* m, const CycleState& state, std::string_view point, const Plugin& plugin,
              std::string_view metric_point, F&& call) -> decltype(call()) {
  // The plugin's name (a virtual call) is asked only when timing: Score runs once per node and
  // plugin, and without a recorder this must cost no more than Guard.
  if (m == nullptr || !state.record_plugin_metrics) [[likely]] {
    return Guard(point, std::forward<F>(call));
  }
  const auto start = metrics::MonotonicClock::now();
  if constexpr (std::is_void_v<decltype(call())>) {
    Guard(point, std::forward<F>(call));
    m->ObservePlugin(plugin.Name(), metric_point, Code::kSuccess, metrics::SinceInSeconds(start));
  } else {
    auto r = Guard(point, std::forward<F>(call));
    m->ObservePlugin(plugin.Name(), metric_point, CodeOf(r), metrics::SinceInSeconds(start));
    return r;
  }
}

// Times one run of an extension point for scheduler_framework_extension_point_duration_seconds:
// each return goes through Done, which observes the status it returns. Without a recorder it
// reads no clock.
class PointTimer {
 public:
  PointTimer(metrics::Recorder* m, std::string_view point, std::string_view profile)
      : m_(m), point_(point), profile_(profile) {
    if (m_) start_ = metrics::MonotonicClock::now();
  }
  template <class R>
  R Done(R result) {
    if (m_) m_->ObserveExtensionPoint(point_, CodeOf(result), profile_, metrics::SinceInSeconds(start_));
    return result;
  }
  void Done() { Done(Status()); }

 private:
  metrics::Recorder* m_;
  std::string_view point_;
  std::string_view profile_;
  metrics::MonotonicClock::time_point start_;
};

// One extension point's configured list and how to test a plugin for it.
struct PointSpec {
  std::string_view name;  // as in the configuration file
  const config::PluginSet* set;
  bool (*implements)(Plugin*);
};

template <typename T>
bool Implements(Plugin* p) {
  return dynamic_cast<T*>(p) != nullptr;
}

// The extension points of a profile's configuration, in upstream's order.
std::vector<PointSpec> ExtensionPoints(const config::Plugins& plugins) {
  return {
      {"preEnqueue", &plugins.pre_enqueue, &Implements<PreEnqueuePlugin>},
      {"queueSort", &plugins.queue_sort, &Implements<QueueSortPlugin>},
      {"preFilter", &plugins.pre_filter, &Implements<PreFilterPlugin>},
      {"filter", &plugins.filter, &Implements<FilterPlugin>},
      {"postFilter", &plugins.post_filter, &Implements<PostFilterPlugin>},
      {"preScore", &plugins.pre_score, &Implements<PreScorePlugin>},
      {"score", &plugins.score, &Implements<ScorePlugin>},
      {"reserve", &plugins.reserve, &Implements<ReservePlugin>},
      {"permit", &plugins.permit, &Implements<PermitPlugin>},
      {"preBind", &plugins.pre_bind, &Implements<PreBindPlugin>},
      {"bind", &plugins.bind, &Implements<BindPlugin>},
      {"postBind", &plugins.post_bind, &Implements<PostBindPlugin>},
  };
}

// Each enabled plugin, built once with its args however many points enable it.
class PluginInstances {
 public:
  PluginInstances(const config::Profile& profile, const Registry& registry, Handle& handle, const std::string& path,
                  std::vector<std::unique_ptr<Plugin>>& owned)
      : profile_(profile), registry_(registry), handle_(handle), path_(path), owned_(owned) {}

  //! The instance of `name`, built on first use; `where` names the configuration entry in errors.
  std::expected<Plugin*, std::string> Get(const std::string& name, const std::string& where) {
    if (auto it = instances_.find(name); it != instances_.end()) return it->second;
    const PluginFactory* factory = registry_.Find(name);
    if (!factory) return std::unexpected(fmt::format("{}: Invalid value: \"{}\": plugin does not exist", where, name));
    std::optional<size_t> cfg_index;
    const ArgsView args = ArgsFor(profile_, name, &cfg_index);
    std::expected<std::unique_ptr<Plugin>, std::string> plugin;
    try {
      plugin = (*factory)(args, handle_);
    } catch (const std::exception& e) {
      plugin = std::unexpected(fmt::format("building the plugin threw: {}", e.what()));
    } catch (...) {
      plugin = std::unexpected(std::string("building the plugin threw a non-standard exception"));
    }
    if (!plugin) {
      if (cfg_index)
        return std::unexpected(fmt::format("{}.pluginConfig[{}].args: {}", path_, *cfg_index, plugin.error()));
      return std::unexpected(fmt::format("{}: plugin {}: {}", path_, name, plugin.error()));
    }
    Plugin* raw = plugin->get();
    owned_.push_back(std::move(*plugin));
    instances_.emplace(name, raw);
    return raw;
  }

  //! An instance Get built already.
  Plugin* At(const std::string& name) const { return instances_.at(name); }

 private:
  const config::Profile& profile_;
  const Registry& registry_;
  Handle& handle_;
  const std::string& path_;
  std::vector<std::unique_ptr<Plugin>>& owned_;
  std::map<std::string, Plugin*, std::less<>> instances_;
};

// Builds every plugin the profile enables (multiPoint first, then each point's list), checking that
// a weighted multiPoint plugin scores and that a plugin listed at a point implements it.
std::expected<void, std::string> InstantiateEnabled(const config::Plugins& plugins, std::span<const PointSpec> points,
                                                    const std::string& path, PluginInstances& instances) {
  for (size_t i = 0; i < plugins.multi_point.enabled.size(); ++i) {
    const auto& ref = plugins.multi_point.enabled[i];
    auto p = instances.Get(ref.name, fmt::format("{}.plugins.multiPoint.enabled[{}]", path, i));
    if (!p) return std::unexpected(p.error());
    if (ref.weight != 0 && !Implements<ScorePlugin>(*p)) {
      return std::unexpected(
          fmt::format("{}.plugins.multiPoint.enabled[{}].weight: Invalid value: {}: plugin \"{}\" "
                      "does not extend score plugin, so it cannot have a weight",
                      path, i, ref.weight, ref.name));
    }
  }
  for (const auto& point : points) {
    for (size_t i = 0; i < point.set->enabled.size(); ++i) {
      const auto& ref = point.set->enabled[i];
      std::string where = fmt::format("{}.plugins.{}.enabled[{}]", path, point.name, i);
      auto p = instances.Get(ref.name, where);
      if (!p) return std::unexpected(p.error());
      if (!point.implements(*p)) {
        return std::unexpected(
            fmt::format("{}: Invalid value: \"{}\": plugin does not extend {} plugin", where, ref.name, point.name));
      }
    }
  }
  return {};
}

// One point's plugins with multiPoint expanded into it, in upstream's order: plugins also listed
// at the point (overrides, in that list's order), then multiPoint plugins, then the point's others.
std::expected<std::vector<config::PluginRef>, std::string> ExpandMultiPoint(const PointSpec& point,
                                                                            const config::Plugins& plugins,
                                                                            const PluginInstances& instances,
                                                                            const std::string& path) {
  const auto& specific = point.set->enabled;
  const auto named = [](std::string_view n) { return [n](const config::PluginRef& r) { return r.name == n; }; };
  const bool disable_all = std::ranges::any_of(point.set->disabled, named("*"));
  std::vector<config::PluginRef> ordered;
  std::vector<config::PluginRef> from_multi;
  std::vector<std::string> overridden;
  if (!disable_all) {
    for (const auto& ref : plugins.multi_point.enabled) {
      if (!point.implements(instances.At(ref.name)) || std::ranges::any_of(point.set->disabled, named(ref.name))) {
        continue;
      }
      if (std::ranges::any_of(specific, named(ref.name))) {
        overridden.push_back(ref.name);
        continue;
      }
      if (std::ranges::any_of(from_multi, named(ref.name))) {
        return std::unexpected(fmt::format("{}.plugins.multiPoint: plugin \"{}\" already registered as \"{}\"", path,
                                           ref.name, point.name));
      }
      from_multi.push_back(ref);
    }
  }
  const auto is_overridden = [&](const config::PluginRef& ref) { return std::ranges::count(overridden, ref.name) > 0; };
  for (const auto& ref : specific) {
    if (is_overridden(ref)) ordered.push_back(ref);
  }
  ordered.insert(ordered.end(), from_multi.begin(), from_multi.end());
  for (const auto& ref : specific) {
    if (is_overridden(ref)) continue;
    if (std::ranges::any_of(ordered, named(ref.name))) {
      return std::unexpected(
          fmt::format("{}.plugins.{}: plugin \"{}\" already registered", path, point.name, ref.name));
    }
    ordered.push_back(ref);
  }
  return ordered;
}

}  // namespace

Framework::~Framework() = default;

std::expected<std::unique_ptr<Framework>, std::string> Framework::Create(const config::Profile& profile,
                                                                         size_t profile_index, const Registry& registry,
                                                                         FrameworkDeps deps) {
  std::unique_ptr<Framework> fw(new Framework());
  fw->profile_name_ = profile.scheduler_name;
  fw->percentage_of_nodes_to_score_ = profile.percentage_of_nodes_to_score;
  fw->deps_ = deps;
  const std::string path = fmt::format("profiles[{}]", profile_index);

  const config::Plugins& plugins = profile.plugins;
  const std::vector<PointSpec> points = ExtensionPoints(plugins);
  PluginInstances instances(profile, registry, *fw, path, fw->owned_);
  if (auto built = InstantiateEnabled(plugins, points, path, instances); !built) return std::unexpected(built.error());
  for (const auto& point : points) {
    auto ordered = ExpandMultiPoint(point, plugins, instances, path);
    if (!ordered) return std::unexpected(ordered.error());
    for (const auto& ref : *ordered) {
      if (auto added = fw->AddAt(point.name, instances.At(ref.name), ref, path); !added) {
        return std::unexpected(added.error());
      }
    }
  }

  if (!fw->queue_sort_)
    return std::unexpected(fmt::format("{}.plugins.queueSort: Required value: no queue sort plugin is enabled", path));
  if (fw->bind_.empty())
    return std::unexpected(fmt::format("{}.plugins.bind: Required value: at least one bind plugin is needed", path));
  fw->CollectPluginTraits();
  return fw;
}

std::expected<void, std::string> Framework::AddAt(std::string_view point, Plugin* p, const config::PluginRef& ref,
                                                  const std::string& path) {
  if (point == "preEnqueue") {
    pre_enqueue_.push_back(dynamic_cast<PreEnqueuePlugin*>(p));
  } else if (point == "queueSort") {
    if (queue_sort_) {
      return std::unexpected(
          fmt::format("{}.plugins.queueSort: Invalid value: only one queue sort plugin can be "
                      "enabled, found \"{}\" and \"{}\"",
                      path, queue_sort_->Name(), ref.name));
    }
    queue_sort_ = dynamic_cast<QueueSortPlugin*>(p);
  } else if (point == "preFilter") {
    pre_filter_.push_back(dynamic_cast<PreFilterPlugin*>(p));
  } else if (point == "filter") {
    filter_.push_back(dynamic_cast<FilterPlugin*>(p));
  } else if (point == "postFilter") {
    post_filter_.push_back(dynamic_cast<PostFilterPlugin*>(p));
  } else if (point == "preScore") {
    pre_score_.push_back(dynamic_cast<PreScorePlugin*>(p));
  } else if (point == "score") {
    score_.push_back(dynamic_cast<ScorePlugin*>(p));
    score_weights_.push_back(ref.weight == 0 ? 1 : ref.weight);
  } else if (point == "reserve") {
    reserve_.push_back(dynamic_cast<ReservePlugin*>(p));
  } else if (point == "permit") {
    permit_.push_back(dynamic_cast<PermitPlugin*>(p));
  } else if (point == "preBind") {
    pre_bind_.push_back(dynamic_cast<PreBindPlugin*>(p));
  } else if (point == "bind") {
    bind_.push_back(dynamic_cast<BindPlugin*>(p));
  } else if (point == "postBind") {
    post_bind_.push_back(dynamic_cast<PostBindPlugin*>(p));
  }
  return {};
}

void Framework::CollectPluginTraits() {
  for (auto* p : filter_) filter_node_local_.push_back(p->FilterIsNodeLocal());
  for (auto* p : score_) score_node_local_.push_back(p->ScoreIsNodeLocal());

  // Plugins that can reject a pod say which events may undo the rejection.
  std::set<Plugin*> seen;
  auto add_enqueue = [&](Plugin* p) {
    if (!seen.insert(p).second) return;
    enqueue_extensions_.push_back(dynamic_cast<EnqueueExtensions*>(p));  // may be null: all events
  };
  for (auto* p : pre_enqueue_) add_enqueue(p);
  for (auto* p : pre_filter_) add_enqueue(p);
  for (auto* p : filter_) add_enqueue(p);
  for (auto* p : reserve_) add_enqueue(p);
  for (auto* p : permit_) add_enqueue(p);
  for (const auto& p : owned_) {
    if (auto* t = dynamic_cast<TimedPlugin*>(p.get())) timed_.push_back(t);
    if (auto* g = dynamic_cast<PodGroupCyclePlugin*>(p.get())) group_cycle_.push_back(g);
  }
}

void Framework::RunPodGroupCycles(const PodInfo& pod) {
  for (PodGroupCyclePlugin* g : group_cycle_) {
    try {
      g->PodGroupCycle(pod);
    } catch (const std::exception& e) {
      KS_LOG.ErrorS(e.what(), "Pod group cycle threw", "plugin", g->Name(), "pod", log::KObj(pod.pod()));
    } catch (...) {
      KS_LOG.ErrorS("non-standard exception", "Pod group cycle threw", "plugin", g->Name(), "pod",
                    log::KObj(pod.pod()));
    }
  }
}

std::vector<std::pair<std::string, std::vector<ClusterEventWithHint>>> Framework::EnqueueEvents() const {
  std::vector<std::pair<std::string, std::vector<ClusterEventWithHint>>> out;
  auto add = [&](Plugin* p) {
    for (const auto& [n, e] : out) {
      if (n == p->Name()) return;
    }
    if (auto* ext = dynamic_cast<EnqueueExtensions*>(p)) {
      std::vector<ClusterEventWithHint> events;
      try {
        events = ext->EventsToRegister();
      } catch (...) {
        // As a plugin that does not say: woken by every event.
        events = {{ClusterEvent{EventResource::kWildCard, action::kAll, "*"}, nullptr}};
      }
      out.emplace_back(std::string(p->Name()), std::move(events));
    } else {
      // A plugin that does not say is woken by every event.
      out.emplace_back(
          std::string(p->Name()),
          std::vector<ClusterEventWithHint>{{ClusterEvent{EventResource::kWildCard, action::kAll, "*"}, nullptr}});
    }
  };
  for (auto* p : pre_enqueue_) add(p);
  for (auto* p : pre_filter_) add(p);
  for (auto* p : filter_) add(p);
  for (auto* p : reserve_) add(p);
  for (auto* p : permit_) add(p);
  return out;
}

// --- Handle ---------------------------------------------------------------------------------

void Framework::IterateOverWaitingPods(const std::function<void(WaitingPod&)>& fn) { deps_.waiting_pods->Iterate(fn); }

std::shared_ptr<WaitingPod> Framework::GetWaitingPod(std::string_view uid) { return deps_.waiting_pods->Get(uid); }

bool Framework::RejectWaitingPod(std::string_view uid) {
  auto wp = deps_.waiting_pods->Get(uid);
  if (!wp) return false;
  wp->Reject("", "removed");
  return true;
}

// --- Extension points -----------------------------------------------------------------------

std::pair<PreFilterResult, Status> Framework::RunPreFilterPlugins(CycleState& state, const PodInfo& pod,
                                                                  std::vector<std::string>* narrowing) {
  PreFilterResult result;
  std::vector<std::string> plugins_with_nodes;
  // As upstream (kubernetes#119770): an Unschedulable PreFilter does not end the point, because
  // preemption runs later in this cycle and needs every PreFilter's state; the last one is returned.
  Status unschedulable;
  std::span<const NodeInfo* const> nodes = snapshot_ ? snapshot_->List() : std::span<const NodeInfo* const>{};
  PointTimer timer(deps_.metrics, metrics::point::kPreFilter, profile_name_);
  auto done = [&](PreFilterResult r, Status st) {
    if (narrowing) *narrowing = std::move(plugins_with_nodes);
    state.skip_filter_mask = 0;
    for (size_t i = 0; i < filter_.size() && i < 64; ++i) {
      if (state.SkipsFilter(filter_[i]->Name())) state.skip_filter_mask |= uint64_t{1} << i;
    }
    state.skip_filter_mask_entries = state.skip_filter_plugins.size();
    return timer.Done(std::pair{std::move(r), std::move(st)});
  };
  for (auto* p : pre_filter_) {
    auto [r, s] = Observed(deps_.metrics, state, "PreFilter", *p, metrics::point::kPreFilter,
                           [&] { return p->PreFilter(state, pod, nodes); });
    if (s.IsSkip()) {
      state.skip_filter_plugins.push_back(p->Name());
      continue;
    }
    if (!s.IsSuccess()) {
      s.WithPlugin(p->Name());
      if (s.code() == Code::kUnschedulable) {
        unschedulable = std::move(s);
        continue;
      }
      // UnschedulableAndUnresolvable (preemption cannot help: nothing more to prepare) and Pending.
      if (s.IsRejected()) return timer.Done(std::pair{PreFilterResult{}, std::move(s)});
      return timer.Done(std::pair{
          PreFilterResult{}, Status::Error(fmt::format("running PreFilter plugin \"{}\": {}", p->Name(), s.Message()))
                                 .WithPlugin(p->Name())});
    }
    if (!r.AllNodes()) plugins_with_nodes.emplace_back(p->Name());
    result = result.Merge(r);
    if (!result.AllNodes() && result.node_names->empty()) {
      // The nodes a PreFilter result leaves out are UnschedulableAndUnresolvable for the cycle,
      // and the plugins that narrowed them are the ones whose events may help.
      std::string msg =
          plugins_with_nodes.size() == 1
              ? fmt::format("node(s) didn't satisfy plugin {}", plugins_with_nodes[0])
              : fmt::format("node(s) didn't satisfy plugin(s) {} simultaneously", JoinNames(plugins_with_nodes));
      return done(std::move(result), Status(Code::kUnschedulableAndUnresolvable, msg));
    }
  }
  return done(std::move(result), std::move(unschedulable));
}

Status Framework::RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod_to_schedule,
                                              const PodInfo& pod_to_add, const NodeInfo& node_info) {
  for (auto* p : pre_filter_) {
    if (state.SkipsFilter(p->Name())) continue;
    PreFilterExtensions* ext = p->GetPreFilterExtensions();
    if (!ext) continue;
    Status s = Observed(deps_.metrics, state, "AddPod", *p, metrics::point::kPreFilterExtensionAddPod,
                        [&] { return ext->AddPod(state, pod_to_schedule, pod_to_add, node_info); });
    if (!s.IsSuccess()) {
      return Status::Error(fmt::format("running AddPod on PreFilter plugin \"{}\": {}", p->Name(), s.Message()))
          .WithPlugin(p->Name());
    }
  }
  return {};
}

Status Framework::RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                                                 const PodInfo& pod_to_remove, const NodeInfo& node_info) {
  for (auto* p : pre_filter_) {
    if (state.SkipsFilter(p->Name())) continue;
    PreFilterExtensions* ext = p->GetPreFilterExtensions();
    if (!ext) continue;
    Status s = Observed(deps_.metrics, state, "RemovePod", *p, metrics::point::kPreFilterExtensionRemovePod,
                        [&] { return ext->RemovePod(state, pod_to_schedule, pod_to_remove, node_info); });
    if (!s.IsSuccess()) {
      return Status::Error(fmt::format("running RemovePod on PreFilter plugin \"{}\": {}", p->Name(), s.Message()))
          .WithPlugin(p->Name());
    }
  }
  return {};
}

Status Framework::RunFilterPlugins(const CycleState& state, const PodInfo& pod, const NodeInfo& node_info) {
  const bool use_mask = filter_.size() <= 64 && state.skip_filter_mask_entries == state.skip_filter_plugins.size();
  for (size_t i = 0; i < filter_.size(); ++i) {
    FilterPlugin* p = filter_[i];
    if (!state.skip_filter_plugins.empty()) {
      bool skip = use_mask ? (state.skip_filter_mask >> i) & 1 : state.SkipsFilter(p->Name());
      if (skip) continue;
    }
    Status s = Observed(deps_.metrics, state, "Filter", *p, metrics::point::kFilter,
                        [&] { return p->Filter(state, pod, node_info); });
    if (!s.IsSuccess()) {
      if (!s.IsRejected()) {
        return Status::Error(fmt::format("running \"{}\" filter plugin: {}", p->Name(), s.Message()))
            .WithPlugin(p->Name());
      }
      s.WithPlugin(p->Name());
      return s;
    }
  }
  return {};
}

std::vector<std::pair<std::string_view, Status>> Framework::ExplainFilter(const CycleState& state, const PodInfo& pod,
                                                                          const NodeInfo& node_info) {
  std::vector<std::pair<std::string_view, Status>> out;
  for (auto* p : filter_) {
    if (state.SkipsFilter(p->Name())) {
      out.emplace_back(p->Name(), Status::Skip());
      continue;
    }
    out.emplace_back(p->Name(), Guard("Filter", [&] { return p->Filter(state, pod, node_info); }));
  }
  return out;
}

std::vector<PodInfoPtr> Framework::NominatedPodsToCount(const PodInfo& pod, const NodeInfo& node_info) const {
  std::vector<PodInfoPtr> nominated;
  if (deps_.nominator && deps_.nominator->HasNominatedPods()) {
    // A planned pod on its own planned node does not count the other pods planned there: its plan
    // made room for them, and they arrive in the plan's order. Anywhere else (its plan no longer
    // fits) they hold their room against it as against any pod.
    const bool planned_here =
        deps_.nominator->IsPlanned(pod.pod()) && deps_.nominator->NominatedNodeOf(pod.pod()) == node_info.name();
    for (auto& p : deps_.nominator->NominatedPodsForNode(node_info.name())) {
      if (p->pod().metadata.uid == pod.pod().metadata.uid) continue;
      const bool planned = deps_.nominator->IsPlanned(p->pod());
      if (planned ? !planned_here : p->pod().Priority() >= pod.pod().Priority()) {
        nominated.push_back(std::move(p));
      }
    }
  }
  return nominated;
}

EquivalenceClass* Framework::EquivalenceClassFor(const PodInfo& pod) {
  if (snapshot_ == nullptr) return nullptr;
  bool any = false;
  for (bool b : filter_node_local_) any |= b;
  for (bool b : score_node_local_) any |= b;
  if (!any) return nullptr;
  return equivalence_.ClassFor(PodClassKey(pod.pod()), snapshot_->List().size(), score_.size());
}

bool Framework::FilterVerdictsMemoizable(const CycleState& state) const {
  for (size_t i = 0; i < filter_.size(); ++i) {
    if (!filter_node_local_[i] && !state.SkipsFilter(filter_[i]->Name())) return false;
  }
  return true;
}

Status Framework::RunFilterPluginsWithNominatedPods(CycleState& state, const PodInfo& pod, const NodeInfo& node_info,
                                                    bool* counted_nominated) {
  // Upstream runs Filter twice when the node has nominated pods of equal or higher priority:
  // once as if they were running there (they may need the resources) and once without them
  // (inter-pod affinity must not depend on pods that may never run). Both must pass. Pods a batch
  // placement planned on the node count for every pod outside a plan, whatever its priority (the
  // plan holds their room); a planned pod on its planned node does not count the other planned
  // pods there, which its plan already made room for and which arrive in the plan's order.
  std::vector<PodInfoPtr> nominated = NominatedPodsToCount(pod, node_info);
  if (counted_nominated) *counted_nominated = !nominated.empty();
  if (!nominated.empty()) {
    NodeInfo with = node_info;
    std::unique_ptr<CycleState> state_with = state.Clone();
    for (const auto& p : nominated) {
      with.AddPod(p);
      Status s = RunPreFilterExtensionAddPod(*state_with, pod, *p, with);
      if (!s.IsSuccess()) return s;
    }
    Status s = RunFilterPlugins(*state_with, pod, with);
    if (!s.IsSuccess()) return s;
  }
  return RunFilterPlugins(state, pod, node_info);
}

std::pair<PostFilterResult, Status> Framework::RunPostFilterPlugins(CycleState& state, const PodInfo& pod,
                                                                    const NodeToStatus& statuses) {
  std::vector<std::string> reasons;
  // As upstream: the last result that asks for a change of nomination (a plugin that found no
  // candidate clears a stale one) is kept when every plugin rejects; the first rejector is named.
  PostFilterResult result;
  std::string rejector;
  PointTimer timer(deps_.metrics, metrics::point::kPostFilter, profile_name_);
  for (auto* p : post_filter_) {
    auto [r, s] = Observed(deps_.metrics, state, "PostFilter", *p, metrics::point::kPostFilter,
                           [&] { return p->PostFilter(state, pod, statuses); });
    s.WithPlugin(p->Name());
    if (s.IsSuccess()) return timer.Done(std::pair{std::move(r), std::move(s)});
    if (s.code() == Code::kUnschedulableAndUnresolvable) return timer.Done(std::pair{std::move(r), std::move(s)});
    if (!s.IsRejected()) {
      return timer.Done(std::pair{
          PostFilterResult{}, Status::Error(fmt::format("running PostFilter plugin \"{}\": {}", p->Name(), s.Message()))
                                  .WithPlugin(p->Name())});
    }
    if (r.mode != NominatingMode::kNoop) result = std::move(r);
    for (const auto& reason : s.reasons()) reasons.push_back(reason);
    if (rejector.empty()) rejector = std::string(p->Name());
  }
  Status out(Code::kUnschedulable, std::move(reasons));
  out.WithPlugin(rejector);
  return timer.Done(std::pair{std::move(result), std::move(out)});
}

Status Framework::RunPreScorePlugins(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes) {
  PointTimer timer(deps_.metrics, metrics::point::kPreScore, profile_name_);
  for (auto* p : pre_score_) {
    Status s = Observed(deps_.metrics, state, "PreScore", *p, metrics::point::kPreScore,
                        [&] { return p->PreScore(state, pod, nodes); });
    if (s.IsSkip()) {
      state.skip_score_plugins.push_back(p->Name());
      continue;
    }
    if (!s.IsSuccess()) {
      return timer.Done(Status::Error(fmt::format("running PreScore plugin \"{}\": {}", p->Name(), s.Message()))
                            .WithPlugin(p->Name()));
    }
  }
  return timer.Done(Status());
}

std::pair<std::vector<NodePluginScores>, Status> Framework::RunScorePlugins(const CycleState& state, const PodInfo& pod,
                                                                            std::span<const NodeInfo* const> nodes,
                                                                            bool with_details, EquivalenceClass* memo) {
  PointTimer timer(deps_.metrics, metrics::point::kScore, profile_name_);
  // Plugins that run this cycle.
  std::vector<size_t> active;
  active.reserve(score_.size());
  for (size_t i = 0; i < score_.size(); ++i) {
    if (!state.SkipsScore(score_[i]->Name())) active.push_back(i);
  }
  const size_t num_nodes = nodes.size();
  // Per-plugin score lists are kept across cycles (the scheduling cycle is serial), so a cycle
  // allocates nothing for them once they have grown to the usual number of feasible nodes.
  std::vector<NodeScoreList>& per_plugin = score_scratch_;
  if (per_plugin.size() < active.size()) per_plugin.resize(active.size());
  for (size_t k = 0; k < active.size(); ++k) per_plugin[k].resize(num_nodes);
  std::atomic<bool> failed{false};
  Status first_error;
  std::mutex error_mu;

  // Decided once per cycle, not per node and plugin: this loop is the scheduler's hottest.
  const bool timed = deps_.metrics != nullptr && state.record_plugin_metrics;
  // A node-local plugin's raw score for the pod's class on an unchanged node is what it returned
  // last time (nodes are distinct across threads, so are the memo's slots).
  std::vector<uint8_t> memoizable(active.size(), 0);
  for (size_t k = 0; k < active.size(); ++k) memoizable[k] = memo != nullptr && score_node_local_[active[k]];
  auto score_node = [&, timed](int idx) {
    const NodeInfo& node = *nodes[static_cast<size_t>(idx)];
    const std::string_view name = node.name();
    for (size_t k = 0; k < active.size(); ++k) {
      const size_t plugin = active[k];
      if (memoizable[k]) {
        if (std::optional<int64_t> cached = memo->FindScore(plugin, node)) {
          per_plugin[k][static_cast<size_t>(idx)] = NodeScore{name, *cached};
          continue;
        }
      }
      auto score_call = [&] { return score_[plugin]->Score(state, pod, node); };
      auto [score, s] =
          timed ? Observed(deps_.metrics, state, "Score", *score_[plugin], metrics::point::kScore, score_call)
                : Guard("Score", score_call);
      if (!s.IsSuccess()) {
        std::lock_guard lock(error_mu);
        if (!failed.exchange(true)) {
          first_error =
              Status::Error(fmt::format("running Score plugin \"{}\": {}", score_[active[k]]->Name(), s.Message()));
          first_error.WithPlugin(score_[active[k]]->Name());
        }
        return;
      }
      if (memoizable[k]) memo->StoreScore(plugin, node, score);
      per_plugin[k][static_cast<size_t>(idx)] = NodeScore{name, score};
    }
  };
  // Remembered scores first, on this thread: a lookup per plugin, and on a busy cluster most
  // nodes have them all. Only the nodes left are scored, shared with the workers when that work
  // is worth handing out (a node's scores take well under a microsecond on most clusters).
  std::vector<uint32_t>& to_score = score_to_run_;
  to_score.clear();
  const bool all_memoizable = std::all_of(memoizable.begin(), memoizable.end(), [](uint8_t m) { return m != 0; });
  for (size_t i = 0; i < num_nodes; ++i) {
    const NodeInfo& node = *nodes[i];
    bool complete = all_memoizable;
    for (size_t k = 0; complete && k < active.size(); ++k) {
      if (std::optional<int64_t> cached = memo->FindScore(active[k], node)) {
        per_plugin[k][i] = NodeScore{node.name(), *cached};
      } else {
        complete = false;
      }
    }
    if (!complete) to_score.push_back(static_cast<uint32_t>(i));
  }
  auto score_listed = [&](int j) { score_node(static_cast<int>(to_score[static_cast<size_t>(j)])); };
  deps_.parallelizer->UntilWorthIt(static_cast<int>(to_score.size()), score_listed, score_loop_cost_);
  if (failed) return timer.Done(std::pair{std::vector<NodePluginScores>{}, first_error});

  std::vector<std::vector<int64_t>> raw;
  if (with_details) {
    raw.resize(active.size());
    for (size_t k = 0; k < active.size(); ++k) {
      raw[k].reserve(num_nodes);
      for (size_t i = 0; i < num_nodes; ++i) raw[k].push_back(per_plugin[k][i].score);
    }
  }
  for (size_t k = 0; k < active.size(); ++k) {
    ScorePlugin* p = score_[active[k]];
    if (ScoreExtensions* ext = p->GetScoreExtensions()) {
      Status s = Observed(deps_.metrics, state, "NormalizeScore", *p, metrics::point::kScoreExtensionNormalize,
                          [&] { return ext->NormalizeScore(state, pod, per_plugin[k]); });
      if (!s.IsSuccess()) {
        return timer.Done(
            std::pair{std::vector<NodePluginScores>{},
                      Status::Error(fmt::format("running Normalize on Score plugin \"{}\": {}", p->Name(), s.Message()))
                          .WithPlugin(p->Name())});
      }
    }
  }

  std::vector<NodePluginScores> out(num_nodes);
  for (size_t i = 0; i < num_nodes; ++i) {
    out[i].node = nodes[i];
    if (with_details) out[i].scores.reserve(active.size());
  }
  for (size_t k = 0; k < active.size(); ++k) {
    ScorePlugin* p = score_[active[k]];
    int64_t weight = score_weights_[active[k]];
    const NodeScoreList& scores = per_plugin[k];
    for (size_t i = 0; i < num_nodes; ++i) {
      int64_t s = scores[i].score;
      if (s > kMaxNodeScore || s < kMinNodeScore) {
        return timer.Done(std::pair{
            std::vector<NodePluginScores>{},
            Status::Error(fmt::format("plugin \"{}\" returns an invalid score {}, it should in the range of [{}, {}] "
                                      "after normalizing",
                                      p->Name(), s, kMinNodeScore, kMaxNodeScore))
                .WithPlugin(p->Name())});
      }
      out[i].total += s * weight;
    }
    if (with_details) {
      for (size_t i = 0; i < num_nodes; ++i) {
        const int64_t s = scores[i].score;
        out[i].scores.push_back(PluginScore{p->Name(), s * weight, raw[k][i], s, weight});
      }
    }
  }
  return timer.Done(std::pair{std::move(out), Status()});
}

Status Framework::RunReservePluginsReserve(CycleState& state, const PodInfo& pod, const std::string& node_name) {
  PointTimer timer(deps_.metrics, metrics::point::kReserve, profile_name_);
  for (auto* p : reserve_) {
    Status s = Observed(deps_.metrics, state, "Reserve", *p, metrics::point::kReserve,
                        [&] { return p->Reserve(state, pod, node_name); });
    if (!s.IsSuccess()) {
      s.WithPlugin(p->Name());
      if (s.IsRejected()) return timer.Done(std::move(s));
      return timer.Done(Status::Error(fmt::format("running Reserve plugin \"{}\": {}", p->Name(), s.Message()))
                            .WithPlugin(p->Name()));
    }
  }
  return timer.Done(Status());
}

void Framework::RunReservePluginsUnreserve(CycleState& state, const PodInfo& pod, const std::string& node_name) {
  PointTimer timer(deps_.metrics, metrics::point::kUnreserve, profile_name_);
  for (auto it = reserve_.rbegin(); it != reserve_.rend(); ++it) {
    Observed(deps_.metrics, state, "Unreserve", **it, metrics::point::kUnreserve,
             [&] { (*it)->Unreserve(state, pod, node_name); });
  }
  timer.Done();
}

Status Framework::RunPermitPlugins(CycleState& state, const PodInfoPtr& pod, const std::string& node_name,
                                   WaitingPodImpl::OnDone on_done) {
  std::map<std::string_view, int64_t> deadlines;
  const int64_t now = deps_.clock->NowNs();
  // Upstream caps a Permit wait at 15 minutes.
  constexpr int64_t kMaxWaitNs = 15LL * 60 * util::kNanosPerSecond;
  PointTimer timer(deps_.metrics, metrics::point::kPermit, profile_name_);
  for (auto* p : permit_) {
    auto [s, timeout] = Observed(deps_.metrics, state, "Permit", *p, metrics::point::kPermit,
                                 [&] { return p->Permit(state, *pod, node_name); });
    if (s.IsSuccess()) continue;
    if (s.IsWait()) {
      int64_t t = std::min<int64_t>(timeout.count(), kMaxWaitNs);
      deadlines[p->Name()] = now + t;
      continue;
    }
    s.WithPlugin(p->Name());
    if (s.IsRejected()) return timer.Done(std::move(s));
    return timer.Done(
        Status::Error(fmt::format("running Permit plugin \"{}\": {}", p->Name(), s.Message())).WithPlugin(p->Name()));
  }
  if (!deadlines.empty()) {
    auto wp = std::make_shared<WaitingPodImpl>(pod, std::move(deadlines), std::move(on_done));
    deps_.waiting_pods->Add(std::move(wp), now);
    return timer.Done(Status::Wait());
  }
  return timer.Done(Status());
}

Status Framework::RunPreBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node_name) {
  PointTimer timer(deps_.metrics, metrics::point::kPreBind, profile_name_);
  for (auto* p : pre_bind_) {
    Status s = Observed(deps_.metrics, state, "PreBind", *p, metrics::point::kPreBind,
                        [&] { return p->PreBind(state, pod, node_name); });
    if (s.IsSkip()) continue;
    if (!s.IsSuccess()) {
      s.WithPlugin(p->Name());
      if (s.IsRejected()) return timer.Done(std::move(s));
      return timer.Done(Status::Error(fmt::format("running PreBind plugin \"{}\": {}", p->Name(), s.Message()))
                            .WithPlugin(p->Name()));
    }
  }
  return timer.Done(Status());
}

Status Framework::RunBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node_name) {
  Status last = Status::Skip();
  PointTimer timer(deps_.metrics, metrics::point::kBind, profile_name_);
  for (auto* p : bind_) {
    Status s = Observed(deps_.metrics, state, "Bind", *p, metrics::point::kBind,
                        [&] { return p->Bind(state, pod, node_name); });
    if (s.IsSkip()) continue;
    s.WithPlugin(p->Name());
    if (!s.IsSuccess()) {
      if (s.IsRejected()) return timer.Done(std::move(s));
      return timer.Done(
          Status::Error(fmt::format("running Bind plugin \"{}\": {}", p->Name(), s.Message())).WithPlugin(p->Name()));
    }
    return timer.Done(std::move(s));
  }
  return timer.Done(std::move(last));
}

void Framework::RunPostBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node_name) {
  PointTimer timer(deps_.metrics, metrics::point::kPostBind, profile_name_);
  for (auto* p : post_bind_) {
    Observed(deps_.metrics, state, "PostBind", *p, metrics::point::kPostBind,
             [&] { p->PostBind(state, pod, node_name); });
  }
  timer.Done();
}

std::vector<std::string> Framework::PluginNames(std::string_view point) const {
  std::vector<std::string> out;
  auto add = [&](const auto& list) {
    for (auto* p : list) out.emplace_back(p->Name());
  };
  if (point == "preEnqueue")
    add(pre_enqueue_);
  else if (point == "queueSort") {
    if (queue_sort_) out.emplace_back(queue_sort_->Name());
  } else if (point == "preFilter")
    add(pre_filter_);
  else if (point == "filter")
    add(filter_);
  else if (point == "postFilter")
    add(post_filter_);
  else if (point == "preScore")
    add(pre_score_);
  else if (point == "score") {
    for (size_t i = 0; i < score_.size(); ++i)
      out.push_back(fmt::format("{}:{}", score_[i]->Name(), score_weights_[i]));
  } else if (point == "reserve")
    add(reserve_);
  else if (point == "permit")
    add(permit_);
  else if (point == "preBind")
    add(pre_bind_);
  else if (point == "bind")
    add(bind_);
  else if (point == "postBind")
    add(post_bind_);
  return out;
}

std::vector<std::pair<std::string, int64_t>> Framework::ScoreWeights() const {
  std::vector<std::pair<std::string, int64_t>> out;
  for (size_t i = 0; i < score_.size(); ++i) out.emplace_back(std::string(score_[i]->Name()), score_weights_[i]);
  return out;
}

std::pair<std::vector<int64_t>, Status> Framework::RunScoreTotals(CycleState& state, const PodInfo& pod,
                                                                  std::span<const NodeInfo* const> nodes) {
  std::vector<int64_t> totals(nodes.size(), 0);
  if (score_.empty() || nodes.empty()) return {totals, Status()};
  if (Status s = RunPreScorePlugins(state, pod, nodes); !s.IsSuccess()) return {totals, s};
  auto [scores, status] = RunScorePlugins(state, pod, nodes);
  if (!status.IsSuccess()) return {totals, status};
  for (size_t i = 0; i < scores.size() && i < totals.size(); ++i) totals[i] = scores[i].total;
  return {totals, Status()};
}

Plugin* Framework::GetPlugin(std::string_view name) const {
  for (const auto& p : owned_) {
    if (p->Name() == name) return p.get();
  }
  return nullptr;
}

std::any Framework::PluginStatistics(std::string_view name) const {
  const auto* reporter = dynamic_cast<const StatisticsReporter*>(GetPlugin(name));
  return reporter != nullptr ? reporter->Statistics() : std::any();
}

std::vector<std::pair<std::string, std::string>> Framework::ExplainPod(const api::Pod& pod) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& p : owned_) {
    const auto* explainer = dynamic_cast<const PodExplainer*>(p.get());
    if (!explainer) continue;
    std::string text = explainer->ExplainPod(pod);
    if (!text.empty()) out.emplace_back(std::string(p->Name()), std::move(text));
  }
  return out;
}

}  // namespace kubesched::framework::runtime
