#include "server/access_review.h"

#include <algorithm>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "api/json.h"
#include "server/json_writer.h"

namespace kubesched::server {
namespace {

namespace json = api::json;

// One CSV field of a static token file: quoted ("a,b", "" for a quote) or bare.
std::vector<std::string> SplitCsv(std::string_view line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
    } else {
      field.push_back(c);
    }
  }
  fields.push_back(std::move(field));
  return fields;
}

std::vector<std::string> Strings(const json::Value* list) {
  std::vector<std::string> out;
  if (list == nullptr || !list->IsArray()) return out;
  for (const json::Value& v : list->GetArray()) {
    if (v.IsString()) out.emplace_back(json::View(v));
  }
  return out;
}

bool Has(const std::vector<std::string>& values, std::string_view want) {
  return std::ranges::any_of(values, [&](const std::string& v) { return v == "*" || v == want; });
}

// rbac/v1 helpers.go ResourceMatches: "*", the resource, "resource/subresource", "*/subresource".
bool ResourceMatches(const std::vector<std::string>& rules, const AccessRequest& what) {
  const std::string combined = what.subresource.empty() ? what.resource : what.resource + "/" + what.subresource;
  for (const std::string& r : rules) {
    if (r == "*" || r == combined) return true;
    if (!what.subresource.empty() && r == "*/" + what.subresource) return true;
  }
  return false;
}

// NonResourceURLMatches: exact, or a prefix ending in "*".
bool PathMatches(const std::vector<std::string>& rules, std::string_view path) {
  for (const std::string& r : rules) {
    if (r == "*" || r == path) return true;
    if (r.ends_with('*') && path.starts_with(std::string_view(r).substr(0, r.size() - 1))) return true;
  }
  return false;
}

bool RuleAllows(const json::Value& rule, const AccessRequest& what) {
  if (!Has(Strings(json::Find(rule, "verbs")), what.verb)) return false;
  if (what.resource.empty()) return PathMatches(Strings(json::Find(rule, "nonResourceURLs")), what.path);
  if (!Has(Strings(json::Find(rule, "apiGroups")), what.group)) return false;
  if (!ResourceMatches(Strings(json::Find(rule, "resources")), what)) return false;
  const std::vector<std::string> names = Strings(json::Find(rule, "resourceNames"));
  return names.empty() || std::ranges::find(names, what.name) != names.end();
}

// Which of the binding's subjects is `who`, as upstream's reason names it ("User \"u\"").
std::optional<std::string> SubjectMatch(const json::Value& binding, std::string_view binding_namespace,
                                        const AccessSubject& who) {
  const json::Value* subjects = json::Find(binding, "subjects");
  if (subjects == nullptr || !subjects->IsArray()) return std::nullopt;
  for (const json::Value& s : subjects->GetArray()) {
    const std::string_view kind = json::GetString(s, "kind");
    const std::string_view name = json::GetString(s, "name");
    if (kind == "User" && name == who.user) return fmt::format("User \"{}\"", name);
    if (kind == "Group" && std::ranges::find(who.groups, name) != who.groups.end()) {
      return fmt::format("Group \"{}\"", name);
    }
    if (kind == "ServiceAccount") {
      std::string_view ns = json::GetString(s, "namespace");
      if (ns.empty()) ns = binding_namespace;
      if (who.user == fmt::format("system:serviceaccount:{}:{}", ns, name)) {
        return fmt::format("ServiceAccount \"{}/{}\"", ns, name);
      }
    }
  }
  return std::nullopt;
}

std::vector<json::Document> ListAll(const store::Store& store, std::string_view group, std::string_view resource,
                                    std::string_view namespace_) {
  std::vector<json::Document> out;
  const store::ResourceType* type = store.FindResource(group, resource);
  if (type == nullptr) return out;
  auto listed = const_cast<store::Store&>(store).List(*type, namespace_, {});
  if (!listed) return out;
  for (const store::ObjectPtr& o : listed->items) {
    json::Document doc;
    if (json::Parse(o->json, doc).has_value() && doc.IsObject()) out.push_back(std::move(doc));
  }
  return out;
}

std::optional<json::Document> GetOne(const store::Store& store, std::string_view resource, std::string_view namespace_,
                                     std::string_view name) {
  const store::ResourceType* type = store.FindResource("rbac.authorization.k8s.io", resource);
  if (type == nullptr) return std::nullopt;
  auto got = const_cast<store::Store&>(store).Get(*type, namespace_, name);
  if (!got) return std::nullopt;
  json::Document doc;
  if (!json::Parse((*got)->json, doc).has_value() || !doc.IsObject()) return std::nullopt;
  return doc;
}

bool RoleAllows(const json::Value& role, const AccessRequest& what) {
  const json::Value* rules = json::Find(role, "rules");
  if (rules == nullptr || !rules->IsArray()) return false;
  return std::ranges::any_of(rules->GetArray(), [&](const json::Value& r) { return RuleAllows(r, what); });
}

