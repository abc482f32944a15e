#include "config/load.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "api/json.h"
#include "api/yaml.h"
#include "config/default_plugins.h"
#include "config/strict_decoder.h"
#include "config/validation.h"
#include "framework/args_view_json.h"
#include "util/duration.h"
#include "util/go_quote.h"

namespace kubesched::config {
namespace {

using framework::ArgsView;

// ---------------------------------------------------------------------------------------------
// Field paths and errors, formatted as upstream's field.Error.

using util::GoQuote;

std::string QuoteList(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += GoQuote(n);
  }
  return out;
}

class ErrorList {
 public:
  void Add(const std::string& path, std::string_view message) {
    errors_.push_back(path.empty() ? std::string(message) : fmt::format("{}: {}", path, message));
  }
  //! `Invalid value: <value>: <detail>`; `value` is already formatted (quoted when a string).
  void Invalid(const std::string& path, std::string_view value, std::string_view detail) {
    errors_.push_back(config::FieldInvalid(path, value, detail));
  }
  void Required(const std::string& path, std::string_view detail = {}) {
    errors_.push_back(config::FieldRequired(path, detail));
  }
  void Duplicate(const std::string& path, std::string_view value) {
    errors_.push_back(config::FieldDuplicate(path, value));
  }
  void Unsupported(const std::string& path, std::string_view value, std::string_view supported) {
    Add(path, fmt::format("Unsupported value: {}: supported values: {}", value, supported));
  }
  //! Strict decoding errors name the whole path inside the message, as sigs.k8s.io/json does.
  void DuplicateField(const std::string& path) { errors_.push_back(fmt::format("duplicate field {}", GoQuote(path))); }
  //! Appends errors already rendered (plugin args errors, with their full paths).
  void Append(const std::vector<std::string>& errors) { errors_.insert(errors_.end(), errors.begin(), errors.end()); }
  //! The list itself, for a config::StrictDecoder to add to in order.
  std::vector<std::string>& list() { return errors_; }

  bool empty() const { return errors_.empty(); }

  std::string Join(const std::string& source) const {
    std::string out;
    for (const auto& e : errors_) {
      if (!out.empty()) out += '\n';
      out += source.empty() ? e : fmt::format("{}: {}", source, e);
    }
    return out;
  }

 private:
  std::vector<std::string> errors_;
};

// ---------------------------------------------------------------------------------------------
// YAML (or JSON, which the YAML parser reads too) to JSON, as sigs.k8s.io/yaml converts the file
// before decoding it: api/yaml.h parses it with go-yaml v2's rules, as it parses manifests (plain
// yes/no/on/off are booleans, 0644 is octal; quoted scalars are strings), and the document is
// copied into the JSON the strict decoding reads. A key given twice is an error, as upstream's
// strict decoding makes it.

// Removes every member whose name an earlier member of its object has, reporting each (the first
// is the one decoded, as upstream's strict decoding fails on the repetition).
void RemoveDuplicateFields(api::json::Value& v, const std::string& path, ErrorList& errors) {
  if (v.IsArray()) {
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i)
      RemoveDuplicateFields(v[i], api::field_path::Index(path, i), errors);
    return;
  }
  if (!v.IsObject()) return;
  std::set<std::string_view> seen;
  for (auto m = v.MemberBegin(); m != v.MemberEnd();) {
    const std::string_view key = api::json::View(m->name);
    std::string child = api::field_path::Child(path, key);
    if (!seen.insert(key).second) {
      errors.DuplicateField(child);
      m = v.EraseMember(m);  // the names seen stay in place: erasing moves the later members only
      continue;
    }
    RemoveDuplicateFields(m->value, child, errors);
    ++m;
  }
}

// Sorts every object's members by name, as the configuration's args have always been held (in a
// map): error messages and the report show them so.
void SortMembers(api::json::Value& v, api::json::Allocator& alloc) {
  if (v.IsArray()) {
    for (api::json::Value& e : v.GetArray()) SortMembers(e, alloc);
    return;
  }
  if (!v.IsObject()) return;
  std::vector<std::pair<api::json::Value, api::json::Value>> members;
  members.reserve(v.MemberCount());
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    SortMembers(m->value, alloc);
    members.emplace_back(std::move(m->name), std::move(m->value));
  }
  v.RemoveAllMembers();
  std::ranges::stable_sort(members, {}, [](const auto& m) { return api::json::View(m.first); });
  for (auto& [name, value] : members) v.AddMember(name, value, alloc);
}

// ---------------------------------------------------------------------------------------------
// Strict decoding of the JSON document.

using Decoder = config::StrictDecoder;

