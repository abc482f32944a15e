#pragma once
// The controllers' shared view of the pods, as upstream's controllers share one pod informer
// (SharedInformerFactory): every pod version is parsed once, into the facts the controllers read
// (PodFacts), and indexed by uid, by controller uid (upstream's controller-uid indexer) and by node
// name, each index kept in creation order. It is updated from the store's events before any
// controller sees them, so an event costs O(1) here and a controller's work is O(its owner's pods)
// at most. Like an informer it lags the store: a controller's own writes show up when their events
// arrive (Expectations covers the gap).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "store/controllers/object_util.h"
#include "store/store.h"

namespace kubesched::store::controllers {

//! What the controllers read from one pod version.
struct PodFacts {
  ObjectPtr object;
  //! The ownerReference with controller: true, or null (a pointer: most pods of a large cluster
  //! have none, and the reference is bigger than the rest of the facts).
  std::shared_ptr<const OwnerRef> controller;
  std::string node_name;  //!< spec.nodeName
  //! A DaemonSet pod's node before it is bound: the single metadata.name value of its required
  //! node affinity (ReplaceDaemonSetPodNodeNameNodeAffinity's term); empty when none.
  std::string pinned_node;
  std::string phase;                   //!< status.phase
  std::optional<int64_t> deletion_ns;  //!< metadata.deletionTimestamp
  int64_t created_ns = 0;              //!< metadata.creationTimestamp
  bool ready = false;                  //!< the Ready condition is True
  bool host_network = false;
  //! batch.kubernetes.io/job-completion-index (annotation, else label), when a valid number.
  std::optional<int64_t> completion_index;
  //! apps.kubernetes.io/pod-index, else the number after the name's last '-'.
  std::optional<int64_t> ordinal;
  uint64_t seq = 0;  //!< creation order, unique per pod

  const std::string& uid() const { return object->uid; }
  const std::string& name() const { return object->name; }
  const std::string& namespace_() const { return object->namespace_; }
  bool Terminating() const { return deletion_ns.has_value(); }
  bool Finished() const { return phase == "Succeeded" || phase == "Failed"; }
  //! controller.IsPodActive: neither finished nor being deleted.
  bool Active() const { return !Finished() && !Terminating(); }
  //! The node it runs on or is pinned to.
  const std::string& TargetNode() const { return node_name.empty() ? pinned_node : node_name; }
};
using PodFactsPtr = std::shared_ptr<const PodFacts>;

//! Parses one pod version's facts (seq left 0).
//! `parsed`: the pod's JSON as a DOM when the caller has it (WatchEvent::parsed); null to parse.
PodFacts ParsePodFacts(const ObjectPtr& pod, const api::json::Value* parsed = nullptr);

//! Pods in creation order (the seq of each).
using PodsBySeq = std::map<uint64_t, PodFactsPtr>;

class PodInformer {
 public:
  explicit PodInformer(const ResourceType& pods) : pods_(pods) {}

  //! Fills the informer from a list of the store's pods, oldest creation first: a list is ordered
  //! by name, so pods are numbered by resourceVersion, which is their creation order as long as
  //! none was changed since (true for pods loaded before the controllers start).
  void Fill(std::vector<ObjectPtr> pods);
  //! Applies a store event; other kinds are ignored. Afterwards Previous() and Current() give the
  //! pod's facts before and after it (null when it did not exist), until the next Apply.
  void Apply(const WatchEvent& event);
  const PodFactsPtr& Previous() const { return previous_; }
  const PodFactsPtr& Current() const { return current_; }

  //! The pod with this uid, or null.
  PodFactsPtr Get(const std::string& uid) const;
  //! The pods whose controller has this uid (empty when none).
  const PodsBySeq& OwnedBy(const std::string& owner_uid) const;
  //! The pods bound to the node (spec.nodeName).
  const PodsBySeq& OnNode(const std::string& node_name) const;
  size_t size() const { return by_uid_.size(); }

 private:
  void Put(PodFactsPtr info);
  void Remove(const std::string& uid);
  static void Unindex(std::unordered_map<std::string, PodsBySeq>& index, const std::string& key, uint64_t seq);

  const ResourceType& pods_;
  uint64_t next_seq_ = 1;
  std::unordered_map<std::string, PodFactsPtr> by_uid_;
  std::unordered_map<std::string, PodsBySeq> by_owner_;
  std::unordered_map<std::string, PodsBySeq> by_node_;
  PodFactsPtr previous_, current_;
};

}  // namespace kubesched::store::controllers
