#pragma once
// The object store behind every mode: `simulate` runs it in process on a virtual clock, and
// `kubesched apiserver` serves it over the Kubernetes REST API. It holds API objects as the API
// server does (lossless JSON with full metadata), numbers every change with one global
// resourceVersion, and fans the changes out to watchers.
//
// It knows nothing of HTTP and nothing of scheduling: each resource's kind-specific behaviour
// (defaulting, validation, the field-selector fields, the typed view the scheduler reads) comes
// from a ResourceType's hooks. Errors are values carrying what a Kubernetes `Status` needs.

#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/json.h"
#include "util/clock.h"

namespace kubesched::store {

//! A field-level problem with an object (metav1.StatusCause).
struct Cause {
  std::string reason;   //!< "FieldValueRequired", "FieldValueInvalid", "FieldValueNotSupported", ...
  std::string message;  //!< "Required value"
  std::string field;    //!< "spec.containers[0].name"
};

//! Why a store operation failed: the reason and HTTP code of a metav1.Status.
struct Error {
  enum class Reason {
    kBadRequest,             //!< 400 BadRequest (malformed body, strict field validation)
    kForbidden,              //!< 403 Forbidden (admission: unknown PriorityClass; protected namespaces)
    kNotFound,               //!< 404 NotFound
    kMethodNotAllowed,       //!< 405 MethodNotAllowed
    kAlreadyExists,          //!< 409 AlreadyExists
    kConflict,               //!< 409 Conflict (stale resourceVersion, precondition failed, already bound)
    kGone,                   //!< 410 Expired (resourceVersion compacted) / Gone
    kRequestEntityTooLarge,  //!< 413
    kInvalid,                //!< 422 Invalid (with causes)
    kTooManyRequests,        //!< 429 (PodDisruptionBudget forbids an eviction)
    kInternal,               //!< 500 InternalError
    kTimeout,                //!< 504 Timeout (a resourceVersion from the future did not arrive in time)
  };
  Reason reason = Reason::kInternal;
  std::string message;
  std::vector<Cause> causes;

  int HttpCode() const;
  //! The metav1.Status reason string ("NotFound", "AlreadyExists", "Conflict", "Invalid", ...).
  std::string_view ReasonString() const;
};

template <typename T>
using Result = std::expected<T, Error>;

struct Object;
using ObjectPtr = std::shared_ptr<const Object>;

//! A stored version's JSON text: immutable and shared, by the Object's copies (a deletion's last
//! version) and by its typed view (api::Pod::json and api::Node::json point at the same string),
//! so a write encodes its object once. Reads as a `const std::string&` (and a std::string_view);
//! assigning a std::string stores a new text.
class JsonText {
 public:
  JsonText() = default;
  JsonText(std::string text) : text_(std::make_shared<const std::string>(std::move(text))) {}  // NOLINT
  JsonText(std::shared_ptr<const std::string> text) : text_(std::move(text)) {}                // NOLINT
  JsonText& operator=(std::string text) {
    text_ = std::make_shared<const std::string>(std::move(text));
    return *this;
  }

  const std::string& str() const { return text_ ? *text_ : Empty(); }
  operator const std::string&() const { return str(); }  // NOLINT
  operator std::string_view() const { return str(); }    // NOLINT
  //! The shared string itself (null while empty): what views keep.
  const std::shared_ptr<const std::string>& shared() const { return text_; }

  bool empty() const { return str().empty(); }
  size_t size() const { return str().size(); }
  const char* data() const { return str().data(); }
  size_t find(std::string_view s, size_t pos = 0) const { return str().find(s, pos); }

  friend bool operator==(const JsonText& a, const JsonText& b) { return a.str() == b.str(); }
  friend bool operator==(const JsonText& a, std::string_view b) { return a.str() == b; }
  friend std::ostream& operator<<(std::ostream& out, const JsonText& t) { return out << t.str(); }

