#include "server/printers.h"
#include "api/time_format.h"

#include <gtest/gtest.h>

#include "server/table.h"
#include "store/resources.h"

namespace kubesched::server {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

api::json::Document Decode(std::string_view text) {
  api::json::Document doc;
  EXPECT_TRUE(api::json::Parse(text, doc).has_value()) << text;
  return doc;
}

const store::ResourceType& Type(std::string_view group, std::string_view resource) {
  for (const store::ResourceType* t : store::BuiltinResources()) {
    if (t->group == group && t->resource == resource) return *t;
  }
  ADD_FAILURE() << "no resource " << resource;
  return *store::BuiltinResources().front();
}

std::vector<Cell> Cells(std::string_view group, std::string_view resource, std::string_view object, int64_t now_ns) {
  api::json::Document doc = Decode(object);
  std::vector<Cell> cells;
  PrinterFor(Type(group, resource)).cells(doc, now_ns, cells);
  EXPECT_EQ(cells.size(), PrinterFor(Type(group, resource)).columns.size()) << "every column has a cell";
  return cells;
}

std::string S(const Cell& c) { return std::get<std::string>(c); }

TEST(PrintersTest, HumanDuration) {
  struct Case {
    int64_t seconds;
    std::string text;
  };
  const std::vector<Case> cases = {{-5, "<invalid>"},
                                   {-1, "0s"},
                                   {0, "0s"},
                                   {45, "45s"},
                                   {119, "119s"},
                                   {120, "2m"},
                                   {200, "3m20s"},
                                   {600, "10m"},
                                   {3 * 3600 - 1, "179m"},
                                   {3 * 3600, "3h"},
                                   {3 * 3600 + 60 * 5, "3h5m"},
                                   {10 * 3600, "10h"},
                                   {50 * 3600, "2d2h"},
                                   {8 * 86400, "8d"},
                                   {800 * 86400, "2y70d"},
                                   {9 * 365 * 86400, "9y"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.seconds);
    EXPECT_EQ(HumanDuration(c.seconds * kSecond), c.text);
  }
}

TEST(PrintersTest, ParseTimestamp) {
  EXPECT_EQ(api::ParseRFC3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(api::ParseRFC3339("2024-02-29T12:00:00Z"), int64_t{1709208000} * kSecond);
  EXPECT_EQ(api::ParseRFC3339("2024-02-29T14:00:00+02:00"), int64_t{1709208000} * kSecond);
  EXPECT_EQ(api::ParseRFC3339("2024-02-29T12:00:00.5Z"), int64_t{1709208000} * kSecond + kSecond / 2);
  EXPECT_FALSE(api::ParseRFC3339(""));
  EXPECT_FALSE(api::ParseRFC3339("2024-02-29 12:00:00"));
  EXPECT_FALSE(api::ParseRFC3339("2024-13-01T00:00:00Z"));
  EXPECT_EQ(TranslateTimestampSince("", 0), "<unknown>");
  EXPECT_EQ(TranslateTimestampSince("1970-01-01T00:00:00Z", 90 * kSecond), "90s");
}

TEST(PrintersTest, PodStatusColumn) {
  const int64_t now = *api::ParseRFC3339("2024-01-01T00:10:00Z");
  struct Case {
    std::string name;
    std::string pod;
    std::string ready, status, restarts;
  };
  const std::string meta = R"("metadata":{"name":"p","creationTimestamp":"2024-01-01T00:00:00Z")";
  const std::vector<Case> cases = {
      {"pending", "{" + meta + R"(},"spec":{"containers":[{"name":"a"},{"name":"b"}]},"status":{"phase":"Pending"}})",
       "0/2", "Pending", "0"},
      {"running and ready",
       "{" + meta +
           R"(},"spec":{"containers":[{"name":"a"}]},"status":{"phase":"Running","containerStatuses":[{"name":"a","ready":true,"restartCount":2,"state":{"running":{}},"lastState":{"terminated":{"finishedAt":"2024-01-01T00:05:00Z"}}}]}})",
       "1/1", "Running", "2 (5m ago)"},
      {"waiting reason wins",
       "{" + meta +
           R"(},"spec":{"containers":[{"name":"a"}]},"status":{"phase":"Pending","containerStatuses":[{"name":"a","state":{"waiting":{"reason":"ImagePullBackOff"}}}]}})",
       "0/1", "ImagePullBackOff", "0"},
      {"terminating",
       "{" + meta +
           R"(,"deletionTimestamp":"2024-01-01T00:09:00Z"},"spec":{"containers":[{"name":"a"}]},"status":{"phase":"Running"}})",
       "0/1", "Terminating", "0"},
      {"succeeded is not terminating",
       "{" + meta +
           R"(,"deletionTimestamp":"2024-01-01T00:09:00Z"},"spec":{"containers":[{"name":"a"}]},"status":{"phase":"Succeeded"}})",
       "0/1", "Succeeded", "0"},
      {"scheduling gated",
       "{" + meta +
           R"(},"spec":{"containers":[{"name":"a"}]},"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"SchedulingGated"}]}})",
       "0/1", "SchedulingGated", "0"},
      {"init container running",
       "{" + meta +
           R"(},"spec":{"initContainers":[{"name":"i"}],"containers":[{"name":"a"}]},"status":{"phase":"Pending","initContainerStatuses":[{"name":"i","state":{"running":{}}}]}})",
       "0/1", "Init:0/1", "0"},
      {"status reason",
       "{" + meta + R"(},"spec":{"containers":[{"name":"a"}]},"status":{"phase":"Failed","reason":"Evicted"}})", "0/1",
       "Evicted", "0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Cell> cells = Cells("", "pods", c.pod, now);
    EXPECT_EQ(S(cells[0]), "p");
    EXPECT_EQ(S(cells[1]), c.ready);
    EXPECT_EQ(S(cells[2]), c.status);
    EXPECT_EQ(S(cells[3]), c.restarts);
    EXPECT_EQ(S(cells[4]), "10m");
  }
  std::vector<Cell> wide = Cells(
      "", "pods",
      R"({"metadata":{"name":"p"},"spec":{"nodeName":"n1","containers":[],"readinessGates":[{"conditionType":"x"}]},"status":{"podIPs":[{"ip":"10.0.0.9"}],"conditions":[{"type":"x","status":"True"}]}})",
      now);
  EXPECT_EQ(S(wide[5]), "10.0.0.9");
  EXPECT_EQ(S(wide[6]), "n1");
  EXPECT_EQ(S(wide[7]), "<none>");
  EXPECT_EQ(S(wide[8]), "1/1");
}

