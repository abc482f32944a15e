#include "framework/runtime/framework.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/types.h"
#include "framework/registry.h"
#include "testing/args.h"
#include "testing/builders.h"
#include "testing/fake_handle.h"
#include "testing/framework_deps.h"
#include "testing/printers.h"
#include "util/clock.h"

// The framework runtime on its own: a profile's configuration turned into per-point plugin lists,
// and each extension point run with upstream's rules, with small fake plugins whose behaviour each
// test scripts. Time is the VirtualClock the runtime is given: nothing sleeps.

namespace kubesched::framework {
// Codes by name in failure messages (testing/printers.h prints whole statuses).
inline void PrintTo(Code code, std::ostream* os) { *os << ToString(code); }
}  // namespace kubesched::framework

namespace kubesched::framework::runtime {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::MakeNode;
using testing::MakePod;
using Names = std::vector<std::string>;

constexpr int64_t kStart = 1'000 * util::kNanosPerSecond;

// What one test's fake plugins do and what they were asked, shared by the test and every plugin the
// registry builds. Set before the framework runs (the maps are only read while plugins run, from
// any thread); calls are recorded under the lock.
struct Script {
  //! "<Point>:<plugin>" → the status that call returns; Success when absent.
  std::map<std::string, Status, std::less<>> status;
  //! "<Point>:<plugin>" calls that throw instead of returning.
  std::set<std::string, std::less<>> throws;
  //! "<plugin>:<node>" → the plugin's raw score for the node; 0 when absent.
  std::map<std::string, int64_t, std::less<>> scores;
  //! plugin → how long its Permit asks the pod to wait (when its status is Wait).
  std::map<std::string, std::chrono::nanoseconds, std::less<>> wait;
  //! plugin → the nodes its PreFilter restricts the cycle to; all nodes when absent.
  std::map<std::string, std::set<std::string>, std::less<>> pre_filter_nodes;

  Status StatusOf(std::string_view point, std::string_view plugin) const {
    const std::string key = fmt::format("{}:{}", point, plugin);
    if (throws.contains(key)) throw std::runtime_error("kaboom");
    auto it = status.find(key);
    return it == status.end() ? Status() : it->second;
  }
  void Record(std::string call) {
    std::lock_guard lock(mu);
    calls.push_back(std::move(call));
  }
  void Built(std::string_view plugin) {
    std::lock_guard lock(mu);
    ++builds[std::string(plugin)];
  }
  //! The calls of one extension point in the order they were made, e.g. {"Filter:A:n0", ...}.
  Names CallsAt(std::string_view point) const {
    std::lock_guard lock(mu);
    Names out;
    const std::string prefix = fmt::format("{}:", point);
    for (const auto& c : calls) {
      if (c.starts_with(prefix)) out.push_back(c);
    }
    return out;
  }
  void ClearCalls() {
    std::lock_guard lock(mu);
    calls.clear();
  }

  mutable std::mutex mu;
  Names calls;                        // guarded by mu
  std::map<std::string, int> builds;  // guarded by mu
};

// Every fake plugin is a FakeBase (its name and the script) plus one part per extension point it
// implements; the runtime tells the points apart by dynamic_cast, as it does for real plugins.
class FakeBase : public virtual Plugin {
 public:
  FakeBase() = default;
  FakeBase(std::string_view name, Script* script) : name_(name), script_(script) {}
  std::string_view Name() const override { return name_; }

 protected:
  //! Records "<point>:<plugin>[:<detail>]" and returns the scripted status.
  Status Called(std::string_view point, std::string_view detail = {}) const {
    script_->Record(detail.empty() ? fmt::format("{}:{}", point, name_)
                                   : fmt::format("{}:{}:{}", point, name_, detail));
    return script_->StatusOf(point, name_);
  }
  Script& script() const { return *script_; }

 private:
  std::string_view name_;
  Script* script_ = nullptr;
};

class QueueSortPart : public virtual FakeBase, public QueueSortPlugin {
 public:
  bool Less(const QueuedPodInfo&, const QueuedPodInfo&) const override { return false; }
};

class PreFilterPart : public virtual FakeBase, public PreFilterPlugin {
 public:
  std::pair<PreFilterResult, Status> PreFilter(CycleState&, const PodInfo&, std::span<const NodeInfo* const>) override {
    Status s = Called("PreFilter");
    PreFilterResult r;
    if (auto it = script().pre_filter_nodes.find(Name()); it != script().pre_filter_nodes.end()) {
      r.node_names = it->second;
    }
    return {std::move(r), std::move(s)};
  }
};

class FilterPart : public virtual FakeBase, public FilterPlugin {
 public:
  Status Filter(const CycleState&, const PodInfo&, const NodeInfo& node_info) override {
    return Called("Filter", node_info.name());
  }
};

class PostFilterPart : public virtual FakeBase, public PostFilterPlugin {
 public:
  std::pair<PostFilterResult, Status> PostFilter(CycleState&, const PodInfo&, const NodeToStatus&) override {
    Status s = Called("PostFilter");
    PostFilterResult r;
    if (s.IsSuccess()) r = PostFilterResult{NominatingMode::kOverride, fmt::format("nominated-by-{}", Name())};
    return {std::move(r), std::move(s)};
  }
};

class PreScorePart : public virtual FakeBase, public PreScorePlugin {
 public:
  Status PreScore(CycleState&, const PodInfo&, std::span<const NodeInfo* const>) override { return Called("PreScore"); }
};

class ScorePart : public virtual FakeBase, public ScorePlugin {
 public:
  std::pair<int64_t, Status> Score(const CycleState&, const PodInfo&, const NodeInfo& node_info) override {
    Status s = Called("Score", node_info.name());
    auto it = script().scores.find(fmt::format("{}:{}", Name(), node_info.name()));
    return {it == script().scores.end() ? 0 : it->second, std::move(s)};
  }
};

// A score plugin whose NormalizeScore scales its scores so that the highest is 100.
class NormalizedScorePart : public ScorePart, public ScoreExtensions {
 public:
  ScoreExtensions* GetScoreExtensions() override { return this; }
  Status NormalizeScore(const CycleState&, const PodInfo&, NodeScoreList& scores) override {
    Status s = Called("NormalizeScore");
    int64_t highest = 0;
    for (const auto& ns : scores) highest = std::max(highest, ns.score);
    if (highest > 0) {
      for (auto& ns : scores) ns.score = ns.score * kMaxNodeScore / highest;
    }
    return s;
  }
};

class ReservePart : public virtual FakeBase, public ReservePlugin {
 public:
  Status Reserve(CycleState&, const PodInfo&, const std::string& node_name) override {
    return Called("Reserve", node_name);
  }
  void Unreserve(CycleState&, const PodInfo&, const std::string& node_name) override {
    (void)Called("Unreserve", node_name);
  }
};

class PermitPart : public virtual FakeBase, public PermitPlugin {
 public:
  std::pair<Status, std::chrono::nanoseconds> Permit(CycleState&, const PodInfo&,
                                                     const std::string& node_name) override {
    Status s = Called("Permit", node_name);
    auto it = script().wait.find(Name());
    return {std::move(s), it == script().wait.end() ? 0ns : it->second};
  }
};

class PreBindPart : public virtual FakeBase, public PreBindPlugin {
 public:
  Status PreBind(CycleState&, const PodInfo&, const std::string& node_name) override {
    return Called("PreBind", node_name);
  }
};

class BindPart : public virtual FakeBase, public BindPlugin {
 public:
  Status Bind(CycleState&, const PodInfo&, const std::string& node_name) override { return Called("Bind", node_name); }
};

class PostBindPart : public virtual FakeBase, public PostBindPlugin {
 public:
  void PostBind(CycleState&, const PodInfo&, const std::string& node_name) override {
    (void)Called("PostBind", node_name);
  }
};

template <class... Parts>
class Fake final : public Parts... {
 public:
  Fake(std::string_view name, Script* script) : FakeBase(name, script) {}
};

// Every point of a scheduling and binding cycle except QueueSort and Bind (which a profile needs
// exactly one / at least one of, so they are plugins of their own).
using Full = Fake<PreFilterPart, FilterPart, PostFilterPart, PreScorePart, ScorePart, ReservePart, PermitPart,
                  PreBindPart, PostBindPart>;

// Plugin names: string constants with static storage, as Plugin::Name requires.
constexpr std::string_view kSort = "Sort";
constexpr std::string_view kSort2 = "Sort2";
constexpr std::string_view kBinder = "Binder";
constexpr std::string_view kBinder2 = "Binder2";
constexpr std::string_view kA = "A";  // Full
constexpr std::string_view kB = "B";  // Full
constexpr std::string_view kC = "C";  // Full
constexpr std::string_view kX = "X";  // Filter only
constexpr std::string_view kN = "N";  // Score with NormalizeScore only
constexpr std::string_view kPicky = "Picky";

template <class P>
void Add(Registry& registry, std::string_view name, Script& script) {
  auto added = registry.Register(
      std::string(name),
      [name, &script](const ArgsView&, Handle&) -> std::expected<std::unique_ptr<Plugin>, std::string> {
        script.Built(name);
        return std::make_unique<P>(name, &script);
      });
  ASSERT_TRUE(added.has_value()) << added.error();
}

struct PermitOutcome {
  std::mutex mu;
  std::vector<Status> done;  // guarded by mu