 private:
  static const std::string& Empty() {
    static const std::string kEmpty;
    return kEmpty;
  }
  std::shared_ptr<const std::string> text_;
};

//! What ResourceType::decode makes of an object: the causes for a 422, or (none) its typed view.
struct DecodeResult {
  std::vector<Cause> causes;
  //! The view of the object as decoded (null when it has none): ResourceType::complete_view gives
  //! it the stored version's resourceVersion and JSON before it is published.
  std::shared_ptr<void> view;
};

//! Read access to the stored objects for admission hooks (which run under the store's lock).
class ObjectReader {
 public:
  virtual ~ObjectReader() = default;
  //! The object, or null.
  virtual ObjectPtr Get(std::string_view group, std::string_view resource, std::string_view namespace_,
                        std::string_view name) const = 0;
  //! Every object of the resource (namespace_ empty: in all namespaces), by namespace and name.
  virtual std::vector<ObjectPtr> List(std::string_view group, std::string_view resource,
                                      std::string_view namespace_) const = 0;
};

//! A column `kubectl get` shows for a custom resource (a CRD version's additionalPrinterColumns
//! entry): each object's cell is the value at json_path.
struct ColumnDefinition {
  std::string name;
  std::string type;  //!< "string", "integer", "number", "boolean", "date"
  std::string format;
  std::string description;
  std::string json_path;  //!< ".spec.replicas", ".status.conditions[?(@.type==\"Ready\")].status"
  int priority = 0;
};

//! One resource the store serves (pods, nodes, apps/v1 deployments, ...), with what discovery
//! publishes about it and the hooks that give the kind its behaviour.
struct ResourceType {
  std::string group;     //!< "" for the core group
  std::string version;   //!< "v1"
  std::string resource;  //!< plural, lower case: "pods"
  std::string kind;      //!< "Pod"
  std::string singular;  //!< "pod"
  bool namespaced = true;
  std::vector<std::string> short_names;   //!< "po"
  std::vector<std::string> categories;    //!< "all"
  std::vector<std::string> subresources;  //!< "status", "binding", "eviction"

