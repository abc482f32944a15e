#include "store/store.h"
#include "api/time_format.h"

#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "api/decode.h"
#include "api/encode.h"
#include "api/types.h"
#include "store/meta.h"
#include "store/store_test_util.h"

namespace kubesched::store {
namespace {

using testing::Doc;
using testing::Field;
using testing::NodeJson;
using testing::PodJson;

class StoreTest : public testing::StoreFixture {};

TEST_F(StoreTest, BuiltinObjectsExistFromTheStart) {
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    auto n = MustGet(R("", "namespaces"), "", ns);
    ASSERT_NE(n, nullptr);
    ASSERT_EQ(n->labels().size(), 1u);
    EXPECT_EQ(n->labels()[0], std::make_pair(std::string("kubernetes.io/metadata.name"), std::string(ns)));
    EXPECT_EQ(Field(*n, "status.phase"), "Active");
  }
  auto pc = MustGet(R("scheduling.k8s.io", "priorityclasses"), "", "system-node-critical");
  EXPECT_EQ(Field(*pc, "value"), "2000001000");
  pc = MustGet(R("scheduling.k8s.io", "priorityclasses"), "", "system-cluster-critical");
  EXPECT_EQ(Field(*pc, "value"), "2000000000");
}

TEST_F(StoreTest, CreateSetsServerOwnedMetadata) {
  const uint64_t before = store->ResourceVersion();
  auto pod = MustCreate(Pods(), "default", PodJson("web"));
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->resource_version, before + 1);
  EXPECT_EQ(Field(*pod, "metadata.resourceVersion"), std::to_string(before + 1));
  EXPECT_EQ(Field(*pod, "metadata.namespace"), "default");
  EXPECT_EQ(Field(*pod, "metadata.creationTimestamp"), "2024-05-01T12:00:00Z");
  EXPECT_EQ(Field(*pod, "metadata.generation"), "1");
  EXPECT_EQ(pod->uid.size(), 36u);
  EXPECT_EQ(pod->uid[14], '4');  // a version 4 UUID
  // Defaults and admission.
  EXPECT_EQ(Field(*pod, "spec.schedulerName"), "default-scheduler");
  EXPECT_EQ(Field(*pod, "spec.terminationGracePeriodSeconds"), "30");
  EXPECT_EQ(Field(*pod, "spec.priority"), "0");
  EXPECT_EQ(Field(*pod, "spec.containers.0.imagePullPolicy"), "IfNotPresent");
  EXPECT_EQ(Field(*pod, "status.phase"), "Pending");
  auto view = pod->View<api::Pod>();
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->metadata.name, "web");
  EXPECT_EQ(view->metadata.creation_timestamp_ns, testing::kStartNs);
  // The view is decoded once, with validation, and shares the stored JSON (no second encoding).
  EXPECT_EQ(view->metadata.resource_version, std::to_string(before + 1));
  ASSERT_NE(view->json, nullptr);
  EXPECT_EQ(view->json.get(), pod->json.shared().get());
}

// SetDefaults_Probe and SetDefaults_HTTPGetAction, on probes and lifecycle handlers.
// Upstream's ValidateAnnotations holds for every kind, stored as written or not: a bad key, and
// keys and values above 256 KiB together (what refuses a client-side apply of a huge CRD).
TEST_F(StoreTest, AnnotationsAreValidatedForEveryKind) {
  const ResourceType& config_maps = R("", "configmaps");
  auto config_map = [](std::string_view annotations) {
    return Doc(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","annotations":)" +
               std::string(annotations) + "}}");
  };
  auto bad_key = store->Create(config_maps, "default", config_map(R"({"a b":"x"})"));
  ASSERT_FALSE(bad_key.has_value());
  EXPECT_EQ(bad_key.error().reason, Error::Reason::kInvalid);
  EXPECT_NE(bad_key.error().message.find("metadata.annotations: Invalid value: \"a b\""), std::string::npos)
      << bad_key.error().message;
  const std::string big(256 * 1024, 'x');
  auto too_long = store->Create(config_maps, "default", config_map(R"({"k":")" + big + "\"}"));
  ASSERT_FALSE(too_long.has_value());
  EXPECT_EQ(too_long.error().message,
            "ConfigMap \"c\" is invalid: metadata.annotations: Too long: must have at most 262144 bytes");
  // At the limit exactly (key and value together): accepted; mixed-case keys are fine.
  auto at_limit =
      store->Create(config_maps, "default", config_map(R"({"Kk":")" + big.substr(0, 256 * 1024 - 2) + "\"}"));
  EXPECT_TRUE(at_limit.has_value()) << at_limit.error().message;
}

TEST_F(StoreTest, ProbesAndHandlersAreDefaulted) {
  auto pod =
      MustCreate(Pods(), "default", R"({"metadata":{"name":"probed"},"spec":{"containers":[{"name":"c","image":"i",
      "livenessProbe":{"httpGet":{"port":8080}},"readinessProbe":{"tcpSocket":{"port":80},"periodSeconds":5},
      "lifecycle":{"preStop":{"httpGet":{"port":80,"path":"/stop"}}}}]}})");
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(Field(*pod, "spec.containers.0.livenessProbe.timeoutSeconds"), "1");
  EXPECT_EQ(Field(*pod, "spec.containers.0.livenessProbe.periodSeconds"), "10");
  EXPECT_EQ(Field(*pod, "spec.containers.0.livenessProbe.successThreshold"), "1");
  EXPECT_EQ(Field(*pod, "spec.containers.0.livenessProbe.failureThreshold"), "3");
  EXPECT_EQ(Field(*pod, "spec.containers.0.livenessProbe.httpGet.path"), "/");
  EXPECT_EQ(Field(*pod, "spec.containers.0.livenessProbe.httpGet.scheme"), "HTTP");
  EXPECT_EQ(Field(*pod, "spec.containers.0.readinessProbe.periodSeconds"), "5");
  EXPECT_EQ(Field(*pod, "spec.containers.0.readinessProbe.failureThreshold"), "3");
  EXPECT_EQ(Field(*pod, "spec.containers.0.lifecycle.preStop.httpGet.path"), "/stop");
  EXPECT_EQ(Field(*pod, "spec.containers.0.lifecycle.preStop.httpGet.scheme"), "HTTP");
}

