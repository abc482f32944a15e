#include "plugins/volume_binding/binder.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "api/names.h"
#include "plugins/node_affinity/node_selector.h"

namespace kubesched::plugins::volume_binding {
namespace {

// The zone and region labels; the beta ones are what older volumes carry.
constexpr std::string_view kLabelTopologyZone = "topology.kubernetes.io/zone";
constexpr std::string_view kLabelTopologyRegion = "topology.kubernetes.io/region";
// csi-translation-lib's labelMultiZoneDelimiter: a volume label listing several zones.
constexpr std::string_view kMultiZoneDelimiter = "__";

std::string ClaimKey(const api::PersistentVolumeClaim& claim) { return claim.Key(); }

std::vector<std::string> Split(std::string_view s, std::string_view sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.emplace_back(s.substr(start));
      return out;
    }
    out.emplace_back(s.substr(start, pos - start));
    start = pos + sep.size();
  }
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Go's %v of a sets.String: map[a:{} b:{}].
std::string GoStringSet(const std::set<std::string>& set) {
  std::string out = "map[";
  bool first = true;
  for (const auto& s : set) {
    if (!first) out += ' ';
    first = false;
    out += s + ":{}";
  }
  return out + "]";
}

// --- csi-translation-lib's topology translation ---------------------------------------------

bool TopologyKeyExists(std::string_view key, const std::optional<api::NodeSelector>& affinity) {
  if (!affinity) return false;
  for (const auto& term : affinity->terms) {
    for (const auto& r : term.match_expressions) {
      if (r.key == key) return true;
    }
  }
  return false;
}

// getTopologyLabel: the zone and region labels the volume uses, GA unless it uses beta ones.
std::pair<std::string_view, std::string_view> TopologyLabels(const api::PersistentVolume& pv) {
  if (TopologyKeyExists(kLabelTopologyZone, pv.node_affinity)) return {kLabelTopologyZone, kLabelTopologyRegion};
  if (TopologyKeyExists(api::kLabelFailureDomainZone, pv.node_affinity)) {
    return {api::kLabelFailureDomainZone, api::kLabelFailureDomainRegion};
  }
  if (pv.metadata.labels.Has(kLabelTopologyZone)) return {kLabelTopologyZone, kLabelTopologyRegion};
  if (pv.metadata.labels.Has(api::kLabelFailureDomainZone)) {
    return {api::kLabelFailureDomainZone, api::kLabelFailureDomainRegion};
  }
  return {kLabelTopologyZone, kLabelTopologyRegion};
}

// getTopologyValues: the values of `key` across all terms, unique and sorted.
std::set<std::string> TopologyValues(const std::optional<api::NodeSelector>& affinity, std::string_view key) {
  std::set<std::string> values;
  if (!affinity) return values;
  for (const auto& term : affinity->terms) {
    for (const auto& r : term.match_expressions) {
      if (r.key == key) values.insert(r.values.begin(), r.values.end());
    }
  }
  return values;
}

void ReplaceTopology(std::optional<api::NodeSelector>& affinity, std::string_view old_key, std::string_view new_key) {
  if (!affinity) return;
  for (auto& term : affinity->terms) {
    for (auto& r : term.match_expressions) {
      if (r.key == old_key) r.key = std::string(new_key);
    }
  }
}

// addTopology: `key` In zones appended to every term (a term created when there is none).
void AddTopology(std::optional<api::NodeSelector>& affinity, std::string_view key,
                 const std::vector<std::string>& zones) {
  std::set<std::string> filtered;
  for (const auto& z : zones) {
    std::string_view t = Trim(z);
    if (!t.empty()) filtered.insert(std::string(t));
  }
  if (filtered.empty()) return;  // "there are no valid zones to add to pv", which the caller ignores
  if (!affinity) affinity.emplace();
  if (affinity->terms.empty()) affinity->terms.emplace_back();
  api::SelectorRequirement req{std::string(key), api::SelectorOperator::kIn,
                               std::vector<std::string>(filtered.begin(), filtered.end())};
  for (auto& term : affinity->terms) term.match_expressions.push_back(req);
}

// translateTopologyFromInTreeToCSI.
std::optional<api::NodeSelector> TranslateTopology(const api::PersistentVolume& pv, std::string_view csi_key) {
  std::optional<api::NodeSelector> affinity = pv.node_affinity;
  auto [zone_label, region_label] = TopologyLabels(pv);
  if (!TopologyValues(affinity, zone_label).empty()) {
    ReplaceTopology(affinity, zone_label, csi_key);
  } else if (const std::string* label = pv.metadata.labels.Find(zone_label)) {
    AddTopology(affinity, csi_key, Split(*label, kMultiZoneDelimiter));
  }
  // Nodes of newer versions carry only the GA region label.
  if (region_label == api::kLabelFailureDomainRegion && !TopologyValues(affinity, region_label).empty()) {
    ReplaceTopology(affinity, region_label, kLabelTopologyRegion);
  }
  return affinity;
}

// getRegionFromZones of the GCE PD translation: every zone {locale}-{region}-{zone}, one region.
std::optional<std::string> GCERegionError(const std::vector<std::string>& zones) {
  std::set<std::string> regions;
  for (const auto& zone : zones) {
    auto parts = Split(zone, "-");
    if (parts.size() != 3) {
      return "zone in unexpected format, expected: {locale}-{region}-{zone}, got: " + zone;
    }
    regions.insert(parts[0] + "-" + parts[1]);
  }
  if (regions.size() != 1) return "multiple or no regions gotten from zones, got: " + GoStringSet(regions);
  return std::nullopt;
}

// KubernetesVolumeIDToEBSVolumeID: "aws://<zone>/<vol-id>", "aws:///<vol-id>" or a bare id.
std::optional<std::string> EBSVolumeIDError(std::string_view id) {
  constexpr std::string_view kScheme = "aws://";
  if (!id.starts_with(kScheme)) return std::nullopt;
  std::string_view rest = id.substr(kScheme.size());
  rest = rest.substr(0, rest.find_first_of("?#"));
  size_t slash = rest.find('/');
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (!path.starts_with("vol-") || path.find('/') != std::string_view::npos) {
    return fmt::format("Invalid format for AWS volume ({})", id);
  }
  return std::nullopt;
}

// --- FindMatchingVolume's node-independent checks --------------------------------------------

// Whether the volume may be bound to the claim on some node; sets *bound_to_claim for a volume
// pre-bound to it (which skips the checks of unbound volumes, as upstream).
bool IsCandidate(const api::PersistentVolumeClaim& claim, std::string_view claim_class, int64_t requested,
                 const api::PersistentVolume& pv, bool* bound_to_claim) {
  if (pv.claim_ref && !IsVolumeBoundToClaim(pv, claim)) return false;
  if (pv.capacity.Value() < requested) return false;
  if (claim.volume_mode != pv.volume_mode) return false;
  if (pv.metadata.deletion_timestamp_ns) return false;
  *bound_to_claim = IsVolumeBoundToClaim(pv, claim);
  if (*bound_to_claim) return true;
  // Volumes not Available yet are left alone: binding them would likely fail on API conflicts.
  if (pv.phase != api::PersistentVolumePhase::kAvailable) return false;
  if (claim.selector && !claim.selector->Matches(pv.metadata.labels)) return false;
  if (VolumeClass(pv) != claim_class) return false;
  return CheckAccessModes(claim, pv);
}

// FindMatchingVolume on one node: a volume pre-bound to the claim if the node allows it (else
// none), otherwise the smallest candidate the node allows that no earlier claim took.
const VolumeCandidate* FindMatchingVolume(const UnboundClaim& claim, const api::Labels& node_labels,
                                          const std::vector<const api::PersistentVolume*>& chosen) {
  const VolumeCandidate* smallest = nullptr;
  for (const auto& c : claim.candidates) {
    if (std::find(chosen.begin(), chosen.end(), c.pv.get()) != chosen.end()) continue;
    const bool affinity_ok = c.affinity.Matches(node_labels);
    if (c.bound_to_claim) return affinity_ok ? &c : nullptr;
    if (!affinity_ok) continue;
    if (smallest == nullptr || smallest->capacity > c.capacity) smallest = &c;
  }
  return smallest;
}

// capacitySufficient / volumeLimit: maximumVolumeSize when given (more precise), else capacity.
const api::Quantity* VolumeLimit(const api::CSIStorageCapacity& capacity) {
  if (capacity.maximum_volume_size) return &*capacity.maximum_volume_size;
  if (capacity.capacity) return &*capacity.capacity;
  return nullptr;
}

// nodeHasAccess: only capacities with a nodeTopology selector are available, to matching nodes.
bool NodeHasAccess(const api::Labels& node_labels, const api::CSIStorageCapacity& capacity) {
  return capacity.node_topology && capacity.node_topology->Matches(node_labels);
}

struct ProvisionCheck {
  bool satisfied = true;
  bool sufficient_storage = true;
  std::vector<DynamicProvision> provisions;
};

// checkVolumeProvisions: every claim can be provisioned for the node. Returns at the first claim
// that cannot (its reason only, and no provisions).
std::expected<ProvisionCheck, std::string> CheckVolumeProvisions(const std::vector<const UnboundClaim*>& claims,
                                                                 const api::Labels& node_labels) {
  ProvisionCheck out;
  for (const UnboundClaim* c : claims) {
    if (c->class_name.empty()) return std::unexpected(fmt::format("no class for claim \"{}\"", ClaimKey(*c->claim)));
    if (!c->provisioning) return std::unexpected(fmt::format("failed to find storage class \"{}\"", c->class_name));
    const ProvisioningClass& p = *c->provisioning;
    if (!p.can_provision) return ProvisionCheck{false, true, {}};
    if (!MatchTopologySelectorTerms(p.storage_class->allowed_topologies, node_labels)) {
      return ProvisionCheck{false, true, {}};
    }
    CapacityPtr capacity;
    if (c->needs_capacity) {
      for (const auto& cap : c->sufficient_capacities) {
        if (NodeHasAccess(node_labels, *cap)) {
          capacity = cap;
          break;
        }
      }
      if (!capacity) return ProvisionCheck{true, false, {}};
    }
    out.provisions.push_back({c->claim, std::move(capacity)});
  }
  return out;
}

// The translated node affinity of a volume on a node, or its own.
struct NodeAffinityOnNode {
  const VolumeNodeAffinity* affinity = nullptr;
  std::string error;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Helpers.

std::string_view ClaimClass(const api::PersistentVolumeClaim& claim) {
  if (const std::string* c = claim.metadata.annotations.Find(kAnnotationBetaStorageClass)) return *c;
  return claim.ClassName();
}

std::string_view VolumeClass(const api::PersistentVolume& volume) {
  if (const std::string* c = volume.metadata.annotations.Find(kAnnotationBetaStorageClass)) return *c;
  return volume.storage_class_name;
}

bool IsVolumeBoundToClaim(const api::PersistentVolume& volume, const api::PersistentVolumeClaim& claim) {
  if (!volume.claim_ref) return false;
  const api::ObjectReference& ref = *volume.claim_ref;
  if (ref.name != claim.metadata.name || ref.namespace_ != claim.metadata.namespace_) return false;
  return ref.uid.empty() || ref.uid == claim.metadata.uid;
}

bool IsClaimFullyBound(const api::PersistentVolumeClaim& claim) {
  if (claim.volume_name.empty()) return false;
  return claim.metadata.annotations.Has(api::kAnnotationBindCompleted) ||
         claim.phase == api::PersistentVolumeClaimPhase::kBound;
}

bool CheckAccessModes(const api::PersistentVolumeClaim& claim, const api::PersistentVolume& volume) {
  return std::all_of(claim.access_modes.begin(), claim.access_modes.end(),
                     [&](api::PersistentVolumeAccessMode m) { return volume.HasAccessMode(m); });
}

std::optional<std::string> VolumeIsForPod(const api::Pod& pod, const api::PersistentVolumeClaim& claim) {
  bool controlled = false;
  if (pod.metadata.namespace_ == claim.metadata.namespace_) {
    for (const auto& ref : claim.metadata.owner_references) {
      if (ref.controller) {
        controlled = ref.uid == pod.metadata.uid;
        break;
      }
    }
  }
  if (controlled) return std::nullopt;
  return fmt::format("PVC {}/{} was not created for pod {}/{} (pod is not owner)", claim.metadata.namespace_,
                     claim.metadata.name, pod.metadata.namespace_, pod.metadata.name);
}

BoundVolume GetBindVolumeToClaim(const api::PersistentVolume& volume, const api::PersistentVolumeClaim& claim) {
  const bool set_bound_by_controller = !IsVolumeBoundToClaim(volume, claim);
  auto clone = std::make_shared<api::PersistentVolume>(volume);
  clone->json = nullptr;  // the copy differs from the JSON it was decoded from
  bool dirty = false;
  if (!volume.claim_ref || volume.claim_ref->name != claim.metadata.name ||
      volume.claim_ref->namespace_ != claim.metadata.namespace_ || volume.claim_ref->uid != claim.metadata.uid) {
    clone->claim_ref = api::ObjectReference{claim.metadata.namespace_, claim.metadata.name, claim.metadata.uid};
    dirty = true;
  }
  if (set_bound_by_controller && !clone->metadata.annotations.Has(api::kAnnotationBoundByController)) {
    clone->metadata.annotations.Set(std::string(api::kAnnotationBoundByController), "yes");
    dirty = true;
  }
  return {std::move(clone), dirty};
}

bool MatchTopologySelectorTerms(const std::vector<std::vector<api::TopologySelectorRequirement>>& terms,
                                const api::Labels& labels) {
  if (terms.empty()) return true;
  for (const auto& term : terms) {
    if (term.empty()) continue;  // an empty term selects nothing
    bool matches = true;
    for (const auto& r : term) {
      // TopologySelectorRequirementsAsSelector: a requirement without values (or an invalid key or
      // value) does not parse, and the term is skipped.
      if (r.values.empty() || !api::IsValidQualifiedName(r.key) ||
          !std::all_of(r.values.begin(), r.values.end(),
                       [](const std::string& v) { return api::IsValidLabelValueText(v); })) {
        matches = false;
        break;
      }
      const std::string* have = labels.Find(r.key);
      if (have == nullptr || std::find(r.values.begin(), r.values.end(), *have) == r.values.end()) {
        matches = false;
        break;
      }
    }
    if (matches) return true;
  }
  return false;
}

VolumeNodeAffinity::VolumeNodeAffinity(const std::optional<api::NodeSelector>& affinity) {
  if (!affinity) return;
  required_ = true;
  for (const auto& term : affinity->terms) {
    if (term.match_expressions.empty() && term.match_fields.empty()) continue;
    if (node_affinity::IsValidNodeSelectorTerm(term)) terms_.push_back(&term);
  }
}

bool VolumeNodeAffinity::Matches(const api::Labels& node_labels) const {
  if (!required_) return true;
  return std::any_of(terms_.begin(), terms_.end(), [&](const api::NodeSelectorTerm* t) {
    return std::all_of(t->match_expressions.begin(), t->match_expressions.end(),
                       [&](const api::SelectorRequirement& r) { return r.Matches(node_labels); });
  });
}

CSIMigration TranslateInTreeVolume(const api::PersistentVolume& volume) {
  CSIMigration out;
  if (!volume.in_tree) return out;
  const api::InlineDisk& disk = *volume.in_tree;
  std::string_view topology_key;
  switch (disk.type) {
    case api::InlineDiskType::kGCEPersistentDisk: {
      out.plugin = "kubernetes.io/gce-pd";
      topology_key = "topology.gke.io/zone";
      // The volume handle names the region of a multi-zone (regional) disk.
      const std::string* zones = volume.metadata.labels.Find(api::kLabelFailureDomainZone);
      if (zones == nullptr || zones->empty()) zones = volume.metadata.labels.Find(kLabelTopologyZone);
      if (zones != nullptr) {
        auto list = Split(*zones, kMultiZoneDelimiter);
        if (list.size() > 1) {
          if (auto err = GCERegionError(list)) {
            out.error = "could not translate pv: failed to get region from zones: " + *err;
          }
        }
      }
      break;
    }
    case api::InlineDiskType::kAWSElasticBlockStore:
      out.plugin = "kubernetes.io/aws-ebs";
      topology_key = "topology.ebs.csi.aws.com/zone";
      if (auto err = EBSVolumeIDError(disk.id)) {
        out.error = "could not translate pv: failed to translate Kubernetes ID to EBS Volume ID " + *err;
      }
      break;
    case api::InlineDiskType::kAzureDisk:
      out.plugin = "kubernetes.io/azure-disk";  // its translation keeps the node affinity
      break;
    case api::InlineDiskType::kCinder:
      out.plugin = "kubernetes.io/cinder";
      topology_key = "topology.cinder.csi.openstack.org/zone";
      break;
    case api::InlineDiskType::kISCSI:
    case api::InlineDiskType::kRBD:
      return out;  // never migrated: used as they are
  }
  out.affinity = topology_key.empty() ? volume.node_affinity : TranslateTopology(volume, topology_key);
  return out;
}

bool IsPluginMigratedOnNode(std::string_view plugin, const api::CSINode* csi_node) {
  if (csi_node == nullptr) return false;
  const std::string* migrated = csi_node->metadata.annotations.Find(kAnnotationMigratedPlugins);
  if (migrated == nullptr || migrated->empty()) return false;
  for (const auto& p : Split(*migrated, ",")) {
    if (p == plugin) return true;
  }
  return false;
}

std::vector<std::string> ReasonMessages(ConflictReasons reasons) {
  std::vector<std::string> out;
  if (reasons & kNodeConflict) out.emplace_back(kErrReasonNodeConflict);
  if (reasons & kBindConflict) out.emplace_back(kErrReasonBindConflict);
  if (reasons & kNotEnoughSpace) out.emplace_back(kErrReasonNotEnoughSpace);
  if (reasons & kPVNotExist) out.emplace_back(kErrReasonPVNotExist);
  return out;
}

// ---------------------------------------------------------------------------------------------
// VolumeBinder.

std::expected<PodVolumeClaims, std::string> VolumeBinder::GetPodVolumeClaims(const api::Pod& pod) const {
  framework::StorageLister& storage = handle_.Storage();
  PodVolumeClaims out;
  // Per class: its volumes (assumed bindings included) and what provisioning it involves.
  std::map<std::string, std::vector<VolumePtr>, std::less<>> volumes_by_class;
  std::map<std::string, std::shared_ptr<const ProvisioningClass>, std::less<>> provisioning_by_class;

  for (const auto& volume : pod.spec.volumes) {
    if (volume.claim_name.empty() && !volume.ephemeral) continue;
    const std::string name = api::ClaimNameOf(pod, volume);
    ClaimPtr claim = storage.Claim(pod.metadata.namespace_, name);
    if (!claim)
      return std::unexpected(fmt::format("error getting PVC \"{}/{}\": not found", pod.metadata.namespace_, name));
    if (volume.ephemeral) {
      if (auto err = VolumeIsForPod(pod, *claim)) return std::unexpected(*err);
    }
    if (IsClaimFullyBound(*claim)) {
      BoundClaim b;
      b.pv = storage.Volume(claim->volume_name);
      if (b.pv) {
        b.affinity = VolumeNodeAffinity(b.pv->node_affinity);
        auto migration = std::make_shared<CSIMigration>(TranslateInTreeVolume(*b.pv));
        if (!migration->plugin.empty()) {
          b.migrated_affinity = VolumeNodeAffinity(migration->affinity);  // points into *migration
          b.migration = std::move(migration);
        }
      }
      b.claim = std::move(claim);
      out.bound_claims.push_back(std::move(b));
      continue;
    }
    // IsDelayBindingMode: a class that exists and waits for the first consumer.
    const std::string class_name(ClaimClass(*claim));
    std::shared_ptr<const api::StorageClass> sc = class_name.empty() ? nullptr : storage.Class(class_name);
    const bool delay = sc && sc->volume_binding_mode == api::VolumeBindingMode::kWaitForFirstConsumer;
    // A claim naming its volume already (pre-bound) is the PV controller's to bind.
    if (!delay || !claim->volume_name.empty()) {
      out.unbound_claims_immediate.push_back(std::move(claim));
      continue;
    }
    UnboundClaim u;
    u.class_name = class_name;
    if (const std::string* node = claim->metadata.annotations.Find(api::kAnnotationSelectedNode))
      u.selected_node = *node;

    auto volumes_it = volumes_by_class.find(class_name);
    if (volumes_it == volumes_by_class.end()) {
      volumes_it = volumes_by_class.emplace(class_name, storage.VolumesOfClass(class_name)).first;
    }
    const int64_t requested = claim->request.Value();
    for (const auto& pv : volumes_it->second) {
      VolumeCandidate c;
      if (!IsCandidate(*claim, class_name, requested, *pv, &c.bound_to_claim)) continue;
      c.pv = pv;
      c.affinity = VolumeNodeAffinity(pv->node_affinity);
      c.capacity = pv->capacity.Value();
      u.candidates.push_back(std::move(c));
    }

    auto prov_it = provisioning_by_class.find(class_name);
    if (prov_it == provisioning_by_class.end()) {
      auto p = std::make_shared<ProvisioningClass>();
      p->storage_class = sc;
      p->can_provision = !sc->provisioner.empty() && sc->provisioner != api::kNoProvisioner;
      if (p->can_provision) {
        // Capacity is checked only for CSI drivers that opt into it.
        auto driver = storage.Driver(sc->provisioner);
        p->capacity_tracked = driver && driver->storage_capacity;
        if (p->capacity_tracked) p->capacities = storage.CapacitiesOfClass(class_name);
      }
      prov_it = provisioning_by_class.emplace(class_name, std::move(p)).first;
    }
    u.provisioning = prov_it->second;
    // A claim without a storage request has no capacity to check (hasEnoughCapacity).
    u.needs_capacity = u.provisioning->capacity_tracked && !claim->request.IsZero();
    if (u.needs_capacity) {
      for (const auto& cap : u.provisioning->capacities) {
        const api::Quantity* limit = VolumeLimit(*cap);
        if (limit != nullptr && limit->Value() >= requested) u.sufficient_capacities.push_back(cap);
      }
    }
    u.claim = std::move(claim);
    out.unbound_claims_delay_binding.push_back(std::move(u));
  }

  for (size_t i = 0; i < out.unbound_claims_delay_binding.size(); ++i) {
    if (!out.unbound_claims_delay_binding[i].selected_node) out.match_order.push_back(i);
  }
  // Smallest requests first, so each gets the smallest volume that fits.
  std::stable_sort(out.match_order.begin(), out.match_order.end(), [&](size_t a, size_t b) {
    return out.unbound_claims_delay_binding[a].claim->request.Value() <
           out.unbound_claims_delay_binding[b].claim->request.Value();
  });
  return out;
}

std::expected<FindResult, std::string> VolumeBinder::FindPodVolumes(const api::Pod& /*pod*/,
                                                                    const PodVolumeClaims& claims,
                                                                    const api::Node& node) const {
  FindResult result;
  const api::Labels& labels = node.metadata.labels;

  // checkBoundClaims: stops at the first volume that is missing or does not fit the node.
  std::shared_ptr<const api::CSINode> csi_node;
  bool csi_node_read = false;
  for (const auto& b : claims.bound_claims) {
    if (!b.pv) {
      result.reasons |= kPVNotExist;
      break;
    }
    const VolumeNodeAffinity* affinity = &b.affinity;
    if (b.migration) {
      if (!csi_node_read) {
        csi_node = handle_.Storage().CSINodeOf(node.metadata.name);
        csi_node_read = true;
      }
      if (IsPluginMigratedOnNode(b.migration->plugin, csi_node.get())) {
        if (!b.migration->error.empty()) return std::unexpected(b.migration->error);
        affinity = &b.migrated_affinity;
      }
    }
    if (!affinity->Matches(labels)) {
      result.reasons |= kNodeConflict;
      break;
    }
  }

  if (claims.unbound_claims_delay_binding.empty()) return result;
  std::vector<const UnboundClaim*> to_provision;
  for (const auto& c : claims.unbound_claims_delay_binding) {
    if (!c.selected_node) continue;
    // Provisioning was started for another node: this one cannot take the claim.
    if (*c.selected_node != node.metadata.name) {
      result.reasons |= kBindConflict;
      return result;
    }
    to_provision.push_back(&c);
  }

  bool unbound_satisfied = true;
  std::vector<const api::PersistentVolume*> chosen;
  for (size_t index : claims.match_order) {
    const UnboundClaim& c = claims.unbound_claims_delay_binding[index];
    const VolumeCandidate* match = FindMatchingVolume(c, labels, chosen);
    if (match == nullptr) {
      to_provision.push_back(&c);
      unbound_satisfied = false;
      continue;
    }
    chosen.push_back(match->pv.get());
    result.volumes.static_bindings.push_back({c.claim, match->pv});
  }

  // Claims no volume was found for are provisioned if they can be.
  if (!to_provision.empty()) {
    auto check = CheckVolumeProvisions(to_provision, labels);
    if (!check) return std::unexpected(check.error());
    unbound_satisfied = check->satisfied;
    if (!check->sufficient_storage) result.reasons |= kNotEnoughSpace;
    result.volumes.dynamic_provisions = std::move(check->provisions);
  }
  if (!unbound_satisfied) result.reasons |= kBindConflict;
  return result;
}

bool VolumeBinder::ArePodVolumesBound(const api::Pod& pod) const {
  framework::StorageLister& storage = handle_.Storage();
  for (const auto& volume : pod.spec.volumes) {
    if (volume.claim_name.empty() && !volume.ephemeral) continue;
    ClaimPtr claim = storage.Claim(pod.metadata.namespace_, api::ClaimNameOf(pod, volume));
    if (!claim || (volume.ephemeral && VolumeIsForPod(pod, *claim)) || !IsClaimFullyBound(*claim)) return false;
  }
  return true;
}

std::expected<bool, std::string> VolumeBinder::AssumePodVolumes(const api::Pod& pod, const std::string& node_name,
                                                                PodVolumes& volumes) const {
  if (ArePodVolumesBound(pod)) return true;
  framework::StorageLister& storage = handle_.Storage();

  std::vector<BindingInfo> new_bindings;
  for (const auto& binding : volumes.static_bindings) {
    BoundVolume bound = GetBindVolumeToClaim(*binding.pv, *binding.pvc);
    if (bound.dirty) {
      framework::Status st = storage.AssumeVolume(bound.volume);
      if (!st.IsSuccess()) {
        RevertBindings(new_bindings, 0);
        return std::unexpected(st.Message());
      }
    }
    new_bindings.push_back({binding.pvc, std::move(bound.volume)});
  }

  std::vector<DynamicProvision> new_provisions;
  for (const auto& provision : volumes.dynamic_provisions) {
    auto clone = std::make_shared<api::PersistentVolumeClaim>(*provision.pvc);
    clone->json = nullptr;
    clone->metadata.annotations.Set(std::string(api::kAnnotationSelectedNode), node_name);
    framework::Status st = storage.AssumeClaim(clone);
    if (!st.IsSuccess()) {
      RevertBindings(new_bindings, 0);
      RevertProvisions(new_provisions, 0);
      return std::unexpected(st.Message());
    }
    new_provisions.push_back({std::move(clone), provision.node_capacity});
  }

  volumes.static_bindings = std::move(new_bindings);
  volumes.dynamic_provisions = std::move(new_provisions);
  return false;
}

void VolumeBinder::RevertBindings(const std::vector<BindingInfo>& bindings, size_t from) const {
  for (size_t i = from; i < bindings.size(); ++i) handle_.Storage().RestoreVolume(bindings[i].pv->metadata.name);
}

void VolumeBinder::RevertProvisions(const std::vector<DynamicProvision>& provisions, size_t from) const {
  for (size_t i = from; i < provisions.size(); ++i) {
    const auto& meta = provisions[i].pvc->metadata;
    handle_.Storage().RestoreClaim(meta.namespace_, meta.name);
  }
}

void VolumeBinder::RevertAssumedPodVolumes(const PodVolumes& volumes) const {
  RevertBindings(volumes.static_bindings, 0);
  RevertProvisions(volumes.dynamic_provisions, 0);
}

framework::Status VolumeBinder::BindPodVolumes(const api::Pod& /*pod*/, const api::Node* node,
                                               const std::string& node_name, const PodVolumes& volumes) const {
  framework::ClusterClient& client = handle_.client();
  // bindAPIUpdate. There is no API rollback: only what was not written is reverted.
  for (size_t i = 0; i < volumes.static_bindings.size(); ++i) {
    const BindingInfo& b = volumes.static_bindings[i];
    framework::Status st = client.BindVolumeToClaim(*b.pv, *b.pvc);
    if (!st.IsSuccess()) {
      RevertBindings(volumes.static_bindings, i);
      RevertProvisions(volumes.dynamic_provisions, 0);
      return framework::Status::Error(st.Message());
    }
  }
  for (size_t i = 0; i < volumes.dynamic_provisions.size(); ++i) {
    framework::Status st = client.SelectNodeForClaim(*volumes.dynamic_provisions[i].pvc, node_name);
    if (!st.IsSuccess()) {
      RevertProvisions(volumes.dynamic_provisions, i);
      return framework::Status::Error(st.Message());
    }
  }

  // wait.PollUntilContextTimeout without an immediate first check: a zero timeout expires before
  // any check.
  static constexpr std::string_view kTimedOut = "binding volumes: context deadline exceeded";
  const util::Clock& clock = handle_.clock();
  if (bind_timeout_seconds_ <= 0) return framework::Status::Error(std::string(kTimedOut));
  if (clock.IsVirtual()) {
    // The simulated PV controller binds within the writes: what is not bound now never will be.
    auto bound = CheckBindings(node, node_name, volumes);
    if (!bound) return framework::Status::Error("binding volumes: " + bound.error());
    return *bound ? framework::Status() : framework::Status::Error(std::string(kTimedOut));
  }
  constexpr int64_t kPollNs = 100'000'000;
  const int64_t deadline = clock.NowNs() + bind_timeout_seconds_ * util::kNanosPerSecond;
  while (true) {
    const int64_t left = deadline - clock.NowNs();
    if (left <= 0) return framework::Status::Error(std::string(kTimedOut));
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min(kPollNs, left)));
    auto bound = CheckBindings(node, node_name, volumes);
    if (!bound) return framework::Status::Error("binding volumes: " + bound.error());
    if (*bound) return framework::Status();
  }
}