  //! The check of metadata.name, as upstream's ValidateObjectMeta takes it per kind: its
  //! problems, empty when valid. Null: a DNS-1123 subdomain (api::IsDNS1123Subdomain).
  std::vector<std::string> (*validate_name)(std::string_view name) = nullptr;
  //! Fills in what the API server defaults (spec.schedulerName, ...), in place, before
  //! validation. May be empty.
  std::function<void(api::json::Document& object)> default_fields;
  //! On update, before validation: what the registry carries over from the stored version `old`
  //! that the new body left out (Services: the allocated cluster IPs and node ports, as upstream's
  //! patchAllocatedValues). May be empty.
  std::function<void(api::json::Document& object, const api::json::Value& old)> prepare_update;
  //! Checks a defaulted object; causes for a 422. `old` is the stored version on update, null on
  //! create. May be empty.
  std::function<std::vector<Cause>(const api::json::Value& object, const Object* old)> validate;
  //! The values of the field selectors this kind supports besides metadata.name and
  //! metadata.namespace (pods: spec.nodeName, spec.schedulerName, status.phase; events:
  //! involvedObject.*, reason, type; nodes: spec.unschedulable). May be empty.
  std::function<void(const api::json::Value& object, std::vector<std::pair<std::string, std::string>>& out)>
      selectable_fields;
  //! The field selector keys selectable_fields produces (besides metadata.name and
  //! metadata.namespace): a selector on any other key is a 400 `field label not supported`.
  std::vector<std::string> field_selectors;
  //! The view's metadata.labels, sorted by key (pods and nodes: api::Labels' entries), so that
  //! a stored version keeps them once. Null: the store keeps its own copy.
  const std::vector<std::pair<std::string, std::string>>* (*view_labels)(const void* view) = nullptr;
  //! The typed view derived once per stored version (api::Pod for pods, api::Node for nodes,
  //! ...); null when the kind has none. May be empty.
  std::function<std::shared_ptr<const void>(const api::json::Value& object)> view;
  //! Validation and the typed view from ONE decoding, for kinds whose view is the decoded object
  //! (pods and nodes, through api::DecodePod/DecodeNode). When set, the store uses it instead of
  //! `validate` and `view`: on a write it decodes the defaulted, admitted object once (`old` as
  //! for validate), rejects the write with the causes, or keeps the view; once the store has set
  //! the new resourceVersion and encoded the object, `complete_view` gives the view that
  //! resourceVersion and the stored JSON text (shared, not copied). Writes that are not validated
  //! (a deletion's timestamps, LoadState) decode with it too and keep no view when it fails.
  std::function<DecodeResult(const api::json::Value& object, const Object* old)> decode;
  //! Sets the decoded view's resourceVersion and JSON to the stored version's. Required with decode.
  std::function<void(void* view, const Object& stored)> complete_view;
  //! With decode, for writes that change an object's status only: validation and the view of
  //! `object` when every member but `status` (metadata with its resourceVersion included) is the
  //! same JSON as in the stored version `old`, derived from old's view instead of a whole decode.
  //! Must give what decode gives, causes and view alike. May be empty (decode is used).
  std::function<DecodeResult(const api::json::Value& object, const Object& old)> decode_status;
  //! Pods, with decode: the view after pods/binding changed `old` into `object` (spec.nodeName
  //! set, the status's conditions and nomination, nothing else), derived from old's view as
  //! decode_status does. Must give what decode gives. May be empty.
  std::function<DecodeResult(const api::json::Value& object, const Object& old)> decode_binding;
  //! Admission of a new object after defaulting and before validation, with read access to the
  //! stored objects (pods: spec.priority from their PriorityClass). Runs under the store's lock:
  //! `reader` is the only way it may read the store. An error rejects the write. May be empty.
  std::function<std::optional<Error>(api::json::Document& object, const ObjectReader& reader)> admit;

  //! Custom resources: the paths of the fields of `object` its schema does not declare (what the
  //! store's pruning removes), for the API's field validation. Empty for other kinds.
  std::function<std::vector<std::string>(const api::json::Value& object)> unknown_fields;
  //! Custom resources: the Table columns after NAME (the CRD's additionalPrinterColumns, else AGE).
  //! Empty for other kinds, whose columns are the API server's printers'.
  std::vector<ColumnDefinition> columns;
  //! CustomResourceDefinitions: a stored object of this kind defines custom resources, which the
  //! store serves while it exists (store/custom_resources.h).
  bool defines_custom_resources = false;

  //! Objects that exist from the start (JSON texts): the built-in namespaces and PriorityClasses.
  std::vector<std::string> initial_objects;

  //! A resource served from another's storage (events.k8s.io/v1 events are kept as core/v1
  //! Events, as upstream keeps them): that resource, and the conversions of a whole object into
  //! its form and back. Null: stored as itself.
  const ResourceType* stored_as = nullptr;
  std::function<void(api::json::Document& object)> to_storage;
  std::function<void(api::json::Document& object)> from_storage;

  bool HasSubresource(std::string_view name) const;

  //! "v1" or "apps/v1".
  std::string GroupVersion() const { return group.empty() ? version : group + "/" + version; }
};

//! One stored version of an object. Immutable: a change stores a new version.
struct Object {
  const ResourceType* type = nullptr;
  std::string namespace_;  //!< empty for cluster-scoped objects
  std::string name;
  std::string uid;
  uint64_t resource_version = 0;
  //! The full object (apiVersion, kind, metadata with resourceVersion, spec, status, and every
  //! field the store does not model), compactly encoded: what GET, LIST and WATCH send. Shared
  //! with the view (JsonText).
  JsonText json;
  std::shared_ptr<const void> view;  //!< the ResourceType's view, or null

