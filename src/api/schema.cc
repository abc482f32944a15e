#include "api/schema.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>

#include "api/field_path.h"
#include "util/go_quote.h"

namespace kubesched::api {
namespace {

using util::GoQuote;

bool Present(const json::Value& v) { return !v.IsNull(); }

// "a mapping", "a list" or the quoted scalar (as written, for YAML), as the decoders describe values.
std::string Describe(const json::Value& v, const yaml::ScalarTexts* texts) {
  if (v.IsObject()) return "a mapping";
  if (v.IsArray()) return "a list";
  std::string s;
  if (auto written = texts != nullptr ? texts->Find(&v) : std::nullopt) {
    s = std::string(*written);
  } else if (v.IsString()) {
    s = std::string(json::View(v));
  } else if (v.IsBool()) {
    s = v.GetBool() ? "true" : "false";
  } else {
    s = json::Encode(v);
  }
  if (s.size() > 40) s = s.substr(0, 40) + "...";
  return GoQuote(s);
}

// Whether a scalar value has the JSON type the schema's scalar type decodes from, as Go's
// encoding/json decodes into the API's fields: a string field takes only a string, an int field
// only an integral number, a bool only true or false; a quantity a string or a number, an intstr
// an integer or a string.
bool ScalarFits(const json::Value& v, std::string_view type) {
  if (type == "string" || type == "time") return v.IsString();
  if (type == "int") return v.IsInt64() || v.IsUint64();
  if (type == "bool") return v.IsBool();
  if (type == "number") return v.IsNumber();
  if (type == "quantity") return v.IsString() || v.IsNumber();
  if (type == "intstr") return v.IsString() || v.IsInt64() || v.IsUint64();
  return true;
}

// A scalar of the wrong type, named by its type and (for YAML) as written: a plain scalar that
// YAML 1.1 reads as a boolean or a number is pointed out, since quoting it is the usual fix.
std::string DescribeTyped(const json::Value& v, const yaml::ScalarTexts* texts) {
  if (v.IsObject() || v.IsArray()) return Describe(v, texts);
  const std::optional<std::string_view> written = texts != nullptr ? texts->Find(&v) : std::nullopt;
  if (v.IsString()) return "the string " + Describe(v, texts);
  std::string value = v.IsBool() ? (v.GetBool() ? "true" : "false") : json::Encode(v);
  const std::string what = v.IsBool() ? "the boolean " : "the number ";
  if (written && *written != value) {
    return GoQuote(std::string(*written)) + ", which YAML reads as " + what + value + " (quote it for a string)";
  }
  return what + value;
}

// The schema, one type after another: a line `TypeName` (or `TypeName : Base` to start from the
// base's fields), then one indented line per field: `name type`. Types are
//   string, int, bool, number, quantity, intstr (int or string), time    scalars
//   any                                                                     anything, not looked into
//   []T      a list of T          map[T]   a map from strings to T        Name   an object type
// Field names and types follow the Kubernetes API (core/v1, apps/v1, batch/v1, policy/v1,
// scheduling.k8s.io/v1, rbac.authorization.k8s.io/v1, meta/v1). A value must have its field's
// type as the API server's decoder requires it (ScalarFits); the loader checks the values of the
// fields it reads beyond that (ranges, formats).
constexpr std::string_view kSchema = R"(
ObjectMeta
  name string
  generateName string
  namespace string
  selfLink string
  uid string
  resourceVersion string
  generation int
  creationTimestamp time
  deletionTimestamp time
  deletionGracePeriodSeconds int
  labels map[string]
  annotations map[string]
  ownerReferences []OwnerReference
  finalizers []string
  managedFields []ManagedFieldsEntry
OwnerReference
  apiVersion string
  kind string
  name string
  uid string
  controller bool
  blockOwnerDeletion bool
ManagedFieldsEntry
  manager string
  operation string
  apiVersion string
  time time
  fieldsType string
  fieldsV1 any
  subresource string
ListMeta
  selfLink string
  resourceVersion string
  continue string
  remainingItemCount int
Condition
  type string
  status string
  observedGeneration int
  lastTransitionTime time
  reason string
  message string
LabelSelector
  matchLabels map[string]
  matchExpressions []LabelSelectorRequirement
LabelSelectorRequirement
  key string
  operator string
  values []string
LocalObjectReference
  name string
ObjectReference
  kind string
  namespace string
  name string
  uid string
  apiVersion string
  resourceVersion string
  fieldPath string

Node
  apiVersion string
  kind string
  metadata ObjectMeta
  spec NodeSpec
  status NodeStatus
NodeSpec
  podCIDR string
  podCIDRs []string
  providerID string
  unschedulable bool
  taints []Taint
  configSource NodeConfigSource
  externalID string
Taint
  key string
  value string
  effect string
  timeAdded time
NodeConfigSource
  configMap ConfigMapNodeConfigSource
ConfigMapNodeConfigSource
  namespace string
  name string
  uid string
  resourceVersion string
  kubeletConfigKey string
NodeStatus
  capacity map[quantity]
  allocatable map[quantity]
  phase string
  conditions []NodeCondition
  addresses []NodeAddress
  daemonEndpoints NodeDaemonEndpoints
  nodeInfo NodeSystemInfo
  images []ContainerImage
  volumesInUse []string
  volumesAttached []AttachedVolume
  config NodeConfigStatus
  runtimeHandlers []NodeRuntimeHandler
  features NodeFeatures
  declaredFeatures []string
NodeCondition
  type string
  status string
  lastHeartbeatTime time
  lastTransitionTime time
  reason string
  message string
NodeAddress
  type string
  address string
NodeDaemonEndpoints
  kubeletEndpoint DaemonEndpoint
DaemonEndpoint
  Port int
NodeSystemInfo
  machineID string
  systemUUID string
  bootID string
  kernelVersion string
  osImage string
  containerRuntimeVersion string
  kubeletVersion string
  kubeProxyVersion string
  operatingSystem string
  architecture string
  swap NodeSwapStatus
NodeSwapStatus
  capacity int
ContainerImage
  names []string
  sizeBytes int
AttachedVolume
  name string
  devicePath string
NodeConfigStatus
  assigned NodeConfigSource
  active NodeConfigSource
  lastKnownGood NodeConfigSource
  error string
NodeRuntimeHandler
  name string
  features NodeRuntimeHandlerFeatures
NodeRuntimeHandlerFeatures
  recursiveReadOnlyMounts bool
  userNamespaces bool
NodeFeatures
  supplementalGroupsPolicy bool

Pod
  apiVersion string
  kind string
  metadata ObjectMeta
  spec PodSpec
  status PodStatus
PodTemplateSpec
  metadata ObjectMeta
  spec PodSpec
PodSpec
  volumes []Volume
  initContainers []Container
  containers []Container
  ephemeralContainers []EphemeralContainer
  restartPolicy string
  terminationGracePeriodSeconds int
  activeDeadlineSeconds int
  dnsPolicy string
  nodeSelector map[string]
  serviceAccountName string
  serviceAccount string
  automountServiceAccountToken bool
  nodeName string
  hostNetwork bool
  hostPID bool
  hostIPC bool
  shareProcessNamespace bool
  securityContext PodSecurityContext
  imagePullSecrets []LocalObjectReference
  hostname string
  subdomain string
  affinity Affinity
  schedulerName string
  tolerations []Toleration
  hostAliases []HostAlias
  priorityClassName string
  priority int
  dnsConfig PodDNSConfig
  readinessGates []PodReadinessGate
  runtimeClassName string
  enableServiceLinks bool
  preemptionPolicy string
  overhead map[quantity]
  topologySpreadConstraints []TopologySpreadConstraint
  setHostnameAsFQDN bool
  os PodOS
  hostUsers bool
  schedulingGates []PodSchedulingGate
  schedulingGroup PodSchedulingGroup
  resourceClaims []PodResourceClaim
  resources ResourceRequirements
  hostnameOverride string
Container
  name string
  image string
  command []string
  args []string
  workingDir string
  ports []ContainerPort
  envFrom []EnvFromSource
  env []EnvVar
  resources ResourceRequirements
  resizePolicy []ContainerResizePolicy
  restartPolicy string
  restartPolicyRules []ContainerRestartRule
  volumeMounts []VolumeMount
  volumeDevices []VolumeDevice
  livenessProbe Probe
  readinessProbe Probe
  startupProbe Probe
  lifecycle Lifecycle
  terminationMessagePath string
  terminationMessagePolicy string
  imagePullPolicy string
  securityContext SecurityContext
  stdin bool
  stdinOnce bool
  tty bool
EphemeralContainer : Container
  targetContainerName string
ContainerRestartRule
  action string
  exitCodes ContainerRestartRuleOnExitCodes
ContainerRestartRuleOnExitCodes
  operator string
  values []int
ContainerPort
  name string
  hostPort int
  containerPort int
  protocol string
  hostIP string
EnvFromSource
  prefix string
  configMapRef ConfigMapEnvSource
  secretRef SecretEnvSource
ConfigMapEnvSource
  name string
  optional bool
SecretEnvSource
  name string
  optional bool
EnvVar
  name string
  value string
  valueFrom EnvVarSource
EnvVarSource
  fieldRef ObjectFieldSelector
  resourceFieldRef ResourceFieldSelector
  configMapKeyRef ConfigMapKeySelector
  secretKeyRef SecretKeySelector
  fileKeyRef FileKeySelector
ObjectFieldSelector
  apiVersion string
  fieldPath string
ResourceFieldSelector
  containerName string
  resource string
  divisor quantity
ConfigMapKeySelector
  name string
  key string
  optional bool
SecretKeySelector
  name string
  key string
  optional bool
FileKeySelector
  volumeName string
  path string
  key string
  optional bool
ResourceRequirements
  limits map[quantity]
  requests map[quantity]
  claims []ContainerResourceClaim
ContainerResourceClaim
  name string
  request string
ContainerResizePolicy
  resourceName string
  restartPolicy string
VolumeMount
  name string
  readOnly bool
  recursiveReadOnly string
  mountPath string
  subPath string
  mountPropagation string
  subPathExpr string
VolumeDevice
  name string
  devicePath string
Probe : ProbeHandler
  initialDelaySeconds int
  timeoutSeconds int
  periodSeconds int
  successThreshold int
  failureThreshold int
  terminationGracePeriodSeconds int
ProbeHandler
  exec ExecAction
  httpGet HTTPGetAction
  tcpSocket TCPSocketAction
  grpc GRPCAction
ExecAction
  command []string
HTTPGetAction
  path string
  port intstr
  host string
  scheme string
  httpHeaders []HTTPHeader
HTTPHeader
  name string
  value string
TCPSocketAction
  port intstr
  host string
GRPCAction
  port int
  service string
Lifecycle
  postStart LifecycleHandler
  preStop LifecycleHandler
  stopSignal string
LifecycleHandler
  exec ExecAction
  httpGet HTTPGetAction
  tcpSocket TCPSocketAction
  sleep SleepAction
SleepAction
  seconds int
SecurityContext
  capabilities Capabilities
  privileged bool
  seLinuxOptions SELinuxOptions
  windowsOptions WindowsSecurityContextOptions
  runAsUser int
  runAsGroup int
  runAsNonRoot bool
  readOnlyRootFilesystem bool
  allowPrivilegeEscalation bool
  procMount string
  seccompProfile SeccompProfile
  appArmorProfile AppArmorProfile
Capabilities
  add []string
  drop []string
SELinuxOptions
  user string
  role string
  type string
  level string
WindowsSecurityContextOptions
  gmsaCredentialSpecName string
  gmsaCredentialSpec string
  runAsUserName string
  hostProcess bool
SeccompProfile
  type string
  localhostProfile string
AppArmorProfile
  type string
  localhostProfile string
PodSecurityContext
  seLinuxOptions SELinuxOptions
  windowsOptions WindowsSecurityContextOptions
  runAsUser int
  runAsGroup int
  runAsNonRoot bool
  supplementalGroups []int
  supplementalGroupsPolicy string
  fsGroup int
  sysctls []Sysctl
  fsGroupChangePolicy string
  seccompProfile SeccompProfile
  appArmorProfile AppArmorProfile
  seLinuxChangePolicy string
Sysctl
  name string
  value string
HostAlias
  ip string
  hostnames []string
PodDNSConfig
  nameservers []string
  searches []string
  options []PodDNSConfigOption
PodDNSConfigOption
  name string
  value string
PodReadinessGate
  conditionType string
PodOS
  name string
PodSchedulingGate
  name string
PodResourceClaim
  name string
  resourceClaimName string
  resourceClaimTemplateName string
Affinity
  nodeAffinity NodeAffinity
  podAffinity PodAffinity
  podAntiAffinity PodAffinity
NodeAffinity
  requiredDuringSchedulingIgnoredDuringExecution NodeSelector
  preferredDuringSchedulingIgnoredDuringExecution []PreferredSchedulingTerm
NodeSelector
  nodeSelectorTerms []NodeSelectorTerm
NodeSelectorTerm
  matchExpressions []NodeSelectorRequirement
  matchFields []NodeSelectorRequirement
NodeSelectorRequirement
  key string
  operator string
  values []string
PreferredSchedulingTerm
  weight int
  preference NodeSelectorTerm
PodAffinity
  requiredDuringSchedulingIgnoredDuringExecution []PodAffinityTerm
  preferredDuringSchedulingIgnoredDuringExecution []WeightedPodAffinityTerm
PodAffinityTerm
  labelSelector LabelSelector
  namespaces []string
  topologyKey string
  namespaceSelector LabelSelector
  matchLabelKeys []string
  mismatchLabelKeys []string
WeightedPodAffinityTerm
  weight int
  podAffinityTerm PodAffinityTerm
Toleration
  key string
  operator string
  value string
  effect string
  tolerationSeconds int
TopologySpreadConstraint
  maxSkew int
  topologyKey string
  whenUnsatisfiable string
  labelSelector LabelSelector
  minDomains int
  nodeAffinityPolicy string
  nodeTaintsPolicy string
  matchLabelKeys []string

Volume
  name string
  hostPath HostPathVolumeSource
  emptyDir EmptyDirVolumeSource
  gcePersistentDisk GCEPersistentDiskVolumeSource
  awsElasticBlockStore AWSElasticBlockStoreVolumeSource
  gitRepo GitRepoVolumeSource
  secret SecretVolumeSource
  nfs NFSVolumeSource
  iscsi ISCSIVolumeSource
  glusterfs GlusterfsVolumeSource
  persistentVolumeClaim PersistentVolumeClaimVolumeSource
  rbd RBDVolumeSource
  flexVolume FlexVolumeSource
  cinder CinderVolumeSource
  cephfs CephFSVolumeSource
  flocker FlockerVolumeSource
  downwardAPI DownwardAPIVolumeSource
  fc FCVolumeSource
  azureFile AzureFileVolumeSource
  configMap ConfigMapVolumeSource
  vsphereVolume VsphereVirtualDiskVolumeSource
  quobyte QuobyteVolumeSource
  azureDisk AzureDiskVolumeSource
  photonPersistentDisk PhotonPersistentDiskVolumeSource
  projected ProjectedVolumeSource
  portworxVolume PortworxVolumeSource
  scaleIO ScaleIOVolumeSource
  storageos StorageOSVolumeSource
  csi CSIVolumeSource
  ephemeral EphemeralVolumeSource
  image ImageVolumeSource
HostPathVolumeSource
  path string
  type string
EmptyDirVolumeSource
  medium string
  sizeLimit quantity
GCEPersistentDiskVolumeSource
  pdName string
  fsType string
  partition int
  readOnly bool
AWSElasticBlockStoreVolumeSource
  volumeID string
  fsType string
  partition int
  readOnly bool
GitRepoVolumeSource
  repository string
  revision string
  directory string
SecretVolumeSource
  secretName string
  items []KeyToPath
  defaultMode int
  optional bool
KeyToPath
  key string
  path string
  mode int
NFSVolumeSource
  server string
  path string
  readOnly bool
ISCSIVolumeSource
  targetPortal string
  iqn string
  lun int
  iscsiInterface string
  fsType string
  readOnly bool
  portals []string
  chapAuthDiscovery bool
  chapAuthSession bool
  secretRef LocalObjectReference
  initiatorName string
GlusterfsVolumeSource
  endpoints string
  path string
  readOnly bool
PersistentVolumeClaimVolumeSource
  claimName string
  readOnly bool
RBDVolumeSource
  monitors []string
  image string
  fsType string
  pool string
  user string
  keyring string
  secretRef LocalObjectReference
  readOnly bool
FlexVolumeSource
  driver string
  fsType string
  secretRef LocalObjectReference
  readOnly bool
  options map[string]
CinderVolumeSource
  volumeID string
  fsType string
  readOnly bool
  secretRef LocalObjectReference
CephFSVolumeSource
  monitors []string
  path string
  user string
  secretFile string
  secretRef LocalObjectReference
  readOnly bool
FlockerVolumeSource
  datasetName string
  datasetUUID string
DownwardAPIVolumeSource
  items []DownwardAPIVolumeFile
  defaultMode int
DownwardAPIVolumeFile
  path string
  fieldRef ObjectFieldSelector
  resourceFieldRef ResourceFieldSelector
  mode int
FCVolumeSource
  targetWWNs []string
  lun int
  fsType string
  readOnly bool
  wwids []string
AzureFileVolumeSource
  secretName string
  shareName string
  readOnly bool
ConfigMapVolumeSource
  name string
  items []KeyToPath
  defaultMode int
  optional bool
VsphereVirtualDiskVolumeSource
  volumePath string
  fsType string
  storagePolicyName string
  storagePolicyID string
QuobyteVolumeSource
  registry string
  volume string
  readOnly bool
  user string
  group string
  tenant string
AzureDiskVolumeSource
  diskName string
  diskURI string
  cachingMode string
  fsType string
  readOnly bool
  kind string
PhotonPersistentDiskVolumeSource
  pdID string
  fsType string
ProjectedVolumeSource
  sources []VolumeProjection
  defaultMode int
VolumeProjection
  secret SecretProjection
  downwardAPI DownwardAPIProjection
  configMap ConfigMapProjection
  serviceAccountToken ServiceAccountTokenProjection
  clusterTrustBundle ClusterTrustBundleProjection
  podCertificate PodCertificateProjection
SecretProjection
  name string
  items []KeyToPath
  optional bool
DownwardAPIProjection
  items []DownwardAPIVolumeFile
ConfigMapProjection
  name string
  items []KeyToPath
  optional bool
ServiceAccountTokenProjection
  audience string
  expirationSeconds int
  path string
ClusterTrustBundleProjection
  name string
  signerName string
  labelSelector LabelSelector
  optional bool
  path string
PodCertificateProjection
  signerName string
  keyType string
  maxExpirationSeconds int
  credentialBundlePath string
  keyPath string
  certificateChainPath string
PortworxVolumeSource
  volumeID string
  fsType string
  readOnly bool
ScaleIOVolumeSource
  gateway string
  system string
  secretRef LocalObjectReference
  sslEnabled bool
  protectionDomain string
  storagePool string
  storageMode string
  volumeName string
  fsType string
  readOnly bool
StorageOSVolumeSource
  volumeName string
  volumeNamespace string
  fsType string
  readOnly bool
  secretRef LocalObjectReference
CSIVolumeSource
  driver string
  readOnly bool
  fsType string
  volumeAttributes map[string]
  nodePublishSecretRef LocalObjectReference
EphemeralVolumeSource
  volumeClaimTemplate PersistentVolumeClaimTemplate
ImageVolumeSource
  reference string
  pullPolicy string
PersistentVolumeClaimTemplate
  metadata ObjectMeta
  spec PersistentVolumeClaimSpec
PersistentVolumeClaim
  apiVersion string
  kind string
  metadata ObjectMeta
  spec PersistentVolumeClaimSpec
  status PersistentVolumeClaimStatus
PersistentVolumeClaimStatus
  phase string
  accessModes []string
  capacity map[quantity]
  conditions []PersistentVolumeClaimCondition
  allocatedResources map[quantity]
  allocatedResourceStatuses map[string]
  currentVolumeAttributesClassName string
  modifyVolumeStatus any
PersistentVolumeClaimCondition
  type string
  status string
  lastProbeTime time
  lastTransitionTime time
  reason string
  message string
PersistentVolume
  apiVersion string
  kind string
  metadata ObjectMeta
  spec PersistentVolumeSpec
  status PersistentVolumeStatus
PersistentVolumeSpec
  capacity map[quantity]
  gcePersistentDisk GCEPersistentDiskVolumeSource
  awsElasticBlockStore AWSElasticBlockStoreVolumeSource
  hostPath HostPathVolumeSource
  glusterfs any
  nfs NFSVolumeSource
  rbd RBDPersistentVolumeSource
  iscsi ISCSIPersistentVolumeSource
  cinder any
  cephfs any
  fc FCVolumeSource
  flocker FlockerVolumeSource
  flexVolume any
  azureFile any
  vsphereVolume VsphereVirtualDiskVolumeSource
  quobyte QuobyteVolumeSource
  azureDisk AzureDiskVolumeSource
  photonPersistentDisk PhotonPersistentDiskVolumeSource
  portworxVolume PortworxVolumeSource
  scaleIO any
  local LocalVolumeSource
  storageos any
  csi CSIPersistentVolumeSource
  accessModes []string
  claimRef ObjectReference
  persistentVolumeReclaimPolicy string
  storageClassName string
  mountOptions []string
  volumeMode string
  nodeAffinity VolumeNodeAffinity
  volumeAttributesClassName string
RBDPersistentVolumeSource
  monitors []string
  image string
  fsType string
  pool string
  user string
  keyring string
  secretRef SecretReference
  readOnly bool
ISCSIPersistentVolumeSource
  targetPortal string
  iqn string
  lun int
  iscsiInterface string
  fsType string
  readOnly bool
  portals []string
  chapAuthDiscovery bool
  chapAuthSession bool
  secretRef SecretReference
  initiatorName string
SecretReference
  name string
  namespace string
LocalVolumeSource
  path string
  fsType string
CSIPersistentVolumeSource
  driver string
  volumeHandle string
  readOnly bool
  fsType string
  volumeAttributes map[string]
  controllerPublishSecretRef SecretReference
  nodeStageSecretRef SecretReference
  nodePublishSecretRef SecretReference
  controllerExpandSecretRef SecretReference
  nodeExpandSecretRef SecretReference
VolumeNodeAffinity
  required NodeSelector
PersistentVolumeStatus
  phase string
  message string
  reason string
  lastPhaseTransitionTime time
StorageClass
  apiVersion string
  kind string
  metadata ObjectMeta
  provisioner string
  parameters map[string]
  reclaimPolicy string
  mountOptions []string
  allowVolumeExpansion bool
  volumeBindingMode string
  allowedTopologies []TopologySelectorTerm
TopologySelectorTerm
  matchLabelExpressions []TopologySelectorLabelRequirement
TopologySelectorLabelRequirement
  key string
  values []string
CSINode
  apiVersion string
  kind string
  metadata ObjectMeta
  spec CSINodeSpec
CSINodeSpec
  drivers []CSINodeDriver
CSINodeDriver
  name string
  nodeID string
  topologyKeys []string
  allocatable VolumeNodeResources
VolumeNodeResources
  count int
CSIDriver
  apiVersion string
  kind string
  metadata ObjectMeta
  spec CSIDriverSpec
CSIDriverSpec
  attachRequired bool
  podInfoOnMount bool
  volumeLifecycleModes []string
  storageCapacity bool
  fsGroupPolicy string
  tokenRequests []any
  requiresRepublish bool
  seLinuxMount bool
  nodeAllocatableUpdatePeriodSeconds int
  serviceAccountTokenInSecrets bool
CSIStorageCapacity
  apiVersion string
  kind string
  metadata ObjectMeta
  nodeTopology LabelSelector
  storageClassName string
  capacity quantity
  maximumVolumeSize quantity
DeviceClass
  apiVersion string
  kind string
  metadata ObjectMeta
  spec DeviceClassSpec
DeviceClassSpec
  selectors []DeviceSelector
  config []DeviceClassConfiguration
  extendedResourceName string
DeviceSelector
  cel CELDeviceSelector
CELDeviceSelector
  expression string
DeviceClassConfiguration
  opaque OpaqueDeviceConfiguration
OpaqueDeviceConfiguration
  driver string
  parameters any
ResourceSlice
  apiVersion string
  kind string
  metadata ObjectMeta
  spec ResourceSliceSpec
ResourceSliceSpec
  driver string
  pool ResourcePool
  nodeName string
  nodeSelector NodeSelector
  allNodes bool
  perDeviceNodeSelection bool
  devices []Device
  sharedCounters []CounterSet
ResourcePool
  name string
  generation int
  resourceSliceCount int
CounterSet
  name string
  counters map[Counter]
Counter
  value quantity
Device
  name string
  attributes map[DeviceAttribute]
  capacity map[DeviceCapacity]
  consumesCounters []DeviceCounterConsumption
  nodeName string
  nodeSelector NodeSelector
  allNodes bool
  taints []DeviceTaint
  bindsToNode bool
  bindingConditions []string
  bindingFailureConditions []string
  allowMultipleAllocations bool
DeviceAttribute
  int int
  bool bool
  string string
  version string
DeviceCapacity
  value quantity
  requestPolicy CapacityRequestPolicy
CapacityRequestPolicy
  default quantity
  validValues []quantity
  validRange CapacityRequestPolicyRange
CapacityRequestPolicyRange
  min quantity
  max quantity
  step quantity
DeviceCounterConsumption
  counterSet string
  counters map[Counter]
DeviceTaint
  key string
  value string
  effect string
  timeAdded time
ResourceClaim
  apiVersion string
  kind string
  metadata ObjectMeta
  spec ResourceClaimSpec
  status ResourceClaimStatus
ResourceClaimSpec
  devices DeviceClaim
DeviceClaim
  requests []DeviceRequest
  constraints []DeviceConstraint
  config []DeviceClaimConfiguration
DeviceRequest
  name string
  exactly ExactDeviceRequest
  firstAvailable []DeviceSubRequest
ExactDeviceRequest
  deviceClassName string
  selectors []DeviceSelector
  allocationMode string
  count int
  adminAccess bool
  tolerations []DeviceToleration
  capacity CapacityRequirements
DeviceSubRequest
  name string
  deviceClassName string
  selectors []DeviceSelector
  allocationMode string
  count int
  tolerations []DeviceToleration
  capacity CapacityRequirements
CapacityRequirements
  requests map[quantity]
DeviceToleration
  key string
  operator string
  value string
  effect string
  tolerationSeconds int
DeviceConstraint
  requests []string
  matchAttribute string
  distinctAttribute string
DeviceClaimConfiguration
  requests []string
  opaque OpaqueDeviceConfiguration
ResourceClaimStatus
  allocation AllocationResult
  reservedFor []ResourceClaimConsumerReference
  devices []any
AllocationResult
  devices DeviceAllocationResult
  nodeSelector NodeSelector
  allocationTimestamp time
DeviceAllocationResult
  results []DeviceRequestAllocationResult
  config []DeviceAllocationConfiguration
DeviceRequestAllocationResult
  request string
  driver string
  pool string
  device string
  adminAccess bool
  tolerations []DeviceToleration
  bindingConditions []string
  bindingFailureConditions []string
  shareID string
  consumedCapacity map[quantity]
DeviceAllocationConfiguration
  source string
  requests []string
  opaque OpaqueDeviceConfiguration
ResourceClaimConsumerReference
  apiGroup string
  resource string
  name string
  uid string
ResourceClaimTemplate
  apiVersion string
  kind string
  metadata ObjectMeta
  spec ResourceClaimTemplateSpec
ResourceClaimTemplateSpec
  metadata ObjectMeta
  spec ResourceClaimSpec
PersistentVolumeClaimSpec
  accessModes []string
  selector LabelSelector
  resources VolumeResourceRequirements
  volumeName string
  storageClassName string
  volumeMode string
  dataSource TypedLocalObjectReference
  dataSourceRef TypedObjectReference
  volumeAttributesClassName string
VolumeResourceRequirements
  limits map[quantity]
  requests map[quantity]
TypedLocalObjectReference
  apiGroup string
  kind string
  name string
TypedObjectReference
  apiGroup string
  kind string
  name string
  namespace string

PodStatus
  observedGeneration int
  phase string
  conditions []PodCondition
  message string
  reason string
  nominatedNodeName string
  hostIP string
  hostIPs []HostIP
  podIP string
  podIPs []PodIP
  startTime time
  initContainerStatuses []ContainerStatus
  containerStatuses []ContainerStatus
  ephemeralContainerStatuses []ContainerStatus
  qosClass string
  resize string
  resourceClaimStatuses []PodResourceClaimStatus
  extendedResourceClaimStatus any
PodCondition
  type string
  observedGeneration int
  status string
  lastProbeTime time
  lastTransitionTime time
  reason string
  message string
HostIP
  ip string
PodIP
  ip string
PodResourceClaimStatus
  name string
  resourceClaimName string
ContainerStatus
  name string
  state ContainerState
  lastState ContainerState
  ready bool
  restartCount int
  image string
  imageID string
  containerID string
  started bool
  allocatedResources map[quantity]
  resources ResourceRequirements
  volumeMounts []VolumeMountStatus
  user any
  allocatedResourcesStatus any
  stopSignal string
ContainerState
  waiting ContainerStateWaiting
  running ContainerStateRunning
  terminated ContainerStateTerminated
ContainerStateWaiting
  reason string
  message string
ContainerStateRunning
  startedAt time
ContainerStateTerminated
  exitCode int
  signal int
  reason string
  message string
  startedAt time
  finishedAt time
  containerID string
VolumeMountStatus
  name string
  mountPath string
  readOnly bool
  recursiveReadOnly string

Namespace
  apiVersion string
  kind string
  metadata ObjectMeta
  spec NamespaceSpec
  status NamespaceStatus
NamespaceSpec
  finalizers []string
NamespaceStatus
  phase string
  conditions []NamespaceCondition
NamespaceCondition
  type string
  status string
  lastTransitionTime time
  reason string
  message string

PriorityClass
  apiVersion string
  kind string
  metadata ObjectMeta
  value int
  globalDefault bool
  description string
  preemptionPolicy string

PodDisruptionBudget
  apiVersion string
  kind string
  metadata ObjectMeta
  spec PodDisruptionBudgetSpec
  status PodDisruptionBudgetStatus
PodDisruptionBudgetSpec
  minAvailable intstr
  selector LabelSelector
  maxUnavailable intstr
  unhealthyPodEvictionPolicy string
PodDisruptionBudgetStatus
  observedGeneration int
  disruptedPods map[time]
  disruptionsAllowed int
  currentHealthy int
  desiredHealthy int
  expectedPods int
  conditions []Condition

PodGroup
  apiVersion string
  kind string
  metadata ObjectMeta
  spec PodGroupSpec
  status PodGroupStatus
PodGroupSpec
  podGroupTemplateRef PodGroupTemplateReference
  schedulingPolicy PodGroupSchedulingPolicy
  schedulingConstraints PodGroupSchedulingConstraints
  disruptionMode string
  priorityClassName string
  priority int
PodGroupTemplateReference
  workload WorkloadPodGroupTemplateReference
WorkloadPodGroupTemplateReference
  workloadName string
  podGroupTemplateName string
PodGroupSchedulingPolicy
  basic BasicSchedulingPolicy
  gang GangSchedulingPolicy
BasicSchedulingPolicy
GangSchedulingPolicy
  minCount int
PodGroupSchedulingConstraints
  topology []TopologyConstraint
TopologyConstraint
  key string
PodGroupStatus
  conditions []Condition
PodSchedulingGroup
  podGroupName string
CoschedulingPodGroup
  apiVersion string
  kind string
  metadata ObjectMeta
  spec CoschedulingPodGroupSpec
  status CoschedulingPodGroupStatus
CoschedulingPodGroupSpec
  minMember int
  minResources map[quantity]
  scheduleTimeoutSeconds int
CoschedulingPodGroupStatus
  phase string
  occupiedBy string
  scheduled int
  running int
  succeeded int
  failed int
  scheduleStartTime time

Deployment
  apiVersion string
  kind string
  metadata ObjectMeta
  spec DeploymentSpec
  status DeploymentStatus
DeploymentSpec
  replicas int
  selector LabelSelector
  template PodTemplateSpec
  strategy DeploymentStrategy
  minReadySeconds int
  revisionHistoryLimit int
  paused bool
  progressDeadlineSeconds int
DeploymentStrategy
  type string
  rollingUpdate RollingUpdateDeployment
RollingUpdateDeployment
  maxUnavailable intstr
  maxSurge intstr
DeploymentStatus
  observedGeneration int
  replicas int
  updatedReplicas int
  readyReplicas int
  availableReplicas int
  unavailableReplicas int
  terminatingReplicas int
  conditions []DeploymentCondition
  collisionCount int
DeploymentCondition
  type string
  status string
  lastUpdateTime time
  lastTransitionTime time
  reason string
  message string

ReplicaSet
  apiVersion string
  kind string
  metadata ObjectMeta
  spec ReplicaSetSpec
  status ReplicaSetStatus
ReplicaSetSpec
  replicas int
  minReadySeconds int
  selector LabelSelector
  template PodTemplateSpec
ReplicaSetStatus
  replicas int
  fullyLabeledReplicas int
  readyReplicas int
  availableReplicas int
  terminatingReplicas int
  observedGeneration int
  conditions []ReplicaSetCondition
ReplicaSetCondition
  type string
  status string
  lastTransitionTime time
  reason string
  message string

ReplicationController
  apiVersion string
  kind string
  metadata ObjectMeta
  spec ReplicationControllerSpec
  status ReplicationControllerStatus
ReplicationControllerSpec
  replicas int
  minReadySeconds int
  selector map[string]
  template PodTemplateSpec
ReplicationControllerStatus
  replicas int
  fullyLabeledReplicas int
  readyReplicas int
  availableReplicas int
  observedGeneration int
  conditions []ReplicaSetCondition

StatefulSet
  apiVersion string
  kind string
  metadata ObjectMeta
  spec StatefulSetSpec
  status StatefulSetStatus
StatefulSetSpec
  replicas int
  selector LabelSelector
  template PodTemplateSpec
  volumeClaimTemplates []PersistentVolumeClaim
  serviceName string
  podManagementPolicy string
  updateStrategy StatefulSetUpdateStrategy
  revisionHistoryLimit int
  minReadySeconds int
  persistentVolumeClaimRetentionPolicy StatefulSetPersistentVolumeClaimRetentionPolicy
  ordinals StatefulSetOrdinals
StatefulSetUpdateStrategy
  type string
  rollingUpdate RollingUpdateStatefulSetStrategy
RollingUpdateStatefulSetStrategy
  partition int
  maxUnavailable intstr
StatefulSetPersistentVolumeClaimRetentionPolicy
  whenDeleted string
  whenScaled string
StatefulSetOrdinals
  start int
StatefulSetStatus
  observedGeneration int
  replicas int
  readyReplicas int
  currentReplicas int
  updatedReplicas int
  currentRevision string
  updateRevision string
  collisionCount int
  conditions []ReplicaSetCondition
  availableReplicas int

DaemonSet
  apiVersion string
  kind string
  metadata ObjectMeta
  spec DaemonSetSpec
  status DaemonSetStatus
DaemonSetSpec
  selector LabelSelector
  template PodTemplateSpec
  updateStrategy DaemonSetUpdateStrategy
  minReadySeconds int
  revisionHistoryLimit int
DaemonSetUpdateStrategy
  type string
  rollingUpdate RollingUpdateDaemonSet
RollingUpdateDaemonSet
  maxUnavailable intstr
  maxSurge intstr
DaemonSetStatus
  currentNumberScheduled int
  numberMisscheduled int
  desiredNumberScheduled int
  numberReady int
  observedGeneration int
  updatedNumberScheduled int
  numberAvailable int
  numberUnavailable int
  collisionCount int
  conditions []ReplicaSetCondition

Job
  apiVersion string
  kind string
  metadata ObjectMeta
  spec JobSpec
  status JobStatus
JobSpec
  parallelism int
  completions int
  activeDeadlineSeconds int
  podFailurePolicy PodFailurePolicy
  successPolicy SuccessPolicy
  backoffLimit int
  backoffLimitPerIndex int
  maxFailedIndexes int
  selector LabelSelector
  manualSelector bool
  template PodTemplateSpec
  ttlSecondsAfterFinished int
  completionMode string
  suspend bool
  podReplacementPolicy string
  managedBy string
PodFailurePolicy
  rules []PodFailurePolicyRule
PodFailurePolicyRule
  action string
  onExitCodes PodFailurePolicyOnExitCodesRequirement
  onPodConditions []PodFailurePolicyOnPodConditionsPattern
PodFailurePolicyOnExitCodesRequirement
  containerName string
  operator string
  values []int
PodFailurePolicyOnPodConditionsPattern
  type string
  status string
SuccessPolicy
  rules []SuccessPolicyRule
SuccessPolicyRule
  succeededIndexes string
  succeededCount int
JobStatus
  conditions []JobCondition
  startTime time
  completionTime time
  active int
  succeeded int
  failed int
  terminating int
  completedIndexes string
  failedIndexes string
  uncountedTerminatedPods UncountedTerminatedPods
  ready int
JobCondition
  type string
  status string
  lastProbeTime time
  lastTransitionTime time
  reason string
  message string
UncountedTerminatedPods
  succeeded []string
  failed []string

CronJob
  apiVersion string
  kind string
  metadata ObjectMeta
  spec CronJobSpec
  status CronJobStatus
CronJobSpec
  schedule string
  timeZone string
  startingDeadlineSeconds int
  concurrencyPolicy string
  suspend bool
  jobTemplate JobTemplateSpec
  successfulJobsHistoryLimit int
  failedJobsHistoryLimit int
JobTemplateSpec
  metadata ObjectMeta
  spec JobSpec
CronJobStatus
  active []ObjectReference
  lastScheduleTime time
  lastSuccessfulTime time

ServiceAccount
  apiVersion string
  kind string
  metadata ObjectMeta
  secrets []ObjectReference
  imagePullSecrets []LocalObjectReference
  automountServiceAccountToken bool

ConfigMap
  apiVersion string
  kind string
  metadata ObjectMeta
  immutable bool
  data map[string]
  binaryData map[string]

Secret
  apiVersion string
  kind string
  metadata ObjectMeta
  immutable bool
  data map[string]
  stringData map[string]
  type string

ClusterRole
  apiVersion string
  kind string
  metadata ObjectMeta
  rules []PolicyRule
  aggregationRule AggregationRule
Role
  apiVersion string
  kind string
  metadata ObjectMeta
  rules []PolicyRule
PolicyRule
  verbs []string
  apiGroups []string
  resources []string
  resourceNames []string
  nonResourceURLs []string
AggregationRule
  clusterRoleSelectors []LabelSelector
ClusterRoleBinding
  apiVersion string
  kind string
  metadata ObjectMeta
  subjects []Subject
  roleRef RoleRef
RoleBinding
  apiVersion string
  kind string
  metadata ObjectMeta
  subjects []Subject
  roleRef RoleRef
Subject
  kind string
  apiGroup string
  name string
  namespace string
RoleRef
  apiGroup string
  kind string
  name string
)";

// The kinds checked, each described by the type of the same name.
constexpr std::string_view kCheckedKinds[] = {
    "Node",
    "Pod",
    "Namespace",
    "PriorityClass",
    "PodDisruptionBudget",
    "PodGroup",
    "CoschedulingPodGroup",  // scheduling.x-k8s.io/v1alpha1 (scheduler-plugins)
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "DeviceClass",
    "ResourceSlice",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "Deployment",
    "ReplicaSet",
    "ReplicationController",
    "StatefulSet",
    "DaemonSet",
    "Job",
    "CronJob",
    // Served by `kubesched apiserver` only (the loader skips them): a scheduler's deployment.
    "ServiceAccount",
    "ConfigMap",
    "Secret",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
};

// A type of the schema. Scalars and `any` are shared singletons; lists and maps point at their
// element type; objects hold their fields sorted by name for binary search.
struct Type {
  enum class Shape : uint8_t { kScalar, kAny, kObject, kList, kMap };
  Shape shape = Shape::kAny;
  std::string_view scalar;                                  // kScalar: the schema's name (string, int, ...)
  std::string_view expected;                                // kScalar: "a string", "an integer", ...
  const Type* elem = nullptr;                               // kList, kMap
  std::vector<std::pair<std::string, const Type*>> fields;  // kObject

