#include "server/printers.h"
#include "api/time_format.h"

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kubesched::server {
namespace {

using api::json::Value;

constexpr std::string_view kNameDoc =
    "Name must be unique within a namespace. Is required when creating resources, although some resources may "
    "allow a client to request the generation of an appropriate name automatically. Name is primarily intended for "
    "creation idempotence and configuration definition. Cannot be updated.";
constexpr std::string_view kAgeDoc =
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not "
    "guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is "
    "represented in RFC3339 form and is in UTC.";

constexpr Column kNameColumn{"Name", "string", "name", kNameDoc, 0};
constexpr Column kAgeColumn{"Age", "string", "", kAgeDoc, 0};

// The value at `path` below `v`, or null.
const Value* At(const Value& v, std::initializer_list<std::string_view> path) {
  const Value* cur = &v;
  for (std::string_view key : path) {
    cur = api::json::Find(*cur, key);
    if (cur == nullptr) return nullptr;
  }
  return cur;
}

std::string_view Str(const Value& v, std::initializer_list<std::string_view> path) {
  const Value* x = At(v, path);
  return x == nullptr ? std::string_view() : api::json::View(*x);
}

int64_t Int(const Value& v, std::initializer_list<std::string_view> path, int64_t fallback = 0) {
  const Value* x = At(v, path);
  return x != nullptr && x->IsInt64() ? x->GetInt64() : fallback;
}

bool Bool(const Value& v, std::initializer_list<std::string_view> path) {
  const Value* x = At(v, path);
  return x != nullptr && x->IsBool() && x->GetBool();
}

const Value* Array(const Value& v, std::initializer_list<std::string_view> path) {
  const Value* x = At(v, path);
  return x != nullptr && x->IsArray() ? x : nullptr;
}

std::string Age(const Value& obj, int64_t now_ns) {
  return TranslateTimestampSince(Str(obj, {"metadata", "creationTimestamp"}), now_ns);
}

std::string NoneIfEmpty(std::string_view s) { return s.empty() ? "<none>" : std::string(s); }

// IntOrString as upstream's String(): "2" or "50%".
std::string IntOrString(const Value* v) {
  if (v == nullptr) return "N/A";
  if (v->IsInt64()) return std::to_string(v->GetInt64());
  if (v->IsString()) return std::string(api::json::View(*v));
  return "N/A";
}

// layoutContainerCells: the containers' names and images, comma-joined.
void ContainerCells(const Value* containers, std::vector<Cell>& out) {
  std::vector<std::string_view> names;
  std::vector<std::string_view> images;
  if (containers != nullptr) {
    for (const Value& c : containers->GetArray()) {
      names.push_back(api::json::GetString(c, "name"));
      images.push_back(api::json::GetString(c, "image"));
    }
  }
  out.emplace_back(fmt::format("{}", fmt::join(names, ",")));
  out.emplace_back(fmt::format("{}", fmt::join(images, ",")));
}

// ---- pods -----------------------------------------------------------------------------------

bool IsRestartableInit(const Value& container) { return api::json::GetString(container, "restartPolicy") == "Always"; }

bool HasCondition(const Value& pod, std::string_view type, std::string_view status) {
  if (const Value* conds = Array(pod, {"status", "conditions"})) {
    for (const Value& c : conds->GetArray()) {
      if (api::json::GetString(c, "type") == type && api::json::GetString(c, "status") == status) return true;
    }
  }
  return false;
}

// The READINESS GATES column: how many of the pod's readiness gates have a True condition, of
// how many ("<none>" without gates).
std::string ReadinessGates(const Value& pod) {
  const Value* rg = Array(pod, {"spec", "readinessGates"});
  if (rg == nullptr || rg->Size() == 0) return "<none>";
  int64_t true_conditions = 0;
  for (const Value& g : rg->GetArray()) {
    std::string_view type = api::json::GetString(g, "conditionType");
    if (const Value* conds = Array(pod, {"status", "conditions"})) {
      for (const Value& c : conds->GetArray()) {
        if (api::json::GetString(c, "type") == type) {
          if (api::json::GetString(c, "status") == "True") ++true_conditions;
          break;
        }
      }
    }
  }
  return fmt::format("{}/{}", true_conditions, rg->Size());
}

// printPod.
void PodCells(const Value& pod, int64_t now_ns, std::vector<Cell>& out) {
  int64_t restarts = 0;
  int64_t restartable_init_restarts = 0;
  const Value* containers = Array(pod, {"spec", "containers"});
  int64_t total = containers != nullptr ? containers->Size() : 0;
  int64_t ready = 0;
  std::optional<int64_t> last_restart;
  std::optional<int64_t> last_restartable_init_restart;
  auto later = [](std::optional<int64_t>& cur, const Value& status) {
    std::optional<int64_t> t = api::ParseRFC3339(Str(status, {"lastState", "terminated", "finishedAt"}));
    if (t && (!cur || *cur < *t)) cur = t;
  };

  const std::string_view phase = Str(pod, {"status", "phase"});
  std::string reason(phase);
  if (std::string_view r = Str(pod, {"status", "reason"}); !r.empty()) reason = r;
  if (const Value* conds = Array(pod, {"status", "conditions"})) {
    for (const Value& c : conds->GetArray()) {
      if (api::json::GetString(c, "type") == "PodScheduled" && api::json::GetString(c, "reason") == "SchedulingGated") {
        reason = "SchedulingGated";
      }
    }
  }

  std::map<std::string_view, const Value*> init_containers;
  const Value* init_specs = Array(pod, {"spec", "initContainers"});
  if (init_specs != nullptr) {
    for (const Value& c : init_specs->GetArray()) {
      init_containers[api::json::GetString(c, "name")] = &c;
      if (IsRestartableInit(c)) ++total;
    }
  }
  auto restartable = [&](std::string_view name) {
    auto it = init_containers.find(name);
    return it != init_containers.end() && IsRestartableInit(*it->second);
  };

  bool initializing = false;
  if (const Value* statuses = Array(pod, {"status", "initContainerStatuses"})) {
    int64_t i = 0;
    for (const Value& c : statuses->GetArray()) {
      restarts += Int(c, {"restartCount"});
      later(last_restart, c);
      const std::string_view name = api::json::GetString(c, "name");
      if (restartable(name)) {
        restartable_init_restarts += Int(c, {"restartCount"});
        later(last_restartable_init_restart, c);
      }
      const Value* terminated = At(c, {"state", "terminated"});
      const Value* waiting = At(c, {"state", "waiting"});
      if (terminated != nullptr && Int(*terminated, {"exitCode"}) == 0) {
        ++i;
        continue;
      }
      if (restartable(name) && Bool(c, {"started"})) {
        if (Bool(c, {"ready"})) ++ready;
        ++i;
        continue;
      }
      if (terminated != nullptr) {
        std::string_view r = api::json::GetString(*terminated, "reason");
        if (r.empty()) {
          int64_t signal = Int(*terminated, {"signal"});
          reason = signal != 0 ? fmt::format("Init:Signal:{}", signal)
                               : fmt::format("Init:ExitCode:{}", Int(*terminated, {"exitCode"}));
        } else {
          reason = fmt::format("Init:{}", r);
        }
      } else if (waiting != nullptr && !api::json::GetString(*waiting, "reason").empty() &&
                 api::json::GetString(*waiting, "reason") != "PodInitializing") {
        reason = fmt::format("Init:{}", api::json::GetString(*waiting, "reason"));
      } else {
        reason = fmt::format("Init:{}/{}", i, init_specs != nullptr ? init_specs->Size() : 0);
      }
      initializing = true;
      break;
    }
  }

  if (!initializing || HasCondition(pod, "Initialized", "True")) {
    restarts = restartable_init_restarts;
    last_restart = last_restartable_init_restart;
    bool has_running = false;
    if (const Value* statuses = Array(pod, {"status", "containerStatuses"})) {
      for (rapidjson::SizeType k = statuses->Size(); k-- > 0;) {
        const Value& c = (*statuses)[k];
        restarts += Int(c, {"restartCount"});
        later(last_restart, c);
        const Value* terminated = At(c, {"state", "terminated"});
        std::string_view waiting_reason = Str(c, {"state", "waiting", "reason"});
        if (!waiting_reason.empty()) {
          reason = waiting_reason;
        } else if (terminated != nullptr && !api::json::GetString(*terminated, "reason").empty()) {
          reason = api::json::GetString(*terminated, "reason");
        } else if (terminated != nullptr) {
          int64_t signal = Int(*terminated, {"signal"});
          reason = signal != 0 ? fmt::format("Signal:{}", signal)
                               : fmt::format("ExitCode:{}", Int(*terminated, {"exitCode"}));
        } else if (Bool(c, {"ready"}) && At(c, {"state", "running"}) != nullptr) {
          has_running = true;
          ++ready;
        }
      }
    }
    if (reason == "Completed" && has_running) reason = HasCondition(pod, "Ready", "True") ? "Running" : "NotReady";
  }

  const bool deleting =
      At(pod, {"metadata", "deletionTimestamp"}) != nullptr && !At(pod, {"metadata", "deletionTimestamp"})->IsNull();
  if (deleting && Str(pod, {"status", "reason"}) == "NodeLost") {
    reason = "Unknown";
  } else if (deleting && phase != "Succeeded" && phase != "Failed") {
    reason = "Terminating";
  }

  std::string restarts_text = std::to_string(restarts);
  if (restarts != 0 && last_restart) {
    restarts_text = fmt::format("{} ({} ago)", restarts, HumanDuration(now_ns - *last_restart));
  }

  out.emplace_back(std::string(Str(pod, {"metadata", "name"})));
  out.emplace_back(fmt::format("{}/{}", ready, total));
  out.emplace_back(std::move(reason));
  out.emplace_back(std::move(restarts_text));
  out.emplace_back(Age(pod, now_ns));

  std::string_view ip;
  if (const Value* ips = Array(pod, {"status", "podIPs"}); ips != nullptr && ips->Size() > 0) {
    ip = api::json::GetString((*ips)[0], "ip");
  }
  out.emplace_back(NoneIfEmpty(ip));
  out.emplace_back(NoneIfEmpty(Str(pod, {"spec", "nodeName"})));
  out.emplace_back(NoneIfEmpty(Str(pod, {"status", "nominatedNodeName"})));
  out.emplace_back(ReadinessGates(pod));
}

std::optional<RowCondition> PodCondition(const Value& pod) {
  std::string_view phase = Str(pod, {"status", "phase"});
  if (phase == "Succeeded")
    return RowCondition{"Completed", "True", "Succeeded", "The pod has completed successfully."};
  if (phase == "Failed") return RowCondition{"Completed", "True", "Failed", "The pod failed."};
  return std::nullopt;
}

// ---- nodes ----------------------------------------------------------------------------------

std::string_view NodeAddress(const Value& node, std::string_view type) {
  if (const Value* addrs = Array(node, {"status", "addresses"})) {
    for (const Value& a : addrs->GetArray()) {
      if (api::json::GetString(a, "type") == type) return api::json::GetString(a, "address");
    }
  }
  return {};
}

std::string UnknownIfEmpty(std::string_view s) { return s.empty() ? "<unknown>" : std::string(s); }

void NodeCells(const Value& node, int64_t now_ns, std::vector<Cell>& out) {
  std::vector<std::string> status;
  if (const Value* conds = Array(node, {"status", "conditions"})) {
    for (const Value& c : conds->GetArray()) {
      if (api::json::GetString(c, "type") != "Ready") continue;
      status.push_back(api::json::GetString(c, "status") == "True" ? "Ready" : "NotReady");
    }
  }
  if (status.empty()) status.push_back("Unknown");
  if (Bool(node, {"spec", "unschedulable"})) status.push_back("SchedulingDisabled");

  // findNodeRoles: node-role.kubernetes.io/<role> keys and the kubernetes.io/role value.
  std::set<std::string> roles;
  if (const Value* labels = At(node, {"metadata", "labels"}); labels != nullptr && labels->IsObject()) {
    constexpr std::string_view kPrefix = "node-role.kubernetes.io/";
    for (const auto& m : labels->GetObject()) {
      std::string_view key = api::json::View(m.name);
      std::string_view value = api::json::View(m.value);
      if (key.starts_with(kPrefix) && key.size() > kPrefix.size()) {
        roles.insert(std::string(key.substr(kPrefix.size())));
      } else if (key == "kubernetes.io/role" && !value.empty()) {
        roles.insert(std::string(value));
      }
    }
  }
  out.emplace_back(std::string(Str(node, {"metadata", "name"})));
  out.emplace_back(fmt::format("{}", fmt::join(status, ",")));
  out.emplace_back(roles.empty() ? std::string("<none>") : fmt::format("{}", fmt::join(roles, ",")));
  out.emplace_back(Age(node, now_ns));
  out.emplace_back(std::string(Str(node, {"status", "nodeInfo", "kubeletVersion"})));
  out.emplace_back(NoneIfEmpty(NodeAddress(node, "InternalIP")));
  out.emplace_back(NoneIfEmpty(NodeAddress(node, "ExternalIP")));
  out.emplace_back(UnknownIfEmpty(Str(node, {"status", "nodeInfo", "osImage"})));
  out.emplace_back(UnknownIfEmpty(Str(node, {"status", "nodeInfo", "kernelVersion"})));
  out.emplace_back(UnknownIfEmpty(Str(node, {"status", "nodeInfo", "containerRuntimeVersion"})));
}

// ---- the others -----------------------------------------------------------------------------

void NamespaceCells(const Value& ns, int64_t now_ns, std::vector<Cell>& out) {
  out.emplace_back(std::string(Str(ns, {"metadata", "name"})));
  out.emplace_back(std::string(Str(ns, {"status", "phase"})));
  out.emplace_back(Age(ns, now_ns));
}

void EventCells(const Value& e, int64_t now_ns, std::vector<Cell>& out) {
  std::string first = TranslateTimestampSince(Str(e, {"firstTimestamp"}), now_ns);
  if (Str(e, {"firstTimestamp"}).empty()) first = TranslateTimestampSince(Str(e, {"eventTime"}), now_ns);
  std::string last = TranslateTimestampSince(Str(e, {"lastTimestamp"}), now_ns);
  if (Str(e, {"lastTimestamp"}).empty()) last = first;
  int64_t count = Int(e, {"count"});
  if (const Value* series = At(e, {"series"}); series != nullptr && series->IsObject()) {
    last = TranslateTimestampSince(Str(*series, {"lastObservedTime"}), now_ns);
    count = Int(*series, {"count"});
  } else if (count == 0) {
    count = 1;  // singleton events of the new API carry no count
  }
  std::string kind(Str(e, {"involvedObject", "kind"}));
  std::ranges::transform(kind, kind.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string_view name = Str(e, {"involvedObject", "name"});
  std::string target = name.empty() ? kind : fmt::format("{}/{}", kind, name);
  std::string_view component = Str(e, {"source", "component"});
  if (component.empty()) component = Str(e, {"reportingComponent"});
  std::string_view host = Str(e, {"source", "host"});
  if (host.empty()) host = Str(e, {"reportingInstance"});
  std::string source = component.empty()
                           ? "<unknown>"
                           : (host.empty() ? std::string(component) : fmt::format("{}, {}", component, host));
  std::string_view message = Str(e, {"message"});
  while (!message.empty() && std::isspace(static_cast<unsigned char>(message.front()))) message.remove_prefix(1);
  while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back()))) message.remove_suffix(1);

  out.emplace_back(std::move(last));
  out.emplace_back(std::string(Str(e, {"type"})));
  out.emplace_back(std::string(Str(e, {"reason"})));
  out.emplace_back(std::move(target));
  out.emplace_back(std::string(Str(e, {"involvedObject", "fieldPath"})));
  out.emplace_back(std::move(source));
  out.emplace_back(std::string(message));
  out.emplace_back(std::move(first));
  out.emplace_back(count);
  out.emplace_back(std::string(Str(e, {"metadata", "name"})));
}

