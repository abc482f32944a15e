#pragma once
// The storage capacity score (upstream's volumebinding scorer.go): per storage class, the share
// of the capacity the pod's volumes would use, mapped through the configured shape; the node's
// score is the rounded mean over the classes.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "plugins/volume_binding/args.h"

namespace kubesched::plugins::volume_binding {

//! Requested and available bytes of one storage class on a node.
struct StorageResource {
  int64_t requested = 0;
  int64_t capacity = 0;
};

//! By storage class name (ordered, so the sum is computed in a fixed order).
using ClassResourceMap = std::map<std::string, StorageResource, std::less<>>;

//! Scores a node's class resources in [0, 100].
using VolumeCapacityScorer = std::function<int64_t(const ClassResourceMap&)>;

//! upstream's buildScorerFunction: each class scores shape(requested * 100 / capacity), or
//! shape(100) when the class has no capacity or the request exceeds it; all classes weigh the same;
//! no class scores 0. Shape scores (0-10) are scaled to node scores (0-100).
VolumeCapacityScorer BuildScorerFunction(const std::vector<UtilizationShapePoint>& shape);

}  // namespace kubesched::plugins::volume_binding
