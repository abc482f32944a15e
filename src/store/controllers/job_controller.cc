#include "store/controllers/job_controller.h"
#include "api/time_format.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "api/workloads.h"
#include "store/controllers/pod_factory.h"
#include "store/meta.h"

namespace kubesched::store::controllers {

namespace json = api::json;

namespace {

// Upstream's generateName keeps the base to 63 - 5 characters.
constexpr size_t kMaxGeneratedNameBaseLength = 58;

// controller.ActivePods' order, most deletable first.
bool MoreDeletable(const PodFactsPtr& x, const PodFactsPtr& y) {
  if (x->node_name.empty() != y->node_name.empty()) return x->node_name.empty();
  if ((x->phase == "Running") != (y->phase == "Running")) return x->phase != "Running";
  if (x->ready != y->ready) return !x->ready;
  if (x->created_ns != y->created_ns) return x->created_ns > y->created_ns;
  return x->seq > y->seq;
}

}  // namespace

std::string FormatIndexes(const std::vector<int64_t>& sorted) {
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", sorted[i]) : fmt::format("{}-{}", sorted[i], sorted[j]);
    i = j + 1;
  }
  return out;
}

JobController::JobController(const ControllerContext& ctx)
    : ctx_(ctx), pods_(*ctx.store.FindResource("", "pods")), jobs_(*ctx.store.FindResource("batch", "jobs")) {}

void JobController::OnEvent(const WatchEvent& event) {
  if (!event.object) return;
  if (event.object->type == &jobs_) {
    OnJob(event);
  } else if (event.object->type == &pods_) {
    OnPod(event);
  }
}

void JobController::Resync() {
  for (const ObjectPtr& j : ListAll(ctx_.store, jobs_, "")) {
    if (!by_uid_.contains(j->uid)) OnJob(WatchEvent{EventType::kAdded, j, nullptr});
  }
}

void JobController::OnJob(const WatchEvent& event) {
  const std::string& uid = event.object->uid;
  if (event.type == EventType::kDeleted) {
    by_uid_.erase(uid);
    expectations_.Forget(uid);
    for (const auto& [seq, p] : ctx_.pods.OwnedBy(uid)) {
      DeleteOptions options;
      options.precondition_uid = p->uid();
      (void)ctx_.store.Delete(pods_, p->namespace_(), p->name(), options);
    }
    return;
  }
  auto it = by_uid_.find(uid);
  if (it != by_uid_.end() && it->second.info.object->resource_version >= event.object->resource_version) return;
  json::Document scratch;
  const json::Value& doc = ParsedObject(event, scratch);
  Job job;
  job.info = ParseWorkload(event.object, doc);
  if (const json::Value* spec = json::Find(doc, "spec")) {
    job.parallelism = GetInt(*spec, "parallelism", 1);
    if (const json::Value* c = json::Find(*spec, "completions"); c && c->IsInt64()) job.completions = c->GetInt64();
    job.backoff_limit = GetInt(*spec, "backoffLimit", 6);
    job.indexed = json::GetString(*spec, "completionMode") == "Indexed";
    const json::Value* s = json::Find(*spec, "suspend");
    job.suspend = s && s->IsTrue();
  }
  if (const json::Value* status = json::Find(doc, "status")) {
    job.start_time = std::string(json::GetString(*status, "startTime"));
    if (const json::Value* conds = json::Find(*status, "conditions"); conds && conds->IsArray()) {
      for (const auto& c : conds->GetArray()) {
        const std::string_view type = json::GetString(c, "type");
        if ((type == "Complete" || type == "Failed") && json::GetString(c, "status") == "True") job.finished = type;
      }
    }
  }
  Job& stored = by_uid_.insert_or_assign(uid, std::move(job)).first->second;
  Manage(stored);
  dirty_.push_back(uid);
}

void JobController::OnPod(const WatchEvent& event) {
  const PodFactsPtr& before = ctx_.pods.Previous();
  const PodFactsPtr& after = ctx_.pods.Current();
  const PodFacts* any = after ? after.get() : before.get();
  if (any == nullptr || !any->controller || any->controller->kind != "Job") return;
  auto it = by_uid_.find(any->controller->uid);
  if (it == by_uid_.end()) return;
  if (event.type == EventType::kAdded) expectations_.CreationObserved(it->first);
  if (!after || after->Terminating()) expectations_.DeletionObserved(it->first, any->uid());
  // Only what changes the counts matters (a pod's binding or start does not, but readiness does).
  const bool relevant = !before || !after || before->Active() != after->Active() || before->phase != after->phase ||
                        before->ready != after->ready || before->Terminating() != after->Terminating();
  if (!relevant) return;
  Manage(it->second);
  dirty_.push_back(it->first);
}