  using LabelList = std::vector<std::pair<std::string, std::string>>;
  //! metadata.labels, sorted by key: the typed view's when the type shares them (pods and
  //! nodes keep one copy, not two), else own_labels.
  const LabelList& labels() const { return shared_labels ? *shared_labels : own_labels; }
  LabelList own_labels;
  const LabelList* shared_labels = nullptr;  //!< inside `view` (alive as long as it), or null

  //! The value of field selector `key`, one of the type's field_selectors (metadata.name and
  //! metadata.namespace are `name` and `namespace_`); empty when the object has none.
  std::string_view Field(std::string_view key) const;
  //! selectable_fields' values in the order of the type's field_selectors, each a varint
  //! length and the bytes: one allocation for all of them (read with Field).
  std::string packed_fields;

  //! The view as its type (the caller knows it from the resource).
  template <typename T>
  std::shared_ptr<const T> View() const {
    return std::static_pointer_cast<const T>(view);
  }
};

enum class EventType { kAdded, kModified, kDeleted, kBookmark };
std::string_view ToString(EventType type);  //!< "ADDED", "MODIFIED", "DELETED", "BOOKMARK"

struct WatchEvent {
  EventType type = EventType::kAdded;
  //! The object after the change (for kDeleted: its last version, with the deletion's
  //! resourceVersion); for kBookmark only its resource_version is meaningful.
  ObjectPtr object{};
  ObjectPtr old_object{};  //!< the version before a kModified/kDeleted, for in-process handlers
  //! For in-process observers only (watchers and the history never carry it): `object` as the
  //! DOM the write encoded it from (it parses to an equal document), so an observer need not
  //! parse object->json again. Null when the write had none at hand.
  std::shared_ptr<const api::json::Document> parsed{};
};

//! Label and field selectors as the API takes them ("app=web,tier!=db", "spec.nodeName=n1").
struct Selectors {
  std::string label_selector{};
  std::string field_selector{};
};

struct ListOptions {
  Selectors selectors{};
  int64_t limit = 0;             //!< 0: no limit
  std::string continue_token{};  //!< from the previous page's ListResult
  //! "" (most recent), "0" (any), or a resourceVersion, read as resourceVersionMatch says.
  std::string resource_version{};
  std::string resource_version_match{};  //!< "", "NotOlderThan" or "Exact"
};

struct ListResult {
  std::vector<ObjectPtr> items{};  //!< by namespace, then name
  uint64_t resource_version = 0;
  std::string continue_token{};  //!< empty on the last page
  std::optional<int64_t> remaining_item_count{};
};

struct WatchOptions {
  Selectors selectors{};
  //! Events after this resourceVersion; "" or "0": the current objects as kAdded first.
  std::string resource_version{};
  bool allow_bookmarks = false;
  bool send_initial_events = false;
};

//! A watch: a bounded queue the store fills and one consumer drains. A watcher that falls
//! behind by more than its capacity is closed (Closed() with reason), as the API server closes
//! a slow watcher; the client relists. Destroying it unsubscribes.
class Watcher {
 public:
  virtual ~Watcher() = default;
  //! The next event, waiting up to `timeout`; nullopt on timeout or once closed.
  virtual std::optional<WatchEvent> Next(std::chrono::milliseconds timeout) = 0;
  virtual bool Closed() const = 0;
  //! Why it was closed (empty while open, "stopped" after Stop()).
  virtual std::string CloseReason() const = 0;
  virtual void Stop() = 0;
  //! `wake` is called (from the writer's thread, quickly: it must not block or call back into the
  //! store) whenever an event is queued or the watcher closes, so that a consumer driven by events
  //! (the HTTP layer) need not poll. Without it, consumers wait in Next.
  virtual void SetWakeup(std::function<void()> wake) = 0;
};

struct DeleteOptions {
  //! For pods: seconds until the object goes (nullopt: the object's own grace period; 0: now).
  std::optional<int64_t> grace_period_seconds{};
  std::optional<std::string> precondition_uid{};
  std::optional<std::string> precondition_resource_version{};
};

enum class PatchType { kJsonPatch, kMergePatch, kStrategicMergePatch };
//! "application/json-patch+json" → kJsonPatch, ... (nullopt for any other content type).
std::optional<PatchType> PatchTypeFromContentType(std::string_view content_type);

//! Everything an update of one object needs: the object's new JSON, and for a subresource
//! ("status") which part it may change.
struct UpdateRequest {
  std::string subresource{};  //!< "" or "status"
  //! When set, must equal the stored resourceVersion (else kConflict); the body's own
  //! metadata.resourceVersion counts as this when present.
  std::optional<std::string> expected_resource_version{};
};

//! The store. Thread-safe: every method may be called from any thread.
class Store {
 public:
  virtual ~Store() = default;