  const Type* Field(std::string_view name) const {
    auto it = std::lower_bound(fields.begin(), fields.end(), name,
                               [](const auto& f, std::string_view n) { return f.first < n; });
    return it != fields.end() && it->first == name ? it->second : nullptr;
  }
};

class Schema {
 public:
  static const Schema& Get() {
    static const Schema schema;
    return schema;
  }

  const Type* Kind(std::string_view kind) const {
    for (std::string_view k : kCheckedKinds) {
      if (k == kind) return Named(kind);
    }
    return nullptr;
  }
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  Schema() {
    for (auto& [name, type] : scalars_) {
      type.shape = Type::Shape::kScalar;
      type.scalar = name;
      type.expected = ScalarExpectation(name);
    }
    any_.shape = Type::Shape::kAny;
    Parse();
    for (std::string_view k : kCheckedKinds) {
      if (Named(k) == nullptr) problems_.push_back("checked kind " + std::string(k) + " has no type");
    }
  }

  const Type* Named(std::string_view name) const {
    auto it = named_.find(name);
    return it == named_.end() ? nullptr : it->second.get();
  }

  // Two passes: declare every object type, then resolve field types (so types may refer to types
  // declared further down).
  void Parse() {
    struct Decl {
      std::string name, base;
      std::vector<std::pair<std::string, std::string>> fields;
    };
    std::vector<Decl> decls;
    size_t pos = 0;
    while (pos < kSchema.size()) {
      size_t end = kSchema.find('\n', pos);
      if (end == std::string_view::npos) end = kSchema.size();
      std::string_view line = kSchema.substr(pos, end - pos);
      pos = end + 1;
      if (line.find_first_not_of(' ') == std::string_view::npos) continue;
      const bool field = line.starts_with("  ");
      const size_t a = line.find_first_not_of(' ');
      line.remove_prefix(a);
      const size_t sep = line.find(' ');
      std::string_view first = line.substr(0, sep);
      std::string_view rest = sep == std::string_view::npos ? std::string_view() : line.substr(sep + 1);
      if (!field) {
        Decl d{std::string(first), "", {}};
        if (rest.starts_with(": "))
          d.base = std::string(rest.substr(2));
        else if (!rest.empty())
          problems_.push_back("malformed type line: " + std::string(line));
        decls.push_back(std::move(d));
      } else if (decls.empty() || rest.empty() || rest.find(' ') != std::string_view::npos) {
        problems_.push_back("malformed field line: " + std::string(line));
      } else {
        decls.back().fields.emplace_back(first, rest);
      }
    }
    for (const Decl& d : decls) {
      auto [it, inserted] = named_.emplace(d.name, std::make_unique<Type>());
      if (!inserted) problems_.push_back("type declared twice: " + d.name);
      it->second->shape = Type::Shape::kObject;
    }
    for (const Decl& d : decls) {
      Type& t = *named_.at(d.name);
      std::vector<std::pair<std::string, std::string>> fields;
      if (!d.base.empty()) {
        auto base = std::find_if(decls.begin(), decls.end(), [&](const Decl& b) { return b.name == d.base; });
        if (base == decls.end()) {
          problems_.push_back("unknown base type " + d.base + " of " + d.name);
        } else {
          fields = base->fields;
        }
      }
      fields.insert(fields.end(), d.fields.begin(), d.fields.end());
      for (const auto& [name, type] : fields) t.fields.emplace_back(name, Resolve(type, d.name + "." + name));
      std::sort(t.fields.begin(), t.fields.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      for (size_t i = 1; i < t.fields.size(); ++i) {
        if (t.fields[i].first == t.fields[i - 1].first)
          problems_.push_back("duplicate field " + d.name + "." + t.fields[i].first);
      }
    }
  }

  const Type* Resolve(std::string_view spec, const std::string& where) {
    for (auto& [name, type] : scalars_) {
      if (spec == name) return &type;
    }
    if (spec == "any") return &any_;
    if (spec.starts_with("[]") || (spec.starts_with("map[") && spec.ends_with("]"))) {
      const bool list = spec.starts_with("[]");
      const std::string_view inner = list ? spec.substr(2) : spec.substr(4, spec.size() - 5);
      auto t = std::make_unique<Type>();
      t->shape = list ? Type::Shape::kList : Type::Shape::kMap;
      t->elem = Resolve(inner, where);
      composite_.push_back(std::move(t));
      return composite_.back().get();
    }
    if (const Type* t = Named(spec)) return t;
    problems_.push_back("unknown type " + std::string(spec) + " for " + where);
    return &any_;
  }

  static std::string_view ScalarExpectation(std::string_view name) {
    if (name == "string") return "a string";
    if (name == "int") return "an integer";
    if (name == "bool") return "true or false";
    if (name == "number") return "a number";
    if (name == "quantity") return "a quantity such as 500m, 2 or 1Gi";
    if (name == "intstr") return "an integer or a string";
    return "a time such as \"2024-05-01T12:00:00Z\"";
  }

  std::pair<std::string_view, Type> scalars_[7] = {{"string", {}},   {"int", {}},    {"bool", {}}, {"number", {}},
                                                   {"quantity", {}}, {"intstr", {}}, {"time", {}}};
  Type any_;
  std::map<std::string, std::unique_ptr<Type>, std::less<>> named_;
  std::deque<std::unique_ptr<Type>> composite_;
  std::vector<std::string> problems_;
};

// The path to a node, kept as a chain on the stack and rendered only when there is something to
// report, so checking a valid object builds no strings.
struct PathLink {
  const PathLink* parent = nullptr;
  std::string_view key;  // empty for a list index
  size_t index = 0;      // the list index, or the member's position in its mapping
};

// The same chain as steps through the document, for finding the line later.
yaml::SourcePath Steps(const PathLink* link, bool at_key) {
  yaml::SourcePath out;
  for (; link != nullptr; link = link->parent) {
    using Kind = yaml::PathStep::Kind;
    const Kind kind = link->key.empty() ? Kind::kElement : Kind::kValue;
    out.push_back(yaml::PathStep{kind, static_cast<uint32_t>(link->index)});
  }
  std::reverse(out.begin(), out.end());
  if (at_key && !out.empty()) out.back().kind = yaml::PathStep::Kind::kKey;
  return out;
}

std::string Render(std::string_view prefix, const PathLink* link) {
  std::vector<const PathLink*> chain;
  for (; link != nullptr; link = link->parent) chain.push_back(link);
  std::string out(prefix);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if ((*it)->key.empty()) {
      field_path::AppendIndex(out, (*it)->index);
    } else {
      field_path::AppendField(out, (*it)->key);
    }
  }
  return out;
}

std::string UnknownFieldMessage(const Type& type, std::string_view name) {
  std::vector<std::string_view> names;
  names.reserve(type.fields.size());
  for (const auto& [field, unused] : type.fields) names.push_back(field);
  const std::string_view best = field_path::Closest(name, names);
  if (best.empty()) return "unknown field";
  return "unknown field (did you mean " + GoQuote(best) + "?)";
}

class Checker {
 public:
  Checker(std::string_view prefix, const yaml::ScalarTexts* texts, std::vector<FieldIssue>& issues)
      : prefix_(prefix), texts_(texts), issues_(issues) {}