JobController::Tally JobController::Count(const Job& job) const {
  Tally t;
  std::set<int64_t> indexes;
  const int64_t completions = job.completions.value_or(1);
  for (const auto& [seq, p] : ctx_.pods.OwnedBy(job.info.uid())) {
    if (p->phase == "Succeeded") {
      ++t.succeeded;
      if (job.indexed && p->completion_index && *p->completion_index < completions)
        indexes.insert(*p->completion_index);
    } else if (p->phase == "Failed") {
      ++t.failed;
    } else if (p->Terminating()) {
      ++t.terminating;
    } else {
      t.active.push_back(p);
      if (p->ready) ++t.ready;
    }
  }
  t.succeeded_indexes.assign(indexes.begin(), indexes.end());
  return t;
}

std::string JobController::Outcome(const Job& job, const Tally& t) const {
  if (!job.finished.empty()) return job.finished;
  if (t.failed > job.backoff_limit) return "Failed";
  if (job.indexed) {
    if (static_cast<int64_t>(t.succeeded_indexes.size()) >= job.completions.value_or(1)) return "Complete";
  } else if (job.completions) {
    if (t.succeeded >= *job.completions) return "Complete";
  } else if (t.succeeded > 0 && t.active.empty()) {
    // A work queue Job (no completions) is done once one pod succeeded and none runs.
    return "Complete";
  }
  return "";
}

void JobController::Manage(const Job& job) {
  const WorkloadInfo& w = job.info;
  if (w.deleting || w.template_json.empty()) return;
  Tally t = Count(job);
  const std::string outcome = Outcome(job, t);
  std::vector<PodFactsPtr> to_delete;
  std::vector<std::optional<int64_t>> to_create;  // completion indexes (nullopt: NonIndexed)
  if (!outcome.empty() || job.suspend) {
    to_delete = t.active;
  } else if (!expectations_.Satisfied(w.uid())) {
    return;
  } else if (job.indexed) {
    std::set<int64_t> taken(t.succeeded_indexes.begin(), t.succeeded_indexes.end());
    for (const PodFactsPtr& p : t.active) {
      if (p->completion_index) taken.insert(*p->completion_index);
    }
    int64_t budget = job.parallelism - static_cast<int64_t>(t.active.size());
    for (int64_t i = 0; i < job.completions.value_or(1) && budget > 0; ++i) {
      if (taken.contains(i)) continue;
      to_create.emplace_back(i);
      --budget;
    }
    if (budget < 0) {
      std::sort(t.active.begin(), t.active.end(), MoreDeletable);
      to_delete.assign(t.active.begin(), t.active.begin() + (-budget));
    }
  } else {
    int64_t want = job.parallelism;
    if (job.completions) {
      want = std::min(want, *job.completions - t.succeeded);
    } else if (t.succeeded > 0) {
      want = static_cast<int64_t>(t.active.size());  // finishing: no new pods
    }
    const int64_t diff = want - static_cast<int64_t>(t.active.size());
    for (int64_t i = 0; i < diff; ++i) to_create.emplace_back(std::nullopt);
    if (diff < 0) {
      std::sort(t.active.begin(), t.active.end(), MoreDeletable);
      to_delete.assign(t.active.begin(), t.active.begin() + (-diff));
    }
  }

  if (!to_create.empty()) {
    json::Document tmpl;
    if (!json::Parse(w.template_json, tmpl)) return;
    expectations_.ExpectCreations(w.uid(), static_cast<int64_t>(to_create.size()));
    for (size_t k = 0; k < to_create.size(); ++k) {
      json::Document pod = PodFromTemplate(tmpl, w.namespace_(), PodOwner{"batch/v1", "Job", w.name(), w.uid()});
      std::string base = w.name() + "-";
      if (const auto& index = to_create[k]) {
        const std::string value = std::to_string(*index);
        SetLabel(pod, api::kLabelJobCompletionIndex, value);
        SetAnnotation(pod, api::kLabelJobCompletionIndex, value);
        // podGenerateNameWithIndex: the name is cut so that "-<index>-" survives the limit.
        const std::string appendix = "-" + value + "-";
        base =
            w.name().substr(0, kMaxGeneratedNameBaseLength - std::min(appendix.size(), kMaxGeneratedNameBaseLength)) +
            appendix;
      }
      if (!CreateGeneratedPod(ctx_.store, pods_, std::move(pod), base, ctx_.rng)) {
        for (size_t j = k; j < to_create.size(); ++j) expectations_.CreationObserved(w.uid());
        break;
      }
    }
  }
  for (const PodFactsPtr& p : to_delete) expectations_.ExpectDeletion(w.uid(), p->uid());
  for (const PodFactsPtr& p : to_delete) {
    DeleteOptions options;
    options.precondition_uid = p->uid();
    if (!ctx_.store.Delete(pods_, p->namespace_(), p->name(), options))
      expectations_.DeletionObserved(w.uid(), p->uid());
  }
}

