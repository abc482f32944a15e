#include "testing/storage_builders.h"

#include <algorithm>

#include "testing/builders.h"

namespace kubesched::testing {

PVCBuilder::PVCBuilder() : pvc_(std::make_shared<api::PersistentVolumeClaim>()) {
  pvc_->metadata.namespace_ = std::string(api::kNamespaceDefault);
  pvc_->metadata.resource_version = "1";
  pvc_->access_modes = {api::PersistentVolumeAccessMode::kReadWriteOnce};
}
PVCBuilder& PVCBuilder::Name(std::string name) {
  if (pvc_->metadata.uid.empty()) pvc_->metadata.uid = "uid-" + name;
  pvc_->metadata.name = std::move(name);
  return *this;
}
PVCBuilder& PVCBuilder::Namespace(std::string ns) {
  pvc_->metadata.namespace_ = std::move(ns);
  return *this;
}
PVCBuilder& PVCBuilder::UID(std::string uid) {
  pvc_->metadata.uid = std::move(uid);
  return *this;
}
PVCBuilder& PVCBuilder::Class(std::string class_name) {
  pvc_->storage_class_name = std::move(class_name);
  return *this;
}
PVCBuilder& PVCBuilder::NoClass() {
  pvc_->storage_class_name.reset();
  return *this;
}
PVCBuilder& PVCBuilder::Request(std::string quantity) {
  pvc_->request = Q(quantity);
  return *this;
}
PVCBuilder& PVCBuilder::AccessModes(std::vector<api::PersistentVolumeAccessMode> modes) {
  pvc_->access_modes = std::move(modes);
  return *this;
}
PVCBuilder& PVCBuilder::VolumeName(std::string volume_name) {
  pvc_->volume_name = std::move(volume_name);
  return *this;
}
PVCBuilder& PVCBuilder::Bound(std::string volume_name) {
  pvc_->volume_name = std::move(volume_name);
  pvc_->phase = api::PersistentVolumeClaimPhase::kBound;
  return *this;
}
PVCBuilder& PVCBuilder::Phase(api::PersistentVolumeClaimPhase phase) {
  pvc_->phase = phase;
  return *this;
}
PVCBuilder& PVCBuilder::Annotation(std::string key, std::string value) {
  pvc_->metadata.annotations.Set(std::move(key), std::move(value));
  return *this;
}
PVCBuilder& PVCBuilder::ResourceVersion(std::string version) {
  pvc_->metadata.resource_version = std::move(version);
  return *this;
}
PVCBuilder& PVCBuilder::Selector(api::LabelSelector selector) {
  pvc_->selector = std::move(selector);
  return *this;
}
std::shared_ptr<api::PersistentVolumeClaim> PVCBuilder::Obj() const {
  return std::make_shared<api::PersistentVolumeClaim>(*pvc_);
}

PVBuilder::PVBuilder() : pv_(std::make_shared<api::PersistentVolume>()) {
  pv_->metadata.resource_version = "1";
  pv_->access_modes = {api::PersistentVolumeAccessMode::kReadWriteOnce};
  pv_->phase = api::PersistentVolumePhase::kAvailable;
}
PVBuilder& PVBuilder::Name(std::string name) {
  if (pv_->metadata.uid.empty()) pv_->metadata.uid = "uid-" + name;
  pv_->metadata.name = std::move(name);
  return *this;
}
PVBuilder& PVBuilder::Class(std::string class_name) {
  pv_->storage_class_name = std::move(class_name);
  return *this;
}
PVBuilder& PVBuilder::Capacity(std::string quantity) {
  pv_->capacity = Q(quantity);
  return *this;
}
PVBuilder& PVBuilder::AccessModes(std::vector<api::PersistentVolumeAccessMode> modes) {
  pv_->access_modes = std::move(modes);
  return *this;
}
PVBuilder& PVBuilder::ClaimRef(std::string namespace_, std::string name, std::string uid) {
  pv_->claim_ref = api::ObjectReference{std::move(namespace_), std::move(name), std::move(uid)};
  return *this;
}
PVBuilder& PVBuilder::Phase(api::PersistentVolumePhase phase) {
  pv_->phase = phase;
  return *this;
}
PVBuilder& PVBuilder::Label(std::string key, std::string value) {
  pv_->metadata.labels.Set(std::move(key), std::move(value));
  return *this;
}
PVBuilder& PVBuilder::Annotation(std::string key, std::string value) {
  pv_->metadata.annotations.Set(std::move(key), std::move(value));
  return *this;
}
PVBuilder& PVBuilder::NodeAffinityIn(std::string key, std::vector<std::string> values) {
  std::sort(values.begin(), values.end());
  api::NodeSelectorTerm term;
  term.match_expressions.push_back({std::move(key), api::SelectorOperator::kIn, std::move(values)});
  api::NodeSelector selector;
  selector.terms.push_back(std::move(term));
  pv_->node_affinity = std::move(selector);
  return *this;
}
PVBuilder& PVBuilder::NodeAffinity(api::NodeSelector selector) {
  pv_->node_affinity = std::move(selector);
  return *this;
}
PVBuilder& PVBuilder::CSI(std::string driver, std::string volume_handle) {
  pv_->csi_driver = std::move(driver);
  pv_->volume_handle = std::move(volume_handle);
  return *this;
}
PVBuilder& PVBuilder::InTree(api::InlineDisk disk) {
  pv_->in_tree = std::move(disk);
  return *this;
}
PVBuilder& PVBuilder::ResourceVersion(std::string version) {
  pv_->metadata.resource_version = std::move(version);
  return *this;
}
std::shared_ptr<api::PersistentVolume> PVBuilder::Obj() const { return std::make_shared<api::PersistentVolume>(*pv_); }

StorageClassBuilder::StorageClassBuilder() : sc_(std::make_shared<api::StorageClass>()) {
  sc_->metadata.resource_version = "1";
}
StorageClassBuilder& StorageClassBuilder::Name(std::string name) {
  sc_->metadata.name = std::move(name);
  return *this;
}
StorageClassBuilder& StorageClassBuilder::Provisioner(std::string provisioner) {
  sc_->provisioner = std::move(provisioner);
  return *this;
}
StorageClassBuilder& StorageClassBuilder::WaitForFirstConsumer() {
  sc_->volume_binding_mode = api::VolumeBindingMode::kWaitForFirstConsumer;
  return *this;
}
StorageClassBuilder& StorageClassBuilder::Immediate() {
  sc_->volume_binding_mode = api::VolumeBindingMode::kImmediate;
  return *this;
}
StorageClassBuilder& StorageClassBuilder::AllowedTopology(std::string key, std::vector<std::string> values) {
  sc_->allowed_topologies.push_back({api::TopologySelectorRequirement{std::move(key), std::move(values)}});
  return *this;
}
StorageClassBuilder& StorageClassBuilder::Default() {
  sc_->metadata.annotations.Set(std::string(api::kAnnotationDefaultStorageClass), "true");
  return *this;
}
std::shared_ptr<api::StorageClass> StorageClassBuilder::Obj() const {
  return std::make_shared<api::StorageClass>(*sc_);
}

std::shared_ptr<api::CSINode> MakeCSINode(std::string node_name, std::vector<std::pair<std::string, int32_t>> drivers) {
  auto n = std::make_shared<api::CSINode>();
  n->metadata.name = std::move(node_name);
  n->metadata.resource_version = "1";
  for (auto& [name, count] : drivers) {
    api::CSINodeDriver d;
    d.name = name;
    d.node_id = n->metadata.name;
    if (count >= 0) d.allocatable_count = count;
    n->drivers.push_back(std::move(d));
  }
  return n;
}

std::shared_ptr<api::CSIDriver> MakeCSIDriver(std::string name, bool storage_capacity, bool attach_required) {
  auto d = std::make_shared<api::CSIDriver>();
  d->metadata.name = std::move(name);
  d->metadata.resource_version = "1";
  d->storage_capacity = storage_capacity;
  d->attach_required = attach_required;
  return d;
}

std::shared_ptr<api::CSIStorageCapacity> MakeCapacity(std::string name, std::string class_name, std::string key,
                                                      std::string value, std::string capacity) {
  auto c = std::make_shared<api::CSIStorageCapacity>();
  c->metadata.name = std::move(name);
  c->metadata.namespace_ = std::string(api::kNamespaceSystem);
  c->metadata.resource_version = "1";
  c->storage_class_name = std::move(class_name);
  api::LabelSelector selector;
  selector.match_labels.Set(std::move(key), std::move(value));
  c->node_topology = std::move(selector);
  c->capacity = Q(capacity);
  return c;
}

}  // namespace kubesched::testing
