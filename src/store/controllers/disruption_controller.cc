#include "store/controllers/disruption_controller.h"

#include <charconv>
#include <cmath>

#include "store/controllers/object_util.h"
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

DisruptionController::DisruptionController(Store& store, const util::Clock& clock)
    : store_(store),
      clock_(clock),
      pods_(*store.FindResource("", "pods")),
      pdbs_(*store.FindResource("policy", "poddisruptionbudgets")) {}

void DisruptionController::OnEvent(const WatchEvent& event) {
  if (!event.object) return;
  if (event.object->type == &pdbs_) {
    if (event.type != EventType::kDeleted) Sync(*event.object);
  } else if (event.object->type == &pods_) {
    for (const ObjectPtr& pdb : ListAll(store_, pdbs_, event.object->namespace_)) Sync(*pdb);
  }
}

void DisruptionController::Resync() {
  for (const ObjectPtr& pdb : ListAll(store_, pdbs_, "")) Sync(*pdb);
}

void DisruptionController::Sync(const Object& pdb) {
  json::Document doc = Parse(pdb);
  const json::Value* spec = json::Find(doc, "spec");
  auto selector = LabelSelectorFromJson(spec ? json::Find(*spec, "selector") : nullptr);
  if (!selector) return;
  const int64_t now = clock_.NowNs();
  const json::Value* old_status = json::Find(doc, "status");
  const json::Value* old_disrupted = old_status ? json::Find(*old_status, "disruptedPods") : nullptr;

  int64_t expected = 0, healthy = 0;
  std::vector<std::pair<std::string, std::string>> disrupted;  // still counted as disrupted
  for (const ObjectPtr& pod : ListAll(store_, pods_, pdb.namespace_)) {
    if (!selector->Matches(pod->labels)) continue;
    json::Document p = Parse(*pod);
    const json::Value* phase = At(p, {"status", "phase"});
    const std::string_view ph = phase ? json::View(*phase) : std::string_view();
    if (ph == "Succeeded" || ph == "Failed") continue;
    ++expected;
    if (IsTerminating(p)) continue;
    if (old_disrupted && old_disrupted->IsObject()) {
      if (const json::Value* at = json::Find(*old_disrupted, pod->name)) {
        auto t = ParseTimestamp(json::View(*at));
        if (t && *t + kDeletionTimeoutNs > now) {
          disrupted.emplace_back(pod->name, std::string(json::View(*at)));
          continue;
        }
      }
    }
    if (IsPodReady(p)) ++healthy;
  }
  int64_t desired = 0;
  if (const json::Value* max_unavailable = spec ? json::Find(*spec, "maxUnavailable") : nullptr) {
    desired = std::max<int64_t>(0, expected - Scaled(*max_unavailable, expected));
  } else if (const json::Value* min_available = spec ? json::Find(*spec, "minAvailable") : nullptr) {
    desired = Scaled(*min_available, expected);
  }
  const int64_t allowed = std::max<int64_t>(0, healthy - desired);

  json::Document patch;
  patch.SetObject();
  auto& a = patch.GetAllocator();
  json::Value& status = json::Child(patch, "status", a);
  json::Set(status, "observedGeneration", json::Value(GetInt(*json::Find(doc, "metadata"), "generation", 1)), a);
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
  std::string transition = FormatTimestamp(now);
  if (const json::Value* conds = old_status ? json::Find(*old_status, "conditions") : nullptr;
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
  json::Set(cond, "observedGeneration", json::Value(GetInt(*json::Find(doc, "metadata"), "generation", 1)), a);
  json::Set(cond, "lastTransitionTime", json::MakeString(transition, a), a);
  json::Value conds(rapidjson::kArrayType);
  conds.PushBack(cond, a);
  json::Set(status, "conditions", std::move(conds), a);
  (void)store_.Patch(pdbs_, pdb.namespace_, pdb.name, PatchType::kMergePatch, json::Encode(patch), "status");
}

}  // namespace kubesched::store::controllers
