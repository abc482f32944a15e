#include "store/custom_resources.h"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "store/store_test_util.h"

namespace kubesched::store {
namespace {

using testing::Doc;
using testing::Field;

// A CRD as projects ship them: two versions (v1beta1 served and stored, v1alpha1 served), a
// status subresource, a printer column, a schema with a nested preserve-unknown-fields map.
std::string WidgetCrd(std::string_view scope = "Namespaced", std::string_view storage = "v1beta1") {
  const std::string schema = R"({"type":"object","properties":{
      "spec":{"type":"object","required":["size"],"properties":{
        "size":{"type":"integer","minimum":1},
        "color":{"type":"string","enum":["red","blue"]},
        "extra":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
      "status":{"type":"object","properties":{"phase":{"type":"string"}}}}})";
  auto version = [&](std::string_view name) {
    return "{\"name\":\"" + std::string(name) +
           "\",\"served\":true,\"storage\":" + (name == storage ? "true" : "false") +
           R"(,"schema":{"openAPIV3Schema":)" + schema +
           R"(},"subresources":{"status":{}},"additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"}]})";
  };
  return R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":"widgets.example.com"},
    "spec":{"group":"example.com","scope":")" +
         std::string(scope) + R"(","names":{"plural":"widgets","kind":"Widget","shortNames":["wd"]},
    "versions":[)" +
         version("v1alpha1") + "," + version("v1beta1") + "]}}";
}

std::string Widget(std::string_view name, std::string_view spec, std::string_view version = "v1beta1") {
  return "{\"apiVersion\":\"example.com/" + std::string(version) + "\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"" +
         std::string(name) + "\"},\"spec\":" + std::string(spec) + "}";
}

class CustomResourcesTest : public ::testing::Test {
 protected:
  util::VirtualClock clock_{testing::kStartNs};
  std::unique_ptr<Store> store_ = NewBuiltinStore(clock_, testing::StoreFixture::DefaultOptions());
  const ResourceType& crds_ = *store_->FindResource("apiextensions.k8s.io", "customresourcedefinitions");

  const ResourceType* Widgets(std::string_view version = "v1beta1") const {
    return store_->FindServedResource("example.com", version, "widgets");
  }
};

TEST_F(CustomResourcesTest, ACrdIsDefaultedEstablishedAndServesEachVersion) {
  const uint64_t generation = store_->ServedResourcesGeneration();
  EXPECT_EQ(Widgets(), nullptr);
  auto crd = store_->Create(crds_, "", Doc(WidgetCrd()));
  ASSERT_TRUE(crd.has_value()) << crd.error().message;
  EXPECT_EQ(Field(**crd, "spec.names.singular"), "widget");
  EXPECT_EQ(Field(**crd, "spec.names.listKind"), "WidgetList");
  EXPECT_EQ(Field(**crd, "spec.conversion.strategy"), "None");
  EXPECT_EQ(Field(**crd, "status.conditions.1.type"), "Established");
  EXPECT_EQ(Field(**crd, "status.conditions.1.status"), "True");
  EXPECT_EQ(Field(**crd, "status.acceptedNames.kind"), "Widget");
  EXPECT_EQ(Field(**crd, "status.storedVersions"), "[\"v1beta1\"]");
  EXPECT_NE(store_->ServedResourcesGeneration(), generation);

  ASSERT_NE(Widgets("v1beta1"), nullptr);
  ASSERT_NE(Widgets("v1alpha1"), nullptr);
  EXPECT_EQ(Widgets("v1"), nullptr);
  EXPECT_EQ(store_->FindResource("example.com", "widgets"), Widgets("v1beta1"));
  EXPECT_TRUE(Widgets()->namespaced);
  EXPECT_EQ(Widgets()->short_names, std::vector<std::string>{"wd"});
  EXPECT_TRUE(Widgets()->HasSubresource("status"));
  ASSERT_EQ(Widgets()->columns.size(), 1u);
  EXPECT_EQ(Widgets()->columns[0].json_path, ".spec.size");
  // v1beta1 before v1alpha1: discovery's preferred version first.
  std::vector<std::string> served;
  for (const ResourceType* t : store_->ServedResources()) {
    if (t->group == "example.com") served.push_back(t->version);
  }
  EXPECT_EQ(served, (std::vector<std::string>{"v1beta1", "v1alpha1"}));
}

TEST_F(CustomResourcesTest, InvalidCrdsAreRefusedWithUpstreamsCauses) {
  struct Case {
    std::string name;
    std::string body;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"name not plural.group",
       R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"w.example.com"},
          "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
          "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}})",
       "metadata.name: Invalid value: \"w.example.com\": must be spec.names.plural+\".\"+spec.group"},
      {"group without a dot",
       R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example"},
          "spec":{"group":"example","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
          "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}})",
       "spec.group: Invalid value: \"example\": should be a domain with at least one dot"},
      {"two storage versions",
       R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
          "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
          "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}},
                      {"name":"v2","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}})",
       "must have exactly one version marked as storage version"},
      {"no schema",
       R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
          "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
          "versions":[{"name":"v1","served":true,"storage":true}]}})",
       "spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"},
      {"bad scope",
       R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
          "spec":{"group":"example.com","scope":"Global","names":{"plural":"widgets","kind":"Widget"},
          "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}})",
       "spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto created = store_->Create(crds_, "", Doc(c.body));
    ASSERT_FALSE(created.has_value());
    EXPECT_EQ(created.error().reason, Error::Reason::kInvalid);
    EXPECT_NE(created.error().message.find(c.message), std::string::npos) << created.error().message;
    EXPECT_EQ(Widgets(), nullptr);
  }
}

TEST_F(CustomResourcesTest, CustomObjectsArePrunedValidatedAndReadInEveryServedVersion) {
  ASSERT_TRUE(store_->Create(crds_, "", Doc(WidgetCrd())).has_value());
  // Created through v1alpha1, stored in v1beta1, read back in either.
  auto created =
      store_->Create(*Widgets("v1alpha1"), "default",
                     Doc(Widget("w1", R"({"size":2,"bogus":1,"extra":{"anything":{"goes":true}}})", "v1alpha1")));
  ASSERT_TRUE(created.has_value()) << created.error().message;
  EXPECT_EQ(Field(**created, "apiVersion"), "example.com/v1alpha1");
  EXPECT_EQ(Field(**created, "spec.bogus"), "<none>");  // pruned
  EXPECT_EQ(Field(**created, "spec.extra.anything.goes"), "true");
  auto stored = store_->Get(*Widgets("v1beta1"), "default", "w1");
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(Field(**stored, "apiVersion"), "example.com/v1beta1");
  EXPECT_EQ(Field(**stored, "spec.size"), "2");
  EXPECT_EQ(Widgets()->unknown_fields(Doc(Widget("w", R"({"size":1,"bogus":1})"))),
            std::vector<std::string>{"spec.bogus"});

  auto invalid = store_->Create(*Widgets(), "default", Doc(Widget("w2", R"({"size":0,"color":"green"})")));
  ASSERT_FALSE(invalid.has_value());
  EXPECT_EQ(invalid.error().reason, Error::Reason::kInvalid);
  EXPECT_NE(invalid.error().message.find("\"w2\" is invalid"), std::string::npos) << invalid.error().message;
  EXPECT_NE(invalid.error().message.find("spec.color: Unsupported value: \"green\""), std::string::npos)
      << invalid.error().message;
  auto missing = store_->Create(*Widgets(), "default", Doc(Widget("w3", R"({"color":"red"})")));
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("spec.size: Required value"), std::string::npos) << missing.error().message;