void JobController::Flush() {
  std::vector<std::string> dirty;
  dirty.swap(dirty_);
  std::sort(dirty.begin(), dirty.end());
  dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
  for (const std::string& uid : dirty) {
    if (auto it = by_uid_.find(uid); it != by_uid_.end()) WriteStatus(it->second);
  }
}

void JobController::WriteStatus(const Job& job) {
  if (job.info.deleting) return;
  const Tally t = Count(job);
  const std::string outcome = Outcome(job, t);
  const std::string now = api::FormatRFC3339(ctx_.clock.NowNs());
  json::Document old;
  (void)json::Parse(job.info.status_json, old);
  const json::Value* old_conditions = old.IsObject() ? json::Find(old, "conditions") : nullptr;
  // A condition keeps its transition time while its status stays.
  auto transition = [&](std::string_view type, std::string_view status) {
    if (old_conditions && old_conditions->IsArray()) {
      for (const auto& c : old_conditions->GetArray()) {
        if (json::GetString(c, "type") == type && json::GetString(c, "status") == status) {
          return std::string(json::GetString(c, "lastTransitionTime"));
        }
      }
    }
    return now;
  };
  bool was_suspended = false;
  if (old_conditions && old_conditions->IsArray()) {
    for (const auto& c : old_conditions->GetArray()) {
      if (json::GetString(c, "type") == "Suspended" && json::GetString(c, "status") == "True") was_suspended = true;
    }
  }

  json::Document status;
  status.SetObject();
  auto& a = status.GetAllocator();
  json::Set(status, "active", json::Value(static_cast<int64_t>(t.active.size())), a);
  json::Set(status, "ready", json::Value(t.ready), a);
  json::Set(status, "succeeded", json::Value(t.succeeded), a);
  json::Set(status, "failed", json::Value(t.failed), a);
  json::Set(status, "terminating", json::Value(t.terminating), a);
  if (job.indexed) json::Set(status, "completedIndexes", json::MakeString(FormatIndexes(t.succeeded_indexes), a), a);
  if (!job.suspend || !job.start_time.empty()) {
    json::Set(status, "startTime", json::MakeString(job.start_time.empty() ? now : job.start_time, a), a);
  }
  auto condition = [&](std::string_view type, std::string_view cond_status, std::string_view reason,
                       std::string_view message) {
    json::Value c(rapidjson::kObjectType);
    json::Set(c, "type", json::MakeString(type, a), a);
    json::Set(c, "status", json::MakeString(cond_status, a), a);
    json::Set(c, "reason", json::MakeString(reason, a), a);
    json::Set(c, "message", json::MakeString(message, a), a);
    const std::string at = transition(type, cond_status);
    json::Set(c, "lastProbeTime", json::MakeString(at, a), a);
    json::Set(c, "lastTransitionTime", json::MakeString(at, a), a);
    return c;
  };
  json::Value conditions(rapidjson::kArrayType);
  if (outcome == "Complete") {
    conditions.PushBack(
        condition("Complete", "True", "CompletionsReached", "Reached expected number of succeeded pods"), a);
    if (const json::Value* done = old.IsObject() ? json::Find(old, "completionTime") : nullptr) {
      json::Set(status, "completionTime", json::Value(*done, a), a);
    } else {
      json::Set(status, "completionTime", json::MakeString(now, a), a);
    }
  } else if (outcome == "Failed") {
    conditions.PushBack(
        condition("Failed", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit"), a);
  } else if (job.suspend) {
    conditions.PushBack(condition("Suspended", "True", "JobSuspended", "Job suspended"), a);
  } else if (was_suspended) {
    conditions.PushBack(condition("Suspended", "False", "JobResumed", "Job resumed"), a);
  }
  if (!conditions.Empty()) json::Set(status, "conditions", std::move(conditions), a);
  PatchStatusIfChanged(ctx_.store, jobs_, job.info, status);
}

}  // namespace kubesched::store::controllers