// SetDefaults_Service and what the Service registry allocates: cluster IPs from 10.96.0.0/12,
// node ports from 30000-32767, each once; taken or out-of-range ones refused as upstream words it.
TEST_F(StoreTest, ServicesAreDefaultedAndGetClusterIpsAndNodePorts) {
  const ResourceType& services = R("", "services");
  auto plain = MustCreate(services, "default", R"({"metadata":{"name":"db"},"spec":{"ports":[{"port":5432}]}})");
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(Field(*plain, "spec.type"), "ClusterIP");
  EXPECT_EQ(Field(*plain, "spec.clusterIP"), "10.96.0.2");
  EXPECT_EQ(Field(*plain, "spec.clusterIPs.0"), "10.96.0.2");
  EXPECT_EQ(Field(*plain, "spec.ipFamilies.0"), "IPv4");
  EXPECT_EQ(Field(*plain, "spec.ipFamilyPolicy"), "SingleStack");
  EXPECT_EQ(Field(*plain, "spec.sessionAffinity"), "None");
  EXPECT_EQ(Field(*plain, "spec.internalTrafficPolicy"), "Cluster");
  EXPECT_EQ(Field(*plain, "spec.ports.0.protocol"), "TCP");
  EXPECT_EQ(Field(*plain, "spec.ports.0.targetPort"), "5432");
  EXPECT_EQ(Field(*plain, "spec.ports.0.nodePort"), "<none>");

  auto lb = MustCreate(services, "default", R"({"metadata":{"name":"web"},"spec":{"type":"LoadBalancer",
      "ports":[{"port":80,"targetPort":"http"},{"port":443,"nodePort":30000}]}})");
  ASSERT_NE(lb, nullptr);
  EXPECT_EQ(Field(*lb, "spec.clusterIP"), "10.96.0.3");
  EXPECT_EQ(Field(*lb, "spec.ports.0.targetPort"), "http");
  EXPECT_EQ(Field(*lb, "spec.ports.0.nodePort"), "30001");  // 30000 is the second port's
  EXPECT_EQ(Field(*lb, "spec.ports.1.nodePort"), "30000");
  EXPECT_EQ(Field(*lb, "spec.externalTrafficPolicy"), "Cluster");
  EXPECT_EQ(Field(*lb, "spec.allocateLoadBalancerNodePorts"), "true");

  auto headless = MustCreate(services, "default",
                             R"({"metadata":{"name":"zk"},"spec":{"clusterIP":"None","ports":[{"port":2181}]}})");
  ASSERT_NE(headless, nullptr);
  EXPECT_EQ(Field(*headless, "spec.clusterIP"), "None");
  auto external = MustCreate(services, "default",
                             R"({"metadata":{"name":"ext"},"spec":{"type":"ExternalName","externalName":"x.io"}})");
  ASSERT_NE(external, nullptr);
  EXPECT_EQ(Field(*external, "spec.clusterIP"), "<none>");
  EXPECT_EQ(Field(*external, "spec.internalTrafficPolicy"), "<none>");

  auto taken = store->Create(
      services, "default", Doc(R"({"metadata":{"name":"dup"},"spec":{"clusterIP":"10.96.0.2","ports":[{"port":1}]}})"));
  ASSERT_FALSE(taken.has_value());
  EXPECT_EQ(taken.error().message,
            R"(Service "dup" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.2"}: failed to allocate IP )"
            R"(10.96.0.2: provided IP is already allocated)");
  auto port_taken = store->Create(
      services, "default",
      Doc(R"({"metadata":{"name":"np"},"spec":{"type":"NodePort","ports":[{"port":1,"nodePort":30001}]}})"));
  ASSERT_FALSE(port_taken.has_value());
  EXPECT_EQ(
      port_taken.error().message,
      R"(Service "np" is invalid: spec.ports[0].nodePort: Invalid value: 30001: provided port is already allocated)");
  auto outside =
      store->Create(services, "default",
                    Doc(R"({"metadata":{"name":"np"},"spec":{"type":"NodePort","ports":[{"port":1,"nodePort":80}]}})"));
  ASSERT_FALSE(outside.has_value());
  EXPECT_EQ(outside.error().reason, Error::Reason::kInvalid);
  // A deleted Service's IP is free again.
  ASSERT_TRUE(store->Delete(services, "default", "db", {}).has_value());
  auto reused = MustCreate(services, "default", R"({"metadata":{"name":"db2"},"spec":{"ports":[{"port":1}]}})");
  ASSERT_NE(reused, nullptr);
  EXPECT_EQ(Field(*reused, "spec.clusterIP"), "10.96.0.2");
}

// A Service replaced as written (kubectl replace -f svc.yaml: no clusterIP, no nodePort) keeps
// what was allocated, as upstream's patchAllocatedValues carries it over.
TEST_F(StoreTest, AServiceUpdateThatLeavesOutItsAllocationsKeepsThem) {
  const ResourceType& services = R("", "services");
  const char* body = R"({"metadata":{"name":"web"},"spec":{"type":"NodePort","ports":[{"port":80},{"port":53,
      "protocol":"UDP"}]}})";
  auto created = MustCreate(services, "default", body);
  ASSERT_NE(created, nullptr);
  const std::string ip = Field(*created, "spec.clusterIP");
  const std::string tcp = Field(*created, "spec.ports.0.nodePort"), udp = Field(*created, "spec.ports.1.nodePort");
  ASSERT_NE(ip, "<none>");
  ASSERT_NE(tcp, "<none>");
  // The ports in another order: each keeps its own node port.
  auto updated = store->Update(services, "default", "web",
                               Doc(R"({"metadata":{"name":"web"},"spec":{"type":"NodePort","ports":[{"port":53,
                                   "protocol":"UDP"},{"port":80}]}})"),
                               {});
  ASSERT_TRUE(updated.has_value()) << updated.error().message;
  EXPECT_EQ(Field(**updated, "spec.clusterIP"), ip);
  EXPECT_EQ(Field(**updated, "spec.clusterIPs.0"), ip);
  EXPECT_EQ(Field(**updated, "spec.ports.0.nodePort"), udp);
  EXPECT_EQ(Field(**updated, "spec.ports.1.nodePort"), tcp);
}