  WaitingPodImpl::OnDone Callback() {
    return [this](Status s) {
      std::lock_guard lock(mu);
      done.push_back(std::move(s));
    };
  }
  std::vector<Status> Done() {
    std::lock_guard lock(mu);
    return done;
  }
};

class FrameworkTest : public ::testing::Test {
 protected:
  FrameworkTest()
      : snapshot_({MakeNode().Name("n0").Obj(), MakeNode().Name("n1").Obj(), MakeNode().Name("n2").Obj()}, {}) {
    Add<Fake<QueueSortPart>>(registry_, kSort, script_);
    Add<Fake<QueueSortPart>>(registry_, kSort2, script_);
    Add<Fake<BindPart>>(registry_, kBinder, script_);
    Add<Fake<BindPart>>(registry_, kBinder2, script_);
    Add<Full>(registry_, kA, script_);
    Add<Full>(registry_, kB, script_);
    Add<Full>(registry_, kC, script_);
    Add<Fake<FilterPart>>(registry_, kX, script_);
    Add<Fake<NormalizedScorePart>>(registry_, kN, script_);
    auto added = registry_.Register(
        std::string(kPicky), [](const ArgsView& args, Handle&) -> std::expected<std::unique_ptr<Plugin>, std::string> {
          return std::unexpected(args.IsNull() ? std::string("needs args") : std::string("level: Invalid value: 7"));
        });
    EXPECT_TRUE(added.has_value());
  }

  //! A profile with only the required queue sort and bind plugins.
  static config::Profile BaseProfile() {
    config::Profile p;
    p.scheduler_name = "test-scheduler";
    p.plugins.queue_sort.enabled = {{std::string(kSort)}};
    p.plugins.bind.enabled = {{std::string(kBinder)}};
    return p;
  }

  FrameworkDeps Deps() { return fakes_.Deps(); }

  std::expected<std::unique_ptr<Framework>, std::string> Create(const config::Profile& profile, size_t index = 0) {
    return Framework::Create(profile, index, registry_, Deps());
  }

  //! The framework for a valid profile, with the fixture's snapshot (nodes n0, n1, n2).
  std::unique_ptr<Framework> Build(const config::Profile& profile) {
    auto fw = Create(profile);
    EXPECT_TRUE(fw.has_value()) << fw.error();
    if (!fw) return nullptr;
    (*fw)->set_snapshot(&snapshot_);
    return std::move(*fw);
  }

  //! The framework for a profile whose Permit point runs `plugins` in order: each plugin named in
  //! `waits` asks the pod to wait that long, the others allow it (unless the test scripts more).
  std::unique_ptr<Framework> BuildPermit(
      std::initializer_list<std::string_view> plugins,
      std::initializer_list<std::pair<std::string_view, std::chrono::nanoseconds>> waits = {}) {
    config::Profile p = BaseProfile();
    for (std::string_view name : plugins) p.plugins.permit.enabled.push_back({std::string(name), 0});
    for (const auto& [plugin, wait] : waits) {
      script_.status[fmt::format("Permit:{}", plugin)] = Status::Wait();
      script_.wait[std::string(plugin)] = wait;
    }
    return Build(p);
  }

  //! The framework for a profile whose PreFilter point runs `pre_filters` in order and whose
  //! Filter point runs `filters`.
  std::unique_ptr<Framework> BuildPreFilter(std::initializer_list<std::string_view> pre_filters,
                                            std::initializer_list<std::string_view> filters = {}) {
    config::Profile p = BaseProfile();
    for (std::string_view name : pre_filters) p.plugins.pre_filter.enabled.push_back({std::string(name), 0});
    for (std::string_view name : filters) p.plugins.filter.enabled.push_back({std::string(name), 0});
    return Build(p);
  }

  //! The error Create returns for an invalid profile.
  std::string CreateError(const config::Profile& profile, size_t index = 0) {
    auto fw = Create(profile, index);
    EXPECT_FALSE(fw.has_value()) << "the profile was accepted";
    return fw ? std::string() : fw.error();
  }

  std::span<const NodeInfo* const> Nodes() const { return snapshot_.List(); }
  const NodeInfo& Node(size_t i) const { return *snapshot_.List()[i]; }

  Script script_;
  Registry registry_;
  testing::FakeFrameworkDeps fakes_{kStart, /*workers=*/2};
  testing::FakeSnapshot snapshot_;
  PodInfoPtr pod_ = MakePod().Name("p").Namespace("default").UID("uid-p").Info();
};

config::PluginRef Ref(std::string_view name, int32_t weight = 0) { return {std::string(name), weight}; }

// --- Configuration to lists ------------------------------------------------------------------

TEST_F(FrameworkTest, MultiPointExpandsAfterThePointsOverridesAndBeforeItsOtherPlugins) {
  config::Profile p;
  p.scheduler_name = "test-scheduler";
  // Sort and Binder implement one point each: multiPoint puts them only there.
  p.plugins.multi_point.enabled = {Ref(kSort), Ref(kA, 2), Ref(kB), Ref(kC), Ref(kBinder)};
  // C is also listed at filter (an override: it comes first), X only there (after multiPoint's).
  p.plugins.filter.enabled = {Ref(kC), Ref(kX)};
  // B's own score entry overrides its multiPoint one, weight included; N is score's own.
  p.plugins.score.enabled = {Ref(kN), Ref(kB, 5)};
  // Two overrides keep the point's order, not multiPoint's.
  p.plugins.reserve.enabled = {Ref(kC), Ref(kA)};
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);

