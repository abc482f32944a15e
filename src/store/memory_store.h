#pragma once
// The in-memory Store: every resource's objects in ordered maps keyed by (namespace, name), one
// resourceVersion counter, a ring of recent changes for watches, exact lists and continue
// tokens, and the in-process observers. Only memory_store*.cc include this.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "api/workloads.h"
#include "store/custom_resources.h"
#include "store/journal.h"
#include "store/selectors.h"
#include "store/store.h"
#include "store/watch.h"

namespace kubesched::store {

class MemoryStore final : public Store {
 public:
  MemoryStore(std::vector<const ResourceType*> types, const util::Clock& clock, StoreOptions options);
  ~MemoryStore() override;

  const std::vector<const ResourceType*>& Resources() const override { return types_; }
  const ResourceType* FindResource(std::string_view group, std::string_view resource) const override;
  std::vector<const ResourceType*> ServedResources() const override;
  uint64_t ServedResourcesGeneration() const override { return custom_.Generation(); }
  const ResourceType* FindServedResource(std::string_view group, std::string_view version,
                                         std::string_view resource) const override;
  Result<ObjectPtr> Create(const ResourceType& type, std::string_view namespace_, api::json::Document body) override;
  Result<ObjectPtr> Restore(const ResourceType& type, std::string_view namespace_, api::json::Document body) override;
  Result<ObjectPtr> Get(const ResourceType& type, std::string_view namespace_, std::string_view name) const override;
  Result<ListResult> List(const ResourceType& type, std::string_view namespace_,
                          const ListOptions& options) const override;
  Result<ObjectPtr> Update(const ResourceType& type, std::string_view namespace_, std::string_view name,
                           api::json::Document body, const UpdateRequest& request) override;
  Result<ObjectPtr> Patch(const ResourceType& type, std::string_view namespace_, std::string_view name,
                          PatchType patch_type, std::string_view patch, std::string_view subresource) override;
  Result<ObjectPtr> PatchDecoded(const ResourceType& type, std::string_view namespace_, std::string_view name,
                                 PatchType patch_type, std::string_view patch, std::string_view subresource,
                                 const PatchDecoder& decode) override;
  Result<ObjectPtr> MergePatch(const ResourceType& type, std::string_view namespace_, std::string_view name,
                               const api::json::Value& patch, std::string_view subresource) override;
  Result<ObjectPtr> Delete(const ResourceType& type, std::string_view namespace_, std::string_view name,
                           const DeleteOptions& options) override;
  Result<std::unique_ptr<Watcher>> Watch(const ResourceType& type, std::string_view namespace_,
                                         const WatchOptions& options) override;
  Result<ObjectPtr> Bind(std::string_view namespace_, std::string_view pod_name, std::string_view uid,
                         std::string_view node_name) override;
  Result<ObjectPtr> Evict(std::string_view namespace_, std::string_view pod_name,
                          const DeleteOptions& options) override;
  uint64_t ResourceVersion() const override;
  uint64_t AddObserver(std::function<void(const WatchEvent&)> observer) override;
  uint64_t AddObserver(std::function<void(const WatchEvent&)> observer, std::function<void()> on_idle) override;
  void RemoveObserver(uint64_t id) override;
  Result<void> SaveState(const std::string& path) const override;
  Result<void> LoadState(const std::string& path) override;
  Result<void> OpenState(const std::string& path) override;
  Result<void> CloseState() override;
  Result<void> Sync() override;

 private:
  //! Patch and MergePatch: `apply` changes a copy of the stored version's JSON.
  Result<ObjectPtr> PatchWith(const ResourceType& type, std::string_view namespace_, std::string_view name,
                              const std::function<Result<void>(api::json::Document&)>& apply,
                              std::string_view subresource);
  using Key = std::pair<std::string, std::string>;  // (namespace, name)
  using Objects = std::map<Key, ObjectPtr>;