void DeploymentCells(const Value& d, int64_t now_ns, std::vector<Cell>& out) {
  out.emplace_back(std::string(Str(d, {"metadata", "name"})));
  out.emplace_back(fmt::format("{}/{}", Int(d, {"status", "readyReplicas"}), Int(d, {"spec", "replicas"}, 1)));
  out.emplace_back(Int(d, {"status", "updatedReplicas"}));
  out.emplace_back(Int(d, {"status", "availableReplicas"}));
  out.emplace_back(Age(d, now_ns));
  ContainerCells(Array(d, {"spec", "template", "spec", "containers"}), out);
  out.emplace_back(FormatLabelSelector(At(d, {"spec", "selector"})));
}

void ReplicaSetCells(const Value& rs, int64_t now_ns, std::vector<Cell>& out) {
  out.emplace_back(std::string(Str(rs, {"metadata", "name"})));
  out.emplace_back(Int(rs, {"spec", "replicas"}, 1));
  out.emplace_back(Int(rs, {"status", "replicas"}));
  out.emplace_back(Int(rs, {"status", "readyReplicas"}));
  out.emplace_back(Age(rs, now_ns));
  ContainerCells(Array(rs, {"spec", "template", "spec", "containers"}), out);
  out.emplace_back(FormatLabelSelector(At(rs, {"spec", "selector"})));
}