TEST(PrintersTest, NodeRow) {
  std::vector<Cell> cells = Cells(
      "", "nodes",
      R"({"metadata":{"name":"n1","labels":{"node-role.kubernetes.io/control-plane":"","kubernetes.io/role":"infra"}},
          "spec":{"unschedulable":true},
          "status":{"conditions":[{"type":"Ready","status":"True"}],"addresses":[{"type":"InternalIP","address":"10.0.0.1"}],
                    "nodeInfo":{"kubeletVersion":"v1.32.0","osImage":"Linux"}}})",
      0);
  EXPECT_EQ(S(cells[1]), "Ready,SchedulingDisabled");
  EXPECT_EQ(S(cells[2]), "control-plane,infra");
  EXPECT_EQ(S(cells[3]), "<unknown>");
  EXPECT_EQ(S(cells[4]), "v1.32.0");
  EXPECT_EQ(S(cells[5]), "10.0.0.1");
  EXPECT_EQ(S(cells[6]), "<none>");
  EXPECT_EQ(S(cells[7]), "Linux");
  EXPECT_EQ(S(cells[8]), "<unknown>");
  std::vector<Cell> bare = Cells("", "nodes", R"({"metadata":{"name":"n2"}})", 0);
  EXPECT_EQ(S(bare[1]), "Unknown");
  EXPECT_EQ(S(bare[2]), "<none>");
}

