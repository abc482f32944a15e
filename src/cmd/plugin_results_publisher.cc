#include "cmd/plugin_results_publisher.h"

#include <fmt/format.h>

#include "api/json.h"
#include "api/json_writer.h"
#include "scheduler/plugin_results.h"
#include "store/meta.h"
#include "util/log.h"

namespace kubesched::cmd {

namespace json = api::json;

PluginResultsPublisher::PluginResultsPublisher(store::Store& store, size_t max_queued)
    : store_(store), max_queued_(max_queued) {}

PluginResultsPublisher::~PluginResultsPublisher() {
  if (worker_.joinable()) {
    worker_.request_stop();
    worker_.join();
  }
}

void PluginResultsPublisher::Record(const api::Pod& pod, const scheduler::AttemptExplanation& explanation) {
  std::lock_guard lock(mu_);
  auto it = pending_.find(pod.metadata.uid);
  if (it != pending_.end()) {
    it->second.explanation = explanation;
    return;
  }
  if (pending_.size() >= max_queued_) {
    // The API server is not keeping up: the attempt's annotation is skipped (the pod's next
    // attempt writes its own), never waited for.
    if (dropped_++ % 1000 == 0) {
      KS_LOG.WarningS("Plugin results not recorded: too many annotations waiting", "pod", log::KObj(pod), "dropped",
                      dropped_);
    }
    return;
  }
  order_.push_back(pod.metadata.uid);
  pending_.emplace(pod.metadata.uid,
                   Pending{pod.metadata.namespace_, pod.metadata.name, pod.metadata.uid, explanation});
  cv_.notify_one();
}

void PluginResultsPublisher::Start(std::vector<profile::ProfileConfig> profiles, std::string config_yaml) {
  if (worker_.joinable()) return;
  for (const profile::ProfileConfig& p : profiles) profiles_.emplace(p.scheduler_name, p);
  profile_list_ = std::move(profiles);
  config_yaml_ = std::move(config_yaml);
  worker_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void PluginResultsPublisher::Run(std::stop_token stop) {
  PublishConfig();
  while (true) {
    Pending next;
    {
      std::unique_lock lock(mu_);
      if (!cv_.wait(lock, stop, [this] { return !order_.empty(); })) return;
      auto it = pending_.find(order_.front());
      order_.pop_front();
      next = std::move(it->second);
      pending_.erase(it);
    }
    Annotate(next);
  }
}

void PluginResultsPublisher::Annotate(const Pending& p) {
  const store::ResourceType* pods = store_.FindResource("", "pods");
  if (!pods) return;
  auto profile = profiles_.find(p.explanation.profile);
  const std::string value =
      scheduler::EncodePluginResults(p.explanation, profile == profiles_.end() ? nullptr : &profile->second);
  // A merge patch of the annotation alone: it cannot undo the bind (or any other field) however
  // the two interleave. The uid makes it a precondition: a pod deleted and made again under the
  // same name is not annotated with its predecessor's attempt.
  std::string patch;
  json::StringWriter w(patch);
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  w.Key("uid");
  w.String(p.uid);
  w.Key("annotations");
  w.StartObject();
  w.Key(scheduler::kPluginResultsAnnotation);
  w.String(value);
  w.EndObject();
  w.EndObject();
  w.EndObject();
  w.Finish();
  auto patched = store_.Patch(*pods, p.namespace_, p.name, store::PatchType::kMergePatch, patch, "");
  if (!patched) {
    // A pod deleted since its attempt is no failure worth a warning.
    const bool gone = patched.error().reason == store::Error::Reason::kNotFound ||
                      patched.error().reason == store::Error::Reason::kConflict;
    if (gone) {
      KS_LOG_V(4).InfoS("Pod gone before its plugin results were recorded", "pod", log::KRef(p.namespace_, p.name));
    } else {
      KS_LOG.ErrorS(patched.error().message, "Recording plugin results failed", "pod", log::KRef(p.namespace_, p.name));
    }
  }
}

void PluginResultsPublisher::PublishConfig() {
  const store::ResourceType* config_maps = store_.FindResource("", "configmaps");
  if (!config_maps) return;
  json::Document cm;
  auto& a = cm.GetAllocator();
  cm.SetObject();
  json::Set(cm, "apiVersion", json::MakeString("v1", a), a);
  json::Set(cm, "kind", json::MakeString("ConfigMap", a), a);
  json::Value& meta = json::Child(cm, "metadata", a);
  json::Set(meta, "name", json::MakeString(kSchedulerConfigMapName, a), a);
  json::Set(meta, "namespace", json::MakeString(kSchedulerConfigNamespace, a), a);
  json::Value& data = json::Child(cm, "data", a);
  json::Set(data, "profiles.json", json::MakeString(scheduler::EncodeProfileConfigs(profile_list_), a), a);
  json::Set(data, "config.yaml", json::MakeString(config_yaml_, a), a);
  const std::string body = json::Encode(cm);
  // Created, or updated over what an earlier run left (a conflict with a concurrent writer:
  // tried again once on the newer version).
  std::string error;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto current = store_.Get(*config_maps, kSchedulerConfigNamespace, kSchedulerConfigMapName);
    json::Document doc;
    if (!json::Parse(body, doc)) return;
    if (!current && current.error().reason == store::Error::Reason::kNotFound) {
      auto created = store_.Create(*config_maps, kSchedulerConfigNamespace, std::move(doc));
      if (created) return;
      error = created.error().message;
      continue;
    }
    if (!current) {
      error = current.error().message;
      break;
    }
    json::Document existing = store::ParseObject(**current);
    store::UpdateRequest request;
    request.expected_resource_version = std::string(json::GetString(store::Metadata(existing), "resourceVersion"));
    auto updated =
        store_.Update(*config_maps, kSchedulerConfigNamespace, kSchedulerConfigMapName, std::move(doc), request);
    if (updated) return;
    error = updated.error().message;
  }
  KS_LOG.ErrorS(error, "Publishing the scheduler's configuration failed", "configmap",
                log::KRef(kSchedulerConfigNamespace, kSchedulerConfigMapName));
}

}  // namespace kubesched::cmd