// printStatefulSet: READY as ready/desired.
void StatefulSetCells(const Value& sts, int64_t now_ns, std::vector<Cell>& out) {
  out.emplace_back(std::string(Str(sts, {"metadata", "name"})));
  out.emplace_back(fmt::format("{}/{}", Int(sts, {"status", "readyReplicas"}), Int(sts, {"spec", "replicas"}, 1)));
  out.emplace_back(Age(sts, now_ns));
  ContainerCells(Array(sts, {"spec", "template", "spec", "containers"}), out);
}

// labels.FormatLabels: "k=v,k2=v2" sorted by key, "<none>" when empty.
std::string FormatLabels(const Value* labels) {
  std::vector<std::string> pairs;
  if (labels != nullptr && labels->IsObject()) {
    for (const auto& m : labels->GetObject()) {
      pairs.push_back(fmt::format("{}={}", api::json::View(m.name), api::json::View(m.value)));
    }
  }
  if (pairs.empty()) return "<none>";
  std::ranges::sort(pairs);
  return fmt::format("{}", fmt::join(pairs, ","));
}

// printDaemonSet.
void DaemonSetCells(const Value& ds, int64_t now_ns, std::vector<Cell>& out) {
  out.emplace_back(std::string(Str(ds, {"metadata", "name"})));
  out.emplace_back(Int(ds, {"status", "desiredNumberScheduled"}));
  out.emplace_back(Int(ds, {"status", "currentNumberScheduled"}));
  out.emplace_back(Int(ds, {"status", "numberReady"}));
  out.emplace_back(Int(ds, {"status", "updatedNumberScheduled"}));
  out.emplace_back(Int(ds, {"status", "numberAvailable"}));
  out.emplace_back(FormatLabels(At(ds, {"spec", "template", "spec", "nodeSelector"})));
  out.emplace_back(Age(ds, now_ns));
  ContainerCells(Array(ds, {"spec", "template", "spec", "containers"}), out);
  out.emplace_back(FormatLabelSelector(At(ds, {"spec", "selector"})));
}