TEST(PrintersTest, WorkloadRows) {
  std::vector<Cell> d = Cells(
      "apps", "deployments",
      R"({"metadata":{"name":"web"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"tier","operator":"In","values":["b","a"]}]},
          "template":{"spec":{"containers":[{"name":"a","image":"nginx"},{"name":"b","image":"redis"}]}}},
          "status":{"readyReplicas":2,"updatedReplicas":3,"availableReplicas":2}})",
      0);
  EXPECT_EQ(S(d[1]), "2/3");
  EXPECT_EQ(std::get<int64_t>(d[2]), 3);
  EXPECT_EQ(std::get<int64_t>(d[3]), 2);
  EXPECT_EQ(S(d[5]), "a,b");
  EXPECT_EQ(S(d[6]), "nginx,redis");
  EXPECT_EQ(S(d[7]), "app=web,tier in (a,b)");

  // printStatefulSet and printDaemonSet.
  std::vector<Cell> sts = Cells(
      "apps", "statefulsets",
      R"({"metadata":{"name":"db"},"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"pg","image":"postgres"}]}}},
          "status":{"readyReplicas":1}})",
      0);
  EXPECT_EQ(S(sts[1]), "1/3");
  EXPECT_EQ(S(sts[3]), "pg");
  EXPECT_EQ(S(sts[4]), "postgres");
  std::vector<Cell> ds = Cells("apps", "daemonsets",
                               R"({"metadata":{"name":"agent"},"spec":{"selector":{"matchLabels":{"app":"agent"}},
          "template":{"spec":{"nodeSelector":{"os":"linux","arch":"amd64"},"containers":[{"name":"a","image":"agent:1"}]}}},
          "status":{"desiredNumberScheduled":5,"currentNumberScheduled":4,"numberReady":3,"updatedNumberScheduled":4,"numberAvailable":3}})",
                               0);
  EXPECT_EQ(std::get<int64_t>(ds[1]), 5);
  EXPECT_EQ(std::get<int64_t>(ds[2]), 4);
  EXPECT_EQ(std::get<int64_t>(ds[3]), 3);
  EXPECT_EQ(std::get<int64_t>(ds[4]), 4);
  EXPECT_EQ(std::get<int64_t>(ds[5]), 3);
  EXPECT_EQ(S(ds[6]), "arch=amd64,os=linux");
  EXPECT_EQ(S(ds[8]), "a");
  EXPECT_EQ(S(ds[10]), "app=agent");
  EXPECT_EQ(S(Cells("apps", "daemonsets", R"({"metadata":{"name":"x"}})", 0)[6]), "<none>");

  std::vector<Cell> pdb =
      Cells("policy", "poddisruptionbudgets",
            R"({"metadata":{"name":"p"},"spec":{"maxUnavailable":"50%"},"status":{"disruptionsAllowed":1}})", 0);
  EXPECT_EQ(S(pdb[1]), "N/A");
  EXPECT_EQ(S(pdb[2]), "50%");
  EXPECT_EQ(std::get<int64_t>(pdb[3]), 1);

  std::vector<Cell> pc = Cells("scheduling.k8s.io", "priorityclasses",
                               R"({"metadata":{"name":"high"},"value":1000,"globalDefault":true})", 0);
  EXPECT_EQ(std::get<int64_t>(pc[1]), 1000);
  EXPECT_TRUE(std::get<bool>(pc[2]));
  EXPECT_EQ(S(pc[4]), "PreemptLowerPriority");
}