  //! The resources served, in discovery order.
  virtual const std::vector<const ResourceType*>& Resources() const = 0;
  //! The resource with this group and plural name (version-agnostic), or null. Custom resources
  //! included (their storage version's served type).
  virtual const ResourceType* FindResource(std::string_view group, std::string_view resource) const = 0;
  //! Every resource served now: Resources() and, after them, each served version of the custom
  //! resources the stored CustomResourceDefinitions define.
  virtual std::vector<const ResourceType*> ServedResources() const { return Resources(); }
  //! Changes whenever ServedResources() does (discovery is rebuilt then).
  virtual uint64_t ServedResourcesGeneration() const { return 0; }
  //! The served resource of this group, version and plural name, or null.
  virtual const ResourceType* FindServedResource(std::string_view group, std::string_view version,
                                                 std::string_view resource) const {
    const ResourceType* t = FindResource(group, resource);
    return t && t->version == version ? t : nullptr;
  }

  //! Creates the object (namespace from the body or `namespace_`; generateName honoured; uid,
  //! creationTimestamp, resourceVersion, generation set; defaulted; validated).
  virtual Result<ObjectPtr> Create(const ResourceType& type, std::string_view namespace_, api::json::Document body) = 0;
  //! Create for an object that already exists elsewhere (`simulate` loading a cluster's
  //! manifests or dump): the identity and history it has are kept, namely metadata.uid,
  //! creationTimestamp, generation, deletionTimestamp and deletionGracePeriodSeconds, each
  //! assigned as by Create when absent. It is defaulted and validated as by Create, but not
  //! admitted again (admission runs once, where the object was created: a pod keeps the
  //! spec.priority it has).
  virtual Result<ObjectPtr> Restore(const ResourceType& type, std::string_view namespace_,
                                    api::json::Document body) = 0;
  virtual Result<ObjectPtr> Get(const ResourceType& type, std::string_view namespace_, std::string_view name) const = 0;
  //! namespace_ empty: every namespace.
  //! resourceVersion semantics as the API concepts page gives them: "" the latest; "0" any (the
  //! latest here); N with NotOlderThan (or no match) at least N, waiting briefly for a future N
  //! (kTimeout "Too large resource version" after StoreOptions.future_resource_version_wait);
  //! N with Exact, or N with a limit and no match (legacy), the state at N rebuilt from the
  //! history (kGone when compacted). Continue tokens serve the first page's snapshot the same way.
  virtual Result<ListResult> List(const ResourceType& type, std::string_view namespace_,
                                  const ListOptions& options) const = 0;
  virtual Result<ObjectPtr> Update(const ResourceType& type, std::string_view namespace_, std::string_view name,
                                   api::json::Document body, const UpdateRequest& request) = 0;
  virtual Result<ObjectPtr> Patch(const ResourceType& type, std::string_view namespace_, std::string_view name,
                                  PatchType patch_type, std::string_view patch, std::string_view subresource) = 0;
  //! What the API server's decoder does to a patched object before it is validated and stored
  //! (a field of the wrong type refused, unknown fields dropped); an error leaves the object as it was.
  using PatchDecoder = std::function<Result<void>(api::json::Document& patched)>;
  //! Patch, with `decode` run on the patched object.
  virtual Result<ObjectPtr> PatchDecoded(const ResourceType& type, std::string_view namespace_, std::string_view name,
                                         PatchType patch_type, std::string_view patch, std::string_view subresource,
                                         const PatchDecoder& decode) = 0;
  //! A JSON merge patch its caller built as a value: what Patch with kMergePatch does with the
  //! patch's text, without encoding and parsing it again (the node lifecycle's status writes).
  virtual Result<ObjectPtr> MergePatch(const ResourceType& type, std::string_view namespace_, std::string_view name,
                                       const api::json::Value& patch, std::string_view subresource) {
    return Patch(type, namespace_, name, PatchType::kMergePatch, api::json::Encode(patch), subresource);
  }
  //! Starts or completes the deletion: a pod bound to a node with a grace period > 0 gets
  //! metadata.deletionTimestamp and deletionGracePeriodSeconds and goes when the node lifecycle
  //! removes it; other objects (and objects without finalizers) go at once. Returns the object
  //! as it stands after the call (its last version when gone).
  virtual Result<ObjectPtr> Delete(const ResourceType& type, std::string_view namespace_, std::string_view name,
                                   const DeleteOptions& options) = 0;
  //! A watch from options.resource_version: kGone when older than the history kept; a version
  //! the store has not reached waits up to StoreOptions.future_resource_version_wait, then
  //! kTimeout. The replay of the history is queued whole (a client resuming its watch after the
  //! server closed it as too slow gets what it missed, as from the API server's watch cache);
  //! only live events count against StoreOptions.watcher_capacity.
  virtual Result<std::unique_ptr<Watcher>> Watch(const ResourceType& type, std::string_view namespace_,
                                                 const WatchOptions& options) = 0;

