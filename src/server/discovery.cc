#include "server/discovery.h"

#include <algorithm>

#include "server/json_writer.h"

namespace kubesched::server {
namespace {

const std::vector<std::string> kReadWrite = {"get", "patch", "update"};

// Groups in order of first appearance, the core group ("") included.
std::vector<std::string> GroupsOf(const std::vector<const store::ResourceType*>& types) {
  std::vector<std::string> groups;
  for (const store::ResourceType* t : types) {
    if (std::ranges::find(groups, t->group) == groups.end()) groups.push_back(t->group);
  }
  return groups;
}

std::vector<std::string> VersionsOf(const std::vector<const store::ResourceType*>& types, std::string_view group) {
  std::vector<std::string> versions;
  for (const store::ResourceType* t : types) {
    if (t->group == group && std::ranges::find(versions, t->version) == versions.end()) versions.push_back(t->version);
  }
  return versions;
}

std::string GroupVersionOf(std::string_view group, std::string_view version) {
  return group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version);
}

void WriteGroup(JsonWriter& w, const std::vector<const store::ResourceType*>& types, std::string_view group) {
  std::vector<std::string> versions = VersionsOf(types, group);
  w.Member("name", group);
  w.Key("versions");
  w.StartArray();
  for (const std::string& v : versions) {
    w.StartObject();
    w.Member("groupVersion", GroupVersionOf(group, v));
    w.Member("version", v);
    w.EndObject();
  }
  w.EndArray();
  w.Key("preferredVersion");
  w.StartObject();
  w.Member("groupVersion", GroupVersionOf(group, versions.front()));
  w.Member("version", versions.front());
  w.EndObject();
}

void WriteResponseKind(JsonWriter& w, std::string_view group, std::string_view version, std::string_view kind) {
  w.Key("responseKind");
  w.StartObject();
  w.Member("group", group);
  w.Member("version", version);
  w.Member("kind", kind);
  w.EndObject();
}

// One apidiscovery.k8s.io APIResourceDiscovery.
void WriteAggregatedResource(JsonWriter& w, const store::ResourceType& t) {
  w.StartObject();
  w.Member("resource", t.resource);
  WriteResponseKind(w, t.group, t.version, t.kind);
  w.Member("scope", t.namespaced ? "Namespaced" : "Cluster");
  w.Member("singularResource", t.singular);
  w.MemberStrings("verbs", VerbsOf(t));
  if (!t.short_names.empty()) w.MemberStrings("shortNames", t.short_names);
  if (!t.categories.empty()) w.MemberStrings("categories", t.categories);
  if (!t.subresources.empty()) {
    w.Key("subresources");
    w.StartArray();
    for (const std::string& sub : t.subresources) {
      SubresourceInfo info = DescribeSubresource(t, sub);
      w.StartObject();
      w.Member("subresource", sub);
      WriteResponseKind(w, info.group, info.version, info.kind);
      w.MemberStrings("verbs", info.verbs);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

// The core group's create-only "bindings" (POST /api/v1/namespaces/{ns}/bindings), served
// beside pods/binding wherever pods are.
bool ServesBindings(const std::vector<const store::ResourceType*>& types) {
  return std::ranges::any_of(types, [](const store::ResourceType* t) {
    return t->group.empty() && t->version == "v1" && t->resource == "pods";
  });
}

}  // namespace

SubresourceInfo DescribeSubresource(const store::ResourceType& type, std::string_view subresource) {
  if (subresource == "binding") return {"", "v1", "Binding", {"create"}};
  if (subresource == "eviction") return {"policy", "v1", "Eviction", {"create"}};
  // The kubelet's (the test bed has none: ApiHandler refuses every request with a 400 saying so).
  if (subresource == "log") return {"", "v1", "Pod", {"get"}};
  if (subresource == "exec") return {"", "v1", "PodExecOptions", {"create", "get"}};
  if (subresource == "attach") return {"", "v1", "PodAttachOptions", {"create", "get"}};
  if (subresource == "portforward") return {"", "v1", "PodPortForwardOptions", {"create", "get"}};
  if (subresource == "proxy") {
    return {"", "v1", "PodProxyOptions", {"create", "delete", "get", "patch", "update"}};
  }
  if (subresource == "scale") return {"autoscaling", "v1", "Scale", kReadWrite};
  return {type.group, type.version, type.kind, kReadWrite};
}

const std::vector<std::string>& ResourceVerbs() {
  static const std::vector<std::string> verbs = {"create", "delete", "deletecollection", "get",
                                                 "list",   "patch",  "update",           "watch"};
  return verbs;
}

const std::vector<const store::ResourceType*>& ReviewResources() {
  static const std::vector<const store::ResourceType*>* reviews = [] {
    auto* out = new std::vector<const store::ResourceType*>();  // never destroyed, as the built-in types
    auto review = [&](const char* group, const char* resource, const char* kind, const char* singular,
                      bool namespaced) {
      auto* t = new store::ResourceType();
      t->group = group;
      t->version = "v1";
      t->resource = resource;
      t->kind = kind;
      t->singular = singular;
      t->namespaced = namespaced;
      out->push_back(t);
    };
    review("authentication.k8s.io", "selfsubjectreviews", "SelfSubjectReview", "selfsubjectreview", false);
    review("authentication.k8s.io", "tokenreviews", "TokenReview", "tokenreview", false);
    review("authorization.k8s.io", "localsubjectaccessreviews", "LocalSubjectAccessReview", "localsubjectaccessreview",
           true);
    review("authorization.k8s.io", "selfsubjectaccessreviews", "SelfSubjectAccessReview", "selfsubjectaccessreview",
           false);
    review("authorization.k8s.io", "selfsubjectrulesreviews", "SelfSubjectRulesReview", "selfsubjectrulesreview",
           false);
    review("authorization.k8s.io", "subjectaccessreviews", "SubjectAccessReview", "subjectaccessreview", false);
    return out;
  }();
  return *reviews;
}

bool IsReview(const store::ResourceType& type) {
  return std::ranges::find(ReviewResources(), &type) != ReviewResources().end();
}

const std::vector<std::string>& VerbsOf(const store::ResourceType& type) {
  static const std::vector<std::string> create_only = {"create"};
  return IsReview(type) ? create_only : ResourceVerbs();
}

Discovery::Discovery(std::vector<const store::ResourceType*> types) : types_(std::move(types)) {
  for (const store::ResourceType* t : ReviewResources()) {
    if (std::ranges::none_of(
            types_, [&](const store::ResourceType* u) { return u->group == t->group && u->resource == t->resource; })) {
      types_.push_back(t);
    }
  }
  for (const std::string& group : GroupsOf(types_)) {
    for (const std::string& version : VersionsOf(types_, group)) {
      group_versions_.push_back(GroupVersionOf(group, version));
    }
  }
}

std::vector<const store::ResourceType*> Discovery::ResourcesOf(std::string_view group, std::string_view version) const {
  std::vector<const store::ResourceType*> out;
  for (const store::ResourceType* t : types_) {
    if (t->group == group && t->version == version) out.push_back(t);
  }
  return out;
}

std::string Discovery::Version() {
  JsonWriter w;
  w.StartObject();
  w.Member("major", kMajor);
  w.Member("minor", kMinor);
  w.Member("gitVersion", kGitVersion);
  w.Member("gitCommit", "");
  w.Member("gitTreeState", "clean");
  w.Member("buildDate", "1970-01-01T00:00:00Z");
  w.Member("goVersion", "n/a (kubesched, C++)");
  w.Member("compiler", "kubesched");
  w.Member("platform", "linux/amd64");
  w.EndObject();
  return w.Take();
}

std::string Discovery::LegacyRoot(std::string_view server_address) const {
  JsonWriter w;
  w.StartObject();
  w.Member("kind", "APIVersions");
  w.MemberStrings("versions", VersionsOf(types_, ""));
  w.Key("serverAddressByClientCIDRs");
  w.StartArray();
  w.StartObject();
  w.Member("clientCIDR", "0.0.0.0/0");
  w.Member("serverAddress", server_address);
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string Discovery::GroupList() const {
  JsonWriter w;
  w.StartObject();
  w.Member("kind", "APIGroupList");
  w.Member("apiVersion", "v1");
  w.Key("groups");
  w.StartArray();
  for (const std::string& group : GroupsOf(types_)) {
    if (group.empty()) continue;
    w.StartObject();
    WriteGroup(w, types_, group);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::optional<std::string> Discovery::Group(std::string_view group) const {
  if (group.empty() || VersionsOf(types_, group).empty()) return std::nullopt;
  JsonWriter w;
  w.StartObject();
  w.Member("kind", "APIGroup");
  w.Member("apiVersion", "v1");
  WriteGroup(w, types_, group);
  w.EndObject();
  return w.Take();
}

std::optional<std::string> Discovery::ResourceList(std::string_view group, std::string_view version) const {
  std::vector<const store::ResourceType*> types = ResourcesOf(group, version);
  if (types.empty()) return std::nullopt;
  JsonWriter w;
  w.StartObject();
  w.Member("kind", "APIResourceList");
  w.Member("apiVersion", "v1");
  w.Member("groupVersion", GroupVersionOf(group, version));
  w.Key("resources");
  w.StartArray();
  if (ServesBindings(types)) {
    w.StartObject();
    w.Member("name", "bindings");
    w.Member("singularName", "binding");
    w.MemberBool("namespaced", true);
    w.Member("kind", "Binding");
    w.MemberStrings("verbs", std::vector<std::string>{"create"});
    w.EndObject();
  }
  for (const store::ResourceType* t : types) {
    w.StartObject();
    w.Member("name", t->resource);
    w.Member("singularName", t->singular);
    w.MemberBool("namespaced", t->namespaced);
    w.Member("kind", t->kind);
    w.MemberStrings("verbs", VerbsOf(*t));
    if (!t->short_names.empty()) w.MemberStrings("shortNames", t->short_names);
    if (!t->categories.empty()) w.MemberStrings("categories", t->categories);
    w.EndObject();
    for (const std::string& sub : t->subresources) {
      SubresourceInfo info = DescribeSubresource(*t, sub);
      w.StartObject();
      w.Member("name", t->resource + "/" + sub);
      w.Member("singularName", "");
      w.MemberBool("namespaced", t->namespaced);
      // Upstream names the group and version only when they differ from the list's.
      if (info.group != group || info.version != version) {
        w.Member("group", info.group);
        w.Member("version", info.version);
      }
      w.Member("kind", info.kind);
      w.MemberStrings("verbs", info.verbs);
      w.EndObject();
    }
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

std::string Discovery::Aggregated(bool core, DiscoveryFormat format) const {
  JsonWriter w;
  w.StartObject();
  w.Member("kind", "APIGroupDiscoveryList");
  w.Member("apiVersion",
           format == DiscoveryFormat::kAggregatedV2Beta1 ? "apidiscovery.k8s.io/v2beta1" : "apidiscovery.k8s.io/v2");
  w.Key("metadata");
  w.StartObject();
  w.EndObject();
  w.Key("items");
  w.StartArray();
  for (const std::string& group : GroupsOf(types_)) {
    if (group.empty() != core) continue;
    w.StartObject();
    w.Key("metadata");
    w.StartObject();
    if (!group.empty()) w.Member("name", group);
    w.EndObject();
    w.Key("versions");
    w.StartArray();
    for (const std::string& version : VersionsOf(types_, group)) {
      w.StartObject();
      w.Member("version", version);
      w.Key("resources");
      w.StartArray();
      const std::vector<const store::ResourceType*> types = ResourcesOf(group, version);
      if (ServesBindings(types)) {
        w.StartObject();
        w.Member("resource", "bindings");
        WriteResponseKind(w, "", "v1", "Binding");
        w.Member("scope", "Namespaced");
        w.Member("singularResource", "binding");
        w.MemberStrings("verbs", std::vector<std::string>{"create"});
        w.EndObject();
      }
      for (const store::ResourceType* t : types) WriteAggregatedResource(w, *t);
      w.EndArray();
      w.Member("freshness", "Current");
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace kubesched::server
