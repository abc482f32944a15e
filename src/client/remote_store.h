#pragma once
// RemoteStore: the object store interface (store::Store) over a real Kubernetes API server, so
// that `kubesched run` drives the very StoreInformer, StoreClient and Scheduler that `simulate`
// drives over the in-memory store.
//
// Reads of the informed resources (pods, nodes, namespaces, PDBs, the workload kinds) come from
// a local mirror that reflectors keep current by LIST and WATCH, as client-go's informers and
// listers do: a lookup on a scheduling path never makes an API call. Every write is a REST call
// (POST, PUT, PATCH, DELETE, pods/binding, pods/eviction); what it changes arrives back through
// the watch. Observers (AddObserver) hear each change of the mirror once, in the order the mirror
// applied them. Reads of resources that are not informed (a Lease) are REST calls.
//
// In the mirror, Object::resource_version is a local sequence number in application order (the
// watches of different resources arrive interleaved, so the server's resourceVersions are not
// monotonic across them); the object's JSON and typed view carry the server's resourceVersion.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "client/reflector.h"
#include "client/rest_client.h"
#include "store/store.h"

namespace kubesched::client {

struct RemoteStoreOptions {
  //! The resources mirrored, as (group, plural); each must be among the store's types.
  std::vector<std::pair<std::string, std::string>> informed{};
  //! Of the informed resources, those a server may not serve (alpha APIs): mirrored as empty
  //! while it answers 404 (ReflectorOptions::absent_is_empty).
  std::vector<std::pair<std::string, std::string>> optional{};
  //! The field selector pods are watched with: upstream's scheduler leaves out terminal pods.
  std::string pod_field_selector = "status.phase!=Succeeded,status.phase!=Failed";
  ReflectorOptions reflector{};
};

//! What kube-scheduler informs: pods, nodes, namespaces, PDBs, PriorityClasses, the workload
//! controllers a pod's default topology spread and preemption read, PodGroups of both APIs, and
//! what the volume plugins read (claims, volumes, StorageClasses, CSINodes, CSIDrivers,
//! CSIStorageCapacities).
std::vector<std::pair<std::string, std::string>> SchedulerInformedResources();
//! Of those, what a cluster may not serve: PodGroups (scheduling.k8s.io/v1alpha2, only with
//! upstream's GenericWorkload gate on; scheduling.x-k8s.io/v1alpha1, only once scheduler-plugins'
//! CRD is installed).
std::vector<std::pair<std::string, std::string>> SchedulerOptionalResources();

class RemoteStore final : public store::Store, private ReflectorSink {
 public:
  //! `types`: the resources the store knows (store::SchedulerResources()); they outlive it.
  RemoteStore(RestClient& client, const std::vector<const store::ResourceType*>& types, RemoteStoreOptions options);
  ~RemoteStore() override;

  //! Starts one reflector thread per informed resource.
  void Start();
  //! Waits until every reflector has listed once; false when stopped first.
  bool WaitForCacheSync(std::stop_token stop);
  bool HasSynced() const;
  //! Stops the reflectors and joins their threads (also done by the destructor).
  void Stop();
  //! Lists made by the reflector of `resource` (tests: relists after a 410).
  int Lists(std::string_view group, std::string_view resource) const;