std::string_view NameOf(const json::Value& object) {
  const json::Value* meta = json::Find(object, "metadata");
  return meta != nullptr ? json::GetString(*meta, "name") : std::string_view();
}

}  // namespace

std::expected<std::vector<StaticToken>, std::string> LoadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::unexpected(fmt::format("{}: cannot read the token file", path));
  std::vector<StaticToken> tokens;
  std::set<std::string> seen;
  std::string line;
  for (int line_no = 1; std::getline(in, line); ++line_no) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.starts_with('#')) continue;
    std::vector<std::string> f = SplitCsv(line);
    if (f.size() < 3) {
      return std::unexpected(fmt::format("{}: line {}: expected token,user,uid[,\"group1,group2\"]", path, line_no));
    }
    if (f[0].empty() || f[1].empty()) {
      return std::unexpected(fmt::format("{}: line {}: the token and the user must not be empty", path, line_no));
    }
    if (!seen.insert(f[0]).second)
      return std::unexpected(fmt::format("{}: line {}: a token listed twice", path, line_no));
    StaticToken t{f[0], f[1], f[2], {}};
    if (f.size() > 3) {
      for (std::string& g : SplitCsv(f[3])) {
        if (!g.empty()) t.groups.push_back(std::move(g));
      }
    }
    tokens.push_back(std::move(t));
  }
  return tokens;
}

std::optional<std::string> RbacAllows(const store::Store& store, const AccessSubject& who, const AccessRequest& what) {
  if (std::ranges::find(who.groups, "system:masters") != who.groups.end()) {
    return std::string("RBAC: allowed to group \"system:masters\"");
  }
  for (const json::Document& binding : ListAll(store, "rbac.authorization.k8s.io", "clusterrolebindings", "")) {
    auto subject = SubjectMatch(binding, "", who);
    if (!subject) continue;
    const json::Value* ref = json::Find(binding, "roleRef");
    if (ref == nullptr || json::GetString(*ref, "kind") != "ClusterRole") continue;
    const std::string_view role_name = json::GetString(*ref, "name");
    auto role = GetOne(store, "clusterroles", "", role_name);
    if (role && RoleAllows(*role, what)) {
      return fmt::format("RBAC: allowed by ClusterRoleBinding \"{}\" of ClusterRole \"{}\" to {}", NameOf(binding),
                         role_name, *subject);
    }
  }
  if (what.resource.empty() || what.namespace_.empty()) return std::nullopt;
  for (const json::Document& binding : ListAll(store, "rbac.authorization.k8s.io", "rolebindings", what.namespace_)) {
    auto subject = SubjectMatch(binding, what.namespace_, who);
    if (!subject) continue;
    const json::Value* ref = json::Find(binding, "roleRef");
    if (ref == nullptr) continue;
    const std::string_view kind = json::GetString(*ref, "kind");
    const std::string_view role_name = json::GetString(*ref, "name");
    auto role = kind == "ClusterRole" ? GetOne(store, "clusterroles", "", role_name)
                                      : GetOne(store, "roles", what.namespace_, role_name);
    if (role && RoleAllows(*role, what)) {
      return fmt::format("RBAC: allowed by RoleBinding \"{}/{}\" of {} \"{}\" to {}", NameOf(binding), what.namespace_,
                         kind, role_name, *subject);
    }
  }
  return std::nullopt;
}