// What decoding knows beyond Configuration and defaulting/validation needs.
struct DecodedProfile {
  bool has_scheduler_name = false;
  Plugins custom;  // the file's plugins, before merging with the defaults
  //! Per pluginConfig entry, the validation errors of its args (reported with the other
  //! validation errors; decoding errors were reported while decoding).
  std::vector<std::vector<std::string>> args_errors;
};

void DecodePluginList(Decoder& d, ArgsView j, const std::string& path, std::vector<PluginRef>& out) {
  if (!d.Array(j, path)) return;
  for (size_t i = 0; i < j.Size(); ++i) {
    std::string item_path = api::field_path::Index(path, i);
    PluginRef ref;
    if (!d.Object(j[i], item_path, {"name", "weight"})) {
      if (j[i].IsNull()) out.push_back(ref);  // a null entry decodes as an empty one, as in Go
      continue;
    }
    ref.name = d.String(j[i].Find("name"), api::field_path::Child(item_path, "name")).value_or("");
    ref.weight = d.Int32(j[i].Find("weight"), api::field_path::Child(item_path, "weight")).value_or(0);
    out.push_back(std::move(ref));
  }
}

void DecodePlugins(Decoder& d, ArgsView j, const std::string& path, Plugins& plugins) {
  if (j.IsNull()) return;
  if (!d.Object(j, path,
                {"multiPoint", "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
                 "reserve", "permit", "preBind", "bind", "postBind"})) {
    return;
  }
  for (const auto& point : kExtensionPoints) {
    ArgsView set = j.Find(point.name);
    if (set.IsNull()) continue;
    std::string set_path = api::field_path::Child(path, point.name);
    if (!d.Object(set, set_path, {"enabled", "disabled"})) continue;
    DecodePluginList(d, set.Find("enabled"), api::field_path::Child(set_path, "enabled"),
                     (plugins.*point.member).enabled);
    DecodePluginList(d, set.Find("disabled"), api::field_path::Child(set_path, "disabled"),
                     (plugins.*point.member).disabled);
  }
}

void DecodePluginConfig(Decoder& d, ErrorList& errors, ArgsView j, const std::string& path,
                        const framework::Registry& registry, std::vector<PluginConfig>& out,
                        std::vector<std::vector<std::string>>& args_errors) {
  if (!d.Array(j, path)) return;
  for (size_t i = 0; i < j.Size(); ++i) {
    std::string item_path = api::field_path::Index(path, i);
    PluginConfig pc;
    if (!d.Object(j[i], item_path, {"name", "args"})) {
      if (j[i].IsNull()) {  // a null entry decodes as an empty one, as in Go
        out.push_back(std::move(pc));
        args_errors.emplace_back();
      }
      continue;
    }
    pc.name = d.String(j[i].Find("name"), api::field_path::Child(item_path, "name")).value_or("");
    std::string args_path = api::field_path::Child(item_path, "args");
    bool typed = true;  // the args can be decoded as the plugin's args type
    const ArgsView given = j[i].Find("args");
    if (!given.IsNull() && !given.IsObject()) {
      errors.Add(args_path, fmt::format("Invalid type: expected object, got {}", given.TypeName()));
      typed = false;
    }
    if (given.IsObject()) {
      // The args are copied out of the file's document, to be kept with the configuration.
      api::json::Document args;
      args.CopyFrom(*framework::ValueOf(given), args.GetAllocator());
      const auto shown = [](const api::json::Value& v) {
        return v.IsString() ? GoQuote(api::json::View(v)) : framework::ViewOf(v).Encode();
      };
      // Upstream decodes in-tree args as the typed object "<Name>Args" of the config group, so a
      // TypeMeta in args must name that type. It is removed here: factories see only the fields.
      if (const api::json::Value* kind = api::json::Find(args, "kind")) {
        std::string want = pc.name + "Args";
        if (!kind->IsString() || api::json::View(*kind) != want) {
          errors.Invalid(api::field_path::Child(args_path, "kind"), shown(*kind),
                         fmt::format("args for plugin {} must be of kind {}", pc.name, want));
          typed = false;
        }
        api::json::Remove(args, "kind");
      }
      if (const api::json::Value* version = api::json::Find(args, "apiVersion")) {
        if (!version->IsString() || api::json::View(*version) != kApiVersion) {
          errors.Unsupported(api::field_path::Child(args_path, "apiVersion"), shown(*version), GoQuote(kApiVersion));
          typed = false;
        }
        api::json::Remove(args, "apiVersion");
      }
      SortMembers(args, args.GetAllocator());
      pc.args = framework::AdoptArgs(std::move(args));
    }
    // Typed args are decoded strictly now (as upstream's DecodeNestedObjects) and validated with
    // the rest of the configuration; the args of plugins without an args type are passed on as
    // they are, as upstream passes out-of-tree args.
    std::vector<std::string> validation_errors;
    if (typed) {
      if (const framework::ArgsType* type = registry.FindArgsType(pc.name)) {
        auto checked = type->decode(pc.args.View(), args_path);
        if (!checked && checked.error().decoding) errors.Append(checked.error().errors);
        if (!checked && !checked.error().decoding) validation_errors = std::move(checked.error().errors);
      }
    }
    out.push_back(std::move(pc));
    args_errors.push_back(std::move(validation_errors));
  }
}

