#include "store/custom_resources.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "api/names.h"
#include "api/structural_schema.h"
#include "store/errors.h"
#include "store/meta.h"

namespace kubesched::store {

namespace json = api::json;

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> Strings(const json::Value* list) {
  std::vector<std::string> out;
  if (list == nullptr || !list->IsArray()) return out;
  for (const auto& v : list->GetArray()) {
    if (v.IsString()) out.emplace_back(json::View(v));
  }
  return out;
}

bool GetBool(const json::Value& object, std::string_view key) {
  const json::Value* v = json::Find(object, key);
  return v != nullptr && v->IsBool() && v->GetBool();
}

// A Kubernetes version name: v<major>[alpha|beta<minor>]; nullopt for any other name.
struct KubeVersion {
  int64_t major = 0;
  int stability = 2;  // 2 GA, 1 beta, 0 alpha
  int64_t minor = 0;
};

std::optional<KubeVersion> ParseKubeVersion(std::string_view s) {
  if (s.size() < 2 || s[0] != 'v' || !std::isdigit(static_cast<unsigned char>(s[1])) || s[1] == '0') {
    return std::nullopt;
  }
  KubeVersion v;
  size_t i = 1;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    if (i > 10) return std::nullopt;
    v.major = v.major * 10 + (s[i] - '0');
  }
  if (i == s.size()) return v;
  std::string_view rest = s.substr(i);
  if (rest.starts_with("alpha")) {
    v.stability = 0;
    rest.remove_prefix(5);
  } else if (rest.starts_with("beta")) {
    v.stability = 1;
    rest.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  if (rest.empty() || rest[0] == '0' || rest.size() > 10) return std::nullopt;
  for (char c : rest) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v.minor = v.minor * 10 + (c - '0');
  }
  return v;
}