TEST_F(StoreTest, GenerateNameUsesUpstreamAlphabet) {
  auto pod = MustCreate(Pods(), "default",
                        R"({"metadata":{"generateName":"web-"},"spec":{"containers":[{"name":"c","image":"i"}]}})");
  ASSERT_NE(pod, nullptr);
  ASSERT_EQ(pod->name.size(), 9u);
  EXPECT_EQ(pod->name.substr(0, 4), "web-");
  for (char c : pod->name.substr(4))
    EXPECT_NE(std::string_view("bcdfghjklmnpqrstvwxz2456789").find(c), std::string_view::npos);
}

TEST_F(StoreTest, CreateErrors) {
  struct Case {
    std::string name;
    std::string ns;
    std::string body;
    Error::Reason reason;
    std::string message;
  };
  MustCreate(Pods(), "default", PodJson("taken"));
  const std::vector<Case> cases = {
      {"exists", "default", PodJson("taken"), Error::Reason::kAlreadyExists, "pods \"taken\" already exists"},
      {"no namespace", "nope", PodJson("a"), Error::Reason::kNotFound, "namespaces \"nope\" not found"},
      {"namespace mismatch", "default",
       R"({"metadata":{"name":"a","namespace":"kube-system"},"spec":{"containers":[{"name":"c","image":"i"}]}})",
       Error::Reason::kBadRequest,
       "the namespace of the provided object does not match the namespace sent on the request"},
      {"no name", "default", R"({"metadata":{},"spec":{"containers":[{"name":"c","image":"i"}]}})",
       Error::Reason::kInvalid, "Pod \"\" is invalid: metadata.name: Required value: name or generateName is required"},
      {"bad name", "default", PodJson("Bad_Name"), Error::Reason::kInvalid, ""},
      {"unknown priority class", "default", PodJson("a", R"(,"priorityClassName":"gold")"), Error::Reason::kForbidden,
       "pods \"a\" is forbidden: no PriorityClass with name gold was found"},
      {"wrong kind", "default", R"({"kind":"Node","metadata":{"name":"a"}})", Error::Reason::kBadRequest, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = store->Create(Pods(), c.ns, Doc(c.body));
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().reason, c.reason) << r.error().message;
    if (!c.message.empty()) {
      EXPECT_EQ(r.error().message, c.message);
    }
  }
  auto r = store->Create(Pods(), "default", Doc(PodJson("Bad_Name")));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().HttpCode(), 422);
  EXPECT_EQ(r.error().ReasonString(), "Invalid");
  ASSERT_FALSE(r.error().causes.empty());
  EXPECT_EQ(r.error().causes[0].field, "metadata.name");
  EXPECT_EQ(r.error().causes[0].reason, "FieldValueInvalid");
}

// Object names as upstream checks them per kind: RBAC names are path segments (colons allowed,
// as in system:kube-scheduler), namespaces DNS labels, the other kinds DNS subdomains.
TEST_F(StoreTest, NameValidationFollowsTheKind) {
  struct Case {
    std::string name;
    std::string group;
    std::string resource;
    std::string ns;
    std::string object_name;
    std::string error;  // "" when the name is valid
  };
  const std::string rbac = "rbac.authorization.k8s.io";
  const std::vector<Case> cases = {
      {"cluster role with colons", rbac, "clusterroles", "", "system:kube-scheduler", ""},
      {"binding with capitals", rbac, "clusterrolebindings", "", "Kubesched:Extra", ""},
      {"role with slash", rbac, "roles", "default", "a/b", "may not contain '/'"},
      {"role binding with percent", rbac, "rolebindings", "default", "a%b", "may not contain '%'"},
      {"cluster role dot dot", rbac, "clusterroles", "", "..", "may not be '..'"},
      {"config map with colon", "", "configmaps", "default", "kubesched:config", "a lowercase RFC 1123 subdomain"},
      {"service account", "", "serviceaccounts", "default", "kubesched", ""},
      {"secret with dots", "", "secrets", "default", "a.b", ""},
      {"namespace with dots", "", "namespaces", "", "a.b", "a lowercase RFC 1123 label"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const ResourceType& type = R(c.group, c.resource);
    auto r = store->Create(type, c.ns, Doc(R"({"metadata":{"name":")" + c.object_name + R"("}})"));
    if (c.error.empty()) {
      EXPECT_TRUE(r.has_value()) << r.error().message;
      continue;
    }
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().reason, Error::Reason::kInvalid);
    ASSERT_FALSE(r.error().causes.empty());
    EXPECT_EQ(r.error().causes[0].field, "metadata.name");
    EXPECT_NE(r.error().message.find(c.error), std::string::npos) << r.error().message;
  }
}

TEST_F(StoreTest, PriorityFromClass) {
  MustCreate(R("scheduling.k8s.io", "priorityclasses"), "",
             R"({"metadata":{"name":"gold"},"value":1000,"preemptionPolicy":"Never"})");
  auto pod = MustCreate(Pods(), "default", PodJson("a", R"(,"priorityClassName":"gold")"));
  EXPECT_EQ(Field(*pod, "spec.priority"), "1000");
  EXPECT_EQ(Field(*pod, "spec.preemptionPolicy"), "Never");
  EXPECT_EQ(pod->View<api::Pod>()->Priority(), 1000);
  EXPECT_EQ(pod->View<api::Pod>()->spec.priority_class_name, "gold");
  auto r = store->Create(Pods(), "default", Doc(PodJson("b", R"(,"priorityClassName":"gold","priority":5)")));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().reason, Error::Reason::kForbidden);
}