void DecodeProfile(Decoder& d, ErrorList& errors, ArgsView j, const std::string& path,
                   const framework::Registry& registry, Profile& profile, DecodedProfile& decoded) {
  if (!d.Object(j, path, {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"})) return;
  if (auto name = d.String(j.Find("schedulerName"), api::field_path::Child(path, "schedulerName"))) {
    profile.scheduler_name = *name;
    decoded.has_scheduler_name = true;
  }
  profile.percentage_of_nodes_to_score =
      d.Int32(j.Find("percentageOfNodesToScore"), api::field_path::Child(path, "percentageOfNodesToScore"));
  DecodePlugins(d, j.Find("plugins"), api::field_path::Child(path, "plugins"), decoded.custom);
  DecodePluginConfig(d, errors, j.Find("pluginConfig"), api::field_path::Child(path, "pluginConfig"), registry,
                     profile.plugin_config, decoded.args_errors);
}

// A duration as metav1.Duration writes it ("15s", "1m30s"); nullopt when absent or invalid.
std::optional<int64_t> DecodeDuration(Decoder& d, ArgsView j, const std::string& path) {
  std::optional<std::string> text = d.String(j, path);
  if (!text) return std::nullopt;
  auto ns = util::ParseDuration(*text);
  if (!ns) {
    d.Add(fmt::format("{}: {}", path, ns.error()));
    return std::nullopt;
  }
  return *ns;
}

// Upstream's component-base blocks: leaderElection and clientConnection (read by `kubesched
// run`), the profiling switches (checked, not used).
void DecodeComponentBlocks(Decoder& d, ArgsView doc, Configuration& cfg) {
  if (ArgsView le = doc.Find("leaderElection"); !le.IsNull()) {
    if (d.Object(le, "leaderElection",
                 {"leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock", "resourceName",
                  "resourceNamespace"})) {
      LeaderElection& out = cfg.leader_election;
      if (auto v = d.Bool(le.Find("leaderElect"), "leaderElection.leaderElect")) out.leader_elect = *v;
      if (auto v = DecodeDuration(d, le.Find("leaseDuration"), "leaderElection.leaseDuration")) {
        out.lease_duration_ns = *v;
      }
      if (auto v = DecodeDuration(d, le.Find("renewDeadline"), "leaderElection.renewDeadline")) {
        out.renew_deadline_ns = *v;
      }
      if (auto v = DecodeDuration(d, le.Find("retryPeriod"), "leaderElection.retryPeriod")) {
        out.retry_period_ns = *v;
      }
      if (auto v = d.String(le.Find("resourceLock"), "leaderElection.resourceLock")) out.resource_lock = *v;
      if (auto v = d.String(le.Find("resourceName"), "leaderElection.resourceName")) out.resource_name = *v;
      if (auto v = d.String(le.Find("resourceNamespace"), "leaderElection.resourceNamespace")) {
        out.resource_namespace = *v;
      }
    }
  }
  if (ArgsView cc = doc.Find("clientConnection"); !cc.IsNull()) {
    if (d.Object(cc, "clientConnection", {"kubeconfig", "acceptContentTypes", "contentType", "qps", "burst"})) {
      ClientConnection& out = cfg.client_connection;
      if (auto v = d.String(cc.Find("kubeconfig"), "clientConnection.kubeconfig")) out.kubeconfig = *v;
      if (auto v = d.String(cc.Find("acceptContentTypes"), "clientConnection.acceptContentTypes")) {
        out.accept_content_types = *v;
      }
      if (auto v = d.String(cc.Find("contentType"), "clientConnection.contentType")) out.content_type = *v;
      // qps is a float32; any JSON number.
      if (auto v = d.Seconds(cc.Find("qps"), "clientConnection.qps")) out.qps = static_cast<float>(*v);
      if (auto v = d.Int32(cc.Find("burst"), "clientConnection.burst")) out.burst = *v;
    }
  }
  d.Bool(doc.Find("enableProfiling"), "enableProfiling");
  d.Bool(doc.Find("enableContentionProfiling"), "enableContentionProfiling");
  d.Bool(doc.Find("delayCacheUntilActive"), "delayCacheUntilActive");
}

// upstream's Extender, field by field (its v1 type has no defaults: httpTimeout 0 means the
// client's 5 s).
void DecodeExtenders(Decoder& d, ArgsView extenders, std::vector<Extender>& out) {
  if (!d.Array(extenders, "extenders")) return;
  for (size_t i = 0; i < extenders.Size(); ++i) {
    std::string path = api::field_path::Index("extenders", i);
    ArgsView e = extenders[i];
    if (!d.Object(e, path,
                  {"urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb", "enableHTTPS",
                   "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources", "ignorable"})) {
      continue;
    }
    Extender x;
    auto str = [&](ArgsView j, const std::string& p, std::string& to) {
      if (auto v = d.String(j, p)) to = std::move(*v);
    };
    auto flag = [&](ArgsView j, const std::string& p, bool& to) {
      if (auto v = d.Bool(j, p)) to = *v;
    };
    str(e.Find("urlPrefix"), api::field_path::Child(path, "urlPrefix"), x.url_prefix);
    str(e.Find("filterVerb"), api::field_path::Child(path, "filterVerb"), x.filter_verb);
    str(e.Find("preemptVerb"), api::field_path::Child(path, "preemptVerb"), x.preempt_verb);
    str(e.Find("prioritizeVerb"), api::field_path::Child(path, "prioritizeVerb"), x.prioritize_verb);
    str(e.Find("bindVerb"), api::field_path::Child(path, "bindVerb"), x.bind_verb);
    if (auto v = d.Int64(e.Find("weight"), api::field_path::Child(path, "weight"))) x.weight = *v;
    flag(e.Find("enableHTTPS"), api::field_path::Child(path, "enableHTTPS"), x.enable_https);
    flag(e.Find("nodeCacheCapable"), api::field_path::Child(path, "nodeCacheCapable"), x.node_cache_capable);
    flag(e.Find("ignorable"), api::field_path::Child(path, "ignorable"), x.ignorable);
    if (ArgsView timeout = e.Find("httpTimeout"); !timeout.IsNull()) {
      if (auto ns = DecodeDuration(d, timeout, api::field_path::Child(path, "httpTimeout"))) x.http_timeout_ns = *ns;
    }
    if (ArgsView tls = e.Find("tlsConfig"); !tls.IsNull()) {
      std::string tpath = api::field_path::Child(path, "tlsConfig");
      if (d.Object(tls, tpath,
                   {"insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData", "caData"})) {
        ExtenderTlsConfig t;
        flag(tls.Find("insecure"), api::field_path::Child(tpath, "insecure"), t.insecure);
        str(tls.Find("serverName"), api::field_path::Child(tpath, "serverName"), t.server_name);
        str(tls.Find("certFile"), api::field_path::Child(tpath, "certFile"), t.cert_file);
        str(tls.Find("keyFile"), api::field_path::Child(tpath, "keyFile"), t.key_file);
        str(tls.Find("caFile"), api::field_path::Child(tpath, "caFile"), t.ca_file);
        str(tls.Find("certData"), api::field_path::Child(tpath, "certData"), t.cert_data);
        str(tls.Find("keyData"), api::field_path::Child(tpath, "keyData"), t.key_data);
        str(tls.Find("caData"), api::field_path::Child(tpath, "caData"), t.ca_data);
        x.tls_config = std::move(t);
      }
    }
    ArgsView resources = e.Find("managedResources");
    if (d.Array(resources, api::field_path::Child(path, "managedResources"))) {
      for (size_t j = 0; j < resources.Size(); ++j) {
        std::string rpath = api::field_path::Index(api::field_path::Child(path, "managedResources"), j);
        if (!d.Object(resources[j], rpath, {"name", "ignoredByScheduler"})) continue;
        ExtenderManagedResource r;
        str(resources[j].Find("name"), api::field_path::Child(rpath, "name"), r.name);
        flag(resources[j].Find("ignoredByScheduler"), api::field_path::Child(rpath, "ignoredByScheduler"),
             r.ignored_by_scheduler);
        x.managed_resources.push_back(std::move(r));
      }
    }
    out.push_back(std::move(x));
  }
}

void Decode(ArgsView doc, ErrorList& errors, const framework::Registry& registry, Configuration& cfg,
            std::vector<DecodedProfile>& decoded) {
  Decoder d(errors.list());
  // KubeSchedulerConfiguration's v1 fields. healthzBindAddress and metricsBindAddress are not
  // among them: they were removed before v1 and upstream rejects them as unknown.
  if (!d.Object(doc, "",
                {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection", "enableProfiling",
                 "enableContentionProfiling", "percentageOfNodesToScore", "podInitialBackoffSeconds",
                 "podMaxBackoffSeconds", "profiles", "extenders", "delayCacheUntilActive"})) {
    return;
  }
  auto api_version = d.String(doc.Find("apiVersion"), "apiVersion");
  if (!api_version || api_version->empty()) {
    errors.Required("apiVersion");
  } else if (*api_version != kApiVersion) {
    errors.Unsupported("apiVersion", GoQuote(*api_version), GoQuote(kApiVersion));
  }
  auto kind = d.String(doc.Find("kind"), "kind");
  if (!kind || kind->empty()) {
    errors.Required("kind");
  } else if (*kind != kKind) {
    errors.Unsupported("kind", GoQuote(*kind), GoQuote(kKind));
  }

  if (auto v = d.Int32(doc.Find("parallelism"), "parallelism")) cfg.parallelism = *v;
  cfg.percentage_of_nodes_to_score = d.Int32(doc.Find("percentageOfNodesToScore"), "percentageOfNodesToScore");
  if (auto v = d.Int64(doc.Find("podInitialBackoffSeconds"), "podInitialBackoffSeconds")) {
    cfg.pod_initial_backoff_seconds = *v;
  }
  if (auto v = d.Int64(doc.Find("podMaxBackoffSeconds"), "podMaxBackoffSeconds")) {
    cfg.pod_max_backoff_seconds = *v;
  }
  DecodeComponentBlocks(d, doc, cfg);

  ArgsView profiles = doc.Find("profiles");
  if (d.Array(profiles, "profiles")) {
    for (size_t i = 0; i < profiles.Size(); ++i) {
      Profile profile;
      DecodedProfile extra;
      DecodeProfile(d, errors, profiles[i], api::field_path::Index("profiles", i), registry, profile, extra);
      cfg.profiles.push_back(std::move(profile));
      decoded.push_back(std::move(extra));
    }
  }

  DecodeExtenders(d, doc.Find("extenders"), cfg.extenders);
}

// ---------------------------------------------------------------------------------------------
// Defaulting (upstream's SetDefaults_KubeSchedulerConfiguration, scheduling part).

void SetDefaults(Configuration& cfg, std::vector<DecodedProfile>& decoded, const framework::Registry& registry) {
  if (cfg.profiles.empty()) {
    cfg.profiles.emplace_back();
    decoded.emplace_back();
  }
  // Only a single profile gets a default name; with several, validation requires each one.
  if (cfg.profiles.size() == 1 && !decoded[0].has_scheduler_name) {
    cfg.profiles[0].scheduler_name = std::string(kDefaultSchedulerName);
  }
  const Plugins defaults = DefaultPlugins(registry);
  for (size_t i = 0; i < cfg.profiles.size(); ++i) {
    cfg.profiles[i].plugins = MergePlugins(defaults, decoded[i].custom);
  }
}

// ---------------------------------------------------------------------------------------------
// Validation (upstream's ValidateKubeSchedulerConfiguration plus the static part of the checks
// its framework runtime makes).

std::string InvalidInVersionDetail() {
  return fmt::format("was invalid in version {} (KubeSchedulerConfiguration is version {})", GoQuote(kApiVersion),
                     GoQuote(kApiVersion));
}

void ValidatePercentage(ErrorList& errors, const std::string& path, const std::optional<int32_t>& value) {
  if (value && (*value < 0 || *value > 100)) errors.Invalid(path, std::to_string(*value), "not in valid range [0-100]");
}

// Checks a plugin name the file enables; false when it is not usable.
void ValidateEnabledName(ErrorList& errors, const std::string& path, const std::string& name,
                         const framework::Registry& registry) {
  if (registry.Find(name) != nullptr) return;
  switch (ClassifyUpstreamPlugin(name)) {
    case UpstreamPlugin::kRemoved:
      errors.Invalid(path, GoQuote(name), InvalidInVersionDetail());
      break;
    case UpstreamPlugin::kInTree:
      errors.Invalid(path, GoQuote(name),
                     fmt::format("plugin {} is not available in this kubesched build", GoQuote(name)));
      break;
    case UpstreamPlugin::kUnknown:
      errors.Invalid(path, GoQuote(name), fmt::format("plugin {} does not exist", GoQuote(name)));
      break;
  }
}

// The file's own enabled lists: names, weights and duplicates, with the file's paths.
void ValidateCustomPlugins(ErrorList& errors, const std::string& path, const Plugins& custom,
                           const framework::Registry& registry) {
  for (const auto& point : kExtensionPoints) {
    const PluginSet& set = custom.*point.member;
    std::string enabled_path = api::field_path::Child(api::field_path::Child(path, point.name), "enabled");
    std::set<std::string, std::less<>> seen;
    for (size_t k = 0; k < set.enabled.size(); ++k) {
      const PluginRef& p = set.enabled[k];
      std::string item_path = api::field_path::Index(enabled_path, k);
      if (p.name.empty()) {
        errors.Required(api::field_path::Child(item_path, "name"));
        continue;
      }
      ValidateEnabledName(errors, item_path, p.name, registry);
      if (p.weight < 0) {
        errors.Invalid(api::field_path::Child(item_path, "weight"), std::to_string(p.weight),
                       "must be greater than or equal to 0");
      }
      // Upstream's runtime: `plugin "X" already registered as "FilterPlugin"`.
      if (!seen.insert(p.name).second) errors.Duplicate(item_path, GoQuote(p.name));
    }
  }
}

void ValidatePluginConfig(ErrorList& errors, const std::string& path, const Profile& profile,
                          const DecodedProfile& decoded, const framework::Registry& registry) {
  std::set<std::string, std::less<>> seen;
  for (size_t j = 0; j < profile.plugin_config.size(); ++j) {
    const std::string& name = profile.plugin_config[j].name;
    std::string item_path = api::field_path::Index(api::field_path::Child(path, "pluginConfig"), j);
    if (name.empty()) {
      errors.Required(api::field_path::Child(item_path, "name"));
      continue;
    }
    if (!seen.insert(name).second) errors.Duplicate(item_path, GoQuote(name));
    if (j < decoded.args_errors.size()) errors.Append(decoded.args_errors[j]);
    if (registry.Find(name) != nullptr) continue;
    // Args of a known upstream plugin that is not enabled (or not implemented) are unused, as
    // upstream ignores args of plugins it does not build; an unknown name is most likely a typo.
    switch (ClassifyUpstreamPlugin(name)) {
      case UpstreamPlugin::kRemoved:
        errors.Invalid(item_path, GoQuote(name), InvalidInVersionDetail());
        break;
      case UpstreamPlugin::kUnknown:
        errors.Invalid(item_path, GoQuote(name), fmt::format("plugin {} does not exist", GoQuote(name)));
        break;
      default:
        break;
    }
  }
}

// The plugins the runtime will run at one extension point as far as can be told without
// building them: the point's enabled list plus the multiPoint plugins upstream knows to implement
// it. `unknown_kind` is set when a multiPoint plugin whose extension points are unknown (not an
// upstream plugin) could also land there.
struct EffectivePlugins {
  std::vector<std::string> names;
  bool unknown_kind = false;
};

EffectivePlugins EffectiveAt(const Plugins& plugins, const PluginSet& point, bool (*implements)(std::string_view)) {
  EffectivePlugins out;
  for (const auto& p : point.enabled) out.names.push_back(p.name);
  if (point.IsDisabled("*")) return out;  // upstream skips multiPoint expansion entirely
  for (const auto& p : plugins.multi_point.enabled) {
    if (point.IsDisabled(p.name) || std::ranges::find(out.names, p.name) != out.names.end()) continue;
    if (implements(p.name)) {
      out.names.push_back(p.name);
    } else if (ClassifyUpstreamPlugin(p.name) == UpstreamPlugin::kUnknown) {
      out.unknown_kind = true;
    }
  }
  return out;
}

void ValidateProfileExtensionPoints(ErrorList& errors, const std::string& path, const Profile& profile) {
  std::string plugins_path = api::field_path::Child(path, "plugins");
  EffectivePlugins queue_sort = EffectiveAt(profile.plugins, profile.plugins.queue_sort, IsUpstreamQueueSortPlugin);
  if (queue_sort.names.size() > 1 || (queue_sort.names.empty() && !queue_sort.unknown_kind)) {
    errors.Add(api::field_path::Child(plugins_path, "queueSort"),
               fmt::format("only one queue sort plugin required for profile with scheduler name {}, but got {}{}",
                           GoQuote(profile.scheduler_name), queue_sort.names.size(),
                           queue_sort.names.empty() ? "" : fmt::format(" ({})", QuoteList(queue_sort.names))));
  }
  EffectivePlugins bind = EffectiveAt(profile.plugins, profile.plugins.bind, IsUpstreamBindPlugin);
  if (bind.names.empty() && !bind.unknown_kind) {
    errors.Add(api::field_path::Child(plugins_path, "bind"),
               fmt::format("at least one bind plugin is needed for profile with "
                           "scheduler name {}",
                           GoQuote(profile.scheduler_name)));
  }
}

std::string FirstQueueSort(const Profile& profile) {
  auto names = EffectiveAt(profile.plugins, profile.plugins.queue_sort, IsUpstreamQueueSortPlugin).names;
  return names.empty() ? std::string() : names.front();
}

// Upstream's validateCommonQueueSort: one queue is shared, so its sort must not depend on the
// profile. Compares the merged queueSort sets (as upstream) and the resulting plugin and args.
void ValidateCommonQueueSort(ErrorList& errors, const std::vector<Profile>& profiles) {
  const Profile& first = profiles[0];
  std::string sort = FirstQueueSort(first);
  for (size_t i = 1; i < profiles.size(); ++i) {
    const Profile& p = profiles[i];
    std::string path = api::field_path::Index("profiles", i);
    std::string p_sort = FirstQueueSort(p);
    if (p.plugins.queue_sort != first.plugins.queue_sort || p_sort != sort) {
      errors.Invalid(api::field_path::Child(api::field_path::Child(path, "plugins"), "queueSort"), GoQuote(p_sort),
                     "must be the same for all profiles");
      continue;
    }
    if (sort.empty() || p.ArgsFor(sort) == first.ArgsFor(sort)) continue;
    auto index = PluginConfigIndex(p, sort);
    std::string args_path =
        index ? api::field_path::Child(api::field_path::Index(api::field_path::Child(path, "pluginConfig"), *index),
                                       "args")
              : api::field_path::Child(path, "pluginConfig");
    errors.Invalid(args_path, p.ArgsFor(sort).Encode(), "queueSort must be the same for all profiles");
  }
}

// Upstream's validateExtenders (the extended resource name syntax is not checked).
void ValidateExtenders(ErrorList& errors, const std::vector<Extender>& extenders) {
  int binders = 0;
  std::set<std::string, std::less<>> managed;
  for (size_t i = 0; i < extenders.size(); ++i) {
    const Extender& e = extenders[i];
    std::string path = api::field_path::Index("extenders", i);
    if (!e.prioritize_verb.empty() && e.weight <= 0) {
      errors.Invalid(api::field_path::Child(path, "weight"), std::to_string(e.weight),
                     "must have a positive weight applied to it");
    }
    if (!e.bind_verb.empty()) ++binders;
    for (size_t j = 0; j < e.managed_resources.size(); ++j) {
      const std::string& name = e.managed_resources[j].name;
      if (!managed.insert(name).second) {
        errors.Invalid(
            api::field_path::Child(api::field_path::Index(api::field_path::Child(path, "managedResources"), j), "name"),
            GoQuote(name), "duplicate extender managed resource name");
      }
    }
  }
  if (binders > 1) {
    errors.Invalid("extenders", GoQuote(fmt::format("found {} extenders implementing bind", binders)),
                   "only one extender can implement bind");
  }
}

// component-base's ValidateLeaderElectionConfiguration and ValidateClientConnectionConfiguration.
void ValidateComponentBlocks(ErrorList& errors, const Configuration& cfg) {
  const LeaderElection& le = cfg.leader_election;
  if (le.leader_elect) {
    auto seconds = [](int64_t ns) { return GoQuote(util::FormatDuration(ns)); };
    if (le.lease_duration_ns <= 0) {
      errors.Invalid("leaderElection.leaseDuration", seconds(le.lease_duration_ns), "must be greater than zero");
    }
    if (le.renew_deadline_ns <= 0) {
      errors.Invalid("leaderElection.renewDeadline", seconds(le.renew_deadline_ns), "must be greater than zero");
    }
    if (le.retry_period_ns <= 0) {
      errors.Invalid("leaderElection.retryPeriod", seconds(le.retry_period_ns), "must be greater than zero");
    }
    if (le.lease_duration_ns <= le.renew_deadline_ns) {
      errors.Invalid("leaderElection.leaseDuration", seconds(le.renew_deadline_ns),
                     "LeaseDuration must be greater than RenewDeadline");
    }
    if (le.resource_lock.empty()) {
      errors.Invalid("leaderElection.resourceLock", GoQuote(le.resource_lock), "resourceLock is required");
    } else if (le.resource_lock != "leases") {
      errors.Unsupported("leaderElection.resourceLock", GoQuote(le.resource_lock), GoQuote("leases"));
    }
    if (le.resource_namespace.empty()) {
      errors.Invalid("leaderElection.resourceNamespace", GoQuote(le.resource_namespace),
                     "resourceNamespace is required");
    }
    if (le.resource_name.empty()) {
      errors.Invalid("leaderElection.resourceName", GoQuote(le.resource_name), "resourceName is required");
    }
  }
  if (cfg.client_connection.burst < 0) {
    errors.Invalid("clientConnection.burst", std::to_string(cfg.client_connection.burst), "must be non-negative");
  }
}

void Validate(ErrorList& errors, const Configuration& cfg, const std::vector<DecodedProfile>& decoded,
              const framework::Registry& registry) {
  ValidateComponentBlocks(errors, cfg);
  if (cfg.parallelism <= 0) {
    errors.Invalid("parallelism", std::to_string(cfg.parallelism), "should be an integer value greater than zero");
  }
  if (cfg.profiles.empty()) {
    errors.Required("profiles");  // unreachable after defaulting, kept as upstream
  } else {
    std::map<std::string, size_t, std::less<>> names;
    for (size_t i = 0; i < cfg.profiles.size(); ++i) {
      const Profile& p = cfg.profiles[i];
      std::string path = api::field_path::Index("profiles", i);
      if (p.scheduler_name.empty()) errors.Required(api::field_path::Child(path, "schedulerName"));
      ValidatePercentage(errors, api::field_path::Child(path, "percentageOfNodesToScore"),
                         p.percentage_of_nodes_to_score);
      ValidateCustomPlugins(errors, api::field_path::Child(path, "plugins"), decoded[i].custom, registry);
      ValidatePluginConfig(errors, path, p, decoded[i], registry);
      ValidateProfileExtensionPoints(errors, path, p);
      if (!names.emplace(p.scheduler_name, i).second) {
        errors.Duplicate(api::field_path::Child(path, "schedulerName"), GoQuote(p.scheduler_name));
      }
    }
    ValidateCommonQueueSort(errors, cfg.profiles);
  }
  ValidatePercentage(errors, "percentageOfNodesToScore", cfg.percentage_of_nodes_to_score);
  if (cfg.pod_initial_backoff_seconds <= 0) {
    errors.Invalid("podInitialBackoffSeconds", std::to_string(cfg.pod_initial_backoff_seconds),
                   "must be greater than 0");
  }
  if (cfg.pod_max_backoff_seconds < cfg.pod_initial_backoff_seconds) {
    errors.Invalid("podMaxBackoffSeconds", std::to_string(cfg.pod_max_backoff_seconds),
                   "must be greater than or equal to PodInitialBackoffSeconds");
  }
  ValidateExtenders(errors, cfg.extenders);
}

// upstream's buildExtenders: resources an extender manages with ignoredByScheduler are left to it,
// so every profile's NodeResourcesFit ignores them (replacing the ignoredResources its args give,
// as upstream does). Upstream fails a profile without NodeResourcesFit args; they are added here.
void ApplyExtenderIgnoredResources(Configuration& cfg) {
  std::vector<std::string_view> ignored;
  for (const Extender& e : cfg.extenders) {
    for (const ExtenderManagedResource& r : e.managed_resources) {
      if (r.ignored_by_scheduler) ignored.push_back(r.name);
    }
  }
  if (ignored.empty()) return;
  for (Profile& p : cfg.profiles) {
    auto it = std::find_if(p.plugin_config.begin(), p.plugin_config.end(),
                           [](const PluginConfig& c) { return c.name == "NodeResourcesFit"; });
    if (it == p.plugin_config.end()) it = p.plugin_config.insert(p.plugin_config.end(), {"NodeResourcesFit", {}});
    api::json::Document args;
    if (it->args.View().IsObject()) {
      args.CopyFrom(*framework::ValueOf(it->args.View()), args.GetAllocator());
    } else {
      args.SetObject();
    }
    api::json::Value list(rapidjson::kArrayType);
    for (std::string_view name : ignored)
      list.PushBack(api::json::MakeString(name, args.GetAllocator()), args.GetAllocator());
    api::json::Set(args, "ignoredResources", std::move(list), args.GetAllocator());
    SortMembers(args, args.GetAllocator());
    it->args = framework::AdoptArgs(std::move(args));
  }
}

}  // namespace

std::expected<Configuration, std::string> LoadConfigFromString(const std::string& text, const std::string& source_name,
                                                               const framework::Registry& registry) {
  ErrorList errors;
  api::json::Document root;
  if (auto parsed = api::yaml::Parse(text, root); !parsed) {
    const api::yaml::ParseError& e = parsed.error();
    errors.Add("", e.column > 0 ? fmt::format("yaml: line {}, column {}: {}", e.line, e.column, e.message)
                                : fmt::format("yaml: line {}: {}", e.line, e.message));
    return std::unexpected(errors.Join(source_name));
  }
  RemoveDuplicateFields(root, "", errors);
  if (root.IsNull()) root.SetObject();  // an empty file: report the missing apiVersion/kind
  const ArgsView doc = framework::ViewOf(root);

  Configuration cfg;
  std::vector<DecodedProfile> decoded;
  Decode(doc, errors, registry, cfg, decoded);
  if (!errors.empty()) return std::unexpected(errors.Join(source_name));  // as upstream: decode first

  SetDefaults(cfg, decoded, registry);
  Validate(errors, cfg, decoded, registry);
  if (!errors.empty()) return std::unexpected(errors.Join(source_name));
  ApplyExtenderIgnoredResources(cfg);
  return cfg;
}

std::expected<Configuration, std::string> LoadConfigFile(const std::string& path, const framework::Registry& registry) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return std::unexpected(fmt::format("{}: is a directory", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::unexpected(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  return LoadConfigFromString(text.str(), path, registry);
}

Configuration DefaultConfiguration(const framework::Registry& registry) {
  Configuration cfg;
  std::vector<DecodedProfile> decoded;
  SetDefaults(cfg, decoded, registry);
  return cfg;
}

}  // namespace kubesched::config