std::expected<std::string, std::string> ReviewToken(const std::vector<StaticToken>& tokens, std::string_view body) {
  json::Document doc;
  if (!json::Parse(body, doc).has_value() || !doc.IsObject()) return std::unexpected("the body is not a JSON object");
  const json::Value* spec = json::Find(doc, "spec");
  if (spec == nullptr || !spec->IsObject()) return std::unexpected("a TokenReview needs spec.token");
  const std::string_view token = json::GetString(*spec, "token");
  const auto found =
      std::ranges::find_if(tokens, [&](const StaticToken& t) { return !token.empty() && t.token == token; });
  JsonWriter w;
  w.StartObject();
  w.Member("kind", "TokenReview");
  w.Member("apiVersion", "authentication.k8s.io/v1");
  w.Key("metadata");
  w.StartObject();
  w.EndObject();
  w.Key("spec");
  w.StartObject();
  w.Member("token", token);
  w.EndObject();
  w.Key("status");
  w.StartObject();
  if (found != tokens.end()) {
    w.MemberBool("authenticated", true);
    w.Key("user");
    w.StartObject();
    w.Member("username", found->user);
    if (!found->uid.empty()) w.Member("uid", found->uid);
    std::vector<std::string> groups = found->groups;
    groups.push_back("system:authenticated");
    w.MemberStrings("groups", groups);
    w.EndObject();
  } else {
    w.Key("user");
    w.StartObject();
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return w.Take();
}

namespace {

std::expected<std::string, std::string> Review(const store::Store& store, std::string_view kind,
                                               const std::string* namespace_, std::string_view body) {
  json::Document doc;
  if (!json::Parse(body, doc).has_value() || !doc.IsObject()) return std::unexpected("the body is not a JSON object");
  const json::Value* spec = json::Find(doc, "spec");
  if (spec == nullptr || !spec->IsObject()) return std::unexpected(fmt::format("a {} needs a spec", kind));
  AccessSubject who{std::string(json::GetString(*spec, "user")), Strings(json::Find(*spec, "groups"))};
  AccessRequest what;
  const json::Value* resource = json::Find(*spec, "resourceAttributes");
  const json::Value* non_resource = json::Find(*spec, "nonResourceAttributes");
  if (resource != nullptr && resource->IsObject()) {
    what.verb = json::GetString(*resource, "verb");
    what.namespace_ = json::GetString(*resource, "namespace");
    what.group = json::GetString(*resource, "group");
    what.resource = json::GetString(*resource, "resource");
    what.subresource = json::GetString(*resource, "subresource");
    what.name = json::GetString(*resource, "name");
    if (namespace_ != nullptr && what.namespace_ != *namespace_) {
      return std::unexpected(
          fmt::format("spec.resourceAttributes.namespace: Invalid value: \"{}\": must match "
                      "metadata.namespace",
                      what.namespace_));
    }
  } else if (non_resource != nullptr && non_resource->IsObject()) {
    what.verb = json::GetString(*non_resource, "verb");
    what.path = json::GetString(*non_resource, "path");
  } else {
    return std::unexpected(fmt::format("a {} needs spec.resourceAttributes or spec.nonResourceAttributes", kind));
  }
  if (who.user.empty() && who.groups.empty())
    return std::unexpected(fmt::format("a {} needs spec.user or spec.groups", kind));
  const std::optional<std::string> reason = RbacAllows(store, who, what);
  JsonWriter w;
  w.StartObject();
  w.Member("kind", kind);
  w.Member("apiVersion", "authorization.k8s.io/v1");
  w.Key("metadata");
  w.StartObject();
  if (namespace_ != nullptr) w.Member("namespace", *namespace_);
  w.EndObject();
  w.MemberRaw("spec", json::Encode(*spec));
  w.Key("status");
  w.StartObject();
  w.MemberBool("allowed", reason.has_value());
  if (reason) w.Member("reason", *reason);
  w.EndObject();
  w.EndObject();
  return w.Take();
}

}  // namespace

std::expected<std::string, std::string> ReviewAccess(const store::Store& store, std::string_view body) {
  return Review(store, "SubjectAccessReview", nullptr, body);
}

std::expected<std::string, std::string> ReviewLocalAccess(const store::Store& store, std::string_view namespace_,
                                                          std::string_view body) {
  const std::string ns(namespace_);
  return Review(store, "LocalSubjectAccessReview", &ns, body);
}

std::expected<std::string, std::string> ReviewSelf(std::string_view resource, const AccessSubject& who,
                                                   std::string_view body) {
  json::Document doc;
  if (!json::Parse(body, doc).has_value() || !doc.IsObject()) return std::unexpected("the body is not a JSON object");
  const json::Value* spec = json::Find(doc, "spec");
  JsonWriter w;
  w.StartObject();
  auto strings = [&](std::string_view key, std::initializer_list<std::string_view> values) {
    w.Key(key);
    w.StartArray();
    for (std::string_view v : values) w.String(v);
    w.EndArray();
  };
  if (resource == "selfsubjectreviews") {
    w.Member("kind", "SelfSubjectReview");
    w.Member("apiVersion", "authentication.k8s.io/v1");
    w.Key("metadata");
    w.StartObject();
    w.EndObject();
    w.Key("status");
    w.StartObject();
    w.Key("userInfo");
    w.StartObject();
    w.Member("username", who.user);
    w.MemberStrings("groups", who.groups);
    w.EndObject();
    w.EndObject();
  } else {
    if (spec == nullptr || !spec->IsObject()) return std::unexpected("the review needs a spec");
    const bool rules = resource == "selfsubjectrulesreviews";
    w.Member("kind", rules ? "SelfSubjectRulesReview" : "SelfSubjectAccessReview");
    w.Member("apiVersion", "authorization.k8s.io/v1");
    w.Key("metadata");
    w.StartObject();
    w.EndObject();
    w.MemberRaw("spec", json::Encode(*spec));
    w.Key("status");
    w.StartObject();
    if (rules) {
      w.Key("resourceRules");
      w.StartArray();
      w.StartObject();
      strings("verbs", {"*"});
      strings("apiGroups", {"*"});
      strings("resources", {"*"});
      w.EndObject();
      w.EndArray();
      w.Key("nonResourceRules");
      w.StartArray();
      w.StartObject();
      strings("verbs", {"*"});
      strings("nonResourceURLs", {"*"});
      w.EndObject();
      w.EndArray();
      w.MemberBool("incomplete", false);
    } else {
      w.MemberBool("allowed", true);
      w.Member("reason", "the kubesched API test bed authorizes every request");
    }
    w.EndObject();
  }
  w.EndObject();
  return w.Take();
}

}  // namespace kubesched::server