  EXPECT_EQ(fw->PluginNames("queueSort"), Names{"Sort"});
  EXPECT_EQ(fw->PluginNames("bind"), Names{"Binder"});
  EXPECT_EQ(fw->PluginNames("preEnqueue"), Names{});
  EXPECT_EQ(fw->PluginNames("preFilter"), (Names{"A", "B", "C"}));
  EXPECT_EQ(fw->PluginNames("filter"), (Names{"C", "A", "B", "X"}));
  EXPECT_EQ(fw->PluginNames("postFilter"), (Names{"A", "B", "C"}));
  EXPECT_EQ(fw->PluginNames("preScore"), (Names{"A", "B", "C"}));
  EXPECT_EQ(fw->PluginNames("score"), (Names{"B:5", "A:2", "C:1", "N:1"}));
  EXPECT_EQ(fw->PluginNames("reserve"), (Names{"C", "A", "B"}));
  EXPECT_EQ(fw->PluginNames("permit"), (Names{"A", "B", "C"}));
  EXPECT_EQ(fw->PluginNames("preBind"), (Names{"A", "B", "C"}));
  EXPECT_EQ(fw->PluginNames("postBind"), (Names{"A", "B", "C"}));
  EXPECT_EQ(fw->ScoreWeights(), (std::vector<std::pair<std::string, int64_t>>{{"B", 5}, {"A", 2}, {"C", 1}, {"N", 1}}));

  // One instance per plugin, however many points it is listed at.
  std::lock_guard lock(script_.mu);
  EXPECT_EQ(script_.builds,
            (std::map<std::string, int>{{"A", 1}, {"B", 1}, {"C", 1}, {"N", 1}, {"X", 1}, {"Sort", 1}, {"Binder", 1}}));
}

TEST_F(FrameworkTest, DisabledPluginsAreLeftOutOfMultiPointExpansion) {
  config::Profile p;
  p.scheduler_name = "test-scheduler";
  p.plugins.multi_point.enabled = {Ref(kSort), Ref(kA), Ref(kB), Ref(kC), Ref(kBinder)};
  // By name: B is left out of filter only.
  p.plugins.filter.disabled = {Ref(kB)};
  // "*": no multiPoint plugin at score or reserve; the point's own plugins stay.
  p.plugins.score.disabled = {Ref("*")};
  p.plugins.score.enabled = {Ref(kN, 4)};
  p.plugins.reserve.disabled = {Ref("*")};
  // "*" at queueSort drops multiPoint's Sort, so Sort2 is the only queue sort plugin.
  p.plugins.queue_sort.disabled = {Ref("*")};
  p.plugins.queue_sort.enabled = {Ref(kSort2)};
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);

  EXPECT_EQ(fw->PluginNames("filter"), (Names{"A", "C"}));
  EXPECT_EQ(fw->PluginNames("preFilter"), (Names{"A", "B", "C"}));
  EXPECT_EQ(fw->PluginNames("score"), Names{"N:4"});
  EXPECT_EQ(fw->PluginNames("preScore"), (Names{"A", "B", "C"}));
  EXPECT_EQ(fw->PluginNames("reserve"), Names{});
  EXPECT_EQ(fw->PluginNames("permit"), (Names{"A", "B", "C"}));
  EXPECT_EQ(fw->PluginNames("queueSort"), Names{"Sort2"});
  EXPECT_EQ(fw->PluginNames("bind"), Names{"Binder"});
}

TEST_F(FrameworkTest, DuplicateRegistrationsAreErrors) {
  {
    // Twice in multiPoint: named at the first point the plugin implements (A: preFilter).
    config::Profile p = BaseProfile();
    p.plugins.multi_point.enabled = {Ref(kA), Ref(kX), Ref(kA)};
    EXPECT_EQ(CreateError(p), "profiles[0].plugins.multiPoint: plugin \"A\" already registered as \"preFilter\"");
  }
  {
    config::Profile p = BaseProfile();
    p.plugins.multi_point.enabled = {Ref(kX), Ref(kX)};
    EXPECT_EQ(CreateError(p), "profiles[0].plugins.multiPoint: plugin \"X\" already registered as \"filter\"");
  }
  {
    // Twice at one point; the path names the profile's index.
    config::Profile p = BaseProfile();
    p.plugins.filter.enabled = {Ref(kX), Ref(kC), Ref(kX)};
    EXPECT_EQ(CreateError(p, 3), "profiles[3].plugins.filter: plugin \"X\" already registered");
  }
  {
    // Listed by multiPoint and at a point is an override, not a duplicate.
    config::Profile p = BaseProfile();
    p.plugins.multi_point.enabled = {Ref(kX), Ref(kA)};
    p.plugins.filter.enabled = {Ref(kX)};
    auto fw = Build(p);
    ASSERT_NE(fw, nullptr);
    EXPECT_EQ(fw->PluginNames("filter"), (Names{"X", "A"}));
  }
}

TEST_F(FrameworkTest, PluginsMustImplementThePointTheyAreListedAt) {
  {
    config::Profile p = BaseProfile();
    p.plugins.filter.enabled = {Ref(kN)};
    EXPECT_EQ(CreateError(p),
              "profiles[0].plugins.filter.enabled[0]: Invalid value: \"N\": plugin does not extend filter plugin");
  }
  {
    config::Profile p = BaseProfile();
    p.plugins.score.enabled = {Ref(kA), Ref(kX, 2)};
    EXPECT_EQ(CreateError(p),
              "profiles[0].plugins.score.enabled[1]: Invalid value: \"X\": plugin does not extend score plugin");
  }
  {
    config::Profile p = BaseProfile();
    p.plugins.queue_sort.enabled = {Ref(kA)};
    EXPECT_EQ(CreateError(p),
              "profiles[0].plugins.queueSort.enabled[0]: Invalid value: \"A\": plugin does not extend queueSort "
              "plugin");
  }
  {
    config::Profile p = BaseProfile();
    p.plugins.bind.enabled = {Ref(kBinder), Ref(kSort)};
    EXPECT_EQ(CreateError(p, 1),
              "profiles[1].plugins.bind.enabled[1]: Invalid value: \"Sort\": plugin does not extend bind plugin");
  }
  {
    config::Profile p = BaseProfile();
    p.plugins.permit.enabled = {Ref("Nope")};
    EXPECT_EQ(CreateError(p), "profiles[0].plugins.permit.enabled[0]: Invalid value: \"Nope\": plugin does not exist");
  }
  {
    config::Profile p = BaseProfile();
    p.plugins.multi_point.enabled = {Ref(kA), Ref("Nope")};
    EXPECT_EQ(CreateError(p),
              "profiles[0].plugins.multiPoint.enabled[1]: Invalid value: \"Nope\": plugin does not exist");
  }
}

TEST_F(FrameworkTest, WeightedMultiPointPluginMustScore) {
  config::Profile p = BaseProfile();
  p.plugins.multi_point.enabled = {Ref(kA, 2), Ref(kX, 3)};
  EXPECT_EQ(CreateError(p),
            "profiles[0].plugins.multiPoint.enabled[1].weight: Invalid value: 3: plugin \"X\" does not extend score "
            "plugin, so it cannot have a weight");

  // A weight at a point other than score is ignored.
  config::Profile ignored = BaseProfile();
  ignored.plugins.filter.enabled = {Ref(kX, 3)};
  auto fw = Build(ignored);
  ASSERT_NE(fw, nullptr);
  EXPECT_EQ(fw->PluginNames("filter"), Names{"X"});
}

