#include "store/resources.h"

#include "api/names.h"
#include "store/custom_resources.h"
#include "store/event_conversion.h"
#include "store/kind_defaults.h"
#include "store/kind_hooks.h"
#include "store/resource_kinds.h"
#include "store/storage_kinds.h"

namespace kubesched::store {

namespace {

ResourceType Make(std::string group, std::string resource, std::string kind, std::string singular,
                  std::string version = "v1") {
  ResourceType t;
  t.group = std::move(group);
  t.version = std::move(version);
  t.resource = std::move(resource);
  t.kind = std::move(kind);
  t.singular = std::move(singular);
  return t;
}

ResourceType Namespaces() {
  ResourceType t = Make("", "namespaces", "Namespace", "namespace");
  t.namespaced = false;
  t.short_names = {"ns"};
  t.validate_name = api::IsDNS1123Label;
  t.subresources = {"status", "finalize"};
  t.default_fields = DefaultNamespace;
  for (const char* name : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    t.initial_objects.push_back(std::string(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")") + name +
                                "\"}}");
  }
  return t;
}

ResourceType Nodes() {
  ResourceType t = Make("", "nodes", "Node", "node");
  t.namespaced = false;
  t.short_names = {"no"};
  t.subresources = {"status"};
  t.field_selectors = {"spec.unschedulable"};
  t.default_fields = DefaultNode;
  t.selectable_fields = NodeFields;
  t.decode = DecodeNodeChecked;
  t.complete_view = CompleteNodeView;
  t.view_labels = NodeViewLabels;
  return t;
}

ResourceType Pods() {
  ResourceType t = Make("", "pods", "Pod", "pod");
  t.short_names = {"po"};
  t.categories = {"all"};
  // log, exec, attach, portforward and proxy are the kubelet's: served only to say there is none.
  t.subresources = {"status", "binding", "eviction", "log", "exec", "attach", "portforward", "proxy"};
  t.default_fields = DefaultPod;
  t.admit = AdmitPodPriority;
  t.field_selectors = kPodFieldSelectors;
  t.selectable_fields = PodFields;
  t.decode = DecodePodChecked;
  t.complete_view = CompletePodView;
  t.view_labels = PodViewLabels;
  t.decode_status = DecodePodStatusChange;
  t.decode_binding = DecodePodBinding;
  return t;
}

ResourceType CoreEvents() {
  ResourceType t = Make("", "events", "Event", "event");
  t.short_names = {"ev"};
  t.field_selectors = kEventFieldSelectors;
  t.selectable_fields = EventFields;
  return t;
}

ResourceType EventsV1(const ResourceType* core) {
  ResourceType t = Make("events.k8s.io", "events", "Event", "event");
  t.short_names = {"ev"};
  t.field_selectors = kEventFieldSelectors;
  t.selectable_fields = EventFields;
  t.stored_as = core;
  t.to_storage = EventsV1ToCore;
  t.from_storage = CoreToEventsV1;
  return t;
}

ResourceType Leases() { return Make("coordination.k8s.io", "leases", "Lease", "lease"); }

// The kinds a scheduler's deployment is made of (deploy/): stored and served as they are written,
// without defaulting or validation besides their names' (their fields are checked by the server's
// field validation, api/schema.cc). Nothing enforces the RBAC kinds' rules.
ResourceType ServiceAccounts() {
  ResourceType t = Make("", "serviceaccounts", "ServiceAccount", "serviceaccount");
  t.short_names = {"sa"};
  return t;
}

ResourceType ConfigMaps() {
  ResourceType t = Make("", "configmaps", "ConfigMap", "configmap");
  t.short_names = {"cm"};
  return t;
}

ResourceType Secrets() { return Make("", "secrets", "Secret", "secret"); }

// The RBAC kinds: names are path segments (ValidateRBACName), so "system:kube-scheduler" is one.
ResourceType Rbac(std::string resource, std::string kind, std::string singular, bool namespaced) {
  ResourceType t = Make("rbac.authorization.k8s.io", std::move(resource), std::move(kind), std::move(singular));
  t.namespaced = namespaced;
  t.validate_name = api::IsValidPathSegmentName;
  return t;
}

ResourceType PriorityClasses() {
  ResourceType t = Make("scheduling.k8s.io", "priorityclasses", "PriorityClass", "priorityclass");
  t.namespaced = false;
  t.short_names = {"pc"};
  t.validate = ValidatePriorityClass;
  t.initial_objects = {
      R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"system-node-critical"},"value":2000001000,"description":"Used for system critical pods that must not be moved from their current node.","preemptionPolicy":"PreemptLowerPriority"})",
      R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"system-cluster-critical"},"value":2000000000,"description":"Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.","preemptionPolicy":"PreemptLowerPriority"})",
  };
  return t;
}

