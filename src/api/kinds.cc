#include "api/kinds.h"

namespace kubesched::api {
namespace {

constexpr KindInfo kKinds[] = {
    {"Node", "", false},
    {"Pod", "", true},
    {"Namespace", "", false},
    {"PriorityClass", "scheduling.k8s.io", false},
    {"PodDisruptionBudget", "policy", true},
    // Workload-aware scheduling (GenericWorkload, alpha since 1.35): the runtime group object of
    // the 1.36 API. The Workload kind (its templates) is read by controllers, not the scheduler.
    {"PodGroup", "scheduling.k8s.io", true, "v1alpha2"},
    {"Deployment", "apps", true},
    {"ReplicaSet", "apps", true},
    {"ReplicationController", "", true},
    {"StatefulSet", "apps", true},
    {"DaemonSet", "apps", true},
    {"Job", "batch", true},
    {"CronJob", "batch", true},
    {"PersistentVolumeClaim", "", true},
    {"PersistentVolume", "", false},
    {"StorageClass", "storage.k8s.io", false},
    {"CSINode", "storage.k8s.io", false},
    {"CSIDriver", "storage.k8s.io", false},
    {"CSIStorageCapacity", "storage.k8s.io", true},
    {"DeviceClass", "resource.k8s.io", false},
    {"ResourceSlice", "resource.k8s.io", false},
    {"ResourceClaim", "resource.k8s.io", true},
    {"ResourceClaimTemplate", "resource.k8s.io", true},
};

// Custom resources kubesched reads: the scheduler-plugins PodGroup (its CRD serves v1alpha1).
constexpr KindInfo kCustomKinds[] = {
    {"PodGroup", "scheduling.x-k8s.io", true, "v1alpha1", "CoschedulingPodGroup"},
};

// The API groups Kubernetes serves itself, with their kinds (space separated). A kind kubesched
// does not read is skipped when its group serves it; a kind a built-in group does not serve is a
// mistake (kubectl: "no matches for kind"), such as a typo; any other group is a custom
// resource's, skipped whatever its kind.
constexpr BuiltinGroup kBuiltinGroups[] = {
    {"",
     "Binding ComponentStatus ConfigMap Endpoints Event LimitRange Namespace Node PersistentVolume "
     "PersistentVolumeClaim Pod PodTemplate ReplicationController ResourceQuota Secret Service ServiceAccount"},
    {"apps", "ControllerRevision DaemonSet Deployment ReplicaSet StatefulSet"},
    {"batch", "CronJob Job"},
    {"autoscaling", "HorizontalPodAutoscaler Scale"},
    {"policy", "Eviction PodDisruptionBudget PodSecurityPolicy"},
    {"extensions", "DaemonSet Deployment Ingress NetworkPolicy PodSecurityPolicy ReplicaSet"},
    {"networking.k8s.io", "IPAddress Ingress IngressClass NetworkPolicy ServiceCIDR"},
    {"rbac.authorization.k8s.io", "ClusterRole ClusterRoleBinding Role RoleBinding"},
    {"storage.k8s.io", "CSIDriver CSINode CSIStorageCapacity StorageClass VolumeAttachment VolumeAttributesClass"},
    {"scheduling.k8s.io", "PodGroup PriorityClass Workload"},
    {"apiextensions.k8s.io", "CustomResourceDefinition"},
    {"admissionregistration.k8s.io",
     "MutatingAdmissionPolicy MutatingAdmissionPolicyBinding MutatingWebhookConfiguration ValidatingAdmissionPolicy "
     "ValidatingAdmissionPolicyBinding ValidatingWebhookConfiguration"},
    {"apiregistration.k8s.io", "APIService"},
    {"coordination.k8s.io", "Lease LeaseCandidate"},
    {"discovery.k8s.io", "EndpointSlice"},
    {"events.k8s.io", "Event"},
    {"certificates.k8s.io", "CertificateSigningRequest ClusterTrustBundle PodCertificateRequest"},
    {"node.k8s.io", "RuntimeClass"},
    {"flowcontrol.apiserver.k8s.io", "FlowSchema PriorityLevelConfiguration"},
    {"resource.k8s.io", "DeviceClass DeviceTaintRule ResourceClaim ResourceClaimTemplate ResourceSlice"},
    {"authentication.k8s.io", "SelfSubjectReview TokenRequest TokenReview"},
    {"authorization.k8s.io",
     "LocalSubjectAccessReview SelfSubjectAccessReview SelfSubjectRulesReview SubjectAccessReview"},
    {"internal.apiserver.k8s.io", "StorageVersion"},
    {"storagemigration.k8s.io", "StorageVersionMigration"},
};

}  // namespace

const KindInfo* LookupKind(std::string_view kind) {
  for (const auto& k : kKinds) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

const KindInfo* LookupCustomKind(std::string_view group, std::string_view kind) {
  for (const auto& k : kCustomKinds) {
    if (k.group == group && k.kind == kind) return &k;
  }
  return nullptr;
}

const BuiltinGroup* LookupBuiltinGroup(std::string_view group) {
  for (const auto& g : kBuiltinGroups) {
    if (g.group == group) return &g;
  }
  return nullptr;
}

std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const size_t space = text.find(' ');
    out.push_back(text.substr(0, space));
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  return out;
}

}  // namespace kubesched::api
