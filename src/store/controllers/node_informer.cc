#include "store/controllers/node_informer.h"

#include "store/controllers/object_util.h"

namespace kubesched::store::controllers {

namespace json = api::json;

NodeFacts ParseNodeFacts(const ObjectPtr& node, const json::Value* parsed) {
  json::Document scratch;
  if (parsed == nullptr) {
    scratch = Parse(*node);
    parsed = &scratch;
  }
  const json::Value& doc = *parsed;
  NodeFacts info;
  info.object = node;
  if (const json::Value* addresses = At(doc, {"status", "addresses"}); addresses && addresses->IsArray()) {
    for (const auto& a : addresses->GetArray()) {
      if (json::GetString(a, "type") == "InternalIP") {
        info.internal_ip = std::string(json::GetString(a, "address"));
        break;
      }
    }
  }
  if (const json::Value* taints = At(doc, {"spec", "taints"}); taints && taints->IsArray()) {
    for (const auto& t : taints->GetArray()) {
      if (auto effect = api::ParseTaintEffect(json::GetString(t, "effect"))) {
        info.taints.push_back(
            api::Taint{std::string(json::GetString(t, "key")), std::string(json::GetString(t, "value")), *effect});
      }
    }
  }
  return info;
}

void NodeInformer::Fill(const std::vector<ObjectPtr>& nodes) {
  for (const ObjectPtr& n : nodes) by_name_[n->name] = std::make_shared<NodeFacts>(ParseNodeFacts(n));
}

void NodeInformer::Apply(const WatchEvent& event) {
  if (!event.object || event.object->type != &nodes_) return;
  if (event.type == EventType::kDeleted) {
    by_name_.erase(event.object->name);
    return;
  }
  NodeFactsPtr& slot = by_name_[event.object->name];
  if (slot && slot->object->resource_version >= event.object->resource_version) return;
  slot = std::make_shared<NodeFacts>(ParseNodeFacts(event.object, event.parsed.get()));
}

NodeFactsPtr NodeInformer::Get(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

}  // namespace kubesched::store::controllers
