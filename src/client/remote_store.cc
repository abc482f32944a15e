#include "client/remote_store.h"

#include <algorithm>

#include <fmt/format.h>

#include "api/json_writer.h"
#include "store/meta.h"
#include "store/selectors.h"
#include "util/log.h"

namespace kubesched::client {

namespace json = api::json;
using store::Error;
using store::ObjectPtr;
using store::Result;

namespace {

Error MakeError(Error::Reason reason, std::string message) { return Error{reason, std::move(message), {}}; }

// The store's error for an API answer that is not a success: the Status body's reason and
// causes, else the HTTP code's.
Error ErrorFromResponse(const Response& response) {
  Error error;
  switch (response.status) {
    case 400:
      error.reason = Error::Reason::kBadRequest;
      break;
    case 403:
      error.reason = Error::Reason::kForbidden;
      break;
    case 404:
      error.reason = Error::Reason::kNotFound;
      break;
    case 405:
      error.reason = Error::Reason::kMethodNotAllowed;
      break;
    case 409:
      error.reason = Error::Reason::kConflict;
      break;
    case 410:
      error.reason = Error::Reason::kGone;
      break;
    case 413:
      error.reason = Error::Reason::kRequestEntityTooLarge;
      break;
    case 422:
      error.reason = Error::Reason::kInvalid;
      break;
    case 429:
      error.reason = Error::Reason::kTooManyRequests;
      break;
    case 504:
      error.reason = Error::Reason::kTimeout;
      break;
    default:
      error.reason = Error::Reason::kInternal;
      break;
  }
  json::Document status;
  if (json::Parse(response.body, status) && status.IsObject()) {
    error.message = std::string(json::GetString(status, "message"));
    if (response.status == 409 && json::GetString(status, "reason") == "AlreadyExists") {
      error.reason = Error::Reason::kAlreadyExists;
    }
    if (const json::Value* details = json::Find(status, "details")) {
      if (const json::Value* causes = json::Find(*details, "causes"); causes != nullptr && causes->IsArray()) {
        for (const json::Value& c : causes->GetArray()) {
          error.causes.push_back({std::string(json::GetString(c, "reason")), std::string(json::GetString(c, "message")),
                                  std::string(json::GetString(c, "field"))});
        }
      }
    }
  }
  if (error.message.empty())
    error.message = fmt::format("the server answered {}: {}", response.status, response.body.substr(0, 200));
  return error;
}

std::string ObjectPath(const store::ResourceType& type, std::string_view namespace_, std::string_view name,
                       std::string_view subresource = {}) {
  std::string path =
      type.group.empty() ? fmt::format("/api/{}", type.version) : fmt::format("/apis/{}/{}", type.group, type.version);
  if (type.namespaced && !namespace_.empty()) path += fmt::format("/namespaces/{}", namespace_);
  path += "/" + type.resource;
  if (!name.empty()) path += fmt::format("/{}", name);
  if (!subresource.empty()) path += fmt::format("/{}", subresource);
  return path;
}

std::string_view ContentType(store::PatchType type) {
  switch (type) {
    case store::PatchType::kJsonPatch:
      return "application/json-patch+json";
    case store::PatchType::kMergePatch:
      return "application/merge-patch+json";
    case store::PatchType::kStrategicMergePatch:
      return "application/strategic-merge-patch+json";
  }
  return "application/json";
}

// metav1.DeleteOptions.
void WriteDeleteOptions(json::StringWriter& w, const store::DeleteOptions& options, bool with_type_meta) {
  w.StartObject();
  if (with_type_meta) {
    w.Key("apiVersion");
    w.String("v1");
    w.Key("kind");
    w.String("DeleteOptions");
  }
  if (options.grace_period_seconds) {
    w.Key("gracePeriodSeconds");
    w.Int64(*options.grace_period_seconds);
  }
  if (options.precondition_uid || options.precondition_resource_version) {
    w.Key("preconditions");
    w.StartObject();
    if (options.precondition_uid) {
      w.Key("uid");
      w.String(*options.precondition_uid);
    }
    if (options.precondition_resource_version) {
      w.Key("resourceVersion");
      w.String(*options.precondition_resource_version);
    }
    w.EndObject();
  }
  w.EndObject();
}

std::string DeleteOptionsJson(const store::DeleteOptions& options) {
  std::string out;
  json::StringWriter w(out);
  WriteDeleteOptions(w, options, true);
  w.Finish();
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> SchedulerInformedResources() {
  return {{"", "nodes"},
          {"", "pods"},
          {"", "namespaces"},
          {"policy", "poddisruptionbudgets"},
          {"scheduling.k8s.io", "priorityclasses"},
          {"apps", "replicasets"},
          {"apps", "statefulsets"},
          {"", "replicationcontrollers"},
          {"scheduling.k8s.io", "podgroups"},
          {"scheduling.x-k8s.io", "podgroups"},
          {"", "persistentvolumeclaims"},
          {"", "persistentvolumes"},
          {"storage.k8s.io", "storageclasses"},
          {"storage.k8s.io", "csinodes"},
          {"storage.k8s.io", "csidrivers"},
          {"storage.k8s.io", "csistoragecapacities"},
          {"resource.k8s.io", "deviceclasses"},
          {"resource.k8s.io", "resourceslices"},
          {"resource.k8s.io", "resourceclaims"}};
}

std::vector<std::pair<std::string, std::string>> SchedulerOptionalResources() {
  // resource.k8s.io/v1 is served from 1.34: a scheduler run against an older cluster schedules
  // without DRA (no pod there can use a claim of v1).
  return {{"scheduling.k8s.io", "podgroups"},
          {"scheduling.x-k8s.io", "podgroups"},
          {"resource.k8s.io", "deviceclasses"},
          {"resource.k8s.io", "resourceslices"},
          {"resource.k8s.io", "resourceclaims"}};
}

RemoteStore::RemoteStore(RestClient& client, const std::vector<const store::ResourceType*>& types,
                         RemoteStoreOptions options)
    : client_(client), types_(types), options_(std::move(options)) {
  for (const auto& [group, resource] : options_.informed) {
    const store::ResourceType* type = FindResource(group, resource);
    if (type == nullptr) throw std::logic_error(fmt::format("RemoteStore: unknown resource {}/{}", group, resource));
    auto mirror = std::make_unique<Mirror>();
    ReflectorOptions reflector = options_.reflector;
    if (type->group.empty() && type->resource == "pods") reflector.field_selector = options_.pod_field_selector;
    reflector.absent_is_empty = std::find(options_.optional.begin(), options_.optional.end(),
                                          std::make_pair(group, resource)) != options_.optional.end();
    mirror->reflector = std::make_unique<Reflector>(client_, *type, static_cast<ReflectorSink&>(*this), reflector);
    mirrors_.emplace(type, std::move(mirror));
  }
}

RemoteStore::~RemoteStore() { Stop(); }

void RemoteStore::Start() {
  for (auto& [type, mirror] : mirrors_) {
    Reflector* reflector = mirror->reflector.get();
    threads_.emplace_back([reflector](std::stop_token stop) { reflector->Run(stop); });
  }
}

bool RemoteStore::HasSynced() const {
  return std::all_of(mirrors_.begin(), mirrors_.end(), [](const auto& m) { return m.second->reflector->HasSynced(); });
}

bool RemoteStore::WaitForCacheSync(std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  while (!HasSynced()) {
    if (cv.wait_for(lock, stop, std::chrono::milliseconds(20), [] { return false; }); stop.stop_requested()) {
      return false;
    }
  }
  return true;
}

void RemoteStore::Stop() {
  for (std::jthread& t : threads_) t.request_stop();
  threads_.clear();  // joins
}

int RemoteStore::Lists(std::string_view group, std::string_view resource) const {
  const store::ResourceType* type = FindResource(group, resource);
  Mirror* mirror = type != nullptr ? MirrorOf(*type) : nullptr;
  return mirror != nullptr ? mirror->reflector->Lists() : 0;
}

const store::ResourceType* RemoteStore::FindResource(std::string_view group, std::string_view resource) const {
  for (const store::ResourceType* t : types_) {
    if (t->group == group && t->resource == resource) return t;
  }
  return nullptr;
}

RemoteStore::Mirror* RemoteStore::MirrorOf(const store::ResourceType& type) const {
  auto it = mirrors_.find(&type);
  return it != mirrors_.end() ? it->second.get() : nullptr;
}

std::shared_ptr<store::Object> RemoteStore::Build(const store::ResourceType& type, json::Document& doc) const {
  const json::Value* meta = json::Find(doc, "metadata");
  if (meta == nullptr || json::GetString(*meta, "name").empty()) return nullptr;
  // The server's resourceVersion (etcd's revision: a decimal number) stays in the JSON and the
  // view; MakeObject writes back the same digits.
  const uint64_t rv = store::ParseResourceVersion(json::GetString(*meta, "resourceVersion")).value_or(0);
  std::shared_ptr<store::Object> object = store::MakeObject(type, doc, rv);
  if ((type.decode || type.view) && !object->view) {
    KS_LOG.WarningS("Object could not be decoded; the scheduler does not see it", "resource", type.resource, "object",
                    object->namespace_.empty() ? object->name : object->namespace_ + "/" + object->name);
  }
  return object;
}

void RemoteStore::RecordLocked(Mirror& mirror, const store::ResourceType& type, std::shared_ptr<store::Object> next,
                               store::EventType event, ObjectPtr gone) {
  (void)type;
  next->resource_version = ++seq_;
  Key key{next->namespace_, next->name};
  if (event == store::EventType::kDeleted) {
    mirror.objects.erase(key);
    pending_.push_back(store::WatchEvent{event, std::move(next), std::move(gone)});
    return;
  }
  auto [it, inserted] = mirror.objects.try_emplace(std::move(key), next);
  ObjectPtr old;
  if (!inserted) {
    old = std::move(it->second);
    it->second = next;
  }
  pending_.push_back(
      store::WatchEvent{old ? store::EventType::kModified : store::EventType::kAdded, std::move(next), std::move(old)});
}

void RemoteStore::Replace(const store::ResourceType& type, std::vector<json::Document> items) {
  Mirror* mirror = MirrorOf(type);
  if (mirror == nullptr) return;
  std::vector<std::shared_ptr<store::Object>> built;
  built.reserve(items.size());
  for (json::Document& doc : items) {
    if (auto object = Build(type, doc)) built.push_back(std::move(object));
  }
  {
    std::lock_guard lock(mu_);
    std::map<Key, bool> listed;
    for (auto& object : built) {
      Key key{object->namespace_, object->name};
      listed[key] = true;
      auto it = mirror->objects.find(key);
      // A relist that finds an object unchanged is no change (client-go's resync-equal skip).
      if (it != mirror->objects.end() && it->second->json == object->json) continue;
      RecordLocked(*mirror, type, std::move(object), store::EventType::kAdded, nullptr);
    }
    std::vector<ObjectPtr> gone;
    for (const auto& [key, object] : mirror->objects) {
      if (!listed.contains(key)) gone.push_back(object);
    }
    for (const ObjectPtr& object : gone) {
      // Deleted while the watch was down: its last known version, as a deletion.
      RecordLocked(*mirror, type, std::make_shared<store::Object>(*object), store::EventType::kDeleted, object);
    }
  }
  Deliver();
}

void RemoteStore::Apply(const store::ResourceType& type, store::EventType event, json::Document doc) {
  Mirror* mirror = MirrorOf(type);
  if (mirror == nullptr) return;
  std::shared_ptr<store::Object> object = Build(type, doc);
  if (!object) return;
  {
    std::lock_guard lock(mu_);
    auto it = mirror->objects.find(Key{object->namespace_, object->name});
    if (event == store::EventType::kDeleted) {
      if (it == mirror->objects.end()) return;  // never seen (or already gone by a relist)
      ObjectPtr old = it->second;
      RecordLocked(*mirror, type, std::move(object), event, std::move(old));
    } else {
      if (it != mirror->objects.end() && it->second->json == object->json) return;
      RecordLocked(*mirror, type, std::move(object), event, nullptr);
    }
  }
  Deliver();
}

void RemoteStore::Deliver() {
  {
    std::lock_guard lock(mu_);
    if (delivering_) return;  // that thread delivers these events too, in order
    delivering_ = true;
  }
  for (;;) {
    std::deque<store::WatchEvent> batch;
    {
      std::lock_guard lock(mu_);
      batch.swap(pending_);
    }
    std::vector<std::shared_ptr<Observer>> observers;
    {
      std::lock_guard lock(observers_mu_);
      for (const auto& [id, o] : observers_) observers.push_back(o);
    }
    for (const store::WatchEvent& event : batch) {
      for (const auto& o : observers) o->on_event(event);
    }
    if (!batch.empty()) {
      for (const auto& o : observers) {
        if (o->on_idle) o->on_idle();
      }
    }
    std::lock_guard lock(mu_);
    if (pending_.empty()) {
      delivering_ = false;
      return;
    }
  }
}

uint64_t RemoteStore::AddObserver(std::function<void(const store::WatchEvent&)> observer) {
  return AddObserver(std::move(observer), nullptr);
}

uint64_t RemoteStore::AddObserver(std::function<void(const store::WatchEvent&)> observer,
                                  std::function<void()> on_idle) {
  std::lock_guard lock(observers_mu_);
  const uint64_t id = next_observer_++;
  observers_.emplace(id, std::make_shared<Observer>(Observer{std::move(observer), std::move(on_idle)}));
  return id;
}

void RemoteStore::RemoveObserver(uint64_t id) {
  std::lock_guard lock(observers_mu_);
  observers_.erase(id);
}

uint64_t RemoteStore::ResourceVersion() const {
  std::lock_guard lock(mu_);
  return seq_;
}

Result<ObjectPtr> RemoteStore::ObjectRequest(const store::ResourceType& type, std::string_view method,
                                             const std::string& path, std::string_view body,
                                             std::string_view content_type, std::string_view namespace_,
                                             std::string_view name) const {
  auto response = client_.Do(method, path, body, content_type);
  if (!response) return std::unexpected(MakeError(Error::Reason::kInternal, response.error()));
  if (response->status < 200 || response->status >= 300) return std::unexpected(ErrorFromResponse(*response));
  json::Document doc;
  if (auto parsed = json::Parse(response->body, doc); !parsed || !doc.IsObject()) {
    return std::unexpected(MakeError(Error::Reason::kInternal,
                                     fmt::format("{} {}: the server's answer is not a JSON object", method, path)));
  }
  if (json::GetString(doc, "kind") == "Status") {
    // A success without the object (a binding, an eviction, a finished deletion): the mirrored
    // version when there is one.
    if (Mirror* mirror = MirrorOf(type)) {
      std::lock_guard lock(mu_);
      auto it = mirror->objects.find(Key{std::string(namespace_), std::string(name)});
      if (it != mirror->objects.end()) return it->second;
    }
    return ObjectPtr{};
  }
  std::shared_ptr<store::Object> object = Build(type, doc);
  if (!object) {
    return std::unexpected(
        MakeError(Error::Reason::kInternal, fmt::format("{} {}: the server's answer has no name", method, path)));
  }
  return ObjectPtr(std::move(object));
}

Result<ObjectPtr> RemoteStore::Create(const store::ResourceType& type, std::string_view namespace_,
                                      json::Document body) {
  std::string ns(namespace_);
  if (const json::Value* meta = json::Find(body, "metadata"); meta != nullptr && ns.empty()) {
    ns = std::string(json::GetString(*meta, "namespace"));
  }
  if (type.namespaced && ns.empty()) ns = "default";
  return ObjectRequest(type, "POST", ObjectPath(type, ns, ""), json::Encode(body), "application/json", ns, "");
}

Result<ObjectPtr> RemoteStore::Restore(const store::ResourceType& type, std::string_view namespace_,
                                       json::Document body) {
  return Create(type, namespace_, std::move(body));
}

Result<ObjectPtr> RemoteStore::Get(const store::ResourceType& type, std::string_view namespace_,
                                   std::string_view name) const {
  if (Mirror* mirror = MirrorOf(type)) {
    std::lock_guard lock(mu_);
    auto it = mirror->objects.find(Key{type.namespaced ? std::string(namespace_) : "", std::string(name)});
    if (it == mirror->objects.end()) {
      return std::unexpected(
          MakeError(Error::Reason::kNotFound, fmt::format("{} \"{}\" not found", type.resource, name)));
    }
    return it->second;
  }
  return ObjectRequest(type, "GET", ObjectPath(type, namespace_, name), {}, {}, namespace_, name);
}

Result<store::ListResult> RemoteStore::List(const store::ResourceType& type, std::string_view namespace_,
                                            const store::ListOptions& options) const {
  auto selectors = store::CompileSelectors(options.selectors, type);
  if (!selectors) return std::unexpected(selectors.error());
  store::ListResult result;
  if (Mirror* mirror = MirrorOf(type)) {
    std::lock_guard lock(mu_);
    for (const auto& [key, object] : mirror->objects) {
      if (!namespace_.empty() && key.first != namespace_) continue;
      if (selectors->Matches(*object)) result.items.push_back(object);
    }
    result.resource_version = seq_;
    return result;
  }
  auto response = client_.Do("GET", ObjectPath(type, namespace_, ""));
  if (!response) return std::unexpected(MakeError(Error::Reason::kInternal, response.error()));
  if (response->status != 200) return std::unexpected(ErrorFromResponse(*response));
  json::Document list;
  if (!json::Parse(response->body, list) || !list.IsObject()) {
    return std::unexpected(MakeError(Error::Reason::kInternal, "the server's list is not a JSON object"));
  }
  if (const json::Value* items = json::Find(list, "items"); items != nullptr && items->IsArray()) {
    for (const json::Value& item : items->GetArray()) {
      json::Document doc;
      doc.CopyFrom(item, doc.GetAllocator());
      json::Set(doc, "apiVersion", json::MakeString(type.GroupVersion(), doc.GetAllocator()), doc.GetAllocator());
      json::Set(doc, "kind", json::MakeString(type.kind, doc.GetAllocator()), doc.GetAllocator());
      if (auto object = Build(type, doc); object && selectors->Matches(*object)) result.items.push_back(object);
    }
  }
  return result;
}

Result<ObjectPtr> RemoteStore::Update(const store::ResourceType& type, std::string_view namespace_,
                                      std::string_view name, json::Document body, const store::UpdateRequest& request) {
  if (request.expected_resource_version) {
    json::Set(store::Metadata(body), "resourceVersion",
              json::MakeString(*request.expected_resource_version, body.GetAllocator()), body.GetAllocator());
  }
  return ObjectRequest(type, "PUT", ObjectPath(type, namespace_, name, request.subresource), json::Encode(body),
                       "application/json", namespace_, name);
}

Result<ObjectPtr> RemoteStore::Patch(const store::ResourceType& type, std::string_view namespace_,
                                     std::string_view name, store::PatchType patch_type, std::string_view patch,
                                     std::string_view subresource) {
  return ObjectRequest(type, "PATCH", ObjectPath(type, namespace_, name, subresource), patch, ContentType(patch_type),
                       namespace_, name);
}

Result<ObjectPtr> RemoteStore::PatchDecoded(const store::ResourceType& type, std::string_view namespace_,
                                            std::string_view name, store::PatchType patch_type, std::string_view patch,
                                            std::string_view subresource, const PatchDecoder& /*decode*/) {
  return Patch(type, namespace_, name, patch_type, patch, subresource);
}

Result<ObjectPtr> RemoteStore::Delete(const store::ResourceType& type, std::string_view namespace_,
                                      std::string_view name, const store::DeleteOptions& options) {
  return ObjectRequest(type, "DELETE", ObjectPath(type, namespace_, name), DeleteOptionsJson(options),
                       "application/json", namespace_, name);
}

Result<std::unique_ptr<store::Watcher>> RemoteStore::Watch(const store::ResourceType& type, std::string_view,
                                                           const store::WatchOptions&) {
  return std::unexpected(
      MakeError(Error::Reason::kMethodNotAllowed,
                fmt::format("watching {} through the remote store: observe the mirror instead", type.resource)));
}

Result<ObjectPtr> RemoteStore::Bind(std::string_view namespace_, std::string_view pod_name, std::string_view uid,
                                    std::string_view node_name) {
  const store::ResourceType* pods = FindResource("", "pods");
  // v1.Binding as upstream's DefaultBinder sends it: the pod's uid guards against binding a
  // pod of the same name created anew.
  std::string body;
  json::StringWriter w(body);
  w.StartObject();
  w.Key("apiVersion");
  w.String("v1");
  w.Key("kind");
  w.String("Binding");
  w.Key("metadata");
  w.StartObject();
  w.Key("name");
  w.String(pod_name);
  w.Key("namespace");
  w.String(namespace_);
  if (!uid.empty()) {
    w.Key("uid");
    w.String(uid);
  }
  w.EndObject();
  w.Key("target");
  w.StartObject();
  w.Key("apiVersion");
  w.String("v1");
  w.Key("kind");
  w.String("Node");
  w.Key("name");
  w.String(node_name);
  w.EndObject();
  w.EndObject();
  w.Finish();
  return ObjectRequest(*pods, "POST", ObjectPath(*pods, namespace_, pod_name, "binding"), body, "application/json",
                       namespace_, pod_name);
}

Result<ObjectPtr> RemoteStore::Evict(std::string_view namespace_, std::string_view pod_name,
                                     const store::DeleteOptions& options) {
  const store::ResourceType* pods = FindResource("", "pods");
  std::string body;
  json::StringWriter w(body);
  w.StartObject();
  w.Key("apiVersion");
  w.String("policy/v1");
  w.Key("kind");
  w.String("Eviction");
  w.Key("metadata");
  w.StartObject();
  w.Key("name");
  w.String(pod_name);
  w.Key("namespace");
  w.String(namespace_);
  w.EndObject();
  w.Key("deleteOptions");
  WriteDeleteOptions(w, options, false);
  w.EndObject();
  w.Finish();
  return ObjectRequest(*pods, "POST", ObjectPath(*pods, namespace_, pod_name, "eviction"), body, "application/json",
                       namespace_, pod_name);
}

Result<void> RemoteStore::SaveState(const std::string&) const {
  return std::unexpected(MakeError(Error::Reason::kMethodNotAllowed, "the API server keeps the state"));
}

Result<void> RemoteStore::LoadState(const std::string&) {
  return std::unexpected(MakeError(Error::Reason::kMethodNotAllowed, "the API server keeps the state"));
}

Result<void> RemoteStore::OpenState(const std::string&) {
  return std::unexpected(MakeError(Error::Reason::kMethodNotAllowed, "the API server keeps the state"));
}

Result<void> RemoteStore::CloseState() {
  return std::unexpected(MakeError(Error::Reason::kMethodNotAllowed, "the API server keeps the state"));
}

}  // namespace kubesched::client