  //! pods/binding: sets spec.nodeName, adds the PodScheduled=True condition and clears
  //! status.nominatedNodeName (kConflict when
  //! already bound or being deleted, or when `uid` is given and differs, as upstream's UID
  //! precondition; kNotFound when the pod is gone).
  virtual Result<ObjectPtr> Bind(std::string_view namespace_, std::string_view pod_name, std::string_view uid,
                                 std::string_view node_name) = 0;
  //! pods/eviction: a graceful delete that honours PodDisruptionBudgets (kTooManyRequests).
  virtual Result<ObjectPtr> Evict(std::string_view namespace_, std::string_view pod_name,
                                  const DeleteOptions& options) = 0;

  //! The latest resourceVersion handed out.
  virtual uint64_t ResourceVersion() const = 0;

  //! In-process observers (the simulation's informers, the controllers, the node lifecycle):
  //! called after every change, in resourceVersion order, on the thread that made the change and
  //! without any store lock held. An observer may write to the store; the events its writes make
  //! are delivered after the current one finishes (never re-entrantly), so every observer sees
  //! every event in order. When another thread is already delivering, that thread delivers this
  //! write's events too (still in order), so a write may return before its observers ran.
  //! Events carry objects in their storage form (an events.k8s.io Event arrives as its core/v1
  //! Event). Returns an id for RemoveObserver.
  virtual uint64_t AddObserver(std::function<void(const WatchEvent&)> observer) = 0;
  //! AddObserver, and `on_idle` runs each time the delivering thread has delivered every queued
  //! event (on that thread, without locks, after the events of one or more writes): where an
  //! observer finishes work it batched over those events (the controllers write statuses there,
  //! as upstream's work queues fold many events into one sync). Writes it makes are delivered
  //! next, and `on_idle` runs again after them.
  virtual uint64_t AddObserver(std::function<void(const WatchEvent&)> observer, std::function<void()> on_idle) = 0;
  virtual void RemoveObserver(uint64_t id) = 0;

