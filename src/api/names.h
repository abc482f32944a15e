#pragma once
// The API server's name checks (k8s.io/apimachinery/pkg/util/validation), with upstream's wording:
// object names (DNS-1123 subdomains and labels, path segments), label keys (qualified names) and label values.
// Each returns the problems found, empty when the value is valid.

#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"

namespace kubesched::api {

//! The workload a pod belongs to, for people: its controller's name (a Deployment's rather than
//! its ReplicaSet's "<deployment>-<pod-template-hash>"), else the pod's own name.
std::string WorkloadName(const Pod& pod);

//! validation.IsQualifiedName: "[prefix/]name" with a DNS-subdomain prefix and a name of at most
//! 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric (label and annotation keys).
std::vector<std::string> IsQualifiedName(std::string_view value);
//! validation.IsValidLabelValue: empty or a qualified-name-like string of at most 63 characters.
std::vector<std::string> IsValidLabelValue(std::string_view value);
//! Whether IsQualifiedName and IsValidLabelValue find nothing, without building their messages:
//! the decoders' check of every label, which asks for the messages only when there are some.
bool IsValidQualifiedName(std::string_view value);
bool IsValidLabelValueText(std::string_view value);
//! validation.IsDNS1123Subdomain: lowercase RFC 1123 subdomain of at most 253 characters (the
//! names of pods, nodes and workloads).
std::vector<std::string> IsDNS1123Subdomain(std::string_view value);
//! validation.IsDNS1123Label: one lowercase RFC 1123 label of at most 63 characters (namespace
//! names).
std::vector<std::string> IsDNS1123Label(std::string_view value);
//! path.IsValidPathSegmentName: anything but "." and "..", without '/' or '%' (the names of the
//! RBAC kinds, such as "system:kube-scheduler").
std::vector<std::string> IsValidPathSegmentName(std::string_view value);

}  // namespace kubesched::api
