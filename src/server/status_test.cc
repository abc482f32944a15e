#include "server/status.h"

#include <gtest/gtest.h>

#include "api/json.h"
#include "store/errors.h"
#include "store/resources.h"

namespace kubesched::server {
namespace {

api::json::Document Decode(const std::string& text) {
  api::json::Document doc;
  EXPECT_TRUE(api::json::Parse(text, doc).has_value()) << text;
  return doc;
}

TEST(StatusTest, EncodesAFailureAsMetav1Status) {
  api::json::Document doc = Decode(EncodeStatus(NotFound("apps", "deployments", "web")));
  EXPECT_EQ(api::json::GetString(doc, "kind"), "Status");
  EXPECT_EQ(api::json::GetString(doc, "apiVersion"), "v1");
  EXPECT_EQ(api::json::GetString(doc, "status"), "Failure");
  EXPECT_EQ(api::json::GetString(doc, "reason"), "NotFound");
  EXPECT_EQ(api::json::GetString(doc, "message"), "deployments.apps \"web\" not found");
  EXPECT_EQ(doc["code"].GetInt(), 404);
  EXPECT_EQ(api::json::GetString(doc["details"], "name"), "web");
  EXPECT_EQ(api::json::GetString(doc["details"], "group"), "apps");
  EXPECT_EQ(api::json::GetString(doc["details"], "kind"), "deployments");
  EXPECT_TRUE(doc["metadata"].IsObject());
}

TEST(StatusTest, InvalidNamesTheKindAndCarriesCauses) {
  ApiError e = Invalid("", "Pod", "p",
                       {{"FieldValueRequired", "Required value", "spec.containers"},
                        {"FieldValueInvalid", "Invalid value: \"x\": bad", "metadata.name"}});
  EXPECT_EQ(e.code, 422);
  EXPECT_EQ(e.message,
            "Pod \"p\" is invalid: [spec.containers: Required value, metadata.name: Invalid value: \"x\": bad]");
  api::json::Document doc = Decode(EncodeStatus(e));
  EXPECT_EQ(api::json::GetString(doc["details"], "kind"), "Pod");
  ASSERT_EQ(doc["details"]["causes"].Size(), 2u);
  EXPECT_EQ(api::json::GetString(doc["details"]["causes"][0], "field"), "spec.containers");
  EXPECT_EQ(api::json::GetString(doc["details"]["causes"][0], "reason"), "FieldValueRequired");

  EXPECT_EQ(Invalid("apps", "Deployment", "d", {{"FieldValueInvalid", "bad", "spec.replicas"}}).message,
            "Deployment.apps \"d\" is invalid: spec.replicas: bad");
}

TEST(StatusTest, StoreErrorsKeepTheirWordingAndGetDetails) {
  const store::ResourceType* pods = nullptr;
  for (const store::ResourceType* t : store::BuiltinResources()) {
    if (t->group.empty() && t->resource == "pods") pods = t;
  }
  ASSERT_NE(pods, nullptr);
  const ErrorSubject subject{.group = "", .resource = "pods", .kind = "Pod", .name = "p"};
  struct Case {
    std::string name;
    store::Error error;
    int code;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"not found", store::NotFound(*pods, "p"), 404, "NotFound"},
      {"already exists", store::AlreadyExists(*pods, "p"), 409, "AlreadyExists"},
      {"stale", store::StaleConflict(*pods, "p"), 409, "Conflict"},
      {"gone", store::TooOldResourceVersion(1, 5), 410, "Expired"},
      {"invalid", store::Invalid(*pods, "p", {store::RequiredCause("spec.containers")}), 422, "Invalid"},
      {"bad request", store::BadRequest("nope"), 400, "BadRequest"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ApiError e = FromStoreError(c.error, subject);
    EXPECT_EQ(e.code, c.code);
    EXPECT_EQ(e.reason, c.reason);
    EXPECT_EQ(e.message, c.error.message);
    EXPECT_FALSE(e.message.empty());
  }
  EXPECT_EQ(FromStoreError(store::NotFound(*pods, "p"), subject).details.kind, "pods");
  EXPECT_EQ(FromStoreError(store::Invalid(*pods, "p", {store::RequiredCause("spec.containers")}), subject).details.kind,
            "Pod");
}

TEST(StatusTest, SuccessStatus) {
  api::json::Document doc =
      Decode(EncodeSuccessStatus({.name = "d", .group = "apps", .kind = "deployments", .uid = "u1"}, 0));
  EXPECT_EQ(api::json::GetString(doc, "status"), "Success");
  EXPECT_EQ(api::json::GetString(doc["details"], "uid"), "u1");
  EXPECT_FALSE(doc.HasMember("code"));
  EXPECT_EQ(Decode(EncodeSuccessStatus({}, 201))["code"].GetInt(), 201);
}

}  // namespace
}  // namespace kubesched::server