TEST_F(FrameworkTest, ExactlyOneQueueSortAndAtLeastOneBindPluginAreRequired) {
  config::Profile none = BaseProfile();
  none.plugins.queue_sort.enabled.clear();
  none.plugins.bind.enabled.clear();
  EXPECT_EQ(CreateError(none), "profiles[0].plugins.queueSort: Required value: no queue sort plugin is enabled");

  config::Profile no_bind = BaseProfile();
  no_bind.plugins.bind.enabled.clear();
  EXPECT_EQ(CreateError(no_bind), "profiles[0].plugins.bind: Required value: at least one bind plugin is needed");

  config::Profile two = BaseProfile();
  two.plugins.queue_sort.enabled = {Ref(kSort), Ref(kSort2)};
  EXPECT_EQ(CreateError(two),
            "profiles[0].plugins.queueSort: Invalid value: only one queue sort plugin can be enabled, found \"Sort\" "
            "and \"Sort2\"");

  // multiPoint's queue sort plugin comes before the point's own.
  config::Profile both = BaseProfile();
  both.plugins.multi_point.enabled = {Ref(kSort)};
  both.plugins.queue_sort.enabled = {Ref(kSort2)};
  EXPECT_EQ(CreateError(both),
            "profiles[0].plugins.queueSort: Invalid value: only one queue sort plugin can be enabled, found \"Sort\" "
            "and \"Sort2\"");

  config::Profile two_binders = BaseProfile();
  two_binders.plugins.bind.enabled = {Ref(kBinder), Ref(kBinder2)};
  EXPECT_NE(Build(two_binders), nullptr);
}

TEST_F(FrameworkTest, FactoryErrorsNameTheConfiguration) {
  config::Profile with_args = BaseProfile();
  with_args.plugins.filter.enabled = {Ref(kPicky)};
  with_args.plugin_config = {{"Other", testing::ArgsJson("{}")}, {"Picky", testing::ArgsJson(R"({"level": 7})")}};
  EXPECT_EQ(CreateError(with_args), "profiles[0].pluginConfig[1].args: level: Invalid value: 7");

  config::Profile without = BaseProfile();
  without.plugins.filter.enabled = {Ref(kPicky)};
  EXPECT_EQ(CreateError(without), "profiles[0]: plugin Picky: needs args");
}

// --- Extension points ------------------------------------------------------------------------

TEST_F(FrameworkTest, ExtensionPointsRunTheirPluginsInConfiguredOrder) {
  config::Profile p = BaseProfile();
  p.plugins.pre_filter.enabled = {Ref(kC), Ref(kA), Ref(kB)};
  p.plugins.filter.enabled = {Ref(kB), Ref(kC), Ref(kA)};
  p.plugins.post_filter.enabled = {Ref(kA), Ref(kC), Ref(kB)};
  p.plugins.pre_score.enabled = {Ref(kB), Ref(kA), Ref(kC)};
  p.plugins.score.enabled = {Ref(kC), Ref(kB), Ref(kA)};
  p.plugins.reserve.enabled = {Ref(kB), Ref(kA), Ref(kC)};
  p.plugins.permit.enabled = {Ref(kC), Ref(kB), Ref(kA)};
  p.plugins.pre_bind.enabled = {Ref(kA), Ref(kB), Ref(kC)};
  p.plugins.bind.enabled = {Ref(kBinder), Ref(kBinder2)};
  p.plugins.post_bind.enabled = {Ref(kB), Ref(kC), Ref(kA)};
  // Every PostFilter plugin finds nothing, so all run; the first Bind plugin does not handle the pod.
  for (auto name : {kA, kB, kC}) script_.status[fmt::format("PostFilter:{}", name)] = Status::Unschedulable("no");
  script_.status["Bind:Binder"] = Status::Skip();
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);

  CycleState state;
  const std::span<const NodeInfo* const> one_node = Nodes().first(1);
  EXPECT_TRUE(fw->RunPreFilterPlugins(state, *pod_).second.IsSuccess());
  EXPECT_TRUE(fw->RunFilterPlugins(state, *pod_, Node(0)).IsSuccess());
  EXPECT_EQ(fw->RunPostFilterPlugins(state, *pod_, NodeToStatus()).second.code(), Code::kUnschedulable);
  EXPECT_TRUE(fw->RunPreScorePlugins(state, *pod_, one_node).IsSuccess());
  EXPECT_TRUE(fw->RunScorePlugins(state, *pod_, one_node).second.IsSuccess());
  EXPECT_TRUE(fw->RunReservePluginsReserve(state, *pod_, "n0").IsSuccess());
  PermitOutcome permit;
  EXPECT_TRUE(fw->RunPermitPlugins(state, pod_, "n0", permit.Callback()).IsSuccess());
  EXPECT_TRUE(fw->RunPreBindPlugins(state, *pod_, "n0").IsSuccess());
  Status bound = fw->RunBindPlugins(state, *pod_, "n0");
  EXPECT_TRUE(bound.IsSuccess());
  EXPECT_EQ(bound.plugin(), "Binder2");
  fw->RunPostBindPlugins(state, *pod_, "n0");

  EXPECT_THAT(script_.CallsAt("PreFilter"), ElementsAre("PreFilter:C", "PreFilter:A", "PreFilter:B"));
  EXPECT_THAT(script_.CallsAt("Filter"), ElementsAre("Filter:B:n0", "Filter:C:n0", "Filter:A:n0"));
  EXPECT_THAT(script_.CallsAt("PostFilter"), ElementsAre("PostFilter:A", "PostFilter:C", "PostFilter:B"));
  EXPECT_THAT(script_.CallsAt("PreScore"), ElementsAre("PreScore:B", "PreScore:A", "PreScore:C"));
  EXPECT_THAT(script_.CallsAt("Score"), ElementsAre("Score:C:n0", "Score:B:n0", "Score:A:n0"));
  EXPECT_THAT(script_.CallsAt("Reserve"), ElementsAre("Reserve:B:n0", "Reserve:A:n0", "Reserve:C:n0"));
  EXPECT_THAT(script_.CallsAt("Unreserve"), IsEmpty());
  EXPECT_THAT(script_.CallsAt("Permit"), ElementsAre("Permit:C:n0", "Permit:B:n0", "Permit:A:n0"));
  EXPECT_THAT(script_.CallsAt("PreBind"), ElementsAre("PreBind:A:n0", "PreBind:B:n0", "PreBind:C:n0"));
  EXPECT_THAT(script_.CallsAt("Bind"), ElementsAre("Bind:Binder:n0", "Bind:Binder2:n0"));
  EXPECT_THAT(script_.CallsAt("PostBind"), ElementsAre("PostBind:B:n0", "PostBind:C:n0", "PostBind:A:n0"));
  EXPECT_THAT(permit.Done(), IsEmpty());
}