TEST_F(StoreTest, UpdateChecksResourceVersionAndKeepsServerFields) {
  auto pod = MustCreate(Pods(), "default", PodJson("web"));
  auto doc = ParseObject(*pod);
  auto& a = doc.GetAllocator();
  api::json::Set(*api::json::Find(doc, "metadata"), "resourceVersion", api::json::MakeString("1", a), a);
  auto stale = store->Update(Pods(), "default", "web", std::move(doc), {});
  ASSERT_FALSE(stale.has_value());
  EXPECT_EQ(stale.error().reason, Error::Reason::kConflict);
  EXPECT_EQ(stale.error().message,
            "Operation cannot be fulfilled on pods \"web\": the object has been modified; please apply your changes "
            "to the latest version and try again");

  doc = ParseObject(*pod);
  api::json::Set(api::json::Child(*api::json::Find(doc, "metadata"), "labels", doc.GetAllocator()), "app",
                 api::json::MakeString("web", doc.GetAllocator()), doc.GetAllocator());
  api::json::Set(*api::json::Find(doc, "metadata"), "uid", api::json::MakeString(pod->uid, doc.GetAllocator()),
                 doc.GetAllocator());
  api::json::Set(*api::json::Find(doc, "status"), "phase", api::json::MakeString("Running", doc.GetAllocator()),
                 doc.GetAllocator());
  auto updated = store->Update(Pods(), "default", "web", std::move(doc), {});
  ASSERT_TRUE(updated.has_value()) << updated.error().message;
  EXPECT_GT((*updated)->resource_version, pod->resource_version);
  EXPECT_EQ(Field(**updated, "metadata.labels.app"), "web");
  EXPECT_EQ((*updated)->uid, pod->uid);
  EXPECT_EQ(Field(**updated, "status.phase"), "Pending");   // the main resource ignores status
  EXPECT_EQ(Field(**updated, "metadata.generation"), "1");  // metadata only

  // The status subresource changes status only.
  doc = ParseObject(**updated);
  api::json::Set(*api::json::Find(doc, "status"), "phase", api::json::MakeString("Running", doc.GetAllocator()),
                 doc.GetAllocator());
  api::json::Set(*api::json::Find(doc, "spec"), "nodeName", api::json::MakeString("n9", doc.GetAllocator()),
                 doc.GetAllocator());
  auto status = store->Update(Pods(), "default", "web", std::move(doc), UpdateRequest{"status", {}});
  ASSERT_TRUE(status.has_value()) << status.error().message;
  EXPECT_EQ(Field(**status, "status.phase"), "Running");
  EXPECT_EQ(Field(**status, "spec.nodeName"), "<none>");

  // An update that changes nothing makes no new version.
  const uint64_t rv = store->ResourceVersion();
  auto same = store->Update(Pods(), "default", "web", ParseObject(**status), {});
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ((*same)->resource_version, (*status)->resource_version);
  EXPECT_EQ(store->ResourceVersion(), rv);
}

TEST_F(StoreTest, SpecChangeBumpsGeneration) {
  auto d = MustCreate(R("apps", "deployments"), "default",
                      R"({"metadata":{"name":"d"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"d"}},
                      "template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}})");
  ASSERT_NE(d, nullptr);
  auto r =
      store->Patch(R("apps", "deployments"), "default", "d", PatchType::kMergePatch, R"({"spec":{"replicas":3}})", "");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(Field(**r, "metadata.generation"), "2");
  EXPECT_EQ(Field(**r, "spec.replicas"), "3");
  auto bad = store->Create(R("apps", "deployments"), "default",
                           Doc(R"({"metadata":{"name":"e"},"spec":{"selector":{"matchLabels":{"app":"x"}},
                      "template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}})"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().reason, Error::Reason::kInvalid);
}

TEST_F(StoreTest, GracefulDeleteOfBoundPod) {
  MustCreate(Pods(), "default", PodJson("bound", R"(,"nodeName":"n1","terminationGracePeriodSeconds":10)"));
  MustCreate(Pods(), "default", PodJson("pending"));
  MustCreate(Pods(), "default", PodJson("override", R"(,"nodeName":"n1")"));

  auto r = store->Delete(Pods(), "default", "bound", {});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(Field(**r, "metadata.deletionTimestamp"), "2024-05-01T12:00:10Z");
  EXPECT_EQ(Field(**r, "metadata.deletionGracePeriodSeconds"), "10");
  EXPECT_TRUE(store->Get(Pods(), "default", "bound").has_value());
  // Deleting again with a longer period changes nothing; grace 0 removes it.
  auto again = store->Delete(Pods(), "default", "bound", DeleteOptions{.grace_period_seconds = 20});
  EXPECT_EQ((*again)->resource_version, (*r)->resource_version);
  ASSERT_TRUE(store->Delete(Pods(), "default", "bound", DeleteOptions{.grace_period_seconds = 0}).has_value());
  EXPECT_FALSE(store->Get(Pods(), "default", "bound").has_value());

  ASSERT_TRUE(store->Delete(Pods(), "default", "pending", {}).has_value());
  EXPECT_FALSE(store->Get(Pods(), "default", "pending").has_value());

  r = store->Delete(Pods(), "default", "override", DeleteOptions{.grace_period_seconds = 5});
  EXPECT_EQ(Field(**r, "metadata.deletionGracePeriodSeconds"), "5");

  auto gone = store->Delete(Pods(), "default", "nothing", {});
  ASSERT_FALSE(gone.has_value());
  EXPECT_EQ(gone.error().message, "pods \"nothing\" not found");
}

TEST_F(StoreTest, FinalizersHoldAnObject) {
  const auto& leases = R("coordination.k8s.io", "leases");
  MustCreate(leases, "default", R"({"metadata":{"name":"l","finalizers":["example.com/hold"]}})");
  auto r = store->Delete(leases, "default", "l", {});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(Field(**r, "metadata.deletionTimestamp"), "2024-05-01T12:00:00Z");
  EXPECT_TRUE(store->Get(leases, "default", "l").has_value());
  // No new finalizers while deleting.
  auto add = store->Patch(leases, "default", "l", PatchType::kMergePatch,
                          R"({"metadata":{"finalizers":["example.com/hold","x/y"]}})", "");
  ASSERT_FALSE(add.has_value());
  EXPECT_EQ(add.error().reason, Error::Reason::kInvalid);
  auto done = store->Patch(leases, "default", "l", PatchType::kMergePatch, R"({"metadata":{"finalizers":null}})", "");
  ASSERT_TRUE(done.has_value()) << done.error().message;
  EXPECT_FALSE(store->Get(leases, "default", "l").has_value());
}

TEST_F(StoreTest, DeletePreconditions) {
  auto pod = MustCreate(Pods(), "default", PodJson("p"));
  auto r = store->Delete(Pods(), "default", "p", DeleteOptions{.precondition_uid = "other"});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().reason, Error::Reason::kConflict);
  EXPECT_EQ(r.error().message,
            "Operation cannot be fulfilled on pods \"p\": Precondition failed: UID in precondition: "
            "other, UID in object meta: " +
                pod->uid);
  r = store->Delete(Pods(), "default", "p", DeleteOptions{.precondition_resource_version = "1"});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().reason, Error::Reason::kConflict);
  r = store->Delete(Pods(), "default", "p", DeleteOptions{.precondition_uid = pod->uid});
  EXPECT_TRUE(r.has_value());
}