std::expected<bool, std::string> VolumeBinder::CheckBindings(const api::Node* node, const std::string& node_name,
                                                             const PodVolumes& volumes) const {
  if (node == nullptr) {
    return std::unexpected(fmt::format("failed to get node \"{}\": node \"{}\" not found", node_name, node_name));
  }
  framework::StorageLister& storage = handle_.Storage();
  std::shared_ptr<const api::CSINode> csi_node = storage.CSINodeOf(node_name);

  // The node affinity of `pv` on the node, translated when CSI migration applies.
  auto check_affinity = [&](const api::PersistentVolume& pv,
                            bool wrap_translation_error) -> std::optional<std::string> {
    CSIMigration migration = TranslateInTreeVolume(pv);
    const std::optional<api::NodeSelector>* affinity = &pv.node_affinity;
    if (!migration.plugin.empty() && IsPluginMigratedOnNode(migration.plugin, csi_node.get())) {
      if (!migration.error.empty()) {
        return wrap_translation_error ? "failed to translate pv to csi: " + migration.error : migration.error;
      }
      affinity = &migration.affinity;
    }
    if (!VolumeNodeAffinity(*affinity).Matches(node->metadata.labels)) {
      return fmt::format("pv \"{}\" node affinity doesn't match node \"{}\": no matching NodeSelectorTerms",
                         pv.metadata.name, node_name);
    }
    return std::nullopt;
  };

  for (const auto& b : volumes.static_bindings) {
    VolumePtr pv = storage.ApiVolume(b.pv->metadata.name);
    if (!pv) {
      return std::unexpected(
          fmt::format("failed to check binding: PersistentVolume \"{}\" not found", b.pv->metadata.name));
    }
    ClaimPtr pvc = storage.ApiClaim(b.pvc->metadata.namespace_, b.pvc->metadata.name);
    if (!pvc) {
      return std::unexpected(
          fmt::format("failed to check binding: PersistentVolumeClaim \"{}\" not found", b.pvc->Key()));
    }
    const bool claim_ref_set = pv->claim_ref && !pv->claim_ref->uid.empty();
    // Our write has not reached the informer yet (the volume is still at the version it was
    // assumed from): wait for it.
    if (!claim_ref_set && pv->metadata.resource_version == b.pv->metadata.resource_version) return false;
    if (auto err = check_affinity(*pv, /*wrap_translation_error=*/true)) return std::unexpected(*err);
    // unbindVolume() dropped the claimRef: the PV controller gave up on this binding.
    if (!claim_ref_set) return std::unexpected(fmt::format("ClaimRef got reset for pv \"{}\"", pv->metadata.name));
    if (!IsClaimFullyBound(*pvc)) return false;
  }

  for (const auto& p : volumes.dynamic_provisions) {
    ClaimPtr pvc = storage.ApiClaim(p.pvc->metadata.namespace_, p.pvc->metadata.name);
    if (!pvc) {
      return std::unexpected(
          fmt::format("failed to check provisioning pvc: PersistentVolumeClaim \"{}\" not found", p.pvc->Key()));
    }
    const std::string* selected = pvc->metadata.annotations.Find(api::kAnnotationSelectedNode);
    if ((selected == nullptr || *selected != node_name) &&
        pvc->metadata.resource_version == p.pvc->metadata.resource_version) {
      return false;  // the annotation we wrote has not reached the informer yet
    }
    if (pvc->metadata.annotations.empty()) {
      return std::unexpected(fmt::format("selectedNode annotation reset for PVC \"{}\"", pvc->metadata.name));
    }
    // A provisioner that fails removes the annotation, for the scheduler to try again.
    if (selected == nullptr || *selected != node_name) {
      return std::unexpected(fmt::format("provisioning failed for PVC \"{}\"", pvc->metadata.name));
    }
    if (!pvc->volume_name.empty()) {
      VolumePtr pv = storage.ApiVolume(pvc->volume_name);
      if (!pv) return false;  // not seen yet, or deleted (then the claim gets unbound)
      if (auto err = check_affinity(*pv, /*wrap_translation_error=*/false)) return std::unexpected(*err);
    }
    if (!IsClaimFullyBound(*pvc)) return false;
  }
  return true;
}

}  // namespace kubesched::plugins::volume_binding
