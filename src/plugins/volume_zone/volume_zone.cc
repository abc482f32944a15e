#include "plugins/volume_zone/volume_zone.h"

#include <algorithm>
#include <iterator>
#include <variant>

#include "util/go_quote.h"

namespace kubesched::plugins::volume_zone {
namespace {

using framework::QueueingHint;
using framework::Status;

const framework::StateKey kPreFilterStateKey{"PreFilterVolumeZone"};

//! kubelet's LabelMultiZoneDelimiter: a volume label may list several zones.
constexpr std::string_view kMultiZoneDelimiter = "__";
//! The claim's class as written before spec.storageClassName existed; it still wins over the
//! field (upstream's GetPersistentVolumeClaimClass).
constexpr std::string_view kAnnotationBetaStorageClass = "volume.beta.kubernetes.io/storage-class";

struct PreFilterState final : framework::StateData {
  // Never changed after PreFilter (no PreFilterExtensions), so clones share it.
  std::shared_ptr<const std::vector<PVTopology>> topologies;
  std::unique_ptr<framework::StateData> Clone() const override { return std::make_unique<PreFilterState>(*this); }
};

std::string_view TranslateToGALabel(std::string_view label) {
  if (label == api::kLabelFailureDomainRegion) return api::kLabelTopologyRegion;
  if (label == api::kLabelFailureDomainZone) return api::kLabelTopologyZone;
  return label;
}

std::string_view ClaimClass(const api::PersistentVolumeClaim& claim) {
  if (const std::string* beta = claim.metadata.annotations.Find(kAnnotationBetaStorageClass)) return *beta;
  return claim.ClassName();
}

std::string_view TrimSpace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  const size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(kSpace) - begin + 1);
}

// Whether one of the pod's persistentVolumeClaim volumes uses `claim` (upstream reads no ephemeral
// volume: their claims are provisioned for the pod, VolumeBinding's concern).
bool RequestsClaim(const api::Pod& pod, const api::PersistentVolumeClaim& claim) {
  if (pod.metadata.namespace_ != claim.metadata.namespace_) return false;
  return std::ranges::any_of(pod.spec.volumes, [&](const api::Volume& v) {
    return !v.claim_name.empty() && v.claim_name == claim.metadata.name;
  });
}

template <typename T>
const std::shared_ptr<const T>* As(const api::StorageObject* object) {
  if (object == nullptr) return nullptr;
  const auto* typed = std::get_if<std::shared_ptr<const T>>(object);
  return typed != nullptr && *typed != nullptr ? typed : nullptr;
}

}  // namespace

std::optional<std::vector<std::string>> LabelZonesToSet(std::string_view value) {
  std::vector<std::string> zones;
  size_t start = 0;
  while (true) {
    const size_t end = value.find(kMultiZoneDelimiter, start);
    std::string_view zone = TrimSpace(value.substr(start, end == std::string_view::npos ? end : end - start));
    if (zone.empty()) return std::nullopt;
    zones.emplace_back(zone);
    if (end == std::string_view::npos) break;
    start = end + kMultiZoneDelimiter.size();
  }
  std::ranges::sort(zones);
  zones.erase(std::unique(zones.begin(), zones.end()), zones.end());
  return zones;
}

std::vector<PVTopology> GetPVTopologies(const api::PersistentVolume& pv) {
  std::vector<PVTopology> topologies;
  for (std::string_view key : kTopologyLabels) {
    const std::string* value = pv.metadata.labels.Find(key);
    if (value == nullptr) continue;
    auto zones = LabelZonesToSet(*value);
    if (!zones) continue;  // upstream logs and ignores a label it cannot parse
    topologies.push_back({pv.metadata.name, key, std::move(*zones)});
  }
  return topologies;
}

std::expected<std::vector<PVTopology>, Status> VolumeZone::PodVolumeTopologies(const api::Pod& pod) const {
  std::vector<PVTopology> topologies;
  const framework::StorageLister& storage = handle_.Storage();
  for (const auto& v : pod.spec.volumes) {
    if (v.claim_name.empty()) continue;
    auto claim = storage.Claim(pod.metadata.namespace_, v.claim_name);
    if (claim == nullptr) {
      return std::unexpected(
          Status::UnschedulableAndUnresolvable("persistentvolumeclaim " + util::GoQuote(v.claim_name) + " not found"));
    }
    if (claim->volume_name.empty()) {
      const std::string_view class_name = ClaimClass(*claim);
      if (class_name.empty()) {
        return std::unexpected(
            Status::UnschedulableAndUnresolvable("PersistentVolumeClaim had no pv name and storageClass name"));
      }
      auto storage_class = storage.Class(class_name);
      if (storage_class == nullptr) {
        return std::unexpected(Status::UnschedulableAndUnresolvable("storageclass.storage.k8s.io " +
                                                                    util::GoQuote(class_name) + " not found"));
      }
      // The volume is provisioned or chosen for the node the pod goes to (VolumeBinding's job).
      if (storage_class->volume_binding_mode == api::VolumeBindingMode::kWaitForFirstConsumer) continue;
      return std::unexpected(Status::UnschedulableAndUnresolvable("PersistentVolume had no name"));
    }
    auto pv = storage.Volume(claim->volume_name);
    if (pv == nullptr) {
      return std::unexpected(
          Status::UnschedulableAndUnresolvable("persistentvolume " + util::GoQuote(claim->volume_name) + " not found"));
    }
    auto pv_topologies = GetPVTopologies(*pv);
    std::ranges::move(pv_topologies, std::back_inserter(topologies));
  }
  return topologies;
}