ResourceType PodDisruptionBudgets() {
  ResourceType t = Make("policy", "poddisruptionbudgets", "PodDisruptionBudget", "poddisruptionbudget");
  t.short_names = {"pdb"};
  t.subresources = {"status"};
  return t;
}

// Workload-aware scheduling (scheduling.k8s.io/v1alpha2, GenericWorkload): the runtime PodGroup
// the scheduler reads, and the Workload its controllers make PodGroups from (stored as written).
ResourceType PodGroups() {
  ResourceType t = Make("scheduling.k8s.io", "podgroups", "PodGroup", "podgroup", "v1alpha2");
  t.subresources = {"status"};
  t.admit = AdmitPodGroupPriority;
  t.decode = DecodePodGroupChecked;
  t.complete_view = CompletePodGroupView;
  return t;
}

// The scheduler-plugins PodGroup (scheduling.x-k8s.io/v1alpha1, the Coscheduling plugin's): a
// custom resource, which an API server serves once its CRD is created (`kubesched apiserver`
// too, through its CRD). Not a built-in resource, then: what a scheduler reads of it
// (SchedulerResources) and what a simulated cluster holds.
ResourceType CoschedulingPodGroups() {
  ResourceType t = Make("scheduling.x-k8s.io", "podgroups", "PodGroup", "podgroup", "v1alpha1");
  t.short_names = {"pg", "pgs"};
  t.subresources = {"status"};
  t.decode = DecodeCoschedulingPodGroupChecked;
  t.complete_view = CompletePodGroupView;
  return t;
}

ResourceType SchedulingWorkloads() {
  return Make("scheduling.k8s.io", "workloads", "Workload", "workload", "v1alpha2");
}

ResourceType Deployments() {
  ResourceType t = Make("apps", "deployments", "Deployment", "deployment");
  t.short_names = {"deploy"};
  t.categories = {"all"};
  t.subresources = {"status", "scale"};
  t.default_fields = DefaultDeployment;
  t.validate = ValidateWorkload;
  return t;
}

ResourceType ReplicaSets() {
  ResourceType t = Make("apps", "replicasets", "ReplicaSet", "replicaset");
  t.short_names = {"rs"};
  t.categories = {"all"};
  t.subresources = {"status", "scale"};
  t.default_fields = DefaultReplicaSet;
  t.validate = ValidateWorkload;
  return t;
}

ResourceType ReplicationControllers() {
  ResourceType t = Make("", "replicationcontrollers", "ReplicationController", "replicationcontroller");
  t.short_names = {"rc"};
  t.categories = {"all"};
  t.subresources = {"status", "scale"};
  t.default_fields = DefaultReplicationController;
  t.validate = ValidatePlainSelectorWorkload;
  return t;
}

ResourceType StatefulSets() {
  ResourceType t = Make("apps", "statefulsets", "StatefulSet", "statefulset");
  t.short_names = {"sts"};
  t.categories = {"all"};
  t.subresources = {"status", "scale"};
  t.default_fields = DefaultStatefulSet;
  t.validate = ValidateWorkload;
  return t;
}