  auto listed = store_->List(*Widgets("v1alpha1"), "", ListOptions{});
  ASSERT_TRUE(listed.has_value());
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(Field(*listed->items[0], "apiVersion"), "example.com/v1alpha1");
}

TEST_F(CustomResourcesTest, AWatchSeesCustomObjectsAndDeletingTheCrdDeletesThemFirst) {
  ASSERT_TRUE(store_->Create(crds_, "", Doc(WidgetCrd())).has_value());
  auto watch = store_->Watch(*Widgets(), "", WatchOptions{});
  ASSERT_TRUE(watch.has_value());
  ASSERT_TRUE(store_->Create(*Widgets(), "default", Doc(Widget("w1", R"({"size":1})"))).has_value());
  auto added = (*watch)->Next(std::chrono::milliseconds(1000));
  ASSERT_TRUE(added.has_value());
  EXPECT_EQ(added->type, EventType::kAdded);
  EXPECT_EQ(added->object->name, "w1");

  const ResourceType* widgets = Widgets();
  auto deleted = store_->Delete(crds_, "", "widgets.example.com", DeleteOptions{});
  ASSERT_TRUE(deleted.has_value()) << deleted.error().message;
  auto gone = (*watch)->Next(std::chrono::milliseconds(1000));
  ASSERT_TRUE(gone.has_value());
  EXPECT_EQ(gone->type, EventType::kDeleted);
  EXPECT_EQ(gone->object->name, "w1");
  EXPECT_EQ(Widgets(), nullptr);
  EXPECT_EQ(store_->FindResource("example.com", "widgets"), nullptr);
  // A type handed out before stays valid: its store is empty.
  auto listed = store_->List(*widgets, "", ListOptions{});
  ASSERT_TRUE(listed.has_value());
  EXPECT_TRUE(listed->items.empty());

  // Defined again: served again, with none of the old objects.
  ASSERT_TRUE(store_->Create(crds_, "", Doc(WidgetCrd())).has_value());
  ASSERT_NE(Widgets(), nullptr);
  listed = store_->List(*Widgets(), "", ListOptions{});
  ASSERT_TRUE(listed.has_value());
  EXPECT_TRUE(listed->items.empty());
}