  // --- store::Store -------------------------------------------------------------------------
  const std::vector<const store::ResourceType*>& Resources() const override { return types_; }
  const store::ResourceType* FindResource(std::string_view group, std::string_view resource) const override;
  store::Result<store::ObjectPtr> Create(const store::ResourceType& type, std::string_view namespace_,
                                         api::json::Document body) override;
  //! As Create: a real API server takes no object identity from its clients.
  store::Result<store::ObjectPtr> Restore(const store::ResourceType& type, std::string_view namespace_,
                                          api::json::Document body) override;
  store::Result<store::ObjectPtr> Get(const store::ResourceType& type, std::string_view namespace_,
                                      std::string_view name) const override;
  //! Informed resources: the mirror, filtered by namespace and selectors (resourceVersion, limit
  //! and continue are not applied). Others: a LIST request.
  store::Result<store::ListResult> List(const store::ResourceType& type, std::string_view namespace_,
                                        const store::ListOptions& options) const override;
  store::Result<store::ObjectPtr> Update(const store::ResourceType& type, std::string_view namespace_,
                                         std::string_view name, api::json::Document body,
                                         const store::UpdateRequest& request) override;
  store::Result<store::ObjectPtr> Patch(const store::ResourceType& type, std::string_view namespace_,
                                        std::string_view name, store::PatchType patch_type, std::string_view patch,
                                        std::string_view subresource) override;
  //! The API server decodes the patched object itself: `decode` is its business, not the client's.
  store::Result<store::ObjectPtr> PatchDecoded(const store::ResourceType& type, std::string_view namespace_,
                                               std::string_view name, store::PatchType patch_type,
                                               std::string_view patch, std::string_view subresource,
                                               const PatchDecoder& decode) override;
  store::Result<store::ObjectPtr> Delete(const store::ResourceType& type, std::string_view namespace_,
                                         std::string_view name, const store::DeleteOptions& options) override;
  //! Not offered: in-process observers (AddObserver) are how the mirror is watched.
  store::Result<std::unique_ptr<store::Watcher>> Watch(const store::ResourceType& type, std::string_view namespace_,
                                                       const store::WatchOptions& options) override;
  //! pods/binding with the pod's uid as precondition. Returns the mirrored pod (the API answers
  //! with a Status); its bound version arrives through the watch.
  store::Result<store::ObjectPtr> Bind(std::string_view namespace_, std::string_view pod_name, std::string_view uid,
                                       std::string_view node_name) override;
  store::Result<store::ObjectPtr> Evict(std::string_view namespace_, std::string_view pod_name,
                                        const store::DeleteOptions& options) override;
  //! The mirror's sequence number of its latest change.
  uint64_t ResourceVersion() const override;
  uint64_t AddObserver(std::function<void(const store::WatchEvent&)> observer) override;
  uint64_t AddObserver(std::function<void(const store::WatchEvent&)> observer, std::function<void()> on_idle) override;
  void RemoveObserver(uint64_t id) override;
  //! Not offered: the API server keeps the state.
  store::Result<void> SaveState(const std::string& path) const override;
  store::Result<void> LoadState(const std::string& path) override;
  store::Result<void> OpenState(const std::string& path) override;
  store::Result<void> CloseState() override;

 private:
  using Key = std::pair<std::string, std::string>;  // namespace, name
  struct Mirror {
    std::unique_ptr<Reflector> reflector;
    std::map<Key, store::ObjectPtr> objects;  // guarded by mu_
  };
  struct Observer {
    std::function<void(const store::WatchEvent&)> on_event;
    std::function<void()> on_idle;
  };

  // ReflectorSink
  void Replace(const store::ResourceType& type, std::vector<api::json::Document> items) override;
  void Apply(const store::ResourceType& type, store::EventType event, api::json::Document object) override;

  //! The mirror of `type`, or null when it is not informed.
  Mirror* MirrorOf(const store::ResourceType& type) const;
  //! Builds the mirrored version of `doc` (its typed view decoded once); null when `doc` has no
  //! name. `seq` is set by the caller under mu_.
  std::shared_ptr<store::Object> Build(const store::ResourceType& type, api::json::Document& doc) const;
  //! Stores `next` (null: a deletion of `gone`) under mu_ and queues the change; call Deliver after.
  void RecordLocked(Mirror& mirror, const store::ResourceType& type, std::shared_ptr<store::Object> next,
                    store::EventType event, store::ObjectPtr gone);
  //! Hands queued changes to the observers, unless another thread is already doing so.
  void Deliver();
  //! A REST request whose answer is an object of `type` (or a Status for the error).
  store::Result<store::ObjectPtr> ObjectRequest(const store::ResourceType& type, std::string_view method,
                                                const std::string& path, std::string_view body,
                                                std::string_view content_type, std::string_view namespace_,
                                                std::string_view name) const;

  RestClient& client_;
  std::vector<const store::ResourceType*> types_;
  RemoteStoreOptions options_;
  std::unordered_map<const store::ResourceType*, std::unique_ptr<Mirror>> mirrors_;
  std::vector<std::jthread> threads_;

  mutable std::mutex mu_;  // guards the mirrors' objects, seq_ and pending_
  uint64_t seq_ = 0;
  std::deque<store::WatchEvent> pending_;
  bool delivering_ = false;  // guarded by mu_: a thread is draining pending_

  mutable std::mutex observers_mu_;  // guards observers_
  std::map<uint64_t, std::shared_ptr<Observer>> observers_;
  uint64_t next_observer_ = 1;
};

}  // namespace kubesched::client
