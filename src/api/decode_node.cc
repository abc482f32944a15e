// Nodes: taints, capacity and allocatable, images, conditions, declared features.

#include <algorithm>
#include <limits>
#include <set>

#include "api/decode_internal.h"
#include "api/manifest.h"

namespace kubesched::api::decode {

void ReadNode(const MapView& obj, Node& node) {
  const MapView spec = obj.Map("spec");
  node.spec.unschedulable = spec.Bool("unschedulable");
  std::set<std::pair<std::string, TaintEffect>> seen;
  spec.ForEachMap("taints", [&](const MapView& t, size_t) {
    Taint taint;
    taint.key = t.RequiredString("key");
    taint.value = t.String("value");
    if (!t.Has("effect")) Fail(t.At("effect"), t.PathOf("effect"), "required field is missing", kFieldValueRequired);
    taint.effect = t.Enum_("effect", kTaintEffects);
    if (!seen.emplace(taint.key, taint.effect).second) {
      Fail(t.node(), t.path(),
           "duplicate taint " + GoQuote(taint.key) + " with effect " + std::string(ToString(taint.effect)) +
               "; taints must be unique by key and effect",
           kFieldValueDuplicate);
    }
    node.spec.taints.push_back(std::move(taint));
  });
  const MapView status = obj.Map("status");
  node.status.capacity = ReadResourceList(status, "capacity");
  // The kubelet always reports a pod capacity (its maxPods); without one no pod would fit.
  if (!node.status.capacity.contains(kResourcePods)) {
    node.status.capacity.emplace(std::string(kResourcePods), Quantity::FromInt(kDefaultMaxPods));
  }
  if (status.Has("allocatable")) {
    node.status.allocatable = ReadResourceList(status, "allocatable");
    if (!node.status.allocatable.contains(kResourcePods)) {
      node.status.allocatable.emplace(std::string(kResourcePods), node.status.capacity.at(std::string(kResourcePods)));
    }
  } else {
    node.status.allocatable = node.status.capacity;
  }
  status.ForEachMap("images", [&](const MapView& i, size_t) {
    ContainerImage image;
    image.names = i.StringList("names");
    image.size_bytes = i.OptInt("sizeBytes", 0, std::numeric_limits<int64_t>::max()).value_or(0);
    node.status.images.push_back(std::move(image));
  });
  status.ForEachMap("conditions", [&](const MapView& c, size_t) {
    node.status.conditions.push_back(NodeCondition{.type = c.RequiredString("type"), .status = c.String("status")});
  });
  // status.declaredFeatures (NodeDeclaredFeatures): a set for the scheduler, kept sorted so that
  // checking a pod's requirements against it is a merge.
  node.status.declared_features = status.StringList("declaredFeatures");
  std::ranges::sort(node.status.declared_features);
  const auto repeats = std::ranges::unique(node.status.declared_features);
  node.status.declared_features.erase(repeats.begin(), repeats.end());
}

}  // namespace kubesched::api::decode