TEST_F(CustomResourcesTest, ScopeIsImmutableAndAClusterScopedCrdServesClusterScopedObjects) {
  ASSERT_TRUE(store_->Create(crds_, "", Doc(WidgetCrd("Cluster"))).has_value());
  EXPECT_FALSE(Widgets()->namespaced);
  auto created = store_->Create(*Widgets(), "", Doc(Widget("w1", R"({"size":1})")));
  ASSERT_TRUE(created.has_value()) << created.error().message;
  EXPECT_EQ((*created)->namespace_, "");
  auto changed = store_->Update(crds_, "", "widgets.example.com", Doc(WidgetCrd("Namespaced")), UpdateRequest{});
  ASSERT_FALSE(changed.has_value());
  EXPECT_NE(changed.error().message.find("spec.scope: Invalid value: \"Namespaced\": field is immutable"),
            std::string::npos)
      << changed.error().message;
}

TEST_F(CustomResourcesTest, NamespaceDeletionTakesItsCustomObjects) {
  const ResourceType& namespaces = *store_->FindResource("", "namespaces");
  ASSERT_TRUE(
      store_->Create(namespaces, "", Doc(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"}})"))
          .has_value());
  ASSERT_TRUE(store_->Create(crds_, "", Doc(WidgetCrd())).has_value());
  ASSERT_TRUE(store_->Create(*Widgets(), "team", Doc(Widget("w1", R"({"size":1})"))).has_value());
  ASSERT_TRUE(store_->Delete(namespaces, "", "team", DeleteOptions{}).has_value());
  auto listed = store_->List(*Widgets(), "", ListOptions{});
  ASSERT_TRUE(listed.has_value());
  EXPECT_TRUE(listed->items.empty());
}

TEST_F(CustomResourcesTest, CrdsAndTheirObjectsSurviveARestartFromStateAndJournal) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "kubesched_custom_resources_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "state.json").string();
  {
    auto first = NewBuiltinStore(clock_);
    const ResourceType& crds = *first->FindResource("apiextensions.k8s.io", "customresourcedefinitions");
    ASSERT_TRUE(first->OpenState(path).has_value());
    ASSERT_TRUE(first->Create(crds, "", Doc(WidgetCrd())).has_value());
    const ResourceType& widgets = *first->FindResource("example.com", "widgets");
    ASSERT_TRUE(first->Create(widgets, "default", Doc(Widget("w1", R"({"size":1})"))).has_value());
    ASSERT_TRUE(first->Create(widgets, "default", Doc(Widget("w2", R"({"size":2})"))).has_value());
    ASSERT_TRUE(first->Delete(widgets, "default", "w2", DeleteOptions{}).has_value());
    // No CloseState: replayed from the journal.
  }
  auto second = NewBuiltinStore(clock_);
  ASSERT_TRUE(second->OpenState(path).has_value());
  const ResourceType* widgets = second->FindServedResource("example.com", "v1alpha1", "widgets");
  ASSERT_NE(widgets, nullptr);
  auto listed = second->List(*widgets, "", ListOptions{});
  ASSERT_TRUE(listed.has_value());
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0]->name, "w1");
  EXPECT_EQ(Field(*listed->items[0], "apiVersion"), "example.com/v1alpha1");
  ASSERT_TRUE(second->CloseState().has_value());

  // From the snapshot alone, after the CRD and its objects were deleted in a third run.
  {
    auto third = NewBuiltinStore(clock_);
    ASSERT_TRUE(third->OpenState(path).has_value());
    const ResourceType& crds = *third->FindResource("apiextensions.k8s.io", "customresourcedefinitions");
    ASSERT_TRUE(third->Delete(crds, "", "widgets.example.com", DeleteOptions{}).has_value());
    ASSERT_TRUE(third->CloseState().has_value());
  }
  auto fourth = NewBuiltinStore(clock_);
  ASSERT_TRUE(fourth->OpenState(path).has_value());
  EXPECT_EQ(fourth->FindResource("example.com", "widgets"), nullptr);
  ASSERT_TRUE(fourth->CloseState().has_value());
}

TEST(KubeAwareVersionOrder, GaThenBetaThenAlphaThenOtherNames) {
  std::vector<std::string> versions = {"foo1",      "v1alpha1", "v1beta1",  "v2",      "v1",  "v1beta2", "v11alpha2",
                                       "v12alpha1", "foo10",    "v10beta3", "v3beta1", "v10", "v11beta2"};
  std::stable_sort(versions.begin(), versions.end(), KubeAwareVersionLess);
  // Upstream's own example (apimachinery/pkg/version/helpers.go).
  EXPECT_EQ(versions, (std::vector<std::string>{"v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1", "v1beta2",
                                                "v1beta1", "v12alpha1", "v11alpha2", "v1alpha1", "foo1", "foo10"}));
}

}  // namespace
}  // namespace kubesched::store