  static const ResourceType& Storage(const ResourceType& type) { return type.stored_as ? *type.stored_as : type; }
  // The *Locked helpers run with mu_ held. Writes record their changes through CommitLocked.
  Objects& ObjectsLocked(const ResourceType& stored) { return objects_[&stored]; }
  ObjectPtr FindLocked(const ResourceType& stored, std::string_view namespace_, std::string_view name) const;
  const ResourceType* FindStoredLocked(std::string_view group, std::string_view resource) const;
  //! The resource that stores objects of `object`'s apiVersion and kind, or null.
  const ResourceType* StoredTypeOf(const api::json::Value& object) const;
  //! Every storage resource: the built-in ones, then each custom resource's.
  std::vector<const ResourceType*> StorageTypes() const;
  //! After a change of a CustomResourceDefinition (`event`, or a replayed or loaded version of
  //! one: `object` its JSON, `deleted` whether it is gone): serve what it defines now.
  void DefinitionChanged(const api::json::Value& object, bool deleted);
  //! Records a change: history, watchers, the observers' queue, and waiters on a resourceVersion.
  //! `event.parsed` goes to the observers only.
  void CommitLocked(WatchEvent event);
  //! Runs the observers on the queued events unless this or another thread already is.
  void DeliverToObservers();
  //! The DOM of `current` when it is the version being delivered, else null (parse it).
  std::shared_ptr<const api::json::Document> HeldDom(const Object& current);
  //! Defaulting, admission (create only, unless `admit` is false) and validation of a new or updated object. For a kind
  //! with ResourceType::decode, `view` receives the view that validation decoded (for MakeObject).
  //! `old_doc`: old's JSON as a DOM (ValidateObject's status-only path), or null.
  std::optional<Error> PrepareLocked(const ResourceType& stored, api::json::Document& doc, const Object* old,
                                     const api::json::Value* old_doc, std::string_view name,
                                     std::shared_ptr<void>& view, bool admit = true);
  Result<ObjectPtr> CreateAndDeliver(const ResourceType& type, std::string_view namespace_, api::json::Document body,
                                     bool restore);
  //! Create, or with `restore` Store::Restore.
  Result<ObjectPtr> CreateLocked(const ResourceType& served, std::string_view namespace_, api::json::Document body,
                                 bool restore);
  //! `old_doc`: the stored version already parsed (a patch's), or null to parse it here.
  Result<ObjectPtr> UpdateLocked(const ResourceType& served, std::string_view namespace_, std::string_view name,
                                 api::json::Document body, const UpdateRequest& request,
                                 const api::json::Document* old_doc = nullptr);
  Result<ObjectPtr> DeleteLocked(const ResourceType& stored, std::string_view namespace_, std::string_view name,
                                 const DeleteOptions& options);
  //! Removes `current` for good (a DELETED event); returns its last version.
  ObjectPtr RemoveLocked(const ObjectPtr& current);
  //! Stores a new version of an existing object (a MODIFIED event), or removes it when its
  //! deletion was waiting only for the finalizers it no longer has.
  //! `view`: as for MakeObject. Consumes `doc` (the observers get it as WatchEvent::parsed).
  ObjectPtr ReplaceLocked(const ObjectPtr& current, api::json::Document& doc, std::shared_ptr<void> view = nullptr);
  //! With a journal: waits until the changes committed so far are on disk (a write is
  //! acknowledged only then); `out` becomes an error if they cannot be.
  void AwaitDurable(Result<ObjectPtr>& out);
  //! The snapshot SaveState writes.
  std::string StateTextLocked() const;
  //! Online compaction of OpenState's journal, when it has grown past its bound: the snapshot is
  //! rewritten and the journal restarted, while writes go on (see memory_store_state.cc).
  void MaybeCompactJournal(const std::shared_ptr<Journal>& journal);
  //! Waits (releasing `lock`) until the store reaches `rv`; kTimeout if it does not in time.
  std::optional<Error> WaitForLocked(std::unique_lock<std::mutex>& lock, uint64_t rv) const;
  //! The objects of `stored` in `namespace_` (all when empty) with keys after `start`, as they
  //! were at resourceVersion `at` (undoing later changes from the history).
  Objects SnapshotLocked(const ResourceType& stored, std::string_view namespace_, const Key* start, uint64_t at) const;

  const util::Clock& clock_;
  const StoreOptions options_;
  std::vector<const ResourceType*> types_;
  //! The custom resources the stored CRDs define (its own lock, taken after mu_).
  CustomResources custom_{types_};

  mutable std::mutex mu_;                  // guards the members below up to observers_mu_
  mutable std::condition_variable rv_cv_;  // signalled on every commit (waits for a resourceVersion)
  std::unordered_map<const ResourceType*, Objects> objects_;
  uint64_t rv_ = 0;
  std::deque<WatchEvent> history_;  //!< the latest changes, oldest first
  uint64_t compacted_rv_ = 0;       //!< changes up to this one are no longer in history_
  std::vector<std::shared_ptr<WatchState>> watchers_;
  api::Rng rng_;
  //! Set by OpenState: every commit is appended to it.
  std::shared_ptr<Journal> journal_;
  std::string state_path_;
  uint64_t snapshot_bytes_ = 0;     //!< the size of the last snapshot written
  bool compacting_ = false;         //!< a thread is compacting the journal
  bool compaction_failed_ = false;  //!< one failed (logged): no more until the next OpenState
  uint64_t compactions_ = 0;        //!< compactions done since OpenState

  std::mutex observers_mu_;  // guards observers_, pending_, delivering_*, next_observer_id_
  struct Observer {
    std::function<void(const WatchEvent&)> on_event;
    std::function<void()> on_idle;  //!< may be empty
  };
  std::map<uint64_t, std::shared_ptr<const Observer>> observers_;
  std::deque<WatchEvent> pending_;  //!< committed changes the observers have yet to see
  bool delivering_ = false;         //!< a thread is running the observers
  //! The version being delivered and its DOM (WatchEvent::parsed): a write an observer makes to
  //! it (the node lifecycle's status after a bind) reads this DOM instead of parsing the JSON.
  ObjectPtr delivering_object_;
  std::shared_ptr<const api::json::Document> delivering_dom_;
  uint64_t next_observer_id_ = 1;
};

}  // namespace kubesched::store