std::pair<framework::PreFilterResult, Status> VolumeZone::PreFilter(
    framework::CycleState& state, const framework::PodInfo& pod,
    std::span<const framework::NodeInfo* const> /*nodes*/) {
  auto topologies = PodVolumeTopologies(pod.pod());
  if (!topologies) return {{}, std::move(topologies.error())};
  if (topologies->empty()) return {{}, Status::Skip()};
  auto s = std::make_unique<PreFilterState>();
  s->topologies = std::make_shared<const std::vector<PVTopology>>(std::move(*topologies));
  state.Write(kPreFilterStateKey, std::move(s));
  return {{}, Status::Success()};
}

Status VolumeZone::Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                          const framework::NodeInfo& node_info) {
  // A pod without volumes fits anywhere (upstream's fast path, before the state is read).
  if (pod.pod().spec.volumes.empty()) return Status::Success();
  std::vector<PVTopology> computed;
  const std::vector<PVTopology>* topologies = nullptr;
  if (const auto* s = state.Get<PreFilterState>(kPreFilterStateKey)) {
    topologies = s->topologies.get();
  } else {
    // Upstream falls back to computing the topologies here when PreFilter did not run.
    auto r = PodVolumeTopologies(pod.pod());
    if (!r) return std::move(r.error());
    computed = std::move(*r);
    topologies = &computed;
  }
  const api::Node* node = node_info.node();
  if (node == nullptr) return Status::Error("node not found");
  const api::Labels& labels = node->metadata.labels;
  // A node without any topology label is in a single-zone cluster: every volume is reachable.
  if (std::ranges::none_of(kTopologyLabels, [&](std::string_view key) { return labels.Has(key); })) {
    return Status::Success();
  }
  for (const PVTopology& t : *topologies) {
    const std::string* value = labels.Find(t.key);
    // A volume's beta label matches the node's GA label.
    if (value == nullptr) value = labels.Find(TranslateToGALabel(t.key));
    if (value == nullptr || !std::ranges::binary_search(t.values, *value)) {
      static const framework::StaticReasons kReasons{kErrReasonConflict};
      return Status(framework::Code::kUnschedulableAndUnresolvable, kReasons);
    }
  }
  return Status::Success();
}

QueueingHint IsSchedulableAfterPersistentVolumeClaimChange(const api::Pod& pod, const framework::EventObjects& event) {
  const auto* claim = As<api::PersistentVolumeClaim>(event.new_storage);
  if (claim == nullptr) return QueueingHint::kQueue;  // not a claim: be safe
  // A claim the pod uses was created, or bound to its volume.
  return RequestsClaim(pod, **claim) ? QueueingHint::kQueue : QueueingHint::kSkip;
}

QueueingHint IsSchedulableAfterStorageClassAdded(const api::Pod& /*pod*/, const framework::EventObjects& event) {
  const auto* storage_class = As<api::StorageClass>(event.new_storage);
  if (storage_class == nullptr) return QueueingHint::kQueue;
  // Only a WaitForFirstConsumer class lets PreFilter pass over an unbound claim of that class.
  return (*storage_class)->volume_binding_mode == api::VolumeBindingMode::kWaitForFirstConsumer ? QueueingHint::kQueue
                                                                                                : QueueingHint::kSkip;
}

QueueingHint IsSchedulableAfterPersistentVolumeChange(const api::Pod& /*pod*/, const framework::EventObjects& event) {
  const auto* modified = As<api::PersistentVolume>(event.new_storage);
  if (modified == nullptr) return QueueingHint::kQueue;
  if (event.old_storage == nullptr) return QueueingHint::kQueue;  // a new volume
  const auto* original = As<api::PersistentVolume>(event.old_storage);
  if (original == nullptr) return QueueingHint::kQueue;
  // spec.nodeAffinity is immutable; only the topology labels can change the verdict.
  return GetPVTopologies(**original) != GetPVTopologies(**modified) ? QueueingHint::kQueue : QueueingHint::kSkip;
}

std::vector<framework::ClusterEventWithHint> VolumeZone::EventsToRegister() const {
  using framework::EventResource;
  namespace action = framework::action;
  return {
      // volumeBindingMode is immutable: class updates never matter.
      {{EventResource::kStorageClass, action::kAdd, "StorageClassAdd"}, IsSchedulableAfterStorageClassAdded},
      // With queueing hints, upstream registers no UpdateNodeTaint (it only worked around preCheck
      // dropping NodeAdd).
      {{EventResource::kNode, action::kAdd | action::kUpdateNodeLabel, "NodeAdd|UpdateNodeLabel"}, nullptr},
      {{EventResource::kPersistentVolumeClaim, action::kAdd | action::kUpdate, "PersistentVolumeClaimAdd|Update"},
       IsSchedulableAfterPersistentVolumeClaimChange},
      {{EventResource::kPersistentVolume, action::kAdd | action::kUpdate, "PersistentVolumeAdd|Update"},
       IsSchedulableAfterPersistentVolumeChange},
  };
}

std::expected<std::unique_ptr<framework::Plugin>, std::string> New(const framework::ArgsView& /*args*/,
                                                                   framework::Handle& handle) {
  return std::make_unique<VolumeZone>(handle);
}

}  // namespace kubesched::plugins::volume_zone
