#include "store/memory_store.h"
#include "api/time_format.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "api/names.h"
#include "store/continue_token.h"
#include "store/errors.h"
#include "store/meta.h"
#include "store/patch.h"

namespace kubesched::store {

namespace json = api::json;

namespace {

constexpr std::string_view kPodScheduled = "PodScheduled";

// Namespaces the API server will not delete (upstream's namespace registry forbids these).
bool IsProtectedNamespace(std::string_view name) {
  return name == "default" || name == "kube-system" || name == "kube-public";
}

std::string_view Phase(const json::Value& doc) {
  const json::Value* status = json::Find(doc, "status");
  return status ? json::GetString(*status, "phase") : std::string_view();
}

std::optional<int64_t> GetInt(const json::Value& object, std::string_view key) {
  const json::Value* v = json::Find(object, key);
  if (v == nullptr || !v->IsInt64()) return std::nullopt;
  return v->GetInt64();
}

bool HasFinalizers(const json::Value& meta) {
  const json::Value* f = json::Find(meta, "finalizers");
  return f && f->IsArray() && !f->Empty();
}

// The parts of an object that are neither metadata nor status (nor type information): a change
// there bumps metadata.generation. Top-level members compare in any order, their values as their
// encodings would.
bool SpecEqual(const json::Value& a, const json::Value& b) {
  using Members = std::vector<std::pair<std::string_view, const json::Value*>>;
  auto spec_of = [](const json::Value& v, Members& out) {
    if (!v.IsObject()) return;
    for (const auto& m : v.GetObject()) {
      std::string_view k = json::View(m.name);
      if (k == "metadata" || k == "status" || k == "apiVersion" || k == "kind") continue;
      out.emplace_back(k, &m.value);
    }
    std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  };
  Members x, y;
  spec_of(a, x);
  spec_of(b, y);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].first != y[i].first || !SameJson(*x[i].second, *y[i].second)) return false;
  }
  return true;
}

Error BodyNotObject() {
  return BadRequest(
      "the body of the request was in an unknown format - accepted media types include: "
      "application/json, application/yaml");
}

}  // namespace

std::unique_ptr<Store> NewMemoryStore(std::vector<const ResourceType*> types, const util::Clock& clock,
                                      StoreOptions options) {
  return std::make_unique<MemoryStore>(std::move(types), clock, std::move(options));
}

MemoryStore::MemoryStore(std::vector<const ResourceType*> types, const util::Clock& clock, StoreOptions options)
    : clock_(clock),
      options_(std::move(options)),
      types_(std::move(types)),
      rng_(options_.seed ? *options_.seed : std::random_device{}()) {
  // Cluster-scoped objects first: the built-in namespaces must exist before anything in them.
  std::vector<const ResourceType*> order = types_;
  std::stable_sort(order.begin(), order.end(),
                   [](const ResourceType* a, const ResourceType* b) { return !a->namespaced && b->namespaced; });
  std::lock_guard lock(mu_);
  for (const ResourceType* t : order) {
    for (const std::string& text : t->initial_objects) {
      json::Document doc;
      if (!json::Parse(text, doc)) continue;  // the registry's own texts; a test covers them
      (void)CreateLocked(*t, "", std::move(doc), /*restore=*/false);
    }
  }
}

MemoryStore::~MemoryStore() {
  std::lock_guard lock(mu_);
  for (auto& w : watchers_) w->Close("store closed");
}

const ResourceType* MemoryStore::FindResource(std::string_view group, std::string_view resource) const {
  for (const ResourceType* t : types_) {
    if (t->group == group && t->resource == resource) return t;
  }
  return custom_.Find(group, resource);
}

std::vector<const ResourceType*> MemoryStore::ServedResources() const {
  std::vector<const ResourceType*> out = types_;
  std::vector<const ResourceType*> custom = custom_.Served();
  out.insert(out.end(), custom.begin(), custom.end());
  return out;
}

const ResourceType* MemoryStore::FindServedResource(std::string_view group, std::string_view version,
                                                    std::string_view resource) const {
  for (const ResourceType* t : types_) {
    if (t->group == group && t->resource == resource) return t->version == version ? t : nullptr;
  }
  return custom_.Find(group, version, resource);
}

std::vector<const ResourceType*> MemoryStore::StorageTypes() const {
  std::vector<const ResourceType*> out;
  for (const ResourceType* t : types_) {
    if (!t->stored_as) out.push_back(t);
  }
  std::vector<const ResourceType*> custom = custom_.StorageTypes();
  out.insert(out.end(), custom.begin(), custom.end());
  return out;
}

void MemoryStore::DefinitionChanged(const json::Value& object, bool deleted) {
  if (deleted) {
    const json::Value* meta = json::Find(object, "metadata");
    custom_.Undefine(meta ? json::GetString(*meta, "name") : std::string_view());
  } else {
    custom_.Define(object);
  }
}

const ResourceType* MemoryStore::FindStoredLocked(std::string_view group, std::string_view resource) const {
  const ResourceType* t = FindResource(group, resource);
  return t ? &Storage(*t) : nullptr;
}

ObjectPtr MemoryStore::FindLocked(const ResourceType& stored, std::string_view namespace_,
                                  std::string_view name) const {
  auto it = objects_.find(&stored);
  if (it == objects_.end()) return nullptr;
  auto o = it->second.find(Key(stored.namespaced ? namespace_ : "", name));
  return o == it->second.end() ? nullptr : o->second;
}

uint64_t MemoryStore::ResourceVersion() const {
  std::lock_guard lock(mu_);
  return rv_;
}

// --- Changes ---------------------------------------------------------------------------------