void PriorityClassCells(const Value& pc, int64_t now_ns, std::vector<Cell>& out) {
  out.emplace_back(std::string(Str(pc, {"metadata", "name"})));
  out.emplace_back(Int(pc, {"value"}));
  out.emplace_back(Bool(pc, {"globalDefault"}));
  out.emplace_back(Age(pc, now_ns));
  std::string_view policy = Str(pc, {"preemptionPolicy"});
  out.emplace_back(std::string(policy.empty() ? "PreemptLowerPriority" : policy));
}

void PdbCells(const Value& pdb, int64_t now_ns, std::vector<Cell>& out) {
  out.emplace_back(std::string(Str(pdb, {"metadata", "name"})));
  out.emplace_back(IntOrString(At(pdb, {"spec", "minAvailable"})));
  out.emplace_back(IntOrString(At(pdb, {"spec", "maxUnavailable"})));
  out.emplace_back(Int(pdb, {"status", "disruptionsAllowed"}));
  out.emplace_back(Age(pdb, now_ns));
}

void LeaseCells(const Value& lease, int64_t now_ns, std::vector<Cell>& out) {
  out.emplace_back(std::string(Str(lease, {"metadata", "name"})));
  out.emplace_back(UnknownIfEmpty(Str(lease, {"spec", "holderIdentity"})));
  out.emplace_back(Age(lease, now_ns));
}