TEST_F(StoreTest, DeletingANamespaceRemovesItsObjects) {
  const auto& ns = R("", "namespaces");
  MustCreate(ns, "", R"({"metadata":{"name":"team"}})");
  MustCreate(Pods(), "team", PodJson("a", R"(,"nodeName":"n1")"));
  MustCreate(Pods(), "default", PodJson("b"));
  ASSERT_TRUE(store->Delete(ns, "", "team", {}).has_value());
  EXPECT_FALSE(store->Get(Pods(), "team", "a").has_value());
  EXPECT_TRUE(store->Get(Pods(), "default", "b").has_value());
  auto r = store->Delete(ns, "", "default", {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().reason, Error::Reason::kForbidden);
}

TEST_F(StoreTest, Bind) {
  auto pod = MustCreate(Pods(), "default", PodJson("p"));
  auto r = store->Bind("default", "p", "wrong-uid", "n1");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().reason, Error::Reason::kConflict);
  r = store->Bind("default", "p", pod->uid, "n1");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(Field(**r, "spec.nodeName"), "n1");
  EXPECT_EQ(Field(**r, "status.conditions.0.type"), "PodScheduled");
  EXPECT_EQ(Field(**r, "status.conditions.0.status"), "True");
  EXPECT_EQ((*r)->View<api::Pod>()->spec.node_name, "n1");
  r = store->Bind("default", "p", "", "n2");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message,
            "Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"n1\"");
  r = store->Bind("default", "missing", "", "n2");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().HttpCode(), 404);
}