  void Check(const json::Value& n, const Type& type, const PathLink* path) {
    switch (type.shape) {
      case Type::Shape::kAny:
        return;
      case Type::Shape::kScalar:
        if (Present(n) && (n.IsObject() || n.IsArray() || !ScalarFits(n, type.scalar)))
          Report(path, false, "expected " + std::string(type.expected) + ", got " + DescribeTyped(n, texts_),
                 FieldIssue::Kind::kType);
        return;
      case Type::Shape::kList:
        if (!Present(n)) return;
        if (!n.IsArray()) {
          Report(path, false, "expected a list, got " + Describe(n, texts_), FieldIssue::Kind::kType);
          return;
        }
        for (rapidjson::SizeType i = 0; i < n.Size(); ++i) {
          const PathLink item{path, {}, i};
          Check(n[i], *type.elem, &item);
        }
        return;
      case Type::Shape::kMap:
      case Type::Shape::kObject:
        if (!Present(n)) return;
        if (!n.IsObject()) {
          Report(path, false, "expected a mapping of fields, got " + Describe(n, texts_), FieldIssue::Kind::kType);
          return;
        }
        CheckMapping(n, type, path);
        return;
    }
  }

 private:
  void CheckMapping(const json::Value& n, const Type& type, const PathLink* path) {
    // keys_ is a stack shared by the nested calls: this mapping's keys sit above `start`. Most
    // mappings have few keys, where comparing with each earlier key beats sorting or hashing; a
    // large one (100,000 labels) gets a hash set, or the check is quadratic (it took 15 s).
    const size_t start = keys_.size();
    std::unordered_set<std::string_view> many;
    const bool hashed = n.MemberCount() > kLinearKeys;
    if (hashed) many.reserve(n.MemberCount());
    size_t index = 0;
    for (auto it = n.MemberBegin(); it != n.MemberEnd(); ++it, ++index) {
      const std::string_view name = json::View(it->name);  // lives as long as the document
      const PathLink child{path, name, index};
      const bool seen =
          hashed ? !many.insert(name).second
                 : std::find(keys_.begin() + static_cast<std::ptrdiff_t>(start), keys_.end(), name) != keys_.end();
      if (seen) {
        Report(&child, true, "duplicate field", FieldIssue::Kind::kDuplicateField);
        continue;
      }
      if (!hashed) keys_.push_back(name);
      if (type.shape == Type::Shape::kMap) {
        Check(it->value, *type.elem, &child);
        continue;
      }
      const Type* field = type.Field(name);
      if (field == nullptr) {
        Report(&child, true, UnknownFieldMessage(type, name), FieldIssue::Kind::kUnknownField);
        continue;
      }
      Check(it->value, *field, &child);
    }
    keys_.resize(start);
  }

  void Report(const PathLink* path, bool at_key, std::string message, FieldIssue::Kind kind) {
    issues_.push_back(FieldIssue{Render(prefix_, path), std::move(message), 0, Steps(path, at_key), kind});
  }

  std::string_view prefix_;
  const yaml::ScalarTexts* texts_;
  std::vector<FieldIssue>& issues_;
  static constexpr rapidjson::SizeType kLinearKeys = 32;
  std::vector<std::string_view> keys_;
};

}  // namespace

bool HasFieldSchema(std::string_view kind) { return Schema::Get().Kind(kind) != nullptr; }

void CheckFields(const json::Value& object, std::string_view kind, std::string_view prefix,
                 std::vector<FieldIssue>& issues, const yaml::ScalarTexts* texts) {
  const Type* type = Schema::Get().Kind(kind);
  if (type == nullptr) return;
  Checker(prefix, texts, issues).Check(object, *type, nullptr);
}

std::vector<std::string> FieldSchemaProblems() { return Schema::Get().problems(); }

}  // namespace kubesched::api
