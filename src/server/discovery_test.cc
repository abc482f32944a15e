#include "server/discovery.h"

#include <gtest/gtest.h>

#include "api/json.h"
#include "server/media_type.h"
#include "server/openapi.h"
#include "store/resources.h"

namespace kubesched::server {
namespace {

api::json::Document Decode(const std::string& text) {
  api::json::Document doc;
  EXPECT_TRUE(api::json::Parse(text, doc).has_value()) << text;
  return doc;
}

const api::json::Value* FindByMember(const api::json::Value& array, std::string_view key, std::string_view value) {
  for (const api::json::Value& v : array.GetArray()) {
    if (api::json::GetString(v, key) == value) return &v;
  }
  return nullptr;
}

std::vector<std::string> Strings(const api::json::Value& array) {
  std::vector<std::string> out;
  for (const api::json::Value& v : array.GetArray()) out.emplace_back(api::json::View(v));
  return out;
}

class DiscoveryTest : public ::testing::Test {
 protected:
  Discovery discovery_{store::BuiltinResources()};
};

TEST_F(DiscoveryTest, CoreResourceListHasPodsWithSubresources) {
  std::optional<std::string> text = discovery_.ResourceList("", "v1");
  ASSERT_TRUE(text);
  api::json::Document doc = Decode(*text);
  EXPECT_EQ(api::json::GetString(doc, "kind"), "APIResourceList");
  EXPECT_EQ(api::json::GetString(doc, "groupVersion"), "v1");
  const api::json::Value* pods = FindByMember(doc["resources"], "name", "pods");
  ASSERT_NE(pods, nullptr);
  EXPECT_EQ(api::json::GetString(*pods, "kind"), "Pod");
  EXPECT_EQ(api::json::GetString(*pods, "singularName"), "pod");
  EXPECT_TRUE((*pods)["namespaced"].GetBool());
  EXPECT_EQ(Strings((*pods)["shortNames"]), std::vector<std::string>{"po"});
  EXPECT_EQ(Strings((*pods)["verbs"]), ResourceVerbs());
  const api::json::Value* binding = FindByMember(doc["resources"], "name", "pods/binding");
  ASSERT_NE(binding, nullptr);
  EXPECT_EQ(api::json::GetString(*binding, "kind"), "Binding");
  EXPECT_EQ(Strings((*binding)["verbs"]), std::vector<std::string>{"create"});
  // The create-only bindings resource beside pods/binding (POST .../namespaces/{ns}/bindings).
  const api::json::Value* bindings = FindByMember(doc["resources"], "name", "bindings");
  ASSERT_NE(bindings, nullptr);
  EXPECT_EQ(api::json::GetString(*bindings, "kind"), "Binding");
  EXPECT_TRUE((*bindings)["namespaced"].GetBool());
  EXPECT_EQ(Strings((*bindings)["verbs"]), std::vector<std::string>{"create"});
  const api::json::Value* eviction = FindByMember(doc["resources"], "name", "pods/eviction");
  ASSERT_NE(eviction, nullptr);
  EXPECT_EQ(api::json::GetString(*eviction, "group"), "policy");
  EXPECT_EQ(api::json::GetString(*eviction, "kind"), "Eviction");
  const api::json::Value* nodes = FindByMember(doc["resources"], "name", "nodes");
  ASSERT_NE(nodes, nullptr);
  EXPECT_FALSE((*nodes)["namespaced"].GetBool());
  EXPECT_FALSE(discovery_.ResourceList("", "v2"));
  EXPECT_FALSE(discovery_.ResourceList("nope.io", "v1"));
}

TEST_F(DiscoveryTest, GroupsAndScale) {
  api::json::Document groups = Decode(discovery_.GroupList());
  EXPECT_EQ(api::json::GetString(groups, "kind"), "APIGroupList");
  const api::json::Value* apps = FindByMember(groups["groups"], "name", "apps");
  ASSERT_NE(apps, nullptr);
  EXPECT_EQ(api::json::GetString((*apps)["preferredVersion"], "groupVersion"), "apps/v1");
  EXPECT_EQ(FindByMember(groups["groups"], "name", ""), nullptr) << "the core group is /api's";
  ASSERT_TRUE(discovery_.Group("apps"));
  EXPECT_FALSE(discovery_.Group("nope.io"));

  api::json::Document list = Decode(*discovery_.ResourceList("apps", "v1"));
  const api::json::Value* scale = FindByMember(list["resources"], "name", "deployments/scale");
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(api::json::GetString(*scale, "group"), "autoscaling");
  EXPECT_EQ(api::json::GetString(*scale, "kind"), "Scale");

  api::json::Document root = Decode(discovery_.LegacyRoot("127.0.0.1:1234"));
  EXPECT_EQ(api::json::GetString(root, "kind"), "APIVersions");
  EXPECT_EQ(Strings(root["versions"]), std::vector<std::string>{"v1"});
}

TEST_F(DiscoveryTest, AggregatedDocuments) {
  for (DiscoveryFormat format : {DiscoveryFormat::kAggregatedV2, DiscoveryFormat::kAggregatedV2Beta1}) {
    api::json::Document core = Decode(discovery_.Aggregated(true, format));
    EXPECT_EQ(api::json::GetString(core, "kind"), "APIGroupDiscoveryList");
    EXPECT_EQ(api::json::GetString(core, "apiVersion"),
              format == DiscoveryFormat::kAggregatedV2 ? "apidiscovery.k8s.io/v2" : "apidiscovery.k8s.io/v2beta1");
    ASSERT_EQ(core["items"].Size(), 1u);
    const api::json::Value& v1 = core["items"][0]["versions"][0];
    EXPECT_EQ(api::json::GetString(v1, "version"), "v1");
    const api::json::Value* pods = FindByMember(v1["resources"], "resource", "pods");
    ASSERT_NE(pods, nullptr);
    EXPECT_EQ(api::json::GetString(*pods, "scope"), "Namespaced");
    EXPECT_EQ(api::json::GetString((*pods)["responseKind"], "kind"), "Pod");
    EXPECT_NE(FindByMember((*pods)["subresources"], "subresource", "status"), nullptr);

    api::json::Document named = Decode(discovery_.Aggregated(false, format));
    const api::json::Value* sched = nullptr;
    for (const api::json::Value& item : named["items"].GetArray()) {
      if (api::json::GetString(item["metadata"], "name") == "scheduling.k8s.io") sched = &item;
    }
    ASSERT_NE(sched, nullptr);
    const api::json::Value* pcs = FindByMember((*sched)["versions"][0]["resources"], "resource", "priorityclasses");
    ASSERT_NE(pcs, nullptr);
    EXPECT_EQ(api::json::GetString(*pcs, "scope"), "Cluster");
  }
}

// The kinds of deploy/: kubectl create -f finds each through discovery (short names included)
// and validates it against its group's OpenAPI document.
TEST_F(DiscoveryTest, DeploymentKindsAreServed) {
  struct Case {
    std::string group;
    std::string resource;
    std::string kind;
    bool namespaced;
    std::vector<std::string> short_names;
  };
  const std::vector<Case> cases = {
      {"", "serviceaccounts", "ServiceAccount", true, {"sa"}},
      {"", "configmaps", "ConfigMap", true, {"cm"}},
      {"", "secrets", "Secret", true, {}},
      {"rbac.authorization.k8s.io", "clusterroles", "ClusterRole", false, {}},
      {"rbac.authorization.k8s.io", "clusterrolebindings", "ClusterRoleBinding", false, {}},
      {"rbac.authorization.k8s.io", "roles", "Role", true, {}},
      {"rbac.authorization.k8s.io", "rolebindings", "RoleBinding", true, {}},
  };
  OpenApi openapi(discovery_);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.resource);
    std::optional<std::string> text = discovery_.ResourceList(c.group, "v1");
    ASSERT_TRUE(text);
    api::json::Document list = Decode(*text);
    const api::json::Value* r = FindByMember(list["resources"], "name", c.resource);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(api::json::GetString(*r, "kind"), c.kind);
    EXPECT_EQ((*r)["namespaced"].GetBool(), c.namespaced);
    if (c.short_names.empty()) {
      EXPECT_FALSE(r->HasMember("shortNames"));
    } else {
      EXPECT_EQ(Strings((*r)["shortNames"]), c.short_names);
    }