ResourceType DaemonSets() {
  ResourceType t = Make("apps", "daemonsets", "DaemonSet", "daemonset");
  t.short_names = {"ds"};
  t.categories = {"all"};
  t.subresources = {"status"};
  t.default_fields = DefaultDaemonSet;
  t.validate = ValidateWorkload;
  return t;
}

ResourceType Jobs() {
  ResourceType t = Make("batch", "jobs", "Job", "job");
  t.categories = {"all"};
  t.subresources = {"status"};
  t.default_fields = DefaultJob;
  t.validate = ValidateJob;
  return t;
}

// The other kinds that real install files create (ingress-nginx's, argo-cd's, a Helm chart's):
// stored and served as written, with discovery, OpenAPI and tables, so that `kubectl apply -f`
// of a whole file succeeds; nothing acts on them (no kube-proxy, no webhook is called).
struct Kind {
  const char* group;
  const char* version;
  const char* resource;
  const char* kind;
  const char* singular;
  bool namespaced;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  std::vector<std::string> subresources;
};

ResourceType Stored(const Kind& k) {
  ResourceType t = Make(k.group, k.resource, k.kind, k.singular);
  t.version = k.version;
  t.namespaced = k.namespaced;
  t.short_names = k.short_names;
  t.categories = k.categories;
  t.subresources = k.subresources;
  return t;
}

std::vector<ResourceType> StoredAsWritten() {
  const std::vector<Kind> kinds = {
      {"", "v1", "services", "Service", "service", true, {"svc"}, {"all"}, {"status"}},
      {"", "v1", "endpoints", "Endpoints", "endpoints", true, {"ep"}, {}, {}},
      {"", "v1", "limitranges", "LimitRange", "limitrange", true, {"limits"}, {}, {}},
      {"", "v1", "resourcequotas", "ResourceQuota", "resourcequota", true, {"quota"}, {}, {"status"}},
      {"", "v1", "podtemplates", "PodTemplate", "podtemplate", true, {}, {}, {}},
      {"discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", "endpointslice", true, {}, {}, {}},
      {"apps", "v1", "controllerrevisions", "ControllerRevision", "controllerrevision", true, {}, {}, {}},
      {"batch", "v1", "cronjobs", "CronJob", "cronjob", true, {"cj"}, {"all"}, {"status"}},
      {"autoscaling",
       "v2",
       "horizontalpodautoscalers",
       "HorizontalPodAutoscaler",
       "horizontalpodautoscaler",
       true,
       {"hpa"},
       {"all"},
       {"status"}},
      {"networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", "networkpolicy", true, {"netpol"}, {}, {}},
      {"networking.k8s.io", "v1", "ingresses", "Ingress", "ingress", true, {"ing"}, {}, {"status"}},
      {"networking.k8s.io", "v1", "ingressclasses", "IngressClass", "ingressclass", false, {}, {}, {}},
      {"admissionregistration.k8s.io",
       "v1",
       "validatingwebhookconfigurations",
       "ValidatingWebhookConfiguration",
       "validatingwebhookconfiguration",
       false,
       {},
       {"api-extensions"},
       {}},
      {"admissionregistration.k8s.io",
       "v1",
       "mutatingwebhookconfigurations",
       "MutatingWebhookConfiguration",
       "mutatingwebhookconfiguration",
       false,
       {},
       {"api-extensions"},
       {}},
      {"apiregistration.k8s.io",
       "v1",
       "apiservices",
       "APIService",
       "apiservice",
       false,
       {},
       {"api-extensions"},
       {"status"}},
  };
  std::vector<ResourceType> out;
  out.reserve(kinds.size());
  for (const Kind& k : kinds) out.push_back(Stored(k));
  // Services get their defaults and what the registry allocates (cluster IP, node ports).
  out.front().default_fields = DefaultService;
  out.front().admit = AdmitService;
  out.front().prepare_update = KeepAllocatedServiceValues;
  return out;
}