void MemoryStore::CommitLocked(WatchEvent event) {
  std::shared_ptr<const json::Document> parsed = std::move(event.parsed);
  event.parsed = nullptr;
  if (event.object->type->defines_custom_resources) {
    if (parsed) {
      DefinitionChanged(*parsed, event.type == EventType::kDeleted);
    } else {
      DefinitionChanged(ParseObject(*event.object), event.type == EventType::kDeleted);
    }
  }
  if (options_.compact_before && options_.compact_before(event)) {
    for (auto& w : watchers_) w->Close("injected compaction");
    history_.clear();
    compacted_rv_ = event.object->resource_version;
  }
  if (journal_) journal_->Append(event);
  history_.push_back(event);
  while (history_.size() > options_.watch_history) {
    compacted_rv_ = history_.front().object->resource_version;
    history_.pop_front();
  }
  std::erase_if(watchers_, [](const auto& w) { return w->Closed(); });
  for (auto& w : watchers_) w->Offer(event);
  {
    std::lock_guard lock(observers_mu_);
    if (!observers_.empty()) {
      event.parsed = std::move(parsed);
      pending_.push_back(std::move(event));
    }
  }
  rv_cv_.notify_all();
}

namespace {
thread_local int unsynced_writes = 0;
}  // namespace

UnsyncedWrites::UnsyncedWrites() { ++unsynced_writes; }
UnsyncedWrites::~UnsyncedWrites() { --unsynced_writes; }
bool UnsyncedWrites::Active() { return unsynced_writes > 0; }

Result<void> MemoryStore::Sync() {
  std::shared_ptr<Journal> journal;
  {
    std::lock_guard lock(mu_);
    journal = journal_;
  }
  if (journal == nullptr) return {};
  if (auto synced = journal->Sync(); !synced) return std::unexpected(Internal(synced.error()));
  return {};
}

void MemoryStore::AwaitDurable(Result<ObjectPtr>& out) {
  if (!out || UnsyncedWrites::Active()) return;
  std::shared_ptr<Journal> journal;
  {
    std::lock_guard lock(mu_);
    journal = journal_;
  }
  if (journal == nullptr) return;
  if (auto synced = journal->Sync(); !synced) {
    out = std::unexpected(Internal("the change was made but cannot be kept: " + synced.error()));
    return;
  }
  MaybeCompactJournal(journal);
}

void MemoryStore::DeliverToObservers() {
  std::unique_lock lock(observers_mu_);
  // Whoever is delivering already (an observer of this thread that wrote, or another writer)
  // delivers this thread's events too, after the current one: observers never re-enter and see
  // every event in resourceVersion order.
  if (delivering_) return;
  delivering_ = true;
  while (!pending_.empty()) {
    while (!pending_.empty()) {
      WatchEvent event = std::move(pending_.front());
      pending_.pop_front();
      delivering_object_ = event.object;
      delivering_dom_ = event.parsed;
      std::vector<std::shared_ptr<const Observer>> observers;
      observers.reserve(observers_.size());
      for (const auto& [id, o] : observers_) observers.push_back(o);
      lock.unlock();
      for (const auto& o : observers) o->on_event(event);
      lock.lock();
    }
    // Everything queued is delivered: the observers finish what they batched, and whatever that
    // writes is delivered in the next round.
    std::vector<std::shared_ptr<const Observer>> idle;
    for (const auto& [id, o] : observers_) {
      if (o->on_idle) idle.push_back(o);
    }
    lock.unlock();
    for (const auto& o : idle) o->on_idle();
    lock.lock();
  }
  delivering_ = false;
  delivering_object_ = nullptr;
  delivering_dom_ = nullptr;
}

std::shared_ptr<const json::Document> MemoryStore::HeldDom(const Object& current) {
  std::lock_guard lock(observers_mu_);
  return delivering_object_.get() == &current ? delivering_dom_ : nullptr;
}

uint64_t MemoryStore::AddObserver(std::function<void(const WatchEvent&)> observer) {
  return AddObserver(std::move(observer), nullptr);
}

uint64_t MemoryStore::AddObserver(std::function<void(const WatchEvent&)> observer, std::function<void()> on_idle) {
  std::lock_guard lock(observers_mu_);
  const uint64_t id = next_observer_id_++;
  observers_.emplace(id, std::make_shared<const Observer>(Observer{std::move(observer), std::move(on_idle)}));
  return id;
}

void MemoryStore::RemoveObserver(uint64_t id) {
  std::lock_guard lock(observers_mu_);
  observers_.erase(id);
}

ObjectPtr MemoryStore::RemoveLocked(const ObjectPtr& current) {
  const uint64_t rv = ++rv_;
  ObjectPtr last = WithResourceVersion(*current, rv);
  ObjectsLocked(*current->type).erase(Key(current->namespace_, current->name));
  CommitLocked(WatchEvent{EventType::kDeleted, last, current});
  return last;
}

ObjectPtr MemoryStore::ReplaceLocked(const ObjectPtr& current, json::Document& doc, std::shared_ptr<void> view) {
  const uint64_t rv = ++rv_;
  std::shared_ptr<Object> next = MakeObject(*current->type, doc, rv, std::move(view));
  const json::Value& meta = *json::Find(doc, "metadata");
  const bool deleting = json::Find(meta, "deletionTimestamp") != nullptr;
  // An object whose deletion only waited for its finalizers goes once they are gone (a pod's
  // graceful deletion still waits for its node: deletionGracePeriodSeconds > 0).
  const bool gone = deleting && !HasFinalizers(meta) && GetInt(meta, "deletionGracePeriodSeconds").value_or(0) == 0;
  auto parsed = std::make_shared<const json::Document>(std::move(doc));
  if (gone) {
    ObjectsLocked(*current->type).erase(Key(current->namespace_, current->name));
    CommitLocked(WatchEvent{EventType::kDeleted, next, current, std::move(parsed)});
    return next;
  }
  ObjectsLocked(*current->type)[Key(current->namespace_, current->name)] = next;
  CommitLocked(WatchEvent{EventType::kModified, next, current, std::move(parsed)});
  return next;
}