TEST(PrintersTest, DeploymentKindRows) {
  const int64_t now = *api::ParseRFC3339("2024-01-01T00:01:00Z");
  std::vector<Cell> cm = Cells(
      "", "configmaps",
      R"({"metadata":{"name":"cfg","creationTimestamp":"2024-01-01T00:00:00Z"},"data":{"a":"1","b":"2"},"binaryData":{"c":"AA=="}})",
      now);
  EXPECT_EQ(S(cm[0]), "cfg");
  EXPECT_EQ(std::get<int64_t>(cm[1]), 3);
  EXPECT_EQ(S(cm[2]), "60s");
  EXPECT_EQ(std::get<int64_t>(Cells("", "configmaps", R"({"metadata":{"name":"empty"}})", now)[1]), 0);

  std::vector<Cell> sa = Cells("", "serviceaccounts", R"({"metadata":{"name":"s"},"secrets":[{"name":"t"}]})", now);
  EXPECT_EQ(std::get<int64_t>(sa[1]), 1);

  for (std::string_view resource : {"clusterrolebindings", "rolebindings"}) {
    SCOPED_TRACE(resource);
    std::vector<Cell> b = Cells("rbac.authorization.k8s.io", resource,
                                R"({"metadata":{"name":"b"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io",
                                    "kind":"ClusterRole","name":"system:kube-scheduler"},
                                    "subjects":[{"kind":"ServiceAccount","name":"kubesched","namespace":"kube-system"},
                                                {"kind":"User","name":"alice"},{"kind":"User","name":"bob"},
                                                {"kind":"Group","name":"ops"}]})",
                                now);
    EXPECT_EQ(S(b[1]), "ClusterRole/system:kube-scheduler");
    EXPECT_EQ(S(b[3]), "alice, bob");
    EXPECT_EQ(S(b[4]), "ops");
    EXPECT_EQ(S(b[5]), "kube-system/kubesched");
  }
  for (std::string_view resource : {"clusterroles", "roles"}) {
    std::vector<Cell> r =
        Cells("rbac.authorization.k8s.io", resource,
              R"({"metadata":{"name":"r","creationTimestamp":"2024-01-01T00:00:00Z"},"rules":[]})", now);
    EXPECT_EQ(S(r[1]), "2024-01-01T00:00:00Z") << resource;
  }
  // Secrets keep the default columns.
  EXPECT_EQ(Cells("", "secrets", R"({"metadata":{"name":"s","creationTimestamp":"2024-01-01T00:00:00Z"}})", now).size(),
            2u);
}

// printService: TYPE, CLUSTER-IP, EXTERNAL-IP, PORT(S), AGE, and SELECTOR with -o wide.
TEST(PrintersTest, ServiceRows) {
  const int64_t now = *api::ParseRFC3339("2024-01-01T00:01:00Z");
  std::vector<Cell> lb = Cells("", "services", R"({"metadata":{"name":"web","creationTimestamp":"2024-01-01T00:00:00Z"},
      "spec":{"type":"LoadBalancer","clusterIP":"10.96.0.5","selector":{"app":"web","tier":"fe"},
              "ports":[{"port":80,"nodePort":30001,"protocol":"TCP"},{"port":53,"protocol":"UDP","nodePort":30002}]}})",
                               now);
  EXPECT_EQ(S(lb[1]), "LoadBalancer");
  EXPECT_EQ(S(lb[2]), "10.96.0.5");
  EXPECT_EQ(S(lb[3]), "<pending>");
  EXPECT_EQ(S(lb[4]), "80:30001/TCP,53:30002/UDP");
  EXPECT_EQ(S(lb[5]), "60s");
  EXPECT_EQ(S(lb[6]), "app=web,tier=fe");
  std::vector<Cell> served = Cells("", "services", R"({"metadata":{"name":"web"},"spec":{"type":"LoadBalancer",
      "clusterIP":"10.96.0.5","ports":[{"port":80}]},"status":{"loadBalancer":{"ingress":[{"ip":"1.2.3.4"},
      {"hostname":"lb.example.com"}]}}})",
                                   now);
  EXPECT_EQ(S(served[3]), "1.2.3.4,lb.example.com");
  EXPECT_EQ(S(served[6]), "<none>");
  std::vector<Cell> external =
      Cells("", "services",
            R"({"metadata":{"name":"x"},"spec":{"type":"ExternalName","externalName":"db.example.com"}})", now);
  EXPECT_EQ(S(external[2]), "<none>");
  EXPECT_EQ(S(external[3]), "db.example.com");
  EXPECT_EQ(S(external[4]), "<none>");
  std::vector<Cell> headless = Cells(
      "", "services",
      R"({"metadata":{"name":"zk"},"spec":{"clusterIP":"None","externalIPs":["5.6.7.8"],"ports":[{"port":2181}]}})",
      now);
  EXPECT_EQ(S(headless[1]), "ClusterIP");
  EXPECT_EQ(S(headless[2]), "None");
  EXPECT_EQ(S(headless[3]), "5.6.7.8");
  EXPECT_EQ(S(headless[4]), "2181/TCP");
}