// The number of members of the object at `path` (a ConfigMap's data), 0 when absent.
int64_t MemberCount(const Value& v, std::initializer_list<std::string_view> path) {
  const Value* x = At(v, path);
  return x != nullptr && x->IsObject() ? static_cast<int64_t>(x->MemberCount()) : 0;
}

void ConfigMapCells(const Value& cm, int64_t now_ns, std::vector<Cell>& out) {
  out.emplace_back(std::string(Str(cm, {"metadata", "name"})));
  out.emplace_back(MemberCount(cm, {"data"}) + MemberCount(cm, {"binaryData"}));
  out.emplace_back(Age(cm, now_ns));
}

void ServiceAccountCells(const Value& sa, int64_t now_ns, std::vector<Cell>& out) {
  out.emplace_back(std::string(Str(sa, {"metadata", "name"})));
  const Value* secrets = Array(sa, {"secrets"});
  out.emplace_back(static_cast<int64_t>(secrets == nullptr ? 0 : secrets->Size()));
  out.emplace_back(Age(sa, now_ns));
}

// printRoleBinding / printClusterRoleBinding: ROLE as Kind/name, and with -o wide the subjects by
// kind (rbac.SubjectsStrings: service accounts as namespace/name), comma-joined.
void BindingCells(const Value& binding, int64_t now_ns, std::vector<Cell>& out) {
  out.emplace_back(std::string(Str(binding, {"metadata", "name"})));
  out.emplace_back(fmt::format("{}/{}", Str(binding, {"roleRef", "kind"}), Str(binding, {"roleRef", "name"})));
  out.emplace_back(Age(binding, now_ns));
  std::vector<std::string> users;
  std::vector<std::string> groups;
  std::vector<std::string> service_accounts;
  if (const Value* subjects = Array(binding, {"subjects"})) {
    for (const Value& subject : subjects->GetArray()) {
      std::string_view kind = api::json::GetString(subject, "kind");
      std::string name(api::json::GetString(subject, "name"));
      if (kind == "ServiceAccount") {
        service_accounts.push_back(fmt::format("{}/{}", api::json::GetString(subject, "namespace"), name));
      } else if (kind == "User") {
        users.push_back(std::move(name));
      } else if (kind == "Group") {
        groups.push_back(std::move(name));
      }
    }
  }
  out.emplace_back(fmt::format("{}", fmt::join(users, ", ")));
  out.emplace_back(fmt::format("{}", fmt::join(groups, ", ")));
  out.emplace_back(fmt::format("{}", fmt::join(service_accounts, ", ")));
}

// printRole / printClusterRole: the creation time itself, not an age.
void RoleCells(const Value& role, int64_t now_ns, std::vector<Cell>& out) {
  out.emplace_back(std::string(Str(role, {"metadata", "name"})));
  out.emplace_back(std::string(Str(role, {"metadata", "creationTimestamp"})));
}