// The current definition behind a storage type's hooks: a CRD update swaps it while the type
// (and the objects keyed by it) stays.
class DefinitionHolder {
 public:
  std::shared_ptr<const CustomResourceDefinition> Get() const {
    std::lock_guard lock(mu_);
    return def_;
  }
  void Set(std::shared_ptr<const CustomResourceDefinition> def) {
    std::lock_guard lock(mu_);
    def_ = std::move(def);
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const CustomResourceDefinition> def_;
};

// The schema an object of `def` is checked against: its apiVersion's version's, else the
// storage version's (objects reach the storage hooks in storage form).
const json::Value* SchemaFor(const CustomResourceDefinition& def, const json::Value& object) {
  std::string_view api_version = json::GetString(object, "apiVersion");
  const size_t slash = api_version.rfind('/');
  const CustomResourceVersion* v =
      def.Version(slash == std::string_view::npos ? api_version : api_version.substr(slash + 1));
  if (v == nullptr || !v->schema) v = def.StorageVersion();
  return v && v->schema ? v->schema.get() : nullptr;
}

// --- CRD validation --------------------------------------------------------------------------

void ValidateNames(const json::Value& names, std::vector<Cause>& causes) {
  const std::string path = "spec.names";
  const std::string_view plural = json::GetString(names, "plural");
  if (plural.empty()) {
    causes.push_back(RequiredCause(path + ".plural"));
  } else if (!api::IsDNS1123Label(plural).empty()) {
    causes.push_back(InvalidCause(path + ".plural", plural,
                                  "a lowercase RFC 1123 label must consist of lower case "
                                  "alphanumeric characters or '-'"));
  }
  const std::string_view singular = json::GetString(names, "singular");
  if (!singular.empty() && !api::IsDNS1123Label(singular).empty()) {
    causes.push_back(InvalidCause(path + ".singular", singular,
                                  "a lowercase RFC 1123 label must consist of lower "
                                  "case alphanumeric characters or '-'"));
  }
  const std::string_view kind = json::GetString(names, "kind");
  if (kind.empty()) {
    causes.push_back(RequiredCause(path + ".kind"));
  } else if (Lower(kind) == kind) {
    // Upstream: the kind must not be all lower case (it would be taken for a resource name).
    causes.push_back(InvalidCause(path + ".kind", kind,
                                  "may have mixed case, but should otherwise match: "
                                  "^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"));
  }
  for (const std::string& s : Strings(json::Find(names, "shortNames"))) {
    if (!api::IsDNS1123Label(s).empty()) {
      causes.push_back(InvalidCause(path + ".shortNames", s,
                                    "a lowercase RFC 1123 label must consist of lower case "
                                    "alphanumeric characters or '-'"));
    }
  }
}

std::vector<Cause> ValidateDefinition(const json::Value& crd, const Object* old) {
  std::vector<Cause> causes;
  const json::Value* spec = json::Find(crd, "spec");
  if (spec == nullptr || !spec->IsObject()) {
    causes.push_back(RequiredCause("spec"));
    return causes;
  }
  const std::string_view group = json::GetString(*spec, "group");
  if (group.empty()) {
    causes.push_back(RequiredCause("spec.group"));
  } else if (!api::IsDNS1123Subdomain(group).empty()) {
    causes.push_back(InvalidCause("spec.group", group,
                                  "a lowercase RFC 1123 subdomain must consist of lower case "
                                  "alphanumeric characters, '-' or '.'"));
  } else if (group.find('.') == std::string_view::npos) {
    causes.push_back(InvalidCause("spec.group", group, "should be a domain with at least one dot"));
  }
  const json::Value* names = json::Find(*spec, "names");
  if (names == nullptr || !names->IsObject()) {
    causes.push_back(RequiredCause("spec.names"));
  } else {
    ValidateNames(*names, causes);
    const json::Value* meta = json::Find(crd, "metadata");
    const std::string_view name = meta ? json::GetString(*meta, "name") : std::string_view();
    const std::string expected = fmt::format("{}.{}", json::GetString(*names, "plural"), group);
    if (name != expected) {
      causes.push_back(InvalidCause("metadata.name", name, "must be spec.names.plural+\".\"+spec.group"));
    }
  }
  const std::string_view scope = json::GetString(*spec, "scope");
  if (scope.empty()) {
    causes.push_back(RequiredCause("spec.scope"));
  } else if (scope != "Namespaced" && scope != "Cluster") {
    causes.push_back(Cause{
        "FieldValueNotSupported",
        fmt::format("Unsupported value: \"{}\": supported values: \"Cluster\", \"Namespaced\"", scope), "spec.scope"});
  }
  if (old != nullptr && !scope.empty()) {
    json::Document before = ParseObject(*old);
    const json::Value* old_spec = json::Find(before, "spec");
    if (old_spec && json::GetString(*old_spec, "scope") != scope) {
      causes.push_back(InvalidCause("spec.scope", scope, "field is immutable"));
    }
  }
  const json::Value* versions = json::Find(*spec, "versions");
  if (versions == nullptr || !versions->IsArray() || versions->Empty()) {
    causes.push_back(RequiredCause("spec.versions", "must have exactly one version marked as storage version"));
    return causes;
  }
  int storage = 0;
  std::set<std::string, std::less<>> seen;
  for (rapidjson::SizeType i = 0; i < versions->Size(); ++i) {
    const json::Value& v = (*versions)[i];
    const std::string path = fmt::format("spec.versions[{}]", i);
    const std::string_view name = json::GetString(v, "name");
    if (name.empty()) {
      causes.push_back(RequiredCause(path + ".name"));
    } else if (!api::IsDNS1123Label(name).empty()) {
      causes.push_back(InvalidCause(path + ".name", name,
                                    "a DNS-1035 label must consist of lower case alphanumeric "
                                    "characters or '-'"));
    } else if (!seen.emplace(name).second) {
      causes.push_back(Cause{"FieldValueDuplicate", fmt::format("Duplicate value: \"{}\"", name), path + ".name"});
    }
    if (GetBool(v, "storage")) ++storage;
    const json::Value* schema = json::Find(v, "schema");
    const json::Value* open_api = schema ? json::Find(*schema, "openAPIV3Schema") : nullptr;
    if (open_api == nullptr) {
      causes.push_back(RequiredCause(path + ".schema.openAPIV3Schema", "schemas are required"));
    } else {
      // Each "<field>: <message>".
      for (const std::string& problem : api::StructuralSchemaProblems(*open_api, path + ".schema.openAPIV3Schema")) {
        const size_t colon = problem.find(": ");
        causes.push_back(colon == std::string::npos
                             ? Cause{"FieldValueInvalid", problem, path + ".schema.openAPIV3Schema"}
                             : Cause{"FieldValueInvalid", problem.substr(colon + 2), problem.substr(0, colon)});
      }
    }
  }
  if (storage != 1) {
    causes.push_back(InvalidCause("spec.versions", fmt::format("{} storage versions", storage),
                                  "must have exactly one version marked as storage version"));
  }
  return causes;
}

// Upstream's defaults (SetDefaults_CustomResourceDefinition*) and, as its naming and
// establishing controllers would write it at once, the status.
void DefaultDefinition(json::Document& crd) {
  auto& a = crd.GetAllocator();
  json::Value* spec = json::Find(crd, "spec");
  if (spec == nullptr || !spec->IsObject()) return;
  json::Value* names = json::Find(*spec, "names");
  if (names != nullptr && names->IsObject()) {
    const std::string kind(json::GetString(*names, "kind"));
    if (json::GetString(*names, "singular").empty() && !kind.empty()) {
      json::Set(*names, "singular", json::MakeString(Lower(kind), a), a);
    }
    if (json::GetString(*names, "listKind").empty() && !kind.empty()) {
      json::Set(*names, "listKind", json::MakeString(kind + "List", a), a);
    }
  }
  json::Value& conversion = json::Child(*spec, "conversion", a);
  if (json::GetString(conversion, "strategy").empty()) {
    json::Set(conversion, "strategy", json::MakeString("None", a), a);
  }
  json::Value& status = json::Child(crd, "status", a);
  if (names != nullptr && names->IsObject()) {
    json::Value accepted;
    accepted.CopyFrom(*names, a);
    json::Set(status, "acceptedNames", std::move(accepted), a);
  }
  json::Value conditions(rapidjson::kArrayType);
  auto condition = [&](std::string_view type, std::string_view reason, std::string_view message) {
    json::Value c(rapidjson::kObjectType);
    json::Set(c, "type", json::MakeString(type, a), a);
    json::Set(c, "status", json::MakeString("True", a), a);
    json::Set(c, "lastTransitionTime",
              json::MakeString(json::GetString(json::Child(crd, "metadata", a), "creationTimestamp"), a), a);
    json::Set(c, "reason", json::MakeString(reason, a), a);
    json::Set(c, "message", json::MakeString(message, a), a);
    conditions.PushBack(std::move(c), a);
  };
  condition("NamesAccepted", "NoConflicts", "no conflicts found");
  condition("Established", "InitialNamesAccepted", "the initial names have been accepted");
  json::Set(status, "conditions", std::move(conditions), a);
  // storedVersions: every version ever marked storage, kept across updates.
  std::vector<std::string> stored = Strings(json::Find(status, "storedVersions"));
  if (const json::Value* versions = json::Find(*spec, "versions"); versions && versions->IsArray()) {
    for (const auto& v : versions->GetArray()) {
      std::string name(json::GetString(v, "name"));
      if (GetBool(v, "storage") && !name.empty() && std::ranges::find(stored, name) == stored.end()) {
        stored.push_back(name);
      }
    }
  }
  json::Value list(rapidjson::kArrayType);
  for (const std::string& s : stored) list.PushBack(json::MakeString(s, a), a);
  json::Set(status, "storedVersions", std::move(list), a);
}

// The storage hooks' defaulting: unknown fields pruned to the schema (api/structural_schema.h).
void PruneCustomObject(const DefinitionHolder& holder, json::Document& object) {
  auto def = holder.Get();
  if (!def) return;
  if (const json::Value* schema = SchemaFor(*def, object)) {
    (void)api::PruneAndValidate(object, object.GetAllocator(), *schema);
  }
}

std::vector<Cause> ValidateCustomObject(const DefinitionHolder& holder, const json::Value& object) {
  std::vector<Cause> causes;
  auto def = holder.Get();
  if (!def) return causes;
  const json::Value* schema = SchemaFor(*def, object);
  if (schema == nullptr) return causes;
  json::Document copy;
  copy.CopyFrom(object, copy.GetAllocator());
  api::StructuralCheck check = api::PruneAndValidate(copy, copy.GetAllocator(), *schema);
  for (api::SchemaViolation& v : check.violations) {
    causes.push_back(Cause{std::move(v.reason), std::move(v.message), std::move(v.field)});
  }
  return causes;
}

std::vector<std::string> UnknownCustomFields(const DefinitionHolder& holder, const json::Value& object) {
  auto def = holder.Get();
  const json::Value* schema = def ? SchemaFor(*def, object) : nullptr;
  if (schema == nullptr) return {};
  json::Document copy;
  copy.CopyFrom(object, copy.GetAllocator());
  return api::PruneAndValidate(copy, copy.GetAllocator(), *schema).pruned;
}

}  // namespace

