#pragma once
// CustomResourceDefinitions (apiextensions.k8s.io/v1) and the custom resources they define: what
// upstream's apiextensions-apiserver does inside the one API server, done inside the one store.
//
// A CRD is stored like any object (validated and defaulted by the hooks of
// CustomResourceDefinitions(), its status written as the naming and establishing controllers
// would: names accepted, Established). While it exists, the store serves each of its served
// versions as a resource (CustomResources below): discovery, OpenAPI, REST verbs and watches
// follow. Every version of a custom resource is kept in one storage resource (the CRD's storage
// version), as upstream keeps them in etcd; with spec.conversion.strategy None (the only one
// without a webhook) a read in another version differs only in apiVersion. Objects are pruned to
// their version's openAPIV3Schema and validated against it (api/structural_schema.h). Deleting
// the CRD deletes its custom resources first, as upstream's finalizer does.
//
// ResourceTypes handed out here live as long as the store (a changed CRD gets new served types;
// the storage type of a group and plural never changes), so callers may keep them.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/json.h"
#include "store/store.h"

namespace kubesched::store {

//! One entry of spec.versions.
struct CustomResourceVersion {
  std::string name;  //!< "v1alpha1"
  bool served = false;
  bool storage = false;
  //! schema.openAPIV3Schema (null when the version has none).
  std::shared_ptr<const api::json::Document> schema;
  bool status_subresource = false;
  bool scale_subresource = false;
  std::vector<ColumnDefinition> printer_columns;  //!< additionalPrinterColumns
};

//! What a CustomResourceDefinition says, read from its (valid) JSON.
struct CustomResourceDefinition {
  std::string name;  //!< metadata.name: "<plural>.<group>"
  std::string group;
  std::string plural;
  std::string singular;
  std::string kind;
  std::string list_kind;
  bool namespaced = true;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  std::vector<CustomResourceVersion> versions;  //!< served ones by upstream's version priority first

  //! The version marked storage (a valid CRD has exactly one).
  const CustomResourceVersion* StorageVersion() const;
  const CustomResourceVersion* Version(std::string_view name) const;
};

//! Reads a CRD object; nullopt when it lacks what a valid one has (callers validate first).
std::optional<CustomResourceDefinition> ReadCustomResourceDefinition(const api::json::Value& crd);

//! The apiextensions.k8s.io/v1 customresourcedefinitions resource: validation as upstream's
//! (name, group, names, scope, versions with exactly one storage version and a structural
//! schema each; scope immutable), defaults (singular, listKind, conversion None) and the status
//! its controllers write (acceptedNames, NamesAccepted and Established, storedVersions).
ResourceType CustomResourceDefinitions();

//! kube-aware version order (version.CompareKubeAwareVersionStrings): v2 > v1 > v1beta2 >
//! v1beta1 > v1alpha1 > names that are not Kubernetes versions (alphabetically). True when `a`
//! comes before `b`.
bool KubeAwareVersionLess(std::string_view a, std::string_view b);

//! The custom resources a store serves: one storage ResourceType per group and plural, and a
//! served ResourceType per served version of the CRD that defines it now. Thread-safe (its own
//! lock, taken after the store's and never holding it while calling out).
class CustomResources {
 public:
  //! `builtin`: the store's own resources; a CRD naming one of them defines nothing.
  explicit CustomResources(const std::vector<const ResourceType*>& builtin);

  //! A CRD was created or changed (`crd` is its stored JSON): serve what it defines now.
  void Define(const api::json::Value& crd);
  //! A CRD was deleted: its resources are no longer served (their storage type stays, empty).
  void Undefine(std::string_view crd_name);

  //! The served type of the storage version of a served group and plural, or null.
  const ResourceType* Find(std::string_view group, std::string_view resource) const;
  //! The served type of a group, version and plural, or null.
  const ResourceType* Find(std::string_view group, std::string_view version, std::string_view resource) const;
  //! The storage type of the custom resource a CRD named `crd_name` defines (served or not), or null.
  const ResourceType* StorageOf(std::string_view crd_name) const;
  //! The storage type whose objects have this group and kind (served or not: journal replay
  //! meets objects whose CRD is deleted later), or null.
  const ResourceType* StorageForKind(std::string_view group, std::string_view kind) const;
  //! Every storage type ever defined, in the order they were first defined.
  std::vector<const ResourceType*> StorageTypes() const;
  //! The names of the CRDs whose resources are served.
  std::vector<std::string> DefinedNames() const;
  //! Every served type, by CRD name and then version priority.
  std::vector<const ResourceType*> Served() const;
  //! Changes whenever Served() does.
  uint64_t Generation() const;

 private:
  struct Entry;
  const std::vector<const ResourceType*>& builtin_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<ResourceType>> owned_;      //!< every type made; never freed
  std::map<std::string, std::shared_ptr<Entry>> by_crd_;  //!< by CRD name
  std::vector<const ResourceType*> storage_order_;
  uint64_t generation_ = 0;
};

}  // namespace kubesched::store