// printService: TYPE, CLUSTER-IP, EXTERNAL-IP (ExternalName's name; a load balancer's ingress
// addresses, <pending> while it has none; spec.externalIPs), PORT(S) as port[:nodePort]/protocol,
// and with -o wide the selector.
void ServiceCells(const Value& svc, int64_t now_ns, std::vector<Cell>& out) {
  out.emplace_back(std::string(Str(svc, {"metadata", "name"})));
  std::string type(Str(svc, {"spec", "type"}));
  if (type.empty()) type = "ClusterIP";
  out.emplace_back(type);
  std::string cluster_ip(Str(svc, {"spec", "clusterIP"}));
  out.emplace_back(cluster_ip.empty() ? std::string("<none>") : cluster_ip);
  std::vector<std::string> external;
  if (type == "ExternalName") {
    external.emplace_back(Str(svc, {"spec", "externalName"}));
  } else {
    if (type == "LoadBalancer") {
      if (const Value* ingress = Array(svc, {"status", "loadBalancer", "ingress"})) {
        for (const Value& i : ingress->GetArray()) {
          if (!i.IsObject()) continue;
          std::string_view ip = api::json::GetString(i, "ip");
          external.emplace_back(ip.empty() ? api::json::GetString(i, "hostname") : ip);
        }
      }
    }
    if (const Value* ips = Array(svc, {"spec", "externalIPs"})) {
      for (const Value& ip : ips->GetArray()) {
        if (ip.IsString()) external.emplace_back(api::json::View(ip));
      }
    }
    if (external.empty() && type == "LoadBalancer") external.emplace_back("<pending>");
  }
  out.emplace_back(external.empty() ? std::string("<none>") : fmt::format("{}", fmt::join(external, ",")));
  std::vector<std::string> ports;
  if (const Value* list = Array(svc, {"spec", "ports"})) {
    for (const Value& port : list->GetArray()) {
      std::string_view protocol = api::json::GetString(port, "protocol");
      const int64_t node_port = Int(port, {"nodePort"});
      std::string text = std::to_string(Int(port, {"port"}));
      if (node_port > 0) text += ":" + std::to_string(node_port);
      ports.push_back(text + "/" + std::string(protocol.empty() ? "TCP" : protocol));
    }
  }
  out.emplace_back(ports.empty() ? std::string("<none>") : fmt::format("{}", fmt::join(ports, ",")));
  out.emplace_back(Age(svc, now_ns));
  std::vector<std::string> selector;
  if (const Value* labels = At(svc, {"spec", "selector"}); labels != nullptr && labels->IsObject()) {
    for (auto it = labels->MemberBegin(); it != labels->MemberEnd(); ++it) {
      if (it->value.IsString())
        selector.push_back(fmt::format("{}={}", api::json::View(it->name), api::json::View(it->value)));
    }
  }
  out.emplace_back(selector.empty() ? std::string("<none>") : fmt::format("{}", fmt::join(selector, ",")));
}

void DefaultCells(const Value& obj, int64_t now_ns, std::vector<Cell>& out) {
  out.emplace_back(std::string(Str(obj, {"metadata", "name"})));
  out.emplace_back(Age(obj, now_ns));
}

const Printer kPodPrinter{
    {kNameColumn,
     {"Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic.", 0},
     {"Status", "string", "", "The aggregate status of the containers in this pod.", 0},
     {"Restarts", "string", "",
      "The number of times the containers in this pod have been restarted and when the last container in this pod "
      "has restarted.",
      0},
     kAgeColumn,
     {"IP", "string", "", "podIP address allocated to the pod. Routable at least within the cluster.", 1},
     {"Node", "string", "", "NodeName indicates in which node this pod is scheduled.", 1},
     {"Nominated Node", "string", "",
      "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right "
      "away as preemption victims receive their graceful termination periods.",
      1},
     {"Readiness Gates", "string", "", "If specified, all readiness gates will be evaluated for pod readiness.", 1}},
    PodCells,
    PodCondition};

const Printer kNodePrinter{{kNameColumn,
                            {"Status", "string", "", "The status of the node", 0},
                            {"Roles", "string", "", "The roles of the node", 0},
                            kAgeColumn,
                            {"Version", "string", "", "Kubelet Version reported by the node.", 0},
                            {"Internal-IP", "string", "", "List of addresses reachable to the node.", 1},
                            {"External-IP", "string", "", "List of addresses reachable to the node.", 1},
                            {"OS-Image", "string", "", "OS Image reported by the node from /etc/os-release.", 1},
                            {"Kernel-Version", "string", "", "Kernel Version reported by the node.", 1},
                            {"Container-Runtime", "string", "", "ContainerRuntime Version reported by the node.", 1}},
                           NodeCells,
                           nullptr};

const Printer kNamespacePrinter{
    {kNameColumn, {"Status", "string", "", "The status of the namespace", 0}, kAgeColumn}, NamespaceCells, nullptr};

const Printer kEventPrinter{
    {{"Last Seen", "string", "", "The time at which the most recent occurrence of this event was recorded.", 0},
     {"Type", "string", "", "Type of this event (Normal, Warning), new types could be added in the future", 0},
     {"Reason", "string", "",
      "This should be a short, machine understandable string that gives the reason for the transition into the "
      "object's current status.",
      0},
     {"Object", "string", "", "The object that this event is about.", 0},
     {"Subobject", "string", "",
      "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go "
      "field access statement.",
      1},
     {"Source", "string", "", "The component reporting this event. Should be a short machine understandable string.",
      1},
     {"Message", "string", "", "A human-readable description of the status of this operation.", 0},
     {"First Seen", "string", "",
      "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)", 1},
     {"Count", "string", "", "The number of times this event has occurred.", 1},
     {"Name", "string", "name", kNameDoc, 1}},
    EventCells,
    nullptr};

constexpr Column kContainersColumn{"Containers", "string", "", "Names of each container in the template.", 1};
constexpr Column kImagesColumn{"Images", "string", "", "Images referenced by each container in the template.", 1};

