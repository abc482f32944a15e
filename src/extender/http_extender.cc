#include "extender/http_extender.h"

#include <algorithm>
#include <chrono>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "api/manifest_sources.h"
#include "extender/wire.h"
#include "util/base64.h"

namespace kubesched::extender {
namespace {

// PEM from a tlsConfig's base64 `*Data` field, else from the file its `*File` field names (the
// data wins, as in client-go's dataFromSliceOrFile); empty when neither is set.
std::expected<std::string, std::string> Pem(const std::string& data, std::string_view data_field,
                                            const std::string& file, std::string_view file_field) {
  if (!data.empty()) {
    std::optional<std::string> pem = util::Base64Decode(data);
    if (!pem) return std::unexpected(fmt::format("tlsConfig.{}: invalid base64", data_field));
    return std::move(*pem);
  }
  std::string pem;
  if (!file.empty()) {
    // ReadFile takes "-" for standard input; here it is a file of that name, as Go opens it.
    const std::string path = file == "-" ? "./-" : file;
    if (auto error = api::ReadFile(path, pem)) {
      return std::unexpected(fmt::format("tlsConfig.{}: {}", file_field, *error));
    }
  }
  return pem;
}

// upstream's makeTransport over restclient.TLSConfigFor.
std::expected<client::TlsConfig, std::string> TlsFor(const config::Extender& config) {
  client::TlsConfig tls;
  if (config.tls_config) {
    const config::ExtenderTlsConfig& t = *config.tls_config;
    tls.insecure = t.insecure;
    tls.server_name = t.server_name;
    auto ca = Pem(t.ca_data, "caData", t.ca_file, "caFile");
    if (!ca) return std::unexpected(ca.error());
    auto cert = Pem(t.cert_data, "certData", t.cert_file, "certFile");
    if (!cert) return std::unexpected(cert.error());
    auto key = Pem(t.key_data, "keyData", t.key_file, "keyFile");
    if (!key) return std::unexpected(key.error());
    tls.ca_pem = std::move(*ca);
    tls.client_cert_pem = std::move(*cert);
    tls.client_key_pem = std::move(*key);
    if (tls.insecure && !tls.ca_pem.empty()) {
      return std::unexpected("specifying a root certificates file with the insecure flag is not allowed");
    }
  }
  // An extender served over HTTPS with no CA to check it against is not verified.
  if (config.enable_https && tls.ca_pem.empty()) tls.insecure = true;
  return tls;
}

bool RequestsAny(const std::vector<api::Container>& containers, const std::set<std::string, std::less<>>& names) {
  for (const api::Container& c : containers) {
    for (const auto& [name, quantity] : c.resources.requests) {
      if (names.contains(name)) return true;
    }
    for (const auto& [name, quantity] : c.resources.limits) {
      if (names.contains(name)) return true;
    }
  }
  return false;
}

// A shared_ptr that does not own `object`, for the wire types during one call: the caller keeps
// the object alive until the call returns.
template <typename T>
std::shared_ptr<const T> Borrow(const T& object) {
  return std::shared_ptr<const T>(std::shared_ptr<const T>(), &object);
}

// The arguments of filter and prioritize: node names for an extender with its own node cache,
// else the nodes themselves.
ExtenderArgs ArgsFor(const api::Pod& pod, std::span<const framework::NodeInfo* const> nodes, bool node_cache_capable) {
  ExtenderArgs args{.pod = Borrow(pod)};
  if (node_cache_capable) {
    auto& names = args.node_names.emplace();
    names.reserve(nodes.size());
    for (const framework::NodeInfo* n : nodes) names.push_back(n->name());
  } else {
    auto& list = args.nodes.emplace();
    list.reserve(nodes.size());
    for (const framework::NodeInfo* n : nodes) list.push_back(n->node_ptr());
  }
  return args;
}

}  // namespace

HttpExtender::HttpExtender(config::Extender config, std::unique_ptr<client::RestClient> client)
    : config_(std::move(config)), client_(std::move(client)), managed_resources_([this] {
        std::set<std::string, std::less<>> names;
        for (const config::ExtenderManagedResource& r : config_.managed_resources) names.insert(r.name);
        return names;
      }()) {}

std::expected<std::unique_ptr<HttpExtender>, std::string> HttpExtender::Create(const config::Extender& config) {
  auto tls = TlsFor(config);
  if (!tls) return std::unexpected(tls.error());
  const int64_t timeout_ns = config.http_timeout_ns > 0 ? config.http_timeout_ns : kDefaultExtenderTimeoutNs;
  client::RestConfig rest{
      .server = config.url_prefix,
      .tls = std::move(*tls),
      .qps = 0,  // upstream's extender client has no rate limit
      // Rounded up: a timeout below a millisecond would otherwise become RestClient's default.
      .timeout = std::chrono::ceil<std::chrono::milliseconds>(std::chrono::nanoseconds(timeout_ns)),
  };
  auto client = client::RestClient::Create(rest);
  if (!client) return std::unexpected(client.error());
  return std::unique_ptr<HttpExtender>(new HttpExtender(config, std::move(*client)));
}

bool HttpExtender::IsInterested(const api::Pod& pod) const {
  if (managed_resources_.empty()) return true;
  return RequestsAny(pod.spec.containers, managed_resources_) ||
         RequestsAny(pod.spec.init_containers, managed_resources_);
}

std::expected<std::string, std::string> HttpExtender::Send(std::string_view verb, std::string_view body) const {
  std::string_view prefix = config_.url_prefix;
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  auto response = client_->Do("POST", fmt::format("/{}", verb), body, "application/json");
  if (!response) return std::unexpected(response.error());
  if (response->status != 200) {
    return std::unexpected(
        fmt::format("failed {} with extender at URL {}/{}, code {}", verb, prefix, verb, response->status));
  }
  return std::move(response->body);
}

std::expected<framework::ExtenderFilterResult, std::string> HttpExtender::Filter(
    const api::Pod& pod, std::span<const framework::NodeInfo* const> nodes) {
  if (config_.filter_verb.empty()) {
    framework::ExtenderFilterResult all;
    all.feasible.assign(nodes.begin(), nodes.end());
    return all;
  }
  auto body = Send(config_.filter_verb, EncodeExtenderArgs(ArgsFor(pod, nodes, config_.node_cache_capable)));
  if (!body) return std::unexpected(body.error());
  auto result = DecodeFilterResult(*body);
  if (!result)
    return std::unexpected(fmt::format("extender {}: {} answer: {}", Name(), config_.filter_verb, result.error()));
  if (!result->error.empty()) return std::unexpected(std::move(result->error));

  // The extender names a subset of the nodes it was given: by name in NodeNames when it keeps a
  // node cache (and answered with them), else by its Nodes' names.
  std::vector<std::string_view> names;
  if (config_.node_cache_capable && result->node_names) {
    names.assign(result->node_names->begin(), result->node_names->end());
  } else if (result->nodes) {
    names.reserve(result->nodes->size());
    for (const NodePtr& n : *result->nodes) names.push_back(n->metadata.name);
  }
  std::unordered_map<std::string_view, const framework::NodeInfo*> given;
  given.reserve(nodes.size());
  for (const framework::NodeInfo* n : nodes) given.emplace(n->name(), n);
  framework::ExtenderFilterResult out;
  out.feasible.reserve(names.size());
  for (std::string_view name : names) {
    auto it = given.find(name);
    if (it == given.end()) {
      return std::unexpected(fmt::format(
          "extender \"{}\" claims a filtered node \"{}\" which is not found in the input node list", Name(), name));
    }
    out.feasible.push_back(it->second);
  }
  if (result->failed_nodes) out.failed = std::move(*result->failed_nodes);
  if (result->failed_and_unresolvable_nodes)
    out.failed_and_unresolvable = std::move(*result->failed_and_unresolvable_nodes);
  return out;
}

std::expected<framework::ExtenderPrioritizeResult, std::string> HttpExtender::Prioritize(
    const api::Pod& pod, std::span<const framework::NodeInfo* const> nodes) {
  if (config_.prioritize_verb.empty()) {
    framework::ExtenderPrioritizeResult out;
    out.priorities.reserve(nodes.size());
    for (const framework::NodeInfo* n : nodes) out.priorities.push_back({.host = n->name(), .score = 0});
    return out;
  }
  auto body = Send(config_.prioritize_verb, EncodeExtenderArgs(ArgsFor(pod, nodes, config_.node_cache_capable)));
  if (!body) return std::unexpected(body.error());
  auto list = DecodeHostPriorityList(*body);
  if (!list) {
    return std::unexpected(fmt::format("extender {}: {} answer: {}", Name(), config_.prioritize_verb, list.error()));
  }
  return framework::ExtenderPrioritizeResult{.priorities = std::move(*list), .weight = config_.weight};
}

std::expected<framework::NodeToVictims, std::string> HttpExtender::ProcessPreemption(
    const api::Pod& pod, const framework::NodeToVictims& candidates, const framework::NodeInfoLister& nodes) {
  if (!SupportsPreemption()) {
    return std::unexpected(
        fmt::format("preempt verb is not defined for extender {} but run into ProcessPreemption", Name()));
  }
  ExtenderPreemptionArgs args{.pod = Borrow(pod)};
  if (config_.node_cache_capable) {
    auto& meta = args.node_name_to_meta_victims.emplace();
    for (const auto& [node, victims] : candidates) {
      MetaVictims& m = meta[node];
      m.num_pdb_violations = victims.num_pdb_violations;
      m.pod_uids.reserve(victims.pods.size());
      for (const framework::PodInfoPtr& p : victims.pods) m.pod_uids.push_back(p->pod().metadata.uid);
    }
  } else {
    auto& full = args.node_name_to_victims.emplace();
    for (const auto& [node, victims] : candidates) {
      Victims& v = full[node];
      v.num_pdb_violations = victims.num_pdb_violations;
      v.pods.reserve(victims.pods.size());
      for (const framework::PodInfoPtr& p : victims.pods) v.pods.push_back(p->pod_ptr());
    }
  }
  auto body = Send(config_.preempt_verb, EncodePreemptionArgs(args));
  if (!body) return std::unexpected(body.error());
  auto result = DecodePreemptionResult(*body);
  if (!result) {
    return std::unexpected(fmt::format("extender {}: {} answer: {}", Name(), config_.preempt_verb, result.error()));
  }

  // The extender always answers with UIDs: they are resolved among the pods the scheduler's
  // snapshot has on each node, so an extender whose cache disagrees is an error.
  framework::NodeToVictims out;
  if (!result->node_name_to_meta_victims) return out;
  for (const auto& [node, meta] : *result->node_name_to_meta_victims) {
    const framework::NodeInfo* info = nodes.Get(node);
    if (info == nullptr) return std::unexpected(fmt::format("nodeinfo not found for node name \"{}\"", node));
    framework::NodeVictims& victims = out[node];
    victims.num_pdb_violations = meta.num_pdb_violations;
    victims.pods.reserve(meta.pod_uids.size());
    for (const std::string& uid : meta.pod_uids) {
      const auto& pods = info->pods();
      auto it = std::find_if(pods.begin(), pods.end(),
                             [&](const framework::PodInfoPtr& p) { return p->pod().metadata.uid == uid; });
      if (it == pods.end()) {
        return std::unexpected(fmt::format(
            "extender: {} claims to preempt pod (UID: {}) on node: {}, but the pod is not found on that node", Name(),
            uid, node));
      }
      victims.pods.push_back(*it);
    }
  }
  return out;
}

std::expected<void, std::string> HttpExtender::Bind(const api::Pod& pod, const std::string& node_name) {
  if (!IsBinder()) return std::unexpected("unexpected empty bindVerb in extender");
  const ExtenderBindingArgs args{
      .pod_name = pod.metadata.name,
      .pod_namespace = pod.metadata.namespace_,
      .pod_uid = pod.metadata.uid,
      .node = node_name,
  };
  auto body = Send(config_.bind_verb, EncodeBindingArgs(args));
  if (!body) return std::unexpected(body.error());
  auto result = DecodeBindingResult(*body);
  if (!result)
    return std::unexpected(fmt::format("extender {}: {} answer: {}", Name(), config_.bind_verb, result.error()));
  if (!result->error.empty()) return std::unexpected(std::move(result->error));
  return {};
}

std::expected<std::vector<std::shared_ptr<framework::Extender>>, std::string> BuildExtenders(
    const std::vector<config::Extender>& configs) {
  std::vector<std::shared_ptr<framework::Extender>> extenders;
  std::vector<std::shared_ptr<framework::Extender>> ignorable;
  for (size_t i = 0; i < configs.size(); ++i) {
    auto extender = HttpExtender::Create(configs[i]);
    if (!extender) return std::unexpected(fmt::format("extenders[{}]: {}", i, extender.error()));
    (configs[i].ignorable ? ignorable : extenders).push_back(std::move(*extender));
  }
  // Ignorable extenders go to the tail, as upstream places them.
  for (auto& e : ignorable) extenders.push_back(std::move(e));
  return extenders;
}

}  // namespace kubesched::extender
