#include "store/controllers/disruption_controller.h"
#include "api/time_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "store/controllers/object_util.h"
#include "store/controllers/workload_info.h"
#include "store/meta.h"
#include "store/selectors.h"

namespace kubesched::store::controllers {

namespace json = api::json;

namespace {

// An eviction's disruptedPods entry lapses after this (upstream's DeletionTimeout).
constexpr int64_t kDeletionTimeoutNs = 2 * 60 * util::kNanosPerSecond;

// intstr.GetScaledValueFromIntOrPercent with roundUp.
int64_t Scaled(const json::Value& v, int64_t total) {
  if (v.IsInt64()) return v.GetInt64();
  std::string_view s = json::View(v);
  if (s.empty()) return 0;
  if (s.back() == '%') s.remove_suffix(1);
  int64_t pct = 0;
  std::from_chars(s.data(), s.data() + s.size(), pct);
  return static_cast<int64_t>(std::ceil(static_cast<double>(pct) * static_cast<double>(total) / 100.0));
}

}  // namespace

DisruptionController::DisruptionController(const ControllerContext& ctx)
    : ctx_(ctx),
      pods_(*ctx.store.FindResource("", "pods")),
      pdbs_(*ctx.store.FindResource("policy", "poddisruptionbudgets")) {}

void DisruptionController::OnEvent(const WatchEvent& event) {
  if (!event.object) return;
  if (event.object->type == &pdbs_) {
    OnBudget(event);
  } else if (event.object->type == &pods_) {
    OnPod();
  }
}

void DisruptionController::Resync() {
  for (const ObjectPtr& pdb : ListAll(ctx_.store, pdbs_, "")) OnBudget(WatchEvent{EventType::kAdded, pdb, nullptr});
}

void DisruptionController::OnBudget(const WatchEvent& event) {
  const std::string& uid = event.object->uid;
  if (event.type == EventType::kDeleted) {
    by_uid_.erase(uid);
    by_namespace_[event.object->namespace_].erase(uid);
    return;
  }
  auto it = by_uid_.find(uid);
  if (it != by_uid_.end() && it->second.object->resource_version >= event.object->resource_version) return;
  json::Document scratch;
  const json::Value& doc = ParsedObject(event, scratch);
  Budget b;
  b.object = event.object;
  const json::Value* spec = json::Find(doc, "spec");
  if (auto sel = LabelSelectorFromJson(spec ? json::Find(*spec, "selector") : nullptr)) b.selector = std::move(*sel);
  if (const json::Value* v = spec ? json::Find(*spec, "minAvailable") : nullptr) b.min_available = json::Encode(*v);
  if (const json::Value* v = spec ? json::Find(*spec, "maxUnavailable") : nullptr) b.max_unavailable = json::Encode(*v);
  b.generation = GetInt(*json::Find(doc, "metadata"), "generation", 1);
  const json::Value* status = json::Find(doc, "status");
  b.status_json = status ? json::Encode(*status) : "{}";
  b.spec_json = spec ? json::Encode(*spec) : "";
  const bool reselect = it == by_uid_.end() || it->second.spec_json != b.spec_json;
  if (!reselect) {
    b.members = std::move(it->second.members);
  } else if (b.selector) {
    // A new or changed selector: the namespace's pods once.
    for (const ObjectPtr& pod : ListAll(ctx_.store, pods_, event.object->namespace_)) {
      if (b.selector->Matches(pod->labels()) && ctx_.pods.Get(pod->uid)) b.members.insert(pod->uid);
    }
  }
  by_uid_.insert_or_assign(uid, std::move(b));
  by_namespace_[event.object->namespace_].insert(uid);
  dirty_.push_back(uid);
}

void DisruptionController::OnPod() {
  const PodFactsPtr& before = ctx_.pods.Previous();
  const PodFactsPtr& after = ctx_.pods.Current();
  const PodFacts* any = after ? after.get() : before.get();
  if (any == nullptr) return;
  auto ns = by_namespace_.find(any->namespace_());
  if (ns == by_namespace_.end()) return;
  for (const std::string& uid : ns->second) {
    Budget& b = by_uid_.at(uid);
    if (!b.selector) continue;
    const bool was = b.members.contains(any->uid());
    const bool now = after && b.selector->Matches(after->object->labels());
    if (now && !was) b.members.insert(any->uid());
    if (!now && was) b.members.erase(any->uid());
    if (was || now) dirty_.push_back(uid);
  }
}

void DisruptionController::Flush() {
  std::vector<std::string> dirty;
  dirty.swap(dirty_);
  std::sort(dirty.begin(), dirty.end());
  dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
  for (const std::string& uid : dirty) {
    if (auto it = by_uid_.find(uid); it != by_uid_.end() && it->second.selector) Sync(it->second);
  }
}

void DisruptionController::Sync(const Budget& pdb) {
  const int64_t now = ctx_.clock.NowNs();
  json::Document old_status;
  (void)json::Parse(pdb.status_json, old_status);
  const json::Value* old_disrupted = old_status.IsObject() ? json::Find(old_status, "disruptedPods") : nullptr;

  int64_t expected = 0, healthy = 0;
  std::vector<std::pair<std::string, std::string>> disrupted;  // still counted as disrupted
  for (const std::string& uid : pdb.members) {
    PodFactsPtr pod = ctx_.pods.Get(uid);
    if (!pod || pod->Finished()) continue;
    ++expected;
    if (pod->Terminating()) continue;
    if (old_disrupted && old_disrupted->IsObject()) {
      if (const json::Value* at = json::Find(*old_disrupted, pod->name())) {
        auto t = api::ParseRFC3339(json::View(*at));
        if (t && *t + kDeletionTimeoutNs > now) {
          disrupted.emplace_back(pod->name(), std::string(json::View(*at)));
          continue;
        }
      }
    }
    if (pod->ready) ++healthy;
  }
  int64_t desired = 0;
  json::Document bound;
  if (!pdb.max_unavailable.empty() && json::Parse(pdb.max_unavailable, bound)) {
    desired = std::max<int64_t>(0, expected - Scaled(bound, expected));
  } else if (!pdb.min_available.empty() && json::Parse(pdb.min_available, bound)) {
    desired = Scaled(bound, expected);
  }
  const int64_t allowed = std::max<int64_t>(0, healthy - desired);

  json::Document status;
  status.SetObject();
  auto& a = status.GetAllocator();
  json::Set(status, "observedGeneration", json::Value(pdb.generation), a);
  json::Set(status, "expectedPods", json::Value(expected), a);
  json::Set(status, "currentHealthy", json::Value(healthy), a);
  json::Set(status, "desiredHealthy", json::Value(desired), a);
  json::Set(status, "disruptionsAllowed", json::Value(allowed), a);
  // A merge patch merges maps: lapsed entries are removed with null.
  json::Value disrupted_patch(rapidjson::kObjectType);
  if (old_disrupted && old_disrupted->IsObject()) {
    for (const auto& m : old_disrupted->GetObject()) json::Set(disrupted_patch, json::View(m.name), json::Value(), a);
  }
  for (const auto& [pod, at] : disrupted) json::Set(disrupted_patch, pod, json::MakeString(at, a), a);
  json::Set(status, "disruptedPods", std::move(disrupted_patch), a);
  // The DisruptionAllowed condition; its transition time moves only when its status does.
  const std::string_view cond_status = allowed > 0 ? "True" : "False";
  std::string transition = api::FormatRFC3339(now);
  if (const json::Value* conds = old_status.IsObject() ? json::Find(old_status, "conditions") : nullptr;
      conds && conds->IsArray()) {
    for (const auto& c : conds->GetArray()) {
      if (json::GetString(c, "type") == "DisruptionAllowed" && json::GetString(c, "status") == cond_status) {
        transition = std::string(json::GetString(c, "lastTransitionTime"));
      }
    }
  }
  json::Value cond(rapidjson::kObjectType);
  json::Set(cond, "type", json::MakeString("DisruptionAllowed", a), a);
  json::Set(cond, "status", json::MakeString(cond_status, a), a);
  json::Set(cond, "reason", json::MakeString(allowed > 0 ? "SufficientPods" : "InsufficientPods", a), a);
  json::Set(cond, "message", json::MakeString("", a), a);
  json::Set(cond, "observedGeneration", json::Value(pdb.generation), a);
  json::Set(cond, "lastTransitionTime", json::MakeString(transition, a), a);
  json::Value conds(rapidjson::kArrayType);
  conds.PushBack(cond, a);
  json::Set(status, "conditions", std::move(conds), a);
  PatchStatusIfChanged(ctx_.store, pdbs_, *pdb.object, pdb.status_json, status);
}

}  // namespace kubesched::store::controllers