// A status-only write derives the new view from the old one (ResourceType::decode_status):
// after every kind of status write, the view must be what a full decode of the stored JSON gives.
TEST_F(StoreTest, StatusWritesGiveTheViewAFullDecodeGives) {
  const std::string spec =
      R"(,"nodeSelector":{"disk":"ssd"},"tolerations":[{"key":"k","operator":"Exists"}],)"
      R"("affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":)"
      R"({"matchLabels":{"app":"web"}},"topologyKey":"kubernetes.io/hostname"}]}},)"
      R"("topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",)"
      R"("labelSelector":{"matchLabels":{"app":"web"}}}],"initContainers":[{"name":"i","image":"busybox",)"
      R"("resources":{"requests":{"cpu":"250m"}}}])";
  struct Case {
    std::string name;
    std::function<Result<ObjectPtr>(Store&, const ResourceType&)> write;
    std::string want_error_field;  // empty: the write succeeds
  };
  auto merge_status = [](std::string patch) {
    return [patch](Store& s, const ResourceType& pods) {
      return s.Patch(pods, "default", "p", PatchType::kMergePatch, patch, "status");
    };
  };
  const std::vector<Case> cases = {
      {"nomination", merge_status(R"({"status":{"nominatedNodeName":"n1"}})"), ""},
      {"condition",
       merge_status(R"({"status":{"conditions":[{"type":"PodScheduled","status":"False",)"
                    R"("reason":"Unschedulable","message":"0/3 nodes are available"}]}})"),
       ""},
      {"bind", [](Store& s, const ResourceType&) { return s.Bind("default", "p", "", "n1"); }, ""},
      {"running",
       merge_status(R"({"status":{"phase":"Running","startTime":"2024-05-01T12:00:05Z",)"
                    R"("podIP":"10.244.0.2","conditions":[{"type":"Ready","status":"True"}],)"
                    R"("containerStatuses":[{"name":"c","ready":true}]}})"),
       ""},
      {"labels through status",
       merge_status(R"({"metadata":{"labels":{"app":"web","extra":"1"}},)"
                    R"("status":{"phase":"Running"}})"),
       ""},
      {"strategic merge of conditions",
       [](Store& s, const ResourceType& pods) {
         return s.Patch(pods, "default", "p", PatchType::kStrategicMergePatch,
                        R"({"status":{"conditions":[{"type":"DisruptionTarget","status":"True"}]}})", "status");
       },
       ""},
      {"update of the status subresource",
       [](Store& s, const ResourceType& pods) -> Result<ObjectPtr> {
         auto current = s.Get(pods, "default", "p");
         if (!current) return current;
         api::json::Document doc = ParseObject(**current);
         api::json::Set(api::json::Child(doc, "status", doc.GetAllocator()), "phase",
                        api::json::MakeString("Succeeded", doc.GetAllocator()), doc.GetAllocator());
         return s.Update(pods, "default", "p", std::move(doc), UpdateRequest{"status", {}});
       },
       ""},
      {"a condition without a type is rejected", merge_status(R"({"status":{"conditions":[{"status":"True"}]}})"),
       "status.conditions[0].type"},
      {"a phase not known is rejected", merge_status(R"({"status":{"phase":"Sleeping"}})"), "status.phase"},
      {"no status at all", merge_status(R"({"status":null})"), ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    store = NewBuiltinStore(clock, DefaultOptions());
    MustCreate(Pods(), "default", PodJson("p", spec, R"({"app":"web"})"));
    auto r = c.write(*store, Pods());
    if (!c.want_error_field.empty()) {
      ASSERT_FALSE(r.has_value());
      EXPECT_EQ(r.error().reason, Error::Reason::kInvalid);
      ASSERT_EQ(r.error().causes.size(), 1u);
      EXPECT_EQ(r.error().causes[0].field, c.want_error_field);
      continue;
    }
    ASSERT_TRUE(r.has_value()) << r.error().message;
    ObjectPtr stored = MustGet(Pods(), "default", "p");
    auto view = stored->View<api::Pod>();
    ASSERT_NE(view, nullptr);
    api::json::Document doc = ParseObject(*stored);
    auto full = api::DecodePod(doc, api::DecodeOptions{.texts = nullptr, .keep_json = false});
    ASSERT_TRUE(full.has_value());
    EXPECT_EQ(api::EncodePod(*view), api::EncodePod(**full));
    EXPECT_EQ(view->metadata.resource_version, std::to_string(stored->resource_version));
    EXPECT_EQ((*full)->metadata.resource_version, view->metadata.resource_version);
    EXPECT_EQ(view->metadata.creation_index, (*full)->metadata.creation_index);
    ASSERT_NE(view->json, nullptr);
    EXPECT_EQ(*view->json, stored->json.str());
  }
}

TEST_F(StoreTest, EvictHonoursDisruptionBudgetStatus) {
  const auto& pdbs = R("policy", "poddisruptionbudgets");
  MustCreate(Pods(), "default", PodJson("a", R"(,"nodeName":"n1")", R"({"app":"x"})"));
  ASSERT_TRUE(
      store->Patch(Pods(), "default", "a", PatchType::kMergePatch, R"({"status":{"phase":"Running"}})", "status"));
  MustCreate(pdbs, "default",
             R"({"metadata":{"name":"budget"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"x"}}}})");
  // Not yet processed by the disruption controller.
  auto r = store->Evict("default", "a", {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().HttpCode(), 429);
  EXPECT_EQ(r.error().message, "Cannot evict pod as it would violate the pod's disruption budget.");
  ASSERT_EQ(r.error().causes.size(), 1u);
  EXPECT_EQ(r.error().causes[0].reason, "DisruptionBudget");
  ASSERT_TRUE(store->Patch(
      pdbs, "default", "budget", PatchType::kMergePatch,
      R"({"status":{"observedGeneration":1,"disruptionsAllowed":0,"currentHealthy":1,"desiredHealthy":1}})", "status"));
  r = store->Evict("default", "a", {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().causes[0].message, "The disruption budget budget needs 1 healthy pods and has 1 currently");
  ASSERT_TRUE(store->Patch(pdbs, "default", "budget", PatchType::kMergePatch,
                           R"({"status":{"disruptionsAllowed":1,"currentHealthy":2}})", "status"));
  r = store->Evict("default", "a", {});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_NE(Field(**r, "metadata.deletionTimestamp"), "<none>");
  auto pdb = MustGet(pdbs, "default", "budget");
  EXPECT_EQ(Field(*pdb, "status.disruptionsAllowed"), "0");
  EXPECT_EQ(Field(*pdb, "status.disruptedPods.a"), "2024-05-01T12:00:00Z");
}

TEST_F(StoreTest, ListSelectorsAndOrder) {
  MustCreate(R("", "namespaces"), "", R"({"metadata":{"name":"a-ns"}})");
  MustCreate(Pods(), "default", PodJson("z", R"(,"nodeName":"n1")", R"({"app":"web","tier":"fe"})"));
  MustCreate(Pods(), "default", PodJson("m", "", R"({"app":"db"})"));
  MustCreate(Pods(), "a-ns", PodJson("q", "", R"({"app":"web"})"));
  struct Case {
    std::string name;
    std::string ns;
    Selectors selectors;
    std::vector<std::string> want;  // namespace/name
  };
  const std::vector<Case> cases = {
      {"all", "", {}, {"a-ns/q", "default/m", "default/z"}},
      {"namespace", "default", {}, {"default/m", "default/z"}},
      {"equals", "", {"app=web", ""}, {"a-ns/q", "default/z"}},
      {"double equals", "", {"app==web", ""}, {"a-ns/q", "default/z"}},
      {"not equals", "", {"app!=web", ""}, {"default/m"}},
      {"in", "", {"app in (db, cache)", ""}, {"default/m"}},
      {"notin", "", {"app notin (db)", ""}, {"a-ns/q", "default/z"}},
      {"exists", "", {"tier", ""}, {"default/z"}},
      {"does not exist", "", {"!tier", ""}, {"a-ns/q", "default/m"}},
      {"field nodeName", "", {"", "spec.nodeName=n1"}, {"default/z"}},
      {"field unbound", "", {"", "spec.nodeName="}, {"a-ns/q", "default/m"}},
      {"field not equal", "", {"", "metadata.name!=z,metadata.namespace=default"}, {"default/m"}},
      {"both", "", {"app=web", "metadata.namespace==a-ns"}, {"a-ns/q"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = store->List(Pods(), c.ns, ListOptions{.selectors = c.selectors});
    ASSERT_TRUE(r.has_value()) << r.error().message;
    std::vector<std::string> got;
    for (const auto& o : r->items) got.push_back(o->namespace_ + "/" + o->name);
    EXPECT_EQ(got, c.want);
    EXPECT_EQ(r->resource_version, store->ResourceVersion());
  }
  auto bad = store->List(Pods(), "", ListOptions{.selectors = {"", "spec.image=x"}});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "field label not supported: spec.image");
  EXPECT_EQ(bad.error().HttpCode(), 400);
  bad = store->List(Pods(), "", ListOptions{.selectors = {"app in (", ""}});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().HttpCode(), 400);
}

// Every selectable field is kept (packed in one string per version) and read back by its key,
// a value longer than one varint byte included; labels of pods are the typed view's and follow a
// status write that changes them.
TEST_F(StoreTest, SelectableFieldsAndLabelsFollowEachVersion) {
  const std::string account(200, 'a');
  auto pod = MustCreate(
      Pods(), "default",
      PodJson("f",
              R"(,"nodeName":"n1","hostNetwork":true,"restartPolicy":"Never","serviceAccountName":")" + account + "\"",
              R"({"app":"web"})"));
  EXPECT_EQ(pod->Field("spec.nodeName"), "n1");
  EXPECT_EQ(pod->Field("spec.schedulerName"), "default-scheduler");
  EXPECT_EQ(pod->Field("spec.hostNetwork"), "true");
  EXPECT_EQ(pod->Field("spec.restartPolicy"), "Never");
  EXPECT_EQ(pod->Field("spec.serviceAccountName"), account);
  EXPECT_EQ(pod->Field("status.phase"), "Pending");
  EXPECT_EQ(pod->Field("status.podIP"), "");
  EXPECT_EQ(pod->Field("no.such.field"), "");
  ASSERT_NE(pod->view, nullptr);
  EXPECT_EQ(&pod->labels(), &pod->View<api::Pod>()->metadata.labels.entries());
  EXPECT_EQ(pod->labels(), (Object::LabelList{{"app", "web"}}));

  auto patched = store->Patch(
      Pods(), "default", "f", PatchType::kMergePatch,
      R"({"metadata":{"labels":{"app":"db","tier":"x"}},"status":{"phase":"Running","podIP":"10.1.2.3"}})", "status");
  ASSERT_TRUE(patched.has_value()) << patched.error().message;
  EXPECT_EQ((*patched)->Field("status.phase"), "Running");
  EXPECT_EQ((*patched)->Field("status.podIP"), "10.1.2.3");
  EXPECT_EQ((*patched)->Field("spec.serviceAccountName"), account);
  EXPECT_EQ((*patched)->labels(), (Object::LabelList{{"app", "db"}, {"tier", "x"}}));
  for (const auto& [selectors, want] :
       std::vector<std::pair<Selectors, size_t>>{{{"app=db,tier", "status.phase=Running,status.podIP=10.1.2.3"}, 1},
                                                 {{"app=web", ""}, 0},
                                                 {{"", "spec.serviceAccountName=" + account}, 1},
                                                 {{"", "spec.hostNetwork=false"}, 0}}) {
    auto r = store->List(Pods(), "default", ListOptions{.selectors = selectors});
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(r->items.size(), want) << selectors.label_selector << " " << selectors.field_selector;
  }
  // A kind without a typed view keeps its own labels.
  auto ns = MustCreate(R("", "namespaces"), "", R"({"metadata":{"name":"own","labels":{"b":"2","a":"1"}}})");
  EXPECT_EQ(ns->shared_labels, nullptr);
  EXPECT_EQ(ns->labels(), (Object::LabelList{{"a", "1"}, {"b", "2"}, {"kubernetes.io/metadata.name", "own"}}));
  EXPECT_EQ(ns->Field("status.phase"), "");
}

TEST_F(StoreTest, LimitAndContinueServeOneSnapshot) {
  for (const char* n : {"a", "b", "c", "d", "e"}) MustCreate(Pods(), "default", PodJson(n));
  auto page1 = store->List(Pods(), "default", ListOptions{.limit = 2});
  ASSERT_TRUE(page1.has_value());
  ASSERT_EQ(page1->items.size(), 2u);
  EXPECT_EQ(page1->remaining_item_count, 3);
  ASSERT_FALSE(page1->continue_token.empty());
  // Changes after the first page do not show in the next ones.
  ASSERT_TRUE(store->Delete(Pods(), "default", "c", {}));
  MustCreate(Pods(), "default", PodJson("cc"));
  ASSERT_TRUE(store->Patch(Pods(), "default", "d", PatchType::kMergePatch, R"({"metadata":{"labels":{"x":"y"}}})", ""));
  auto page2 = store->List(Pods(), "default", ListOptions{.limit = 2, .continue_token = page1->continue_token});
  ASSERT_TRUE(page2.has_value()) << page2.error().message;
  ASSERT_EQ(page2->items.size(), 2u);
  EXPECT_EQ(page2->items[0]->name, "c");
  EXPECT_EQ(page2->items[1]->name, "d");
  EXPECT_EQ(Field(*page2->items[1], "metadata.labels.x"), "<none>");
  EXPECT_EQ(page2->resource_version, page1->resource_version);
  auto page3 = store->List(Pods(), "default", ListOptions{.limit = 2, .continue_token = page2->continue_token});
  ASSERT_TRUE(page3.has_value());
  ASSERT_EQ(page3->items.size(), 1u);
  EXPECT_EQ(page3->items[0]->name, "e");
  EXPECT_TRUE(page3->continue_token.empty());

  auto bad = store->List(Pods(), "default", ListOptions{.continue_token = "!!!"});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().HttpCode(), 400);
}

TEST_F(StoreTest, ExactAndFutureResourceVersions) {
  MustCreate(Pods(), "default", PodJson("a"));
  const uint64_t rv = store->ResourceVersion();
  MustCreate(Pods(), "default", PodJson("b"));
  auto exact =
      store->List(Pods(), "", ListOptions{.resource_version = std::to_string(rv), .resource_version_match = "Exact"});
  ASSERT_TRUE(exact.has_value()) << exact.error().message;
  ASSERT_EQ(exact->items.size(), 1u);
  EXPECT_EQ(exact->resource_version, rv);
  auto newer = store->List(
      Pods(), "", ListOptions{.resource_version = std::to_string(rv), .resource_version_match = "NotOlderThan"});
  ASSERT_TRUE(newer.has_value());
  EXPECT_EQ(newer->items.size(), 2u);
  auto future = store->List(Pods(), "", ListOptions{.resource_version = std::to_string(rv + 100)});
  ASSERT_FALSE(future.has_value());
  EXPECT_EQ(future.error().HttpCode(), 504);
  EXPECT_EQ(future.error().message, fmt::format("Too large resource version: {}, current: {}", rv + 100, rv + 1));
  auto forbidden = store->List(Pods(), "", ListOptions{.resource_version_match = "Exact"});
  ASSERT_FALSE(forbidden.has_value());
  EXPECT_EQ(forbidden.error().HttpCode(), 400);
}

class CompactingStoreTest : public testing::StoreFixture {
 public:
  CompactingStoreTest() : StoreFixture(Options()) {}
  static StoreOptions Options() {
    StoreOptions o = DefaultOptions();
    o.watch_history = 3;
    return o;
  }
};

TEST_F(CompactingStoreTest, OldResourceVersionsExpire) {
  for (const char* n : {"a", "b", "c"}) MustCreate(Pods(), "default", PodJson(n));
  auto page1 = store->List(Pods(), "default", ListOptions{.limit = 1});
  const uint64_t rv = store->ResourceVersion();
  for (const char* n : {"d", "e", "f", "g"}) MustCreate(Pods(), "default", PodJson(n));
  auto r = store->List(Pods(), "default", ListOptions{.limit = 1, .continue_token = page1->continue_token});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().HttpCode(), 410);
  EXPECT_EQ(r.error().ReasonString(), "Expired");
  auto w = store->Watch(Pods(), "", WatchOptions{.resource_version = std::to_string(rv)});
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().HttpCode(), 410);
  EXPECT_EQ(w.error().message, fmt::format("too old resource version: {} ({})", rv, store->ResourceVersion() - 2));
}