const Printer kDeploymentPrinter{
    {kNameColumn,
     {"Ready", "string", "", "Number of the pod with ready state", 0},
     {"Up-to-date", "integer", "",
      "Total number of non-terminated pods targeted by this deployment that have the desired template spec.", 0},
     {"Available", "integer", "",
      "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.", 0},
     kAgeColumn,
     kContainersColumn,
     kImagesColumn,
     {"Selector", "string", "",
      "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this "
      "deployment.",
      1}},
    DeploymentCells,
    nullptr};

const Printer kReplicaSetPrinter{
    {kNameColumn,
     {"Desired", "integer", "", "Replicas is the number of desired replicas.", 0},
     {"Current", "integer", "", "Replicas is the most recently observed number of replicas.", 0},
     {"Ready", "integer", "", "The number of ready replicas for this replica set.", 0},
     kAgeColumn,
     kContainersColumn,
     kImagesColumn,
     {"Selector", "string", "", "Selector is a label query over pods that should match the replica count.", 1}},
    ReplicaSetCells,
    nullptr};

const Printer kStatefulSetPrinter{{kNameColumn,
                                   {"Ready", "string", "", "Number of the pod with ready state", 0},
                                   kAgeColumn,
                                   kContainersColumn,
                                   kImagesColumn},
                                  StatefulSetCells,
                                  nullptr};

const Printer kDaemonSetPrinter{
    {kNameColumn,
     {"Desired", "integer", "",
      "The total number of nodes that should be running the daemon pod (including nodes correctly running the "
      "daemon pod).",
      0},
     {"Current", "integer", "",
      "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.", 0},
     {"Ready", "integer", "",
      "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running with "
      "a Ready Condition.",
      0},
     {"Up-to-date", "integer", "", "The total number of nodes that are running updated daemon pod", 0},
     {"Available", "integer", "",
      "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and "
      "available (ready for at least spec.minReadySeconds)",
      0},
     {"Node Selector", "string", "",
      "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's "
      "labels for the pod to be scheduled on that node.",
      0},
     kAgeColumn,
     kContainersColumn,
     kImagesColumn,
     {"Selector", "string", "", "A label query over pods that are managed by the daemon set.", 1}},
    DaemonSetCells,
    nullptr};

const Printer kPriorityClassPrinter{
    {kNameColumn,
     {"Value", "integer", "", "value represents the integer value of this priority class.", 0},
     {"Global-Default", "boolean", "",
      "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that "
      "do not have any priority class.",
      0},
     kAgeColumn,
     {"PreemptionPolicy", "string", "", "preemptionPolicy is the Policy for preempting pods with lower priority.", 0}},
    PriorityClassCells,
    nullptr};

const Printer kPdbPrinter{
    {kNameColumn,
     {"Min Available", "string", "", "The minimum number of pods that must be available.", 0},
     {"Max Unavailable", "string", "", "The maximum number of pods that may be unavailable.", 0},
     {"Allowed Disruptions", "integer", "", "Calculated number of pods that may be disrupted at this time.", 0},
     kAgeColumn},
    PdbCells,
    nullptr};

const Printer kLeasePrinter{
    {kNameColumn,
     {"Holder", "string", "", "holderIdentity contains the identity of the holder of a current lease.", 0},
     kAgeColumn},
    LeaseCells,
    nullptr};

const Printer kConfigMapPrinter{
    {kNameColumn,
     {"Data", "string", "",
      "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. "
      "Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap "
      "with the keys in the BinaryData field, this is enforced during validation process.",
      0},
     kAgeColumn},
    ConfigMapCells,
    nullptr};

const Printer kServiceAccountPrinter{
    {kNameColumn,
     {"Secrets", "string", "",
      "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed "
      "to use.",
      0},
     kAgeColumn},
    ServiceAccountCells,
    nullptr};

const Printer kBindingPrinter{
    {kNameColumn,
     {"Role", "string", "",
      "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef "
      "cannot be resolved, the Authorizer must return an error. This field is immutable.",
      0},
     kAgeColumn,
     {"Users", "string", "", "Users in the roleBinding", 1},
     {"Groups", "string", "", "Groups in the roleBinding", 1},
     {"ServiceAccounts", "string", "", "ServiceAccounts in the roleBinding", 1}},
    BindingCells,
    nullptr};

const Printer kRolePrinter{{kNameColumn, {"Created At", "date", "", kAgeDoc, 0}}, RoleCells, nullptr};

const Printer kServicePrinter{
    {kNameColumn,
     {"Type", "string", "", "type determines how the Service is exposed.", 0},
     {"Cluster-IP", "string", "", "clusterIP is the IP address of the service and is usually assigned randomly.", 0},
     {"External-IP", "string", "",
      "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this "
      "service.",
      0},
     {"Port(s)", "string", "", "The list of ports that are exposed by this service.", 0},
     kAgeColumn,
     {"Selector", "string", "", "Route service traffic to pods with label keys and values matching this selector.", 1}},
    ServiceCells,
    nullptr};

const Printer kDefaultPrinter{{kNameColumn, kAgeColumn}, DefaultCells, nullptr};

}  // namespace