  //! Writes the resourceVersion and every object to `path` as one JSON document, atomically
  //! (a temporary file beside it, then rename), so a crash never leaves half a state.
  virtual Result<void> SaveState(const std::string& path) const = 0;
  //! Replaces every object with those SaveState wrote (the built-in ones included) and continues
  //! numbering after its resourceVersion. Meant for start-up, before observers and watchers
  //! attach: observers are not told, open watchers are closed, and watches and exact lists from
  //! before the loaded resourceVersion get kGone.
  virtual Result<void> LoadState(const std::string& path) = 0;
  //! Keeps the store in `path` from now on (kubesched apiserver --state): loads what is there
  //! (the snapshot SaveState wrote, then the journal of the writes after it, `path`.journal),
  //! writes a fresh snapshot, and from then on every write is in the journal, on disk, before it
  //! returns. After a crash (the journal still there), numbering continues
  //! Journal::kMaxUnsynced past the last change on disk, so that no version a client may have
  //! seen before the crash is used again, and watches from before it get kGone. Meant for
  //! start-up, as LoadState.
  virtual Result<void> OpenState(const std::string& path) = 0;
  //! A clean stop after OpenState: a snapshot of everything, and the journal removed.
  virtual Result<void> CloseState() = 0;
  //! Waits until every change committed so far is on disk (after OpenState; else returns at once).
  virtual Result<void> Sync() { return {}; }
};

//! While one lives on a thread, that thread's writes return without waiting for OpenState's
//! journal to reach the disk: for writes no client is waiting on (kubesched apiserver's -f objects
//! at start-up), made durable together by one Store::Sync after them instead of one disk sync
//! each.
class UnsyncedWrites {
 public:
  UnsyncedWrites();
  ~UnsyncedWrites();
  UnsyncedWrites(const UnsyncedWrites&) = delete;
  UnsyncedWrites& operator=(const UnsyncedWrites&) = delete;
  //! Whether one lives on this thread.
  static bool Active();
};

struct StoreOptions {
  //! Changes kept for watches that start from an older resourceVersion; older ones are
  //! compacted (a watch from before them gets kGone, as etcd compaction makes the API server do).
  size_t watch_history = 100'000;
  //! Events a Watcher may have queued before it is closed as too slow.
  size_t watcher_capacity = 10'000;
  //! A watch with allow_bookmarks gets a BOOKMARK after this long without events.
  std::chrono::milliseconds bookmark_interval{1000};
  //! How long a list or watch from a resourceVersion the store has not reached yet waits for it
  //! before failing with kTimeout "Too large resource version" (upstream's cacher waits 3 s).
  std::chrono::milliseconds future_resource_version_wait{3000};
  //! Seeds generated names and uids (the same seed and writes give the same names); nullopt:
  //! from std::random_device.
  std::optional<uint64_t> seed = std::nullopt;
  //! After OpenState, once the journal holds this many bytes (and more than the last snapshot),
  //! the state is compacted while serving: a fresh snapshot, and a new journal after it.
  uint64_t journal_compact_bytes = uint64_t{64} << 20;
  //! Fault injection for tests: when it returns true for a change about to be committed, every
  //! open watcher is closed before it sees the change and the history up to the change is
  //! compacted (as etcd compaction under a lagging watch), so a client resuming its watch gets
  //! 410 Gone and relists. Called with the store's lock held: it must not call the store.
  std::function<bool(const WatchEvent& change)> compact_before;
};

//! The in-memory store, serving `types` (which must outlive it), timestamps from `clock` (Unix
//! time: util::SystemClock for the API server, the simulation's VirtualClock for simulate).
std::unique_ptr<Store> NewMemoryStore(std::vector<const ResourceType*> types, const util::Clock& clock,
                                      StoreOptions options = {});

}  // namespace kubesched::store
