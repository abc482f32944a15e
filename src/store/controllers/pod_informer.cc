#include "store/controllers/pod_informer.h"
#include "api/time_format.h"

#include <algorithm>
#include <charconv>
#include <thread>

#include "api/workloads.h"
#include "store/meta.h"

namespace kubesched::store::controllers {

namespace json = api::json;

namespace {

std::optional<int64_t> ParseIndex(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// The node of ReplaceDaemonSetPodNodeNameNodeAffinity's term: matchFields metadata.name In [node].
std::string PinnedNode(const json::Value& spec) {
  const json::Value* terms =
      At(spec, {"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"});
  if (terms == nullptr || !terms->IsArray()) return "";
  for (const auto& term : terms->GetArray()) {
    const json::Value* fields = json::Find(term, "matchFields");
    if (fields == nullptr || !fields->IsArray()) continue;
    for (const auto& r : fields->GetArray()) {
      const json::Value* values = json::Find(r, "values");
      if (json::GetString(r, "key") == api::kFieldNodeName && json::GetString(r, "operator") == "In" && values &&
          values->IsArray() && values->Size() == 1) {
        return std::string(json::View((*values)[0]));
      }
    }
  }
  return "";
}

}  // namespace

PodFacts ParsePodFacts(const ObjectPtr& pod, const json::Value* parsed) {
  json::Document scratch;
  if (parsed == nullptr) {
    scratch = Parse(*pod);
    parsed = &scratch;
  }
  const json::Value& doc = *parsed;
  PodFacts info;
  info.object = pod;
  if (auto controller = ControllerOf(doc)) info.controller = std::make_shared<const OwnerRef>(std::move(*controller));
  const json::Value* meta = json::Find(doc, "metadata");
  if (meta != nullptr) {
    if (const json::Value* ts = json::Find(*meta, "deletionTimestamp")) {
      info.deletion_ns = api::ParseRFC3339(json::View(*ts)).value_or(0);
    }
    info.created_ns = api::ParseRFC3339(json::GetString(*meta, "creationTimestamp")).value_or(0);
    for (std::string_view map : {"annotations", "labels"}) {
      if (info.completion_index) break;
      if (const json::Value* m = json::Find(*meta, map)) {
        if (const json::Value* v = json::Find(*m, api::kLabelJobCompletionIndex)) {
          info.completion_index = ParseIndex(json::View(*v));
        }
      }
    }
    if (const json::Value* labels = json::Find(*meta, "labels")) {
      if (const json::Value* v = json::Find(*labels, api::kLabelPodIndex)) info.ordinal = ParseIndex(json::View(*v));
    }
    if (!info.ordinal) {
      const std::string_view name = pod->name;
      if (size_t dash = name.rfind('-'); dash != std::string_view::npos)
        info.ordinal = ParseIndex(name.substr(dash + 1));
    }
  }
  if (const json::Value* spec = json::Find(doc, "spec")) {
    info.node_name = std::string(json::GetString(*spec, "nodeName"));
    info.pinned_node = PinnedNode(*spec);
    const json::Value* hn = json::Find(*spec, "hostNetwork");
    info.host_network = hn && hn->IsTrue();
  }
  if (const json::Value* status = json::Find(doc, "status")) {
    info.phase = std::string(json::GetString(*status, "phase"));
    if (const json::Value* conds = json::Find(*status, "conditions"); conds && conds->IsArray()) {
      for (const auto& c : conds->GetArray()) {
        if (json::GetString(c, "type") == "Ready") info.ready = json::GetString(c, "status") == "True";
      }
    }
  }
  return info;
}

void PodInformer::Fill(std::vector<ObjectPtr> pods) {
  std::sort(pods.begin(), pods.end(),
            [](const ObjectPtr& a, const ObjectPtr& b) { return a->resource_version < b->resource_version; });
  std::erase_if(pods, [&](const ObjectPtr& p) { return by_uid_.contains(p->uid); });
  // Reading the pods' JSON is the cost, one pod independent of another: two threads share it on
  // a large list (a cluster's start), then the pods are indexed in order.
  std::vector<std::shared_ptr<PodFacts>> infos(pods.size());
  auto parse = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) infos[i] = std::make_shared<PodFacts>(ParsePodFacts(pods[i]));
  };
  constexpr size_t kMinPodsForTwoThreads = 512;
  if (pods.size() >= kMinPodsForTwoThreads && std::thread::hardware_concurrency() > 1) {
    const size_t half = pods.size() / 2;
    std::thread second(parse, half, pods.size());
    parse(0, half);
    second.join();
  } else {
    parse(0, pods.size());
  }
  for (auto& info : infos) {
    info->seq = next_seq_++;
    Put(std::move(info));
  }
}

void PodInformer::Apply(const WatchEvent& event) {
  previous_.reset();
  current_.reset();
  if (!event.object || event.object->type != &pods_) return;
  const std::string& uid = event.object->uid;
  if (auto it = by_uid_.find(uid); it != by_uid_.end()) previous_ = it->second;
  if (event.type == EventType::kDeleted) {
    if (previous_) Remove(uid);
    return;
  }
  // A version the informer has already seen (Fill raced with the event) changes nothing.
  if (previous_ && previous_->object->resource_version >= event.object->resource_version) {
    current_ = previous_;
    return;
  }
  auto info = std::make_shared<PodFacts>(ParsePodFacts(event.object, event.parsed.get()));
  info->seq = previous_ ? previous_->seq : next_seq_++;
  if (previous_) Remove(uid);
  current_ = info;
  Put(std::move(info));
}

PodFactsPtr PodInformer::Get(const std::string& uid) const {
  auto it = by_uid_.find(uid);
  return it == by_uid_.end() ? nullptr : it->second;
}

const PodsBySeq& PodInformer::OwnedBy(const std::string& owner_uid) const {
  static const PodsBySeq kNone;
  auto it = by_owner_.find(owner_uid);
  return it == by_owner_.end() ? kNone : it->second;
}

const PodsBySeq& PodInformer::OnNode(const std::string& node_name) const {
  static const PodsBySeq kNone;
  auto it = by_node_.find(node_name);
  return it == by_node_.end() ? kNone : it->second;
}

void PodInformer::Put(PodFactsPtr info) {
  if (info->controller) by_owner_[info->controller->uid][info->seq] = info;
  if (!info->node_name.empty()) by_node_[info->node_name][info->seq] = info;
  by_uid_[info->uid()] = std::move(info);
}

void PodInformer::Remove(const std::string& uid) {
  auto it = by_uid_.find(uid);
  if (it == by_uid_.end()) return;
  const PodFactsPtr info = it->second;
  by_uid_.erase(it);
  if (info->controller) Unindex(by_owner_, info->controller->uid, info->seq);
  if (!info->node_name.empty()) Unindex(by_node_, info->node_name, info->seq);
}

void PodInformer::Unindex(std::unordered_map<std::string, PodsBySeq>& index, const std::string& key, uint64_t seq) {
  auto it = index.find(key);
  if (it == index.end()) return;
  it->second.erase(seq);
  if (it->second.empty()) index.erase(it);
}

}  // namespace kubesched::store::controllers