const Printer& PrinterFor(const store::ResourceType& type) {
  const std::string& g = type.group;
  const std::string& r = type.resource;
  if (g.empty() && r == "pods") return kPodPrinter;
  if (g.empty() && r == "nodes") return kNodePrinter;
  if (g.empty() && r == "namespaces") return kNamespacePrinter;
  if (g.empty() && r == "events") return kEventPrinter;
  if (g == "apps" && r == "deployments") return kDeploymentPrinter;
  if (g == "apps" && r == "replicasets") return kReplicaSetPrinter;
  if (g == "apps" && r == "statefulsets") return kStatefulSetPrinter;
  if (g == "apps" && r == "daemonsets") return kDaemonSetPrinter;
  if (g == "scheduling.k8s.io" && r == "priorityclasses") return kPriorityClassPrinter;
  if (g == "policy" && r == "poddisruptionbudgets") return kPdbPrinter;
  if (g == "coordination.k8s.io" && r == "leases") return kLeasePrinter;
  if (g.empty() && r == "configmaps") return kConfigMapPrinter;
  if (g.empty() && r == "serviceaccounts") return kServiceAccountPrinter;
  if (g.empty() && r == "services") return kServicePrinter;
  if (g == "rbac.authorization.k8s.io" && (r == "rolebindings" || r == "clusterrolebindings")) return kBindingPrinter;
  if (g == "rbac.authorization.k8s.io" && (r == "roles" || r == "clusterroles")) return kRolePrinter;
  return kDefaultPrinter;
}

std::string HumanDuration(int64_t ns) {
  const int64_t seconds = ns / 1'000'000'000;
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return fmt::format("{}s", seconds);
  const int64_t minutes = seconds / 60;
  if (minutes < 10) {
    const int64_t s = seconds % 60;
    return s == 0 ? fmt::format("{}m", minutes) : fmt::format("{}m{}s", minutes, s);
  }
  if (minutes < 60 * 3) return fmt::format("{}m", minutes);
  const int64_t hours = seconds / 3600;
  if (hours < 8) {
    const int64_t m = minutes % 60;
    return m == 0 ? fmt::format("{}h", hours) : fmt::format("{}h{}m", hours, m);
  }
  if (hours < 48) return fmt::format("{}h", hours);
  if (hours < 24 * 8) {
    const int64_t h = hours % 24;
    return h == 0 ? fmt::format("{}d", hours / 24) : fmt::format("{}d{}h", hours / 24, h);
  }
  if (hours < 24 * 365 * 2) return fmt::format("{}d", hours / 24);
  if (hours < 24 * 365 * 8) {
    const int64_t dy = (hours / 24) % 365;
    return dy == 0 ? fmt::format("{}y", hours / 24 / 365) : fmt::format("{}y{}d", hours / 24 / 365, dy);
  }
  return fmt::format("{}y", hours / 24 / 365);
}

std::string TranslateTimestampSince(std::string_view timestamp, int64_t now_ns) {
  std::optional<int64_t> t = api::ParseRFC3339(timestamp);
  if (!t) return "<unknown>";
  return HumanDuration(now_ns - *t);
}

std::string FormatLabelSelector(const Value* selector) {
  if (selector == nullptr || !selector->IsObject()) return "<none>";
  // labels.Selector.String(): requirements sorted by key, values of a set sorted.
  std::vector<std::pair<std::string, std::string>> reqs;
  if (const Value* ml = api::json::Find(*selector, "matchLabels"); ml != nullptr && ml->IsObject()) {
    for (const auto& m : ml->GetObject()) {
      reqs.emplace_back(std::string(api::json::View(m.name)),
                        fmt::format("{}={}", api::json::View(m.name), api::json::View(m.value)));
    }
  }
  if (const Value* me = api::json::Find(*selector, "matchExpressions"); me != nullptr && me->IsArray()) {
    for (const Value& e : me->GetArray()) {
      std::string key(api::json::GetString(e, "key"));
      std::string_view op = api::json::GetString(e, "operator");
      std::vector<std::string> values;
      if (const Value* vs = api::json::Find(e, "values"); vs != nullptr && vs->IsArray()) {
        for (const Value& v : vs->GetArray()) values.emplace_back(api::json::View(v));
      }
      std::ranges::sort(values);
      values.erase(std::unique(values.begin(), values.end()), values.end());
      std::string text;
      if (op == "In") {
        text = fmt::format("{} in ({})", key, fmt::join(values, ","));
      } else if (op == "NotIn") {
        text = fmt::format("{} notin ({})", key, fmt::join(values, ","));
      } else if (op == "Exists") {
        text = key;
      } else if (op == "DoesNotExist") {
        text = "!" + key;
      } else {
        return "<error>";
      }
      reqs.emplace_back(key, std::move(text));
    }
  }
  if (reqs.empty()) return "<none>";
  std::ranges::stable_sort(reqs, {}, &std::pair<std::string, std::string>::first);
  std::vector<std::string> parts;
  for (auto& r : reqs) parts.push_back(std::move(r.second));
  return fmt::format("{}", fmt::join(parts, ","));
}

int64_t UnixNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace kubesched::server