struct Registry {
  ResourceType namespaces = Namespaces();
  ResourceType nodes = Nodes();
  ResourceType pods = Pods();
  ResourceType core_events = CoreEvents();
  ResourceType events_v1 = EventsV1(&core_events);
  ResourceType leases = Leases();
  ResourceType service_accounts = ServiceAccounts();
  ResourceType config_maps = ConfigMaps();
  ResourceType secrets = Secrets();
  ResourceType cluster_roles = Rbac("clusterroles", "ClusterRole", "clusterrole", false);
  ResourceType cluster_role_bindings = Rbac("clusterrolebindings", "ClusterRoleBinding", "clusterrolebinding", false);
  ResourceType roles = Rbac("roles", "Role", "role", true);
  ResourceType role_bindings = Rbac("rolebindings", "RoleBinding", "rolebinding", true);
  ResourceType priority_classes = PriorityClasses();
  ResourceType pdbs = PodDisruptionBudgets();
  ResourceType pod_groups = PodGroups();
  ResourceType scheduling_workloads = SchedulingWorkloads();
  ResourceType deployments = Deployments();
  ResourceType replica_sets = ReplicaSets();
  ResourceType replication_controllers = ReplicationControllers();
  ResourceType stateful_sets = StatefulSets();
  ResourceType daemon_sets = DaemonSets();
  ResourceType jobs = Jobs();
  ResourceType persistent_volume_claims = PersistentVolumeClaims();
  ResourceType persistent_volumes = PersistentVolumes();
  ResourceType storage_classes = StorageClasses();
  ResourceType csi_nodes = CSINodes();
  ResourceType csi_drivers = CSIDrivers();
  ResourceType csi_storage_capacities = CSIStorageCapacities();
  ResourceType device_classes = DeviceClasses();
  ResourceType resource_slices = ResourceSlices();
  ResourceType resource_claims = ResourceClaims();
  ResourceType resource_claim_templates = ResourceClaimTemplates();
  std::vector<const ResourceType*> all = {&namespaces,
                                          &nodes,
                                          &pods,
                                          &core_events,
                                          &events_v1,
                                          &leases,
                                          &priority_classes,
                                          &pdbs,
                                          &pod_groups,
                                          &scheduling_workloads,
                                          &deployments,
                                          &replica_sets,
                                          &replication_controllers,
                                          &stateful_sets,
                                          &daemon_sets,
                                          &jobs,
                                          &persistent_volume_claims,
                                          &persistent_volumes,
                                          &storage_classes,
                                          &csi_nodes,
                                          &csi_drivers,
                                          &csi_storage_capacities,
                                          &device_classes,
                                          &resource_slices,
                                          &resource_claims,
                                          &resource_claim_templates,
                                          &service_accounts,
                                          &config_maps,
                                          &secrets,
                                          &cluster_roles,
                                          &cluster_role_bindings,
                                          &roles,
                                          &role_bindings};
  std::vector<ResourceType> stored_as_written = StoredAsWritten();
  ResourceType custom_resource_definitions = CustomResourceDefinitions();
  ResourceType coscheduling_pod_groups = CoschedulingPodGroups();
  std::vector<const ResourceType*> scheduler;
  Registry() {
    for (const ResourceType& t : stored_as_written) all.push_back(&t);
    all.push_back(&custom_resource_definitions);
    scheduler = all;
    scheduler.push_back(&coscheduling_pod_groups);
  }
};

const Registry& TheRegistry() {
  static const Registry* registry = new Registry();  // never destroyed: stores may outlive statics
  return *registry;
}

}  // namespace

const std::vector<const ResourceType*>& BuiltinResources() { return TheRegistry().all; }

const std::vector<const ResourceType*>& SchedulerResources() { return TheRegistry().scheduler; }

std::unique_ptr<Store> NewBuiltinStore(const util::Clock& clock, StoreOptions options) {
  return NewMemoryStore(BuiltinResources(), clock, std::move(options));
}

}  // namespace kubesched::store
