#pragma once
// The controllers' shared view of the nodes: each node version parsed once into what the node
// lifecycle (its InternalIP) and the DaemonSet controller (labels, taints) read, by name.

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/types.h"
#include "store/selectors.h"
#include "store/store.h"

namespace kubesched::store::controllers {

struct NodeFacts {
  ObjectPtr object;
  std::string internal_ip;         //!< status.addresses' InternalIP, or empty
  std::vector<api::Taint> taints;  //!< those with an effect the API defines

  const std::string& name() const { return object->name; }
  const LabelPairs& labels() const { return object->labels(); }
};
using NodeFactsPtr = std::shared_ptr<const NodeFacts>;

//! `parsed`: the node's JSON as a DOM when the caller has it (WatchEvent::parsed); null to parse.
NodeFacts ParseNodeFacts(const ObjectPtr& node, const api::json::Value* parsed = nullptr);

class NodeInformer {
 public:
  explicit NodeInformer(const ResourceType& nodes) : nodes_(nodes) {}

  void Fill(const std::vector<ObjectPtr>& nodes);
  //! Applies a store event; other kinds are ignored.
  void Apply(const WatchEvent& event);
  //! The node, or null.
  NodeFactsPtr Get(const std::string& name) const;
  const std::unordered_map<std::string, NodeFactsPtr>& All() const { return by_name_; }

 private:
  const ResourceType& nodes_;
  std::unordered_map<std::string, NodeFactsPtr> by_name_;
};

}  // namespace kubesched::store::controllers