TEST_F(FrameworkTest, FilterStopsAtTheFirstRejectionAndNamesThePlugin) {
  config::Profile p = BaseProfile();
  p.plugins.filter.enabled = {Ref(kA), Ref(kB), Ref(kC)};
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  CycleState state;

  Status passed = fw->RunFilterPlugins(state, *pod_, Node(0));
  EXPECT_TRUE(passed.IsSuccess());
  EXPECT_EQ(passed.plugin(), "");
  EXPECT_THAT(script_.CallsAt("Filter"), ElementsAre("Filter:A:n0", "Filter:B:n0", "Filter:C:n0"));

  script_.ClearCalls();
  script_.status["Filter:B"] = Status::Unschedulable("node(s) are red");
  Status rejected = fw->RunFilterPlugins(state, *pod_, Node(1));
  EXPECT_EQ(rejected.code(), Code::kUnschedulable);
  EXPECT_EQ(rejected.reasons(), Names{"node(s) are red"});
  EXPECT_EQ(rejected.plugin(), "B");
  EXPECT_THAT(script_.CallsAt("Filter"), ElementsAre("Filter:A:n1", "Filter:B:n1"));

  script_.ClearCalls();
  script_.status["Filter:A"] = Status::UnschedulableAndUnresolvable("node(s) are gone");
  Status unresolvable = fw->RunFilterPlugins(state, *pod_, Node(2));
  EXPECT_EQ(unresolvable.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(unresolvable.Message(), "node(s) are gone");
  EXPECT_EQ(unresolvable.plugin(), "A");
  EXPECT_THAT(script_.CallsAt("Filter"), ElementsAre("Filter:A:n2"));

  // Anything but a rejection is an error that names the plugin.
  script_.ClearCalls();
  script_.status.erase("Filter:A");
  script_.status["Filter:B"] = Status::Error("boom");
  Status error = fw->RunFilterPlugins(state, *pod_, Node(0));
  EXPECT_EQ(error.code(), Code::kError);
  EXPECT_EQ(error.Message(), "running \"B\" filter plugin: boom");
  EXPECT_EQ(error.plugin(), "B");
  EXPECT_THAT(script_.CallsAt("Filter"), ElementsAre("Filter:A:n0", "Filter:B:n0"));

  // So is an exception escaping a plugin.
  script_.status.erase("Filter:B");
  script_.throws.insert("Filter:C");
  Status thrown = fw->RunFilterPlugins(state, *pod_, Node(0));
  EXPECT_EQ(thrown.code(), Code::kError);
  EXPECT_EQ(thrown.Message(), "running \"C\" filter plugin: Filter: exception: kaboom");
  EXPECT_EQ(thrown.plugin(), "C");
}

TEST_F(FrameworkTest, PreFilterSkipMeansTheCycleDoesNotRunThatPluginsFilter) {
  script_.status["PreFilter:A"] = Status::Skip();
  auto fw = BuildPreFilter({kA, kB}, {kA, kB, kC});
  ASSERT_NE(fw, nullptr);

  CycleState state;
  auto [result, status] = fw->RunPreFilterPlugins(state, *pod_);
  EXPECT_TRUE(status.IsSuccess());
  EXPECT_TRUE(result.AllNodes());
  EXPECT_THAT(state.skip_filter_plugins, ElementsAre("A"));
  EXPECT_THAT(script_.CallsAt("PreFilter"), ElementsAre("PreFilter:A", "PreFilter:B"));
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(fw->RunFilterPlugins(state, *pod_, Node(i)).IsSuccess());
  EXPECT_THAT(script_.CallsAt("Filter"), ElementsAre("Filter:B:n0", "Filter:C:n0", "Filter:B:n1", "Filter:C:n1"));
  // A rejection A's Filter would give does not count either.
  script_.status["Filter:A"] = Status::Unschedulable("never asked");
  EXPECT_TRUE(fw->RunFilterPlugins(state, *pod_, Node(2)).IsSuccess());

  // For that cycle only: the next cycle's PreFilter does not skip, and A filters again.
  script_.ClearCalls();
  script_.status.erase("PreFilter:A");
  script_.status.erase("Filter:A");
  CycleState next;
  EXPECT_TRUE(fw->RunPreFilterPlugins(next, *pod_).second.IsSuccess());
  EXPECT_THAT(next.skip_filter_plugins, IsEmpty());
  EXPECT_TRUE(fw->RunFilterPlugins(next, *pod_, Node(0)).IsSuccess());
  EXPECT_THAT(script_.CallsAt("Filter"), ElementsAre("Filter:A:n0", "Filter:B:n0", "Filter:C:n0"));
}

TEST_F(FrameworkTest, PreFilterRejectionOrErrorEndsTheCycle) {
  auto fw = BuildPreFilter({kA, kB, kC});
  ASSERT_NE(fw, nullptr);

  // UnschedulableAndUnresolvable: preemption cannot help, the other PreFilter plugins do not run.
  script_.status["PreFilter:B"] = Status::UnschedulableAndUnresolvable("volume missing");
  CycleState state;
  auto [r1, unresolvable] = fw->RunPreFilterPlugins(state, *pod_);
  EXPECT_EQ(unresolvable.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(unresolvable.Message(), "volume missing");
  EXPECT_EQ(unresolvable.plugin(), "B");
  EXPECT_THAT(script_.CallsAt("PreFilter"), ElementsAre("PreFilter:A", "PreFilter:B"));

  script_.ClearCalls();
  script_.status["PreFilter:B"] = Status::Error("boom");
  CycleState again;
  auto [r2, error] = fw->RunPreFilterPlugins(again, *pod_);
  EXPECT_EQ(error.code(), Code::kError);
  EXPECT_EQ(error.Message(), "running PreFilter plugin \"B\": boom");
  EXPECT_EQ(error.plugin(), "B");
  EXPECT_THAT(script_.CallsAt("PreFilter"), ElementsAre("PreFilter:A", "PreFilter:B"));
}

// Upstream since kubernetes#119770: an Unschedulable PreFilter lets the others run, since
// preemption later in the cycle runs Filter with every plugin's PreFilter state; the last
// Unschedulable is the point's status, and Skip still counts.
TEST_F(FrameworkTest, PreFilterUnschedulableLetsTheOtherPluginsRun) {
  script_.status["PreFilter:A"] = Status::Unschedulable("quota");
  script_.status["PreFilter:C"] = Status::Skip();
  script_.pre_filter_nodes["B"] = {"n1"};
  auto fw = BuildPreFilter({kA, kB, kC}, {kA, kB, kC});
  ASSERT_NE(fw, nullptr);

  CycleState state;
  std::vector<std::string> narrowing;
  auto [result, status] = fw->RunPreFilterPlugins(state, *pod_, &narrowing);
  EXPECT_EQ(status.code(), Code::kUnschedulable);
  EXPECT_EQ(status.Message(), "quota");
  EXPECT_EQ(status.plugin(), "A");
  EXPECT_THAT(script_.CallsAt("PreFilter"), ElementsAre("PreFilter:A", "PreFilter:B", "PreFilter:C"));
  EXPECT_THAT(narrowing, ElementsAre("B"));
  EXPECT_TRUE(state.SkipsFilter("C"));

  script_.ClearCalls();
  script_.status["PreFilter:C"] = Status::Unschedulable("ports");
  CycleState again;
  auto [r2, last] = fw->RunPreFilterPlugins(again, *pod_);
  EXPECT_EQ(last.code(), Code::kUnschedulable);
  EXPECT_EQ(last.Message(), "ports");
  EXPECT_EQ(last.plugin(), "C");
}

// Nodes no PreFilter result has in common: UnschedulableAndUnresolvable (preemption cannot bring
// a node back into the results), under no single plugin; every narrowing plugin is reported.
TEST_F(FrameworkTest, PreFilterResultsWithNothingInCommonAreUnresolvable) {
  script_.pre_filter_nodes["A"] = {"n0"};
  script_.pre_filter_nodes["C"] = {"n1", "n2"};
  auto fw = BuildPreFilter({kA, kB, kC});
  ASSERT_NE(fw, nullptr);

  CycleState state;
  std::vector<std::string> narrowing;
  auto [result, status] = fw->RunPreFilterPlugins(state, *pod_, &narrowing);
  EXPECT_EQ(status.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(status.Message(), "node(s) didn't satisfy plugin(s) [A C] simultaneously");
  EXPECT_EQ(status.plugin(), "");
  EXPECT_THAT(narrowing, ElementsAre("A", "C"));

  script_.pre_filter_nodes.erase("A");
  script_.pre_filter_nodes["C"] = {};
  CycleState one;
  auto [r1, alone] = fw->RunPreFilterPlugins(one, *pod_);
  EXPECT_EQ(alone.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(alone.Message(), "node(s) didn't satisfy plugin C");
}

TEST_F(FrameworkTest, PreFilterResultsAreIntersected) {
  script_.pre_filter_nodes["A"] = {"n0", "n1"};
  script_.pre_filter_nodes["C"] = {"n1", "n2"};
  auto fw = BuildPreFilter({kA, kB, kC});
  ASSERT_NE(fw, nullptr);

  CycleState state;
  std::vector<std::string> narrowing;
  auto [result, status] = fw->RunPreFilterPlugins(state, *pod_, &narrowing);
  EXPECT_TRUE(status.IsSuccess());
  ASSERT_FALSE(result.AllNodes());
  EXPECT_EQ(*result.node_names, std::set<std::string>{"n1"});
  EXPECT_THAT(narrowing, ElementsAre("A", "C"));
}

TEST_F(FrameworkTest, PreScoreSkipMeansTheCycleDoesNotRunThatPluginsScore) {
  config::Profile p = BaseProfile();
  p.plugins.pre_score.enabled = {Ref(kA), Ref(kB)};
  p.plugins.score.enabled = {Ref(kA, 10), Ref(kB, 2)};
  script_.status["PreScore:A"] = Status::Skip();
  for (auto n : {"n0", "n1", "n2"}) {
    script_.scores[fmt::format("A:{}", n)] = 100;
    script_.scores[fmt::format("B:{}", n)] = 7;
  }
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);

  CycleState state;
  EXPECT_TRUE(fw->RunPreScorePlugins(state, *pod_, Nodes()).IsSuccess());
  EXPECT_THAT(state.skip_score_plugins, ElementsAre("A"));
  auto [scores, status] = fw->RunScorePlugins(state, *pod_, Nodes());
  ASSERT_TRUE(status.IsSuccess());
  ASSERT_EQ(scores.size(), 3u);
  for (const auto& s : scores) EXPECT_EQ(s.total, 14) << s.node->name();
  Names calls = script_.CallsAt("Score");
  std::ranges::sort(calls);  // nodes are scored in parallel
  EXPECT_THAT(calls, ElementsAre("Score:B:n0", "Score:B:n1", "Score:B:n2"));

  // Another PreScore failing fails the point, naming the plugin.
  script_.status["PreScore:B"] = Status::Error("no metrics");
  CycleState failing;
  Status error = fw->RunPreScorePlugins(failing, *pod_, Nodes());
  EXPECT_EQ(error.code(), Code::kError);
  EXPECT_EQ(error.Message(), "running PreScore plugin \"B\": no metrics");
  EXPECT_EQ(error.plugin(), "B");
}

TEST_F(FrameworkTest, ReserveRunsInOrderAndUnreserveInReverse) {
  config::Profile p = BaseProfile();
  p.plugins.reserve.enabled = {Ref(kA), Ref(kB), Ref(kC)};
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);

  CycleState state;
  EXPECT_TRUE(fw->RunReservePluginsReserve(state, *pod_, "n1").IsSuccess());
  EXPECT_THAT(script_.CallsAt("Reserve"), ElementsAre("Reserve:A:n1", "Reserve:B:n1", "Reserve:C:n1"));

  // B rejects: C's Reserve is not called; Unreserve then runs for every Reserve plugin, last first
  // (a plugin's Unreserve must tolerate a Reserve that failed or never ran).
  script_.ClearCalls();
  script_.status["Reserve:B"] = Status::Unschedulable("volume taken");
  CycleState rejected;
  Status s = fw->RunReservePluginsReserve(rejected, *pod_, "n1");
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "volume taken");
  EXPECT_EQ(s.plugin(), "B");
  EXPECT_THAT(script_.CallsAt("Reserve"), ElementsAre("Reserve:A:n1", "Reserve:B:n1"));
  fw->RunReservePluginsUnreserve(rejected, *pod_, "n1");
  EXPECT_THAT(script_.CallsAt("Unreserve"), ElementsAre("Unreserve:C:n1", "Unreserve:B:n1", "Unreserve:A:n1"));

  // An error is wrapped with the plugin's name; a throwing Unreserve does not stop the others.
  script_.ClearCalls();
  script_.status["Reserve:B"] = Status::Error("disk full");
  script_.throws.insert("Unreserve:B");
  CycleState failed;
  Status e = fw->RunReservePluginsReserve(failed, *pod_, "n1");
  EXPECT_EQ(e.code(), Code::kError);
  EXPECT_EQ(e.Message(), "running Reserve plugin \"B\": disk full");
  EXPECT_EQ(e.plugin(), "B");
  fw->RunReservePluginsUnreserve(failed, *pod_, "n1");
  EXPECT_THAT(script_.CallsAt("Unreserve"), ElementsAre("Unreserve:C:n1", "Unreserve:B:n1", "Unreserve:A:n1"));
}

// --- Permit ----------------------------------------------------------------------------------

TEST_F(FrameworkTest, PermitSuccessLetsThePodThroughWithoutWaiting) {
  auto fw = BuildPermit({kA, kB});
  ASSERT_NE(fw, nullptr);

  CycleState state;
  PermitOutcome outcome;
  EXPECT_TRUE(fw->RunPermitPlugins(state, pod_, "n0", outcome.Callback()).IsSuccess());
  EXPECT_THAT(script_.CallsAt("Permit"), ElementsAre("Permit:A:n0", "Permit:B:n0"));
  EXPECT_EQ(fakes_.waiting.size(), 0u);
  EXPECT_EQ(fw->GetWaitingPod("uid-p"), nullptr);
  // The scheduler continues the binding cycle itself; the callback is for waiting pods.
  EXPECT_THAT(outcome.Done(), IsEmpty());
}

TEST_F(FrameworkTest, PermitRejectionStopsAtThePluginAndNothingWaits) {
  // A asks to wait, but B rejects: the rejection wins and the pod does not wait.
  script_.status["Permit:B"] = Status::Unschedulable("quota exceeded");
  auto fw = BuildPermit({kA, kB, kC}, {{kA, 10s}});
  ASSERT_NE(fw, nullptr);

  CycleState state;
  PermitOutcome outcome;
  Status s = fw->RunPermitPlugins(state, pod_, "n0", outcome.Callback());
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "quota exceeded");
  EXPECT_EQ(s.plugin(), "B");
  EXPECT_THAT(script_.CallsAt("Permit"), ElementsAre("Permit:A:n0", "Permit:B:n0"));
  EXPECT_EQ(fakes_.waiting.size(), 0u);
  EXPECT_THAT(outcome.Done(), IsEmpty());

  script_.ClearCalls();
  script_.status["Permit:B"] = Status::Error("boom");
  CycleState again;
  Status e = fw->RunPermitPlugins(again, pod_, "n0", outcome.Callback());
  EXPECT_EQ(e.code(), Code::kError);
  EXPECT_EQ(e.Message(), "running Permit plugin \"B\": boom");
  EXPECT_EQ(e.plugin(), "B");
  EXPECT_EQ(fakes_.waiting.size(), 0u);
  EXPECT_THAT(outcome.Done(), IsEmpty());
}