    const std::string doc_path = c.group.empty() ? "api/v1" : "apis/" + c.group + "/v1";
    std::optional<std::string> doc_text = openapi.Document(doc_path);
    ASSERT_TRUE(doc_text);
    api::json::Document doc = Decode(*doc_text);
    const std::string prefix = c.group.empty() ? "/api/v1" : "/apis/" + c.group + "/v1";
    const std::string path = prefix + (c.namespaced ? "/namespaces/{namespace}/" : "/") + c.resource + "/{name}";
    const api::json::Value* ops = api::json::Find(doc["paths"], path);
    ASSERT_NE(ops, nullptr) << path;
    EXPECT_EQ(api::json::GetString((*ops)["patch"]["x-kubernetes-group-version-kind"], "kind"), c.kind);
    EXPECT_NE(FindByMember((*ops)["patch"]["parameters"], "name", "fieldValidation"), nullptr);
  }
  api::json::Document groups = Decode(discovery_.GroupList());
  EXPECT_NE(FindByMember(groups["groups"], "name", "rbac.authorization.k8s.io"), nullptr);
}

TEST(MediaTypeTest, Negotiation) {
  const std::string kubectl_get =
      "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
  auto table = NegotiateObjectOutput(kubectl_get, true);
  ASSERT_TRUE(table);
  EXPECT_EQ(table->format, ObjectFormat::kTable);
  EXPECT_EQ(table->meta_version, "v1");
  EXPECT_EQ(table->content_type, "application/json;as=Table;v=v1;g=meta.k8s.io");

  auto plain = NegotiateObjectOutput("application/json, */*", false);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->format, ObjectFormat::kObject);
  EXPECT_EQ(NegotiateObjectOutput("", false)->format, ObjectFormat::kObject);

  auto partial = NegotiateObjectOutput("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", true);
  ASSERT_TRUE(partial);
  EXPECT_EQ(partial->format, ObjectFormat::kPartialObjectMetadataList);

  auto refused = NegotiateObjectOutput("application/yaml", false);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, 406);
  // A Table of an unknown meta version falls through to the next acceptable type.
  EXPECT_EQ(NegotiateObjectOutput("application/json;as=Table;v=v9;g=meta.k8s.io,application/json", true)->format,
            ObjectFormat::kObject);

  const std::string kubectl_discovery =
      "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
      "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
  DiscoveryOutput d = NegotiateDiscovery(kubectl_discovery);
  EXPECT_EQ(d.format, DiscoveryFormat::kAggregatedV2);
  EXPECT_EQ(d.content_type, "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
  EXPECT_EQ(NegotiateDiscovery("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList").format,
            DiscoveryFormat::kAggregatedV2Beta1);
  EXPECT_EQ(NegotiateDiscovery("application/json").format, DiscoveryFormat::kLegacy);

  EXPECT_EQ(BaseMediaType("application/Merge-Patch+JSON; charset=utf-8"), "application/merge-patch+json");
}