// --- The definition --------------------------------------------------------------------------

const CustomResourceVersion* CustomResourceDefinition::StorageVersion() const {
  for (const auto& v : versions) {
    if (v.storage) return &v;
  }
  return nullptr;
}

const CustomResourceVersion* CustomResourceDefinition::Version(std::string_view name) const {
  for (const auto& v : versions) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

bool KubeAwareVersionLess(std::string_view a, std::string_view b) {
  auto x = ParseKubeVersion(a);
  auto y = ParseKubeVersion(b);
  if (x && y) {
    if (x->stability != y->stability) return x->stability > y->stability;
    if (x->major != y->major) return x->major > y->major;
    return x->minor > y->minor;
  }
  if (x || y) return x.has_value();
  return a < b;
}

std::optional<CustomResourceDefinition> ReadCustomResourceDefinition(const json::Value& crd) {
  const json::Value* spec = json::Find(crd, "spec");
  const json::Value* meta = json::Find(crd, "metadata");
  if (spec == nullptr || meta == nullptr) return std::nullopt;
  const json::Value* names = json::Find(*spec, "names");
  const json::Value* versions = json::Find(*spec, "versions");
  if (names == nullptr || versions == nullptr || !versions->IsArray()) return std::nullopt;
  CustomResourceDefinition def;
  def.name = json::GetString(*meta, "name");
  def.group = json::GetString(*spec, "group");
  def.plural = json::GetString(*names, "plural");
  def.kind = json::GetString(*names, "kind");
  def.singular = json::GetString(*names, "singular");
  if (def.singular.empty()) def.singular = Lower(def.kind);
  def.list_kind = json::GetString(*names, "listKind");
  if (def.list_kind.empty()) def.list_kind = def.kind + "List";
  def.namespaced = json::GetString(*spec, "scope") != "Cluster";
  def.short_names = Strings(json::Find(*names, "shortNames"));
  def.categories = Strings(json::Find(*names, "categories"));
  for (const auto& v : versions->GetArray()) {
    CustomResourceVersion version;
    version.name = json::GetString(v, "name");
    version.served = GetBool(v, "served");
    version.storage = GetBool(v, "storage");
    const json::Value* schema = json::Find(v, "schema");
    if (const json::Value* open_api = schema ? json::Find(*schema, "openAPIV3Schema") : nullptr) {
      auto doc = std::make_shared<json::Document>();
      doc->CopyFrom(*open_api, doc->GetAllocator());
      version.schema = std::move(doc);
    }
    if (const json::Value* sub = json::Find(v, "subresources")) {
      version.status_subresource = json::Find(*sub, "status") != nullptr;
      version.scale_subresource = json::Find(*sub, "scale") != nullptr;
    }
    if (const json::Value* columns = json::Find(v, "additionalPrinterColumns"); columns && columns->IsArray()) {
      for (const auto& c : columns->GetArray()) {
        ColumnDefinition column;
        column.name = json::GetString(c, "name");
        column.type = json::GetString(c, "type");
        column.format = json::GetString(c, "format");
        column.description = json::GetString(c, "description");
        column.json_path = json::GetString(c, "jsonPath");
        if (const json::Value* p = json::Find(c, "priority"); p && p->IsInt()) column.priority = p->GetInt();
        version.printer_columns.push_back(std::move(column));
      }
    }
    def.versions.push_back(std::move(version));
  }
  if (def.name.empty() || def.group.empty() || def.plural.empty() || def.kind.empty() || !def.StorageVersion()) {
    return std::nullopt;
  }
  std::stable_sort(def.versions.begin(), def.versions.end(),
                   [](const auto& a, const auto& b) { return KubeAwareVersionLess(a.name, b.name); });
  return def;
}

ResourceType CustomResourceDefinitions() {
  ResourceType t;
  t.group = "apiextensions.k8s.io";
  t.version = "v1";
  t.resource = "customresourcedefinitions";
  t.kind = "CustomResourceDefinition";
  t.singular = "customresourcedefinition";
  t.namespaced = false;
  t.short_names = {"crd", "crds"};
  t.categories = {"api-extensions"};
  t.subresources = {"status"};
  t.default_fields = DefaultDefinition;
  t.validate = ValidateDefinition;
  t.defines_custom_resources = true;
  return t;
}

// --- The served resources --------------------------------------------------------------------

struct CustomResources::Entry {
  ResourceType* storage = nullptr;
  std::shared_ptr<DefinitionHolder> holder = std::make_shared<DefinitionHolder>();
  std::vector<const ResourceType*> served;  //!< empty while not served
};

CustomResources::CustomResources(const std::vector<const ResourceType*>& builtin) : builtin_(builtin) {}

void CustomResources::Define(const json::Value& crd) {
  std::optional<CustomResourceDefinition> read = ReadCustomResourceDefinition(crd);
  if (!read) return;
  auto def = std::make_shared<const CustomResourceDefinition>(std::move(*read));
  // A CRD that names a built-in resource defines nothing (upstream: NamesAccepted False).
  for (const ResourceType* t : builtin_) {
    if (t->group == def->group && t->resource == def->plural) return;
  }
  std::lock_guard lock(mu_);
  std::shared_ptr<Entry>& entry = by_crd_[def->name];
  if (!entry) entry = std::make_shared<Entry>();
  entry->holder->Set(def);
  const CustomResourceVersion& storage_version = *def->StorageVersion();
  std::shared_ptr<DefinitionHolder> holder = entry->holder;
  if (entry->storage == nullptr) {
    auto storage = std::make_unique<ResourceType>();
    storage->group = def->group;
    storage->version = storage_version.name;
    storage->resource = def->plural;
    storage->kind = def->kind;
    storage->singular = def->singular;
    storage->namespaced = def->namespaced;
    storage->default_fields = [holder](json::Document& object) { PruneCustomObject(*holder, object); };
    storage->validate = [holder](const json::Value& object, const Object*) {
      return ValidateCustomObject(*holder, object);
    };
    storage->unknown_fields = [holder](const json::Value& object) { return UnknownCustomFields(*holder, object); };
    entry->storage = storage.get();
    storage_order_.push_back(storage.get());
    owned_.push_back(std::move(storage));
  }
  const ResourceType* storage = entry->storage;
  entry->served.clear();
  const std::string storage_api_version = def->group + "/" + storage_version.name;
  for (const CustomResourceVersion& v : def->versions) {
    if (!v.served) continue;
    auto t = std::make_unique<ResourceType>();
    t->group = def->group;
    t->version = v.name;
    t->resource = def->plural;
    t->kind = def->kind;
    t->singular = def->singular;
    t->namespaced = def->namespaced;
    t->short_names = def->short_names;
    t->categories = def->categories;
    if (v.status_subresource) t->subresources.push_back("status");
    t->columns = v.printer_columns;
    if (t->columns.empty()) {
      t->columns.push_back(ColumnDefinition{"Age", "date", "",
                                            "CreationTimestamp is a timestamp representing the "
                                            "server time when this object was created.",
                                            ".metadata.creationTimestamp", 0});
    }
    t->default_fields = storage->default_fields;
    t->validate = storage->validate;
    t->unknown_fields = storage->unknown_fields;
    t->stored_as = storage;
    // conversion strategy None: only apiVersion differs between versions.
    t->to_storage = [storage_api_version](json::Document& object) {
      json::Set(object, "apiVersion", json::MakeString(storage_api_version, object.GetAllocator()),
                object.GetAllocator());
    };
    t->from_storage = [served = def->group + "/" + v.name](json::Document& object) {
      json::Set(object, "apiVersion", json::MakeString(served, object.GetAllocator()), object.GetAllocator());
    };
    entry->served.push_back(t.get());
    owned_.push_back(std::move(t));
  }
  ++generation_;
}

void CustomResources::Undefine(std::string_view crd_name) {
  std::lock_guard lock(mu_);
  auto it = by_crd_.find(std::string(crd_name));
  if (it == by_crd_.end() || it->second->served.empty()) return;
  it->second->served.clear();
  ++generation_;
}

const ResourceType* CustomResources::Find(std::string_view group, std::string_view resource) const {
  std::lock_guard lock(mu_);
  auto it = by_crd_.find(fmt::format("{}.{}", resource, group));
  if (it == by_crd_.end() || it->second->served.empty()) return nullptr;
  for (const ResourceType* t : it->second->served) {
    if (t->version == it->second->storage->version) return t;
  }
  return it->second->served.front();
}

const ResourceType* CustomResources::Find(std::string_view group, std::string_view version,
                                          std::string_view resource) const {
  std::lock_guard lock(mu_);
  auto it = by_crd_.find(fmt::format("{}.{}", resource, group));
  if (it == by_crd_.end()) return nullptr;
  for (const ResourceType* t : it->second->served) {
    if (t->version == version) return t;
  }
  return nullptr;
}

const ResourceType* CustomResources::StorageOf(std::string_view crd_name) const {
  std::lock_guard lock(mu_);
  auto it = by_crd_.find(std::string(crd_name));
  return it == by_crd_.end() ? nullptr : it->second->storage;
}

const ResourceType* CustomResources::StorageForKind(std::string_view group, std::string_view kind) const {
  std::lock_guard lock(mu_);
  for (const ResourceType* t : storage_order_) {
    if (t->group == group && t->kind == kind) return t;
  }
  return nullptr;
}

std::vector<const ResourceType*> CustomResources::StorageTypes() const {
  std::lock_guard lock(mu_);
  return storage_order_;
}

std::vector<const ResourceType*> CustomResources::Served() const {
  std::lock_guard lock(mu_);
  std::vector<const ResourceType*> out;
  for (const auto& [name, entry] : by_crd_) out.insert(out.end(), entry->served.begin(), entry->served.end());
  return out;
}

std::vector<std::string> CustomResources::DefinedNames() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, entry] : by_crd_) {
    if (!entry->served.empty()) out.push_back(name);
  }
  return out;
}

uint64_t CustomResources::Generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

}  // namespace kubesched::store