std::optional<Error> MemoryStore::PrepareLocked(const ResourceType& stored, json::Document& doc, const Object* old,
                                                const json::Value* old_doc, std::string_view name,
                                                std::shared_ptr<void>& view, bool admit) {
  if (stored.default_fields) stored.default_fields(doc);
  if (old_doc != nullptr && stored.prepare_update) stored.prepare_update(doc, *old_doc);
  if (admit && old == nullptr && stored.admit) {
    // Reads without locking: mu_ is held by this thread for the whole write.
    class Reader final : public ObjectReader {
     public:
      explicit Reader(const MemoryStore& s) : s_(s) {}
      ObjectPtr Get(std::string_view group, std::string_view resource, std::string_view namespace_,
                    std::string_view name) const override {
        const ResourceType* t = s_.FindStoredLocked(group, resource);
        return t ? s_.FindLocked(*t, namespace_, name) : nullptr;
      }
      std::vector<ObjectPtr> List(std::string_view group, std::string_view resource,
                                  std::string_view namespace_) const override {
        std::vector<ObjectPtr> out;
        const ResourceType* t = s_.FindStoredLocked(group, resource);
        if (t == nullptr) return out;
        for (const auto& [key, obj] : s_.SnapshotLocked(*t, namespace_, nullptr, s_.rv_)) out.push_back(obj);
        return out;
      }

     private:
      const MemoryStore& s_;
    };
    if (auto err = stored.admit(doc, Reader(*this))) return err;
  }
  DecodeResult checked = ValidateObject(stored, doc, old, old_doc);
  if (!checked.causes.empty()) return Invalid(stored, name, std::move(checked.causes));
  view = std::move(checked.view);
  return std::nullopt;
}

// --- Create ----------------------------------------------------------------------------------

Result<ObjectPtr> MemoryStore::Create(const ResourceType& type, std::string_view namespace_, json::Document body) {
  return CreateAndDeliver(type, namespace_, std::move(body), /*restore=*/false);
}

Result<ObjectPtr> MemoryStore::Restore(const ResourceType& type, std::string_view namespace_, json::Document body) {
  return CreateAndDeliver(type, namespace_, std::move(body), /*restore=*/true);
}

Result<ObjectPtr> MemoryStore::CreateAndDeliver(const ResourceType& type, std::string_view namespace_,
                                                json::Document body, bool restore) {
  Result<ObjectPtr> out;
  {
    std::lock_guard lock(mu_);
    out = CreateLocked(type, namespace_, std::move(body), restore);
  }
  AwaitDurable(out);
  DeliverToObservers();
  if (out) out = Present(type, *out);
  return out;
}

Result<ObjectPtr> MemoryStore::CreateLocked(const ResourceType& served, std::string_view path_namespace,
                                            json::Document body, bool restore) {
  if (!body.IsObject()) return std::unexpected(BodyNotObject());
  auto& a = body.GetAllocator();
  if (std::string_view kind = json::GetString(body, "kind"); !kind.empty() && kind != served.kind) {
    return std::unexpected(
        BadRequest(fmt::format("the kind of the object ({}) does not match the resource ({})", kind, served.kind)));
  }
  json::Set(body, "apiVersion", json::MakeString(served.GroupVersion(), a), a);
  json::Set(body, "kind", json::MakeString(served.kind, a), a);
  const ResourceType& stored = Storage(served);
  if (served.stored_as && served.to_storage) served.to_storage(body);
  json::Value& meta = Metadata(body);

  std::string ns(json::GetString(meta, "namespace"));
  if (stored.namespaced) {
    if (!path_namespace.empty() && !ns.empty() && ns != path_namespace) {
      return std::unexpected(
          BadRequest("the namespace of the provided object does not match the namespace sent on the request"));
    }
    if (ns.empty()) ns = path_namespace;
    // In-process callers (simulate's manifests) may leave it out, as kubectl's default does.
    if (ns.empty()) ns = "default";
    json::Set(meta, "namespace", json::MakeString(ns, a), a);
  } else {
    ns.clear();
    json::Remove(meta, "namespace");
  }

  std::string name(json::GetString(meta, "name"));
  const std::string generate_name(json::GetString(meta, "generateName"));
  if (name.empty() && !generate_name.empty()) {
    // names.SimpleNameGenerator; a clash is retried here rather than sent back to the client.
    for (int attempt = 0; attempt < 8; ++attempt) {
      name = api::GenerateName(generate_name, rng_);
      if (!FindLocked(stored, ns, name)) break;
    }
    json::Set(meta, "name", json::MakeString(name, a), a);
  }

  // rest.BeforeCreate: the server owns these. A restore keeps those the object already has.
  auto server_owned = [&](std::string_view key, auto make) {
    if (!restore || json::GetString(meta, key).empty()) json::Set(meta, key, make(), a);
  };
  server_owned("uid", [&] { return json::MakeString(NewUid(rng_), a); });
  server_owned("creationTimestamp", [&] { return json::MakeString(api::FormatRFC3339(clock_.NowNs()), a); });
  if (!restore || !json::Find(meta, "generation")) json::Set(meta, "generation", json::Value(int64_t{1}), a);
  json::Remove(meta, "resourceVersion");
  if (!restore) {
    json::Remove(meta, "deletionTimestamp");
    json::Remove(meta, "deletionGracePeriodSeconds");
  }
  json::Remove(meta, "selfLink");

  std::shared_ptr<void> view;
  // A restored object was admitted where it was created (admission runs once, on creation).
  if (auto err = PrepareLocked(stored, body, nullptr, nullptr, name.empty() ? generate_name : name, view, !restore)) {
    return std::unexpected(*err);
  }
  if (stored.namespaced) {
    if (const ResourceType* ns_type = FindStoredLocked("", "namespaces"); ns_type && !FindLocked(*ns_type, "", ns)) {
      return std::unexpected(NotFound(*ns_type, ns));
    }
  }
  if (FindLocked(stored, ns, name)) return std::unexpected(AlreadyExists(served, name));
  std::shared_ptr<Object> obj = MakeObject(stored, body, ++rv_, std::move(view));
  auto parsed = std::make_shared<const json::Document>(std::move(body));
  ObjectsLocked(stored)[Key(ns, name)] = obj;
  CommitLocked(WatchEvent{EventType::kAdded, obj, nullptr, std::move(parsed)});
  return obj;
}