TEST(OpenApiTest, PatchOperationsAdvertiseFieldValidation) {
  Discovery discovery(store::BuiltinResources());
  OpenApi openapi(discovery);
  api::json::Document index = Decode(openapi.Index());
  ASSERT_TRUE(index["paths"].HasMember("apis/apps/v1"));
  const std::string url(api::json::GetString(index["paths"]["apis/apps/v1"], "serverRelativeURL"));
  EXPECT_TRUE(url.starts_with("/openapi/v3/apis/apps/v1?hash=")) << url;

  std::optional<std::string> text = openapi.Document("apis/apps/v1");
  ASSERT_TRUE(text);
  api::json::Document doc = Decode(*text);
  const api::json::Value* path =
      api::json::Find(doc["paths"], "/apis/apps/v1/namespaces/{namespace}/deployments/{name}");
  ASSERT_NE(path, nullptr);
  // What kubectl's query_param_verifier_v3 looks for: a PATCH of this GVK with fieldValidation.
  const api::json::Value& patch = (*path)["patch"];
  EXPECT_EQ(api::json::GetString(patch["x-kubernetes-group-version-kind"], "kind"), "Deployment");
  EXPECT_EQ(api::json::GetString(patch["x-kubernetes-group-version-kind"], "group"), "apps");
  EXPECT_NE(FindByMember(patch["parameters"], "name", "fieldValidation"), nullptr);
  EXPECT_TRUE(patch["requestBody"]["content"].HasMember("application/strategic-merge-patch+json"));
  // No component schema carries a GVK: kubectl then computes apply's patches from its own types.
  for (const auto& schema : doc["components"]["schemas"].GetObject()) {
    EXPECT_FALSE(schema.value.HasMember("x-kubernetes-group-version-kind")) << api::json::View(schema.name);
  }
  EXPECT_FALSE(openapi.Document("apis/nope/v1"));
}

}  // namespace
}  // namespace kubesched::server