TEST_F(FrameworkTest, PermitWaitEndsWhenEveryWaitingPluginAllowsFromAnotherThread) {
  auto fw = BuildPermit({kA, kB, kC}, {{kA, 10s}, {kC, 20s}});
  ASSERT_NE(fw, nullptr);

  CycleState state;
  PermitOutcome outcome;
  Status s = fw->RunPermitPlugins(state, pod_, "n0", outcome.Callback());
  EXPECT_EQ(s.code(), Code::kWait);
  EXPECT_THAT(script_.CallsAt("Permit"), ElementsAre("Permit:A:n0", "Permit:B:n0", "Permit:C:n0"));
  ASSERT_EQ(fakes_.waiting.size(), 1u);
  std::shared_ptr<WaitingPod> wp = fw->GetWaitingPod("uid-p");
  ASSERT_NE(wp, nullptr);
  EXPECT_EQ(wp->pod().metadata.name, "p");
  EXPECT_THAT(wp->GetPendingPlugins(), ElementsAre("A", "C"));
  EXPECT_EQ(fakes_.waiting.NextDeadline(), kStart + 10 * util::kNanosPerSecond);
  Names iterated;
  fw->IterateOverWaitingPods([&](WaitingPod& w) { iterated.push_back(w.pod().metadata.uid); });
  EXPECT_THAT(iterated, ElementsAre("uid-p"));
  EXPECT_THAT(outcome.Done(), IsEmpty());

  // Allowed by A from another thread (as a plugin's informer callback would): C still holds it.
  std::thread([&] { fw->GetWaitingPod("uid-p")->Allow("A"); }).join();
  EXPECT_THAT(wp->GetPendingPlugins(), ElementsAre("C"));
  EXPECT_EQ(fakes_.waiting.NextDeadline(), kStart + 20 * util::kNanosPerSecond);
  EXPECT_THAT(outcome.Done(), IsEmpty());
  // A plugin that is not waited on allowing changes nothing.
  wp->Allow("B");
  EXPECT_THAT(outcome.Done(), IsEmpty());

  std::thread([&] { fw->GetWaitingPod("uid-p")->Allow("C"); }).join();
  std::vector<Status> done = outcome.Done();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].IsSuccess());

  // Completed once: no timeout or later verdict reaches the callback again.
  fakes_.clock.Advance(3600 * util::kNanosPerSecond);
  fakes_.waiting.ExpireDue(fakes_.clock.NowNs());
  wp->Reject("A", "too late");
  EXPECT_EQ(outcome.Done().size(), 1u);
  EXPECT_FALSE(fakes_.waiting.NextDeadline().has_value());
}