// --- Read ------------------------------------------------------------------------------------

Result<ObjectPtr> MemoryStore::Get(const ResourceType& type, std::string_view namespace_, std::string_view name) const {
  ObjectPtr obj;
  {
    std::lock_guard lock(mu_);
    obj = FindLocked(Storage(type), namespace_, name);
  }
  if (!obj) return std::unexpected(NotFound(type, name));
  return Present(type, std::move(obj));
}

std::optional<Error> MemoryStore::WaitForLocked(std::unique_lock<std::mutex>& lock, uint64_t rv) const {
  if (rv <= rv_) return std::nullopt;
  if (rv_cv_.wait_for(lock, options_.future_resource_version_wait, [&] { return rv_ >= rv; })) return std::nullopt;
  // storage.NewTooLargeResourceVersionError.
  Error e{Error::Reason::kTimeout, fmt::format("Too large resource version: {}, current: {}", rv, rv_), {}};
  e.causes.push_back(Cause{"ResourceVersionTooLarge", "Too large resource version", ""});
  return e;
}

MemoryStore::Objects MemoryStore::SnapshotLocked(const ResourceType& stored, std::string_view namespace_,
                                                 const Key* start, uint64_t at) const {
  auto in_range = [&](const Key& k) {
    if (!namespace_.empty() && k.first != namespace_) return false;
    return start == nullptr || k > *start;
  };
  Objects out;
  if (auto it = objects_.find(&stored); it != objects_.end()) {
    auto from = it->second.begin();
    if (start) {
      from = it->second.upper_bound(*start);
    } else if (!namespace_.empty()) {
      from = it->second.lower_bound(Key(namespace_, ""));
    }
    for (auto o = from; o != it->second.end(); ++o) {
      if (!namespace_.empty() && o->first.first != namespace_) {
        if (o->first.first > namespace_) break;
        continue;
      }
      out.emplace_hint(out.end(), o->first, o->second);
    }
  }
  // Undo the changes after `at`, newest first, so each key ends as it was at `at`.
  for (auto h = history_.rbegin(); h != history_.rend() && h->object->resource_version > at; ++h) {
    if (h->object->type != &stored) continue;
    Key k(h->object->namespace_, h->object->name);
    if (!in_range(k)) continue;
    if (h->type == EventType::kAdded) {
      out.erase(k);
    } else if (h->old_object) {
      out[k] = h->old_object;
    }
  }
  return out;
}