TEST(PrintersTest, EventRow) {
  const int64_t now = *api::ParseRFC3339("2024-01-01T00:01:00Z");
  std::vector<Cell> e = Cells(
      "", "events",
      R"({"metadata":{"name":"p.1"},"involvedObject":{"kind":"Pod","name":"p"},"reason":"Scheduled","type":"Normal",
          "message":" Successfully assigned default/p to n1 ","source":{"component":"default-scheduler"},
          "firstTimestamp":"2024-01-01T00:00:00Z"})",
      now);
  EXPECT_EQ(S(e[0]), "60s");  // no lastTimestamp: the first
  EXPECT_EQ(S(e[3]), "pod/p");
  EXPECT_EQ(S(e[5]), "default-scheduler");
  EXPECT_EQ(S(e[6]), "Successfully assigned default/p to n1");
  EXPECT_EQ(std::get<int64_t>(e[8]), 1);
  EXPECT_EQ(S(e[9]), "p.1");
}

TEST(PrintersTest, FormatLabelSelector) {
  EXPECT_EQ(FormatLabelSelector(nullptr), "<none>");
  api::json::Document empty = Decode("{}");
  EXPECT_EQ(FormatLabelSelector(&empty), "<none>");
  api::json::Document s = Decode(
      R"({"matchExpressions":[{"key":"z","operator":"Exists"},{"key":"a","operator":"NotIn","values":["x"]},{"key":"m","operator":"DoesNotExist"}]})");
  EXPECT_EQ(FormatLabelSelector(&s), "a notin (x),!m,z");
}

TEST(TableTest, EncodesColumnsRowsAndObjects) {
  auto pod = std::make_shared<store::Object>();
  pod->name = "p";
  pod->namespace_ = "ns";
  pod->resource_version = 7;
  pod->json =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","labels":{"a":"b"}},"spec":{"containers":[{"name":"c"}]},"status":{"phase":"Succeeded"}})";
  const store::ResourceType& pods = Type("", "pods");
  TableOptions options;
  options.now_ns = 0;
  api::json::Document t = Decode(EncodeTable(pods, {pod}, ListMeta{.resource_version = 9}, options));
  EXPECT_EQ(api::json::GetString(t, "kind"), "Table");
  EXPECT_EQ(api::json::GetString(t, "apiVersion"), "meta.k8s.io/v1");
  EXPECT_EQ(api::json::GetString(t["metadata"], "resourceVersion"), "9");
  ASSERT_EQ(t["columnDefinitions"].Size(), 9u);
  EXPECT_EQ(api::json::GetString(t["columnDefinitions"][0], "format"), "name");
  EXPECT_EQ(t["columnDefinitions"][5]["priority"].GetInt(), 1);
  ASSERT_EQ(t["rows"].Size(), 1u);
  const api::json::Value& row = t["rows"][0];
  EXPECT_EQ(row["cells"].Size(), 9u);
  EXPECT_EQ(api::json::GetString(row["object"], "kind"), "PartialObjectMetadata");
  EXPECT_EQ(api::json::GetString(row["object"]["metadata"]["labels"], "a"), "b");
  EXPECT_EQ(api::json::GetString(row["conditions"][0], "type"), "Completed");

  options.include = IncludeObject::kObject;
  options.no_headers = true;
  options.meta_version = "v1beta1";
  api::json::Document full = Decode(EncodeTable(pods, {pod}, ListMeta{}, options));
  EXPECT_EQ(api::json::GetString(full, "apiVersion"), "meta.k8s.io/v1beta1");
  EXPECT_EQ(full["columnDefinitions"].Size(), 0u);
  EXPECT_EQ(api::json::GetString(full["rows"][0]["object"], "kind"), "Pod");

  options.include = IncludeObject::kNone;
  api::json::Document none = Decode(EncodeTable(pods, {pod}, ListMeta{}, options));
  EXPECT_FALSE(none["rows"][0].HasMember("object"));
}

}  // namespace
}  // namespace kubesched::server