TEST_F(FrameworkTest, PermitWaitTimesOutOnTheFrameworksClock) {
  auto fw = BuildPermit({kA, kC}, {{kA, 10s}, {kC, 20s}});
  ASSERT_NE(fw, nullptr);

  CycleState state;
  PermitOutcome outcome;
  ASSERT_EQ(fw->RunPermitPlugins(state, pod_, "n0", outcome.Callback()).code(), Code::kWait);

  // A's deadline is 10 s after Permit ran, on the clock the framework was given.
  fakes_.clock.Advance(10 * util::kNanosPerSecond - 1);
  fakes_.waiting.ExpireDue(fakes_.clock.NowNs());
  EXPECT_THAT(outcome.Done(), IsEmpty());
  fakes_.clock.Advance(1);
  fakes_.waiting.ExpireDue(fakes_.clock.NowNs());
  std::vector<Status> done = outcome.Done();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].code(), Code::kUnschedulable);
  EXPECT_EQ(done[0].Message(), "rejected due to timeout after waiting 10s at plugin A");
  EXPECT_EQ(done[0].plugin(), "A");

  // Timed out is final: C's deadline and a late Allow change nothing.
  fw->GetWaitingPod("uid-p")->Allow("A");
  fw->GetWaitingPod("uid-p")->Allow("C");
  fakes_.clock.Advance(20 * util::kNanosPerSecond);
  fakes_.waiting.ExpireDue(fakes_.clock.NowNs());
  EXPECT_EQ(outcome.Done().size(), 1u);
}

TEST_F(FrameworkTest, PermitWaitIsCappedAtFifteenMinutes) {
  auto fw = BuildPermit({kA}, {{kA, 1h}});
  ASSERT_NE(fw, nullptr);

  CycleState state;
  PermitOutcome outcome;
  ASSERT_EQ(fw->RunPermitPlugins(state, pod_, "n0", outcome.Callback()).code(), Code::kWait);
  EXPECT_EQ(fakes_.waiting.NextDeadline(), kStart + 15 * 60 * util::kNanosPerSecond);
  fakes_.clock.Advance(15 * 60 * util::kNanosPerSecond);
  fakes_.waiting.ExpireDue(fakes_.clock.NowNs());
  std::vector<Status> done = outcome.Done();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].code(), Code::kUnschedulable);
  EXPECT_EQ(done[0].plugin(), "A");
  EXPECT_EQ(done[0].Message(), "rejected due to timeout after waiting 15m0s at plugin A");
}

TEST_F(FrameworkTest, WaitingPodRejectedByAPluginOrThroughTheHandle) {
  auto fw = BuildPermit({kA}, {{kA, 10s}});
  ASSERT_NE(fw, nullptr);

  PermitOutcome first;
  CycleState state;
  ASSERT_EQ(fw->RunPermitPlugins(state, pod_, "n0", first.Callback()).code(), Code::kWait);
  std::thread([&] { fw->GetWaitingPod("uid-p")->Reject("Gang", "gang incomplete"); }).join();
  std::vector<Status> done = first.Done();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].code(), Code::kUnschedulable);
  EXPECT_EQ(done[0].Message(), "gang incomplete");
  EXPECT_EQ(done[0].plugin(), "Gang");

  // Handle::RejectWaitingPod, as upstream: no plugin, "removed".
  PodInfoPtr other = MakePod().Name("q").Namespace("default").UID("uid-q").Info();
  PermitOutcome second;
  CycleState other_state;
  ASSERT_EQ(fw->RunPermitPlugins(other_state, other, "n1", second.Callback()).code(), Code::kWait);
  EXPECT_TRUE(fw->RejectWaitingPod("uid-q"));
  EXPECT_FALSE(fw->RejectWaitingPod("uid-unknown"));
  done = second.Done();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].code(), Code::kUnschedulable);
  EXPECT_EQ(done[0].Message(), "removed");
  EXPECT_EQ(done[0].plugin(), "");
}

// Upstream's waiting pod rejects on timeout with fmt.Sprintf("rejected due to timeout after waiting
// %v at plugin %v", waitTime, plugin): waitTime is a time.Duration, printed as Go prints one
// ("1m30s", "500ms").
TEST_F(FrameworkTest, PermitTimeoutMessagePrintsTheWaitAsAGoDuration) {
  auto fw = BuildPermit({kA, kC}, {{kA, 90s}, {kC, 500ms}});
  ASSERT_NE(fw, nullptr);

  CycleState state;
  PermitOutcome first;
  ASSERT_EQ(fw->RunPermitPlugins(state, pod_, "n0", first.Callback()).code(), Code::kWait);
  fakes_.clock.Advance(500'000'000);
  fakes_.waiting.ExpireDue(fakes_.clock.NowNs());
  ASSERT_EQ(first.Done().size(), 1u);
  EXPECT_EQ(first.Done()[0].Message(), "rejected due to timeout after waiting 500ms at plugin C");

  // Another pod, for which C waits longer than A.
  script_.wait["C"] = 1h;
  PodInfoPtr other = MakePod().Name("q").Namespace("default").UID("uid-q").Info();
  PermitOutcome second;
  CycleState other_state;
  ASSERT_EQ(fw->RunPermitPlugins(other_state, other, "n0", second.Callback()).code(), Code::kWait);
  fakes_.clock.Advance(90 * util::kNanosPerSecond);
  fakes_.waiting.ExpireDue(fakes_.clock.NowNs());
  ASSERT_EQ(second.Done().size(), 1u);
  EXPECT_EQ(second.Done()[0].Message(), "rejected due to timeout after waiting 1m30s at plugin A");
}