Result<ListResult> MemoryStore::List(const ResourceType& type, std::string_view namespace_,
                                     const ListOptions& options) const {
  auto selectors = CompileSelectors(options.selectors, type);
  if (!selectors) return std::unexpected(selectors.error());
  const ResourceType& stored = Storage(type);
  if (!stored.namespaced) namespace_ = {};

  // What to read: the latest state, or the state at one resourceVersion (API concepts,
  // "Semantics for get and list").
  std::optional<Key> start;
  std::optional<uint64_t> exact;
  std::optional<uint64_t> not_older_than;
  const std::string& rv_text = options.resource_version;
  const std::string& match = options.resource_version_match;
  if (!options.continue_token.empty()) {
    if (!rv_text.empty() && rv_text != "0") {
      return std::unexpected(BadRequest("specifying resource version is not allowed when using continue"));
    }
    auto token = DecodeContinueToken(options.continue_token);
    if (!token) return std::unexpected(token.error());
    exact = token->resource_version;
    start = Key(token->namespace_, token->name);
  } else if (!match.empty()) {
    if (rv_text.empty()) {
      return std::unexpected(BadRequest("resourceVersionMatch is forbidden unless resourceVersion is provided"));
    }
    if (match != "NotOlderThan" && match != "Exact") {
      return std::unexpected(BadRequest(fmt::format(
          "resourceVersionMatch: Unsupported value: \"{}\": supported values: \"Exact\", \"NotOlderThan\"", match)));
    }
  }
  if (!options.continue_token.empty()) {
    // handled above
  } else if (!rv_text.empty() && rv_text != "0") {
    auto rv = ParseResourceVersion(rv_text);
    if (!rv) return std::unexpected(BadRequest(fmt::format("invalid resource version: {}", rv_text)));
    // Exact when asked, and (legacy) for a paginated list from a given resourceVersion.
    if (match == "Exact" || (match.empty() && options.limit > 0)) {
      exact = *rv;
    } else {
      not_older_than = *rv;
    }
  } else if (rv_text == "0" && match == "Exact") {
    return std::unexpected(BadRequest("resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""));
  }

  ListResult result;
  std::vector<ObjectPtr> page;
  {
    std::unique_lock lock(mu_);
    if (auto wait = exact ? exact : not_older_than) {
      if (auto err = WaitForLocked(lock, *wait)) return std::unexpected(*err);
    }
    uint64_t at = rv_;
    if (exact) {
      if (*exact < compacted_rv_) {
        if (start) {
          return std::unexpected(Error{
              Error::Reason::kGone,
              "The provided continue parameter is too old to display a consistent list result. You can start a new "
              "list without the continue parameter.",
              {}});
        }
        return std::unexpected(TooOldResourceVersion(*exact, compacted_rv_ + 1));
      }
      at = *exact;
    }
    result.resource_version = at;
    Objects snapshot = SnapshotLocked(stored, namespace_, start ? &*start : nullptr, at);
    int64_t remaining = 0;
    for (const auto& [key, obj] : snapshot) {
      if (!selectors->Matches(*obj)) continue;
      if (options.limit > 0 && static_cast<int64_t>(page.size()) >= options.limit) {
        ++remaining;
        if (!selectors->Empty()) break;  // more exist; upstream counts only without selectors
        continue;
      }
      page.push_back(obj);
    }
    if (remaining > 0) {
      const ObjectPtr& last = page.back();
      result.continue_token = EncodeContinueToken(ContinueToken{at, last->namespace_, last->name});
      if (selectors->Empty()) result.remaining_item_count = remaining;
    }
  }
  result.items.reserve(page.size());
  for (auto& obj : page) result.items.push_back(Present(type, std::move(obj)));
  return result;
}

// --- Update and patch ------------------------------------------------------------------------

Result<ObjectPtr> MemoryStore::Update(const ResourceType& type, std::string_view namespace_, std::string_view name,
                                      json::Document body, const UpdateRequest& request) {
  Result<ObjectPtr> out;
  {
    std::lock_guard lock(mu_);
    out = UpdateLocked(type, namespace_, name, std::move(body), request);
  }
  AwaitDurable(out);
  DeliverToObservers();
  if (out) out = Present(type, *out);
  return out;
}

Result<ObjectPtr> MemoryStore::UpdateLocked(const ResourceType& served, std::string_view namespace_,
                                            std::string_view name, json::Document body, const UpdateRequest& request,
                                            const json::Document* old_doc) {
  const ResourceType& stored = Storage(served);
  ObjectPtr current = FindLocked(stored, namespace_, name);
  if (!current) return std::unexpected(NotFound(served, name));
  if (!body.IsObject()) return std::unexpected(BodyNotObject());
  if (!request.subresource.empty() && !(request.subresource == "status" && served.HasSubresource("status"))) {
    return std::unexpected(NotFound(served, name));
  }
  auto& a = body.GetAllocator();
  {
    json::Value& meta = Metadata(body);
    const std::string_view body_name = json::GetString(meta, "name");
    if (!body_name.empty() && body_name != name) {
      return std::unexpected(BadRequest(
          fmt::format("the name of the object ({}) does not match the name on the URL ({})", body_name, name)));
    }
    const std::string_view body_ns = json::GetString(meta, "namespace");
    if (stored.namespaced && !body_ns.empty() && body_ns != current->namespace_) {
      return std::unexpected(
          BadRequest("the namespace of the provided object does not match the namespace sent on the request"));
    }
    const std::string_view body_rv = json::GetString(meta, "resourceVersion");
    // Named: a view of value_or's temporary would dangle inside the loop (ASan caught it).
    const std::string expected_rv = request.expected_resource_version.value_or("");
    for (std::string_view want : {body_rv, std::string_view(expected_rv)}) {
      if (!want.empty() && ParseResourceVersion(want) != current->resource_version) {
        return std::unexpected(StaleConflict(served, name));
      }
    }
    const std::string_view body_uid = json::GetString(meta, "uid");
    if (!body_uid.empty() && body_uid != current->uid) {
      return std::unexpected(Conflict(
          served, name,
          fmt::format("Precondition failed: UID in precondition: {}, UID in object meta: {}", body_uid, current->uid)));
    }
  }
  json::Set(body, "apiVersion", json::MakeString(served.GroupVersion(), a), a);
  json::Set(body, "kind", json::MakeString(served.kind, a), a);
  if (served.stored_as && served.to_storage) served.to_storage(body);

  std::shared_ptr<const json::Document> held = old_doc ? nullptr : HeldDom(*current);
  json::Document parsed;
  if (old_doc == nullptr && !held) parsed = ParseObject(*current);
  const json::Document& old = old_doc ? *old_doc : held ? *held : parsed;
  json::Document next;
  if (request.subresource == "status") {
    // The status subresource changes status (and labels and annotations) only.
    next.CopyFrom(old, next.GetAllocator());
    auto& na = next.GetAllocator();
    if (const json::Value* status = json::Find(body, "status")) {
      json::Set(next, "status", json::Value(*status, na), na);
    } else {
      json::Remove(next, "status");
    }
    json::Value& meta = Metadata(next);
    for (std::string_view key : {"labels", "annotations"}) {
      if (const json::Value* v = json::Find(*json::Find(body, "metadata"), key)) {
        json::Set(meta, key, json::Value(*v, na), na);
      } else {
        json::Remove(meta, key);
      }
    }
  } else {
    next.Swap(body);
    auto& na = next.GetAllocator();
    if (served.HasSubresource("status")) {
      // The main resource ignores status changes for kinds with a status subresource.
      if (const json::Value* status = json::Find(old, "status")) {
        json::Set(next, "status", json::Value(*status, na), na);
      } else {
        json::Remove(next, "status");
      }
    }
  }
  auto& na = next.GetAllocator();
  json::Value& meta = Metadata(next);
  const json::Value& old_meta = *json::Find(old, "metadata");
  // rest.BeforeUpdate: what the server owns stays as it was.
  for (std::string_view key : {"name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
                               "deletionGracePeriodSeconds", "generation", "resourceVersion"}) {
    if (const json::Value* v = json::Find(old_meta, key)) {
      json::Set(meta, key, json::Value(*v, na), na);
    } else {
      json::Remove(meta, key);
    }
  }
  if (json::Find(old_meta, "deletionTimestamp")) {
    // Upstream: "no new finalizers can be added if the object is being deleted".
    std::vector<std::string_view> before;
    if (const json::Value* f = json::Find(old_meta, "finalizers"); f && f->IsArray()) {
      for (const auto& v : f->GetArray()) before.push_back(json::View(v));
    }
    if (const json::Value* f = json::Find(meta, "finalizers"); f && f->IsArray()) {
      for (const auto& v : f->GetArray()) {
        if (std::find(before.begin(), before.end(), json::View(v)) == before.end()) {
          return std::unexpected(Invalid(stored, name,
                                         {ForbiddenCause("metadata.finalizers",
                                                         "no new finalizers can be added if the "
                                                         "object is being deleted")}));
        }
      }
    }
  }
  if (!SpecEqual(old, next)) {
    json::Set(meta, "generation", json::Value(GetInt(old_meta, "generation").value_or(0) + 1), na);
  }
  std::shared_ptr<void> view;
  if (auto err = PrepareLocked(stored, next, current.get(), &old, name, view)) return std::unexpected(*err);
  // An update that changes nothing makes no new version (and no event), as upstream's
  // GuaranteedUpdate skips the write. (`old` encodes to the stored JSON: the store wrote it.)
  // The status is compared first: most writes change it, and it is found different at once.
  const json::Value* next_status = json::Find(next, "status");
  const json::Value* old_status = json::Find(old, "status");
  const bool same_status =
      next_status == nullptr ? old_status == nullptr : old_status != nullptr && SameJson(*next_status, *old_status);
  if (same_status && SameJson(next, old)) return current;
  return ReplaceLocked(current, next, std::move(view));
}

Result<ObjectPtr> MemoryStore::Patch(const ResourceType& type, std::string_view namespace_, std::string_view name,
                                     PatchType patch_type, std::string_view patch, std::string_view subresource) {
  return PatchWith(
      type, namespace_, name, [&](json::Document& doc) { return ApplyPatch(patch_type, doc, patch); }, subresource);
}

Result<ObjectPtr> MemoryStore::PatchDecoded(const ResourceType& type, std::string_view namespace_,
                                            std::string_view name, PatchType patch_type, std::string_view patch,
                                            std::string_view subresource, const PatchDecoder& decode) {
  return PatchWith(
      type, namespace_, name,
      [&](json::Document& doc) -> Result<void> {
        if (auto applied = ApplyPatch(patch_type, doc, patch); !applied) return applied;
        return decode(doc);
      },
      subresource);
}

Result<ObjectPtr> MemoryStore::MergePatch(const ResourceType& type, std::string_view namespace_, std::string_view name,
                                          const json::Value& patch, std::string_view subresource) {
  return PatchWith(
      type, namespace_, name, [&](json::Document& doc) { return ApplyMergePatch(doc, patch); }, subresource);
}

Result<ObjectPtr> MemoryStore::PatchWith(const ResourceType& type, std::string_view namespace_, std::string_view name,
                                         const std::function<Result<void>(json::Document&)>& apply,
                                         std::string_view subresource) {
  Result<ObjectPtr> out;
  {
    std::lock_guard lock(mu_);
    const ResourceType& stored = Storage(type);
    ObjectPtr current = FindLocked(stored, namespace_, name);
    if (!current) {
      out = std::unexpected(NotFound(type, name));
    } else {
      // One DOM of the stored version (the one the observers still hold when this write comes
      // from one of them, read only here; else parsed): the patch applies to a copy of it (a
      // resource stored as another applies to its own form), and the update compares with it.
      std::shared_ptr<const json::Document> held = HeldDom(*current);
      json::Document parsed;
      if (!held) parsed = ParseObject(*current);
      const json::Document& old = held ? *held : parsed;
      json::Document doc;
      if (type.stored_as == nullptr) {
        doc.CopyFrom(old, doc.GetAllocator());
      } else {
        doc = ParseObject(*Present(type, current));
      }
      auto applied = apply(doc);
      if (!applied) {
        out = std::unexpected(applied.error());
      } else {
        out = UpdateLocked(type, namespace_, name, std::move(doc), UpdateRequest{std::string(subresource), {}}, &old);
      }
    }
  }
  AwaitDurable(out);
  DeliverToObservers();
  if (out) out = Present(type, *out);
  return out;
}

// --- Delete ----------------------------------------------------------------------------------

Result<ObjectPtr> MemoryStore::Delete(const ResourceType& type, std::string_view namespace_, std::string_view name,
                                      const DeleteOptions& options) {
  Result<ObjectPtr> out;
  {
    std::lock_guard lock(mu_);
    out = DeleteLocked(Storage(type), namespace_, name, options);
    if (!out && out.error().reason == Error::Reason::kNotFound) out = std::unexpected(NotFound(type, name));
  }
  AwaitDurable(out);
  DeliverToObservers();
  if (out) out = Present(type, *out);
  return out;
}

Result<ObjectPtr> MemoryStore::DeleteLocked(const ResourceType& stored, std::string_view namespace_,
                                            std::string_view name, const DeleteOptions& options) {
  ObjectPtr current = FindLocked(stored, namespace_, name);
  if (!current) return std::unexpected(NotFound(stored, name));
  if (options.precondition_uid && *options.precondition_uid != current->uid) {
    return std::unexpected(Conflict(stored, name,
                                    fmt::format("Precondition failed: UID in precondition: {}, UID in object meta: {}",
                                                *options.precondition_uid, current->uid)));
  }
  if (options.precondition_resource_version &&
      ParseResourceVersion(*options.precondition_resource_version) != current->resource_version) {
    return std::unexpected(
        Conflict(stored, name,
                 fmt::format("Precondition failed: ResourceVersion in precondition: {}, ResourceVersion in object "
                             "meta: {}",
                             *options.precondition_resource_version, current->resource_version)));
  }
  const bool is_namespace = stored.group.empty() && stored.resource == "namespaces";
  const bool is_pod = stored.group.empty() && stored.resource == "pods";
  if (is_namespace) {
    if (IsProtectedNamespace(name))
      return std::unexpected(Forbidden(stored, name, "this namespace may not be deleted"));
    // The namespace controller's work, done at once: everything in it goes, then the namespace.
    for (const ResourceType* t : StorageTypes()) {
      if (!t->namespaced) continue;
      std::vector<ObjectPtr> inside;
      for (const auto& [key, obj] : ObjectsLocked(*t)) {
        if (key.first == name) inside.push_back(obj);
      }
      for (const auto& obj : inside) RemoveLocked(obj);
    }
    return RemoveLocked(current);
  }

  json::Document doc = ParseObject(*current);
  auto& a = doc.GetAllocator();
  json::Value& meta = Metadata(doc);
  const int64_t now = clock_.NowNs();
  const bool finalizers = HasFinalizers(meta);
  int64_t grace = 0;
  if (is_pod) {
    // pod strategy CheckGracefulDelete: the options' period, else the pod's, else 30 s; an
    // unscheduled or finished pod goes at once.
    const json::Value* spec = json::Find(doc, "spec");
    grace =
        options.grace_period_seconds.value_or(spec ? GetInt(*spec, "terminationGracePeriodSeconds").value_or(30) : 30);
    if (grace < 0) grace = 1;  // negative values mean "as soon as possible" (upstream: 1 s)
    const std::string_view node = spec ? json::GetString(*spec, "nodeName") : std::string_view();
    const std::string_view phase = Phase(doc);
    if (node.empty() || phase == "Succeeded" || phase == "Failed") grace = 0;
  }
  if (json::Find(meta, "deletionTimestamp")) {
    // Already being deleted: a shorter grace period brings the end forward; 0 ends it now.
    const int64_t current_grace = GetInt(meta, "deletionGracePeriodSeconds").value_or(0);
    if (grace >= current_grace && !(grace == 0 && current_grace == 0 && !finalizers)) return current;
  }
  if (grace == 0 && !finalizers) {
    if (stored.defines_custom_resources) {
      // Upstream's customresourcecleanup finalizer: the custom resources go first, then the CRD.
      if (const ResourceType* custom = custom_.StorageOf(name)) {
        std::vector<ObjectPtr> instances;
        for (const auto& [key, obj] : ObjectsLocked(*custom)) instances.push_back(obj);
        for (const auto& obj : instances) RemoveLocked(obj);
      }
    }
    return RemoveLocked(current);
  }
  json::Set(meta, "deletionTimestamp", json::MakeString(api::FormatRFC3339(now + grace * util::kNanosPerSecond), a), a);
  json::Set(meta, "deletionGracePeriodSeconds", json::Value(grace), a);
  json::Remove(meta, "resourceVersion");
  const uint64_t rv = ++rv_;
  std::shared_ptr<Object> next = MakeObject(stored, doc, rv);
  auto parsed = std::make_shared<const json::Document>(std::move(doc));
  ObjectsLocked(stored)[Key(current->namespace_, current->name)] = next;
  CommitLocked(WatchEvent{EventType::kModified, next, current, std::move(parsed)});
  return next;
}

// --- Pod subresources ------------------------------------------------------------------------

Result<ObjectPtr> MemoryStore::Bind(std::string_view namespace_, std::string_view pod_name, std::string_view uid,
                                    std::string_view node_name) {
  Result<ObjectPtr> out;
  {
    std::lock_guard lock(mu_);
    const ResourceType* pods = FindStoredLocked("", "pods");
    ObjectPtr current = pods ? FindLocked(*pods, namespace_, pod_name) : nullptr;
    auto binding_conflict = [&](std::string why) {
      return Error{Error::Reason::kConflict,
                   fmt::format("Operation cannot be fulfilled on pods/binding \"{}\": {}", pod_name, why),
                   {}};
    };
    if (!pods) return std::unexpected(Internal("pods are not served"));
    if (!current) return std::unexpected(NotFound(*pods, pod_name));
    if (!uid.empty() && uid != current->uid) {
      return std::unexpected(binding_conflict(
          fmt::format("Precondition failed: UID in precondition: {}, UID in object meta: {}", uid, current->uid)));
    }
    json::Document doc = ParseObject(*current);
    auto& a = doc.GetAllocator();
    json::Value& meta = Metadata(doc);
    json::Value& spec = json::Child(doc, "spec", a);
    if (json::Find(meta, "deletionTimestamp")) {
      return std::unexpected(
          binding_conflict(fmt::format("pod {} is being deleted, cannot be assigned to a host", pod_name)));
    }
    if (const std::string_view bound = json::GetString(spec, "nodeName"); !bound.empty()) {
      return std::unexpected(
          binding_conflict(fmt::format("pod {} is already assigned to node \"{}\"", pod_name, bound)));
    }
    json::Set(spec, "nodeName", json::MakeString(node_name, a), a);
    // podutil.UpdatePodCondition: PodScheduled=True replaces any earlier PodScheduled condition.
    json::Value& status = json::Child(doc, "status", a);
    json::Value* conditions = json::Find(status, "conditions");
    if (conditions == nullptr || !conditions->IsArray()) {
      conditions = &json::Set(status, "conditions", json::Value(rapidjson::kArrayType), a);
    }
    for (auto it = conditions->Begin(); it != conditions->End();) {
      if (json::GetString(*it, "type") == kPodScheduled) {
        it = conditions->Erase(it);
      } else {
        ++it;
      }
    }
    json::Value cond(rapidjson::kObjectType);
    json::Set(cond, "type", json::MakeString(kPodScheduled, a), a);
    json::Set(cond, "status", json::MakeString("True", a), a);
    json::Set(cond, "lastProbeTime", json::Value(), a);
    json::Set(cond, "lastTransitionTime", json::MakeString(api::FormatRFC3339(clock_.NowNs()), a), a);
    conditions->PushBack(cond, a);
    // The nomination has served its purpose once the pod is bound (upstream's binding clears
    // it: ClearingNominatedNodeNameAfterBinding, KEP-5278).
    json::Remove(status, "nominatedNodeName");
    json::Remove(meta, "resourceVersion");
    // Only spec.nodeName and the status changed: the view need not be decoded whole (a failed
    // derivation leaves it to MakeObject's full decode, as before).
    std::shared_ptr<void> view;
    if (pods->decode_binding) view = pods->decode_binding(doc, *current).view;
    out = ReplaceLocked(current, doc, std::move(view));
  }
  AwaitDurable(out);
  DeliverToObservers();
  return out;
}

Result<ObjectPtr> MemoryStore::Evict(std::string_view namespace_, std::string_view pod_name,
                                     const DeleteOptions& options) {
  Result<ObjectPtr> out;
  {
    std::lock_guard lock(mu_);
    out = [&]() -> Result<ObjectPtr> {
      const ResourceType* pods = FindStoredLocked("", "pods");
      if (!pods) return std::unexpected(Internal("pods are not served"));
      ObjectPtr pod = FindLocked(*pods, namespace_, pod_name);
      if (!pod) return std::unexpected(NotFound(*pods, pod_name));
      json::Document pod_doc = ParseObject(*pod);
      const std::string_view phase = Phase(pod_doc);
      // eviction.go canIgnorePDB: finished, pending or already terminating pods need no budget.
      const bool ignore_pdb = phase == "Succeeded" || phase == "Failed" || phase == "Pending" ||
                              json::Find(*json::Find(pod_doc, "metadata"), "deletionTimestamp") != nullptr;
      const ResourceType* pdbs = FindStoredLocked("policy", "poddisruptionbudgets");
      if (!ignore_pdb && pdbs) {
        std::vector<ObjectPtr> matching;
        for (const auto& [key, pdb] : ObjectsLocked(*pdbs)) {
          if (key.first != namespace_) continue;
          json::Document d = ParseObject(*pdb);
          const json::Value* spec = json::Find(d, "spec");
          auto sel = LabelSelectorFromJson(spec ? json::Find(*spec, "selector") : nullptr);
          if (sel && sel->Matches(pod->labels())) matching.push_back(pdb);
        }
        if (matching.size() > 1) {
          return std::unexpected(Internal(
              "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."));
        }
        if (matching.size() == 1) {
          const ObjectPtr& pdb = matching[0];
          json::Document d = ParseObject(*pdb);
          auto& a = d.GetAllocator();
          json::Value& status = json::Child(d, "status", a);
          const json::Value& meta = *json::Find(d, "metadata");
          Error too_many{
              Error::Reason::kTooManyRequests, "Cannot evict pod as it would violate the pod's disruption budget.", {}};
          if (GetInt(status, "observedGeneration").value_or(0) < GetInt(meta, "generation").value_or(0)) {
            too_many.causes.push_back(
                Cause{"DisruptionBudget",
                      fmt::format("The disruption budget {} is still being processed by the server.", pdb->name), ""});
            return std::unexpected(too_many);
          }
          const int64_t allowed = GetInt(status, "disruptionsAllowed").value_or(0);
          if (allowed <= 0) {
            too_many.causes.push_back(Cause{
                "DisruptionBudget",
                fmt::format("The disruption budget {} needs {} healthy pods and has {} currently", pdb->name,
                            GetInt(status, "desiredHealthy").value_or(0), GetInt(status, "currentHealthy").value_or(0)),
                ""});
            return std::unexpected(too_many);
          }
          // The budget is spent before the pod goes, and the disruption controller is told which
          // pod it was spent on (status.disruptedPods), as upstream's eviction REST does.
          json::Set(status, "disruptionsAllowed", json::Value(allowed - 1), a);
          json::Value& disrupted = json::Child(status, "disruptedPods", a);
          json::Set(disrupted, pod_name, json::MakeString(api::FormatRFC3339(clock_.NowNs()), a), a);
          json::Remove(Metadata(d), "resourceVersion");
          ReplaceLocked(pdb, d);
        }
      }
      return DeleteLocked(*pods, namespace_, pod_name, options);
    }();
  }
  AwaitDurable(out);
  DeliverToObservers();
  return out;
}

// --- Watch -----------------------------------------------------------------------------------

Result<std::unique_ptr<Watcher>> MemoryStore::Watch(const ResourceType& type, std::string_view namespace_,
                                                    const WatchOptions& options) {
  auto selectors = CompileSelectors(options.selectors, type);
  if (!selectors) return std::unexpected(selectors.error());
  const ResourceType& stored = Storage(type);
  if (!stored.namespaced) namespace_ = {};
  auto state =
      std::make_shared<WatchState>(type, std::string(namespace_), std::move(*selectors), options.allow_bookmarks,
                                   options_.watcher_capacity, options_.bookmark_interval);
  const std::string& rv_text = options.resource_version;
  std::unique_lock lock(mu_);
  if (rv_text.empty() || rv_text == "0") {
    // The current objects first, as ADDED, then every change.
    for (const auto& [key, obj] : SnapshotLocked(stored, namespace_, nullptr, rv_)) {
      if (state->Selects(*obj)) state->Push(WatchEvent{EventType::kAdded, obj, nullptr});
    }
    if (options.send_initial_events) {
      state->Push(WatchEvent{EventType::kBookmark, MakeBookmark(type, rv_, true), nullptr});
    }
  } else {
    auto rv = ParseResourceVersion(rv_text);
    if (!rv) return std::unexpected(BadRequest(fmt::format("invalid resource version: {}", rv_text)));
    if (auto err = WaitForLocked(lock, *rv)) return std::unexpected(*err);
    if (*rv < compacted_rv_) return std::unexpected(TooOldResourceVersion(*rv, compacted_rv_ + 1));
    for (const WatchEvent& e : history_) {
      if (e.object->resource_version > *rv) state->Offer(e, /*replay=*/true);
    }
  }
  watchers_.push_back(state);
  return std::make_unique<StoreWatcher>(std::move(state));
}

}  // namespace kubesched::store