TEST_F(StoreTest, EventsV1AreCoreEvents) {
  const auto& v1 = R("events.k8s.io", "events");
  const auto& core = R("", "events");
  auto created = MustCreate(v1, "default", R"({"metadata":{"name":"e1"},"eventTime":"2024-05-01T12:00:00.000000Z",
      "reportingController":"default-scheduler","reportingInstance":"s-1","action":"Binding","reason":"Scheduled",
      "regarding":{"kind":"Pod","namespace":"default","name":"web"},"note":"Successfully assigned default/web to n1",
      "type":"Normal"})");
  ASSERT_NE(created, nullptr);
  EXPECT_EQ(Field(*created, "apiVersion"), "events.k8s.io/v1");
  EXPECT_EQ(Field(*created, "note"), "Successfully assigned default/web to n1");
  auto as_core = MustGet(core, "default", "e1");
  EXPECT_EQ(Field(*as_core, "apiVersion"), "v1");
  EXPECT_EQ(Field(*as_core, "message"), "Successfully assigned default/web to n1");
  EXPECT_EQ(Field(*as_core, "involvedObject.name"), "web");
  EXPECT_EQ(Field(*as_core, "reportingComponent"), "default-scheduler");
  auto listed = store->List(core, "", ListOptions{.selectors = {"", "involvedObject.name=web,reason=Scheduled"}});
  ASSERT_TRUE(listed.has_value()) << listed.error().message;
  EXPECT_EQ(listed->items.size(), 1u);
  auto listed_v1 = store->List(v1, "default", {});
  ASSERT_EQ(listed_v1->items.size(), 1u);
  EXPECT_EQ(Field(*listed_v1->items[0], "regarding.kind"), "Pod");
}