// --- Score -----------------------------------------------------------------------------------

TEST_F(FrameworkTest, ScoresAreNormalizedThenWeightedAndSummed) {
  config::Profile p = BaseProfile();
  p.plugins.score.enabled = {Ref(kN, 2), Ref(kA, 3), Ref(kB)};
  // N's NormalizeScore scales its highest score to 100: 10, 20, 40 → 25, 50, 100.
  script_.scores = {{"N:n0", 10}, {"N:n1", 20}, {"N:n2", 40}, {"A:n0", 30}, {"A:n1", 90},
                    {"A:n2", 0},  {"B:n0", 7},  {"B:n1", 0},  {"B:n2", 100}};
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);

  CycleState state;
  auto [scores, status] = fw->RunScorePlugins(state, *pod_, Nodes(), /*with_details=*/true);
  ASSERT_TRUE(status.IsSuccess()) << status.Message();
  ASSERT_EQ(scores.size(), 3u);
  // n0: 25×2 + 30×3 + 7×1; n1: 50×2 + 90×3 + 0; n2: 100×2 + 0 + 100×1.
  EXPECT_EQ(scores[0].node, &Node(0));
  EXPECT_EQ(scores[0].total, 147);
  EXPECT_EQ(scores[1].node, &Node(1));
  EXPECT_EQ(scores[1].total, 370);
  EXPECT_EQ(scores[2].node, &Node(2));
  EXPECT_EQ(scores[2].total, 300);

  ASSERT_EQ(scores[0].scores.size(), 3u);
  const PluginScore& n = scores[0].scores[0];
  EXPECT_EQ(n.plugin, "N");
  EXPECT_EQ(n.raw, 10);
  EXPECT_EQ(n.normalized, 25);
  EXPECT_EQ(n.weight, 2);
  EXPECT_EQ(n.score, 50);
  const PluginScore& a = scores[1].scores[1];
  EXPECT_EQ(a.plugin, "A");
  EXPECT_EQ(a.raw, 90);
  EXPECT_EQ(a.normalized, 90);
  EXPECT_EQ(a.weight, 3);
  EXPECT_EQ(a.score, 270);
  const PluginScore& b = scores[2].scores[2];
  EXPECT_EQ(b.plugin, "B");
  EXPECT_EQ(b.normalized, 100);
  EXPECT_EQ(b.weight, 1);
  EXPECT_EQ(b.score, 100);
  // NormalizeScore runs once per plugin that has it, over all nodes' scores.
  EXPECT_THAT(script_.CallsAt("NormalizeScore"), ElementsAre("NormalizeScore:N"));

  // Without details only the totals; RunScoreTotals (PreScore then Score) gives the same.
  auto [plain, plain_status] = fw->RunScorePlugins(state, *pod_, Nodes());
  ASSERT_TRUE(plain_status.IsSuccess());
  EXPECT_EQ(plain[1].total, 370);
  EXPECT_THAT(plain[1].scores, IsEmpty());
  CycleState totals_state;
  auto [totals, totals_status] = fw->RunScoreTotals(totals_state, *pod_, Nodes());
  ASSERT_TRUE(totals_status.IsSuccess());
  EXPECT_THAT(totals, ElementsAre(147, 370, 300));
}

TEST_F(FrameworkTest, ScoreErrorsAndScoresOutsideTheRangeFailThePoint) {
  config::Profile p = BaseProfile();
  p.plugins.score.enabled = {Ref(kN), Ref(kA), Ref(kB)};
  // N may return anything: its NormalizeScore brings it into range. A may not.
  script_.scores = {{"N:n0", 1000}, {"A:n1", 101}};
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);

  CycleState state;
  auto [none, out_of_range] = fw->RunScorePlugins(state, *pod_, Nodes());
  EXPECT_THAT(none, IsEmpty());
  EXPECT_EQ(out_of_range.code(), Code::kError);
  EXPECT_EQ(out_of_range.Message(),
            "plugin \"A\" returns an invalid score 101, it should in the range of [0, 100] after normalizing");
  EXPECT_EQ(out_of_range.plugin(), "A");

  script_.scores["A:n1"] = 100;
  script_.status["NormalizeScore:N"] = Status::Error("no spread");
  auto [none2, normalize_error] = fw->RunScorePlugins(state, *pod_, Nodes());
  EXPECT_EQ(normalize_error.code(), Code::kError);
  EXPECT_EQ(normalize_error.Message(), "running Normalize on Score plugin \"N\": no spread");
  EXPECT_EQ(normalize_error.plugin(), "N");

  script_.status.erase("NormalizeScore:N");
  script_.status["Score:B"] = Status::Error("boom");
  auto [none3, score_error] = fw->RunScorePlugins(state, *pod_, Nodes());
  EXPECT_EQ(score_error.code(), Code::kError);
  EXPECT_EQ(score_error.Message(), "running Score plugin \"B\": boom");
  EXPECT_EQ(score_error.plugin(), "B");
}

TEST_F(FrameworkTest, PostFilterStopsAtTheFirstSuccessAndOtherwiseMergesReasons) {
  config::Profile p = BaseProfile();
  p.plugins.post_filter.enabled = {Ref(kA), Ref(kB), Ref(kC)};
  script_.status["PostFilter:A"] = Status::Unschedulable("no victims");
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);

  CycleState state;
  NodeToStatus statuses;
  auto [nominated, success] = fw->RunPostFilterPlugins(state, *pod_, statuses);
  EXPECT_TRUE(success.IsSuccess());
  EXPECT_EQ(nominated.nominated_node_name, "nominated-by-B");
  EXPECT_THAT(script_.CallsAt("PostFilter"), ElementsAre("PostFilter:A", "PostFilter:B"));

  script_.ClearCalls();
  script_.status["PostFilter:B"] = Status::Unschedulable("too expensive");
  script_.status["PostFilter:C"] = Status::Unschedulable("pdb");
  auto [none, rejected] = fw->RunPostFilterPlugins(state, *pod_, statuses);
  EXPECT_EQ(rejected.code(), Code::kUnschedulable);
  EXPECT_EQ(rejected.reasons(), (Names{"no victims", "too expensive", "pdb"}));
  EXPECT_EQ(rejected.plugin(), "A");
  EXPECT_EQ(none.mode, NominatingMode::kNoop);
  EXPECT_THAT(script_.CallsAt("PostFilter"), ElementsAre("PostFilter:A", "PostFilter:B", "PostFilter:C"));

  script_.ClearCalls();
  script_.status["PostFilter:B"] = Status::UnschedulableAndUnresolvable("never");
  auto [stopped_result, stopped] = fw->RunPostFilterPlugins(state, *pod_, statuses);
  EXPECT_EQ(stopped.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(stopped.plugin(), "B");
  EXPECT_THAT(script_.CallsAt("PostFilter"), ElementsAre("PostFilter:A", "PostFilter:B"));
}

}  // namespace
}  // namespace kubesched::framework::runtime
