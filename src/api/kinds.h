#pragma once
// The kinds kubesched reads, with their API groups and scope, and the kinds the built-in API
// groups serve (so a kind kubesched does not read is told apart from a typo).

#include <string_view>
#include <vector>

namespace kubesched::api {

struct KindInfo {
  std::string_view kind;
  std::string_view group;  // "" for core
  bool namespaced;
  //! The one version kubesched reads it at.
  std::string_view version = "v1";
  //! The schema type its fields are checked against (api/schema.cc); empty: the kind's name.
  std::string_view schema = {};

  std::string_view SchemaName() const { return schema.empty() ? kind : schema; }
};

//! The kind's entry, or nullptr for a kind kubesched does not read.
const KindInfo* LookupKind(std::string_view kind);

//! The custom resources kubesched reads (their CRDs are not Kubernetes' own): the
//! scheduler-plugins PodGroup (scheduling.x-k8s.io/v1alpha1, the Coscheduling plugin's). nullptr
//! for any other kind of a group that is not built in (skipped).
const KindInfo* LookupCustomKind(std::string_view group, std::string_view kind);

//! An API group Kubernetes serves itself, with its kinds (space separated).
struct BuiltinGroup {
  std::string_view group;
  std::string_view kinds;
};

//! The built-in group, or nullptr (a custom resource's group).
const BuiltinGroup* LookupBuiltinGroup(std::string_view group);

//! The space-separated words of `text`.
std::vector<std::string_view> Words(std::string_view text);

}  // namespace kubesched::api