TEST_F(StoreTest, StateRoundTrip) {
  MustCreate(Pods(), "default", PodJson("a", R"(,"nodeName":"n1")"));
  MustCreate(Nodes(), "", NodeJson("n1"));
  const std::string path = ::testing::TempDir() + "/store_state.json";
  ASSERT_TRUE(store->SaveState(path).has_value());
  util::VirtualClock clock2(testing::kStartNs);
  StoreOptions o = DefaultOptions();
  auto restored = NewBuiltinStore(clock2, o);
  auto loaded = restored->LoadState(path);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_EQ(restored->ResourceVersion(), store->ResourceVersion());
  for (const ResourceType* t : store->Resources()) {
    auto a = store->List(*t, "", {});
    auto b = restored->List(*t, "", {});
    ASSERT_EQ(a->items.size(), b->items.size()) << t->resource;
    for (size_t i = 0; i < a->items.size(); ++i) EXPECT_EQ(a->items[i]->json, b->items[i]->json);
  }
  auto pod = restored->Get(*restored->FindResource("", "pods"), "default", "a");
  ASSERT_TRUE(pod.has_value());
  EXPECT_NE((*pod)->View<api::Pod>(), nullptr);
  auto next = restored->Create(*restored->FindResource("", "pods"), "default", Doc(PodJson("b")));
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ((*next)->resource_version, store->ResourceVersion() + 1);
  // Watching from before the load is too old.
  auto w = restored->Watch(*restored->FindResource("", "pods"), "", WatchOptions{.resource_version = "1"});
  EXPECT_FALSE(w.has_value());
  EXPECT_FALSE(restored->LoadState(path + ".missing").has_value());
  std::filesystem::remove(path);
}

TEST(TimestampTest, FormatAndParse) {
  EXPECT_EQ(api::FormatRFC3339(testing::kStartNs), "2024-05-01T12:00:00Z");
  EXPECT_EQ(api::ParseRFC3339("2024-05-01T12:00:00Z"), testing::kStartNs);
  EXPECT_EQ(api::ParseRFC3339("2024-05-01T14:00:00.5+02:00"), testing::kStartNs + 500'000'000);
  EXPECT_EQ(api::ParseRFC3339("2024-05-01"), std::nullopt);
  // Floored to whole seconds, before 1970 too, up to the ends of int64 nanoseconds.
  EXPECT_EQ(api::FormatRFC3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(api::FormatRFC3339(-1), "1969-12-31T23:59:59Z");
  EXPECT_EQ(api::FormatRFC3339(testing::kStartNs + 999'999'999), "2024-05-01T12:00:00Z");
  EXPECT_EQ(api::FormatRFC3339(951'782'400LL * 1'000'000'000), "2000-02-29T00:00:00Z");
  EXPECT_EQ(api::FormatRFC3339(std::numeric_limits<int64_t>::max()), "2262-04-11T23:47:16Z");
  EXPECT_EQ(api::FormatRFC3339(std::numeric_limits<int64_t>::min()), "1677-09-21T00:12:43Z");
  for (int64_t s = -5'000'000'000LL; s < 9'000'000'000LL; s += 86'399'999) {
    const int64_t ns = s * 1'000'000'000;
    EXPECT_EQ(api::ParseRFC3339(api::FormatRFC3339(ns)), ns) << api::FormatRFC3339(ns);
  }
}

}  // namespace
}  // namespace kubesched::store
