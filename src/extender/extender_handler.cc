#include "extender/extender_handler.h"

#include <exception>
#include <vector>

#include <fmt/format.h>

#include "server/media_type.h"
#include "util/log.h"

namespace kubesched::extender {

using server::BaseMediaType;
using server::HttpRequest;
using server::HttpResponse;
using server::TextResponse;
namespace {

// One line of text, as Go's http.Error writes it.
HttpResponse Text(int status, std::string body) {
  if (!body.ends_with('\n')) body += '\n';
  return TextResponse(status, std::move(body));
}

HttpResponse Json(std::string body) {
  HttpResponse r;
  r.body = std::move(body);
  return r;
}

HttpResponse TextBadRequest(std::string_view reason) { return Text(400, fmt::format("bad request: {}", reason)); }

// The verb a path names: its last segment, so that a urlPrefix with a path
// (http://host:port/scheduler) reaches the same verbs.
std::string_view LastSegment(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

constexpr std::string_view kPodRequired = "Pod: Required value: the pod to evaluate";

// Filter's and prioritize's arguments, with what they cannot do without.
// The cache's node when the request carries the very version it has (same uid and
// resourceVersion): decoding 1,000 Node objects is most of a request that carries them, and they
// rarely change between requests.
extender::NodeReuse ReuseFrom(const cache::Cache& cache) {
  return [&cache](std::string_view name, std::string_view uid,
                  std::string_view resource_version) -> std::shared_ptr<const api::Node> {
    std::shared_ptr<const api::Node> known = cache.GetNode(name);
    if (known && known->json && known->metadata.uid == uid && known->metadata.resource_version == resource_version) {
      return known;
    }
    return nullptr;
  };
}

std::expected<ExtenderArgs, std::string> DecodeArgs(std::string_view body, const extender::NodeReuse& reuse = {}) {
  auto args = extender::DecodeExtenderArgs(body, reuse);
  if (!args) return args;
  if (!args->pod) return std::unexpected(std::string(kPodRequired));
  if (!args->nodes && !args->node_names) {
    return std::unexpected("Nodes, NodeNames: Required value: the nodes to evaluate (one of them)");
  }
  return args;
}

}  // namespace

ExtenderHandler::ExtenderHandler(scheduler::Scheduler& scheduler, ExtenderHandlerOptions options)
    : scheduler_(scheduler), options_(std::move(options)) {}

HttpResponse ExtenderHandler::Handle(const HttpRequest& request) {
  // A decoder or an evaluation that throws (out of memory on a huge request) must not take the
  // server down: the request fails alone.
  try {
    return Route(request);
  } catch (const std::exception& e) {
    return Refused(500, e.what());
  } catch (...) {
    return Refused(500, "unexpected exception");
  }
}

HttpResponse ExtenderHandler::Refused(int status, std::string_view detail) const {
  switch (status) {
    case 404:
      return Text(404, "404 page not found");  // Go's http.NotFound, as a Go extender answers
    case 405:
      return Text(405, "Method Not Allowed");
    case 413:
      // Past our limit, or past the HTTP layer's own for a body not sent as JSON (form-encoded
      // bodies, curl's default, are limited to a few KiB): then the content type is the mistake.
      if (!detail.empty() && BaseMediaType(detail) != "application/json") {
        return TextBadRequest(
            fmt::format("the request body is sent as {}; extender requests are application/json (with curl: -H "
                        "'Content-Type: application/json')",
                        detail));
      }
      return TextBadRequest(
          fmt::format("the request body is too large (at most {} bytes of application/json)", options_.max_body_bytes));
    case 500:
      return Text(500, fmt::format("Internal Server Error: {}", detail));
    default:
      return TextBadRequest(detail.empty() ? std::string_view("malformed HTTP request") : detail);
  }
}

HttpResponse ExtenderHandler::Route(const HttpRequest& request) {
  const std::string_view verb = LastSegment(request.path);
  if (verb == "healthz") {
    if (request.method != "GET" && request.method != "HEAD") return Refused(405, "");
    return Text(200, "ok");
  }
  const bool known = verb == "filter" || verb == "prioritize" || verb == "preempt" || verb == "bind";
  if (!known) return Refused(404, "");
  if (request.method != "POST") return Refused(405, "");
  // The HTTP layer lets one byte past the limit through so that the answer is ours.
  if (request.body.size() > options_.max_body_bytes) return Refused(413, "");
  KS_LOG_V(5).InfoS("Extender request", "verb", verb, "bytes", request.body.size());
  if (verb == "filter") return Filter(request.body);
  if (verb == "prioritize") return Prioritize(request.body);
  if (verb == "preempt") return Preempt(request.body);
  return Bind(request.body);
}

std::vector<std::string> ExtenderHandler::RequestedNodes(const ExtenderArgs& args) {
  if (!args.nodes) return *args.node_names;
  std::vector<std::string> names;
  names.reserve(args.nodes->size());
  for (const auto& node : *args.nodes) names.push_back(node->metadata.name);
  if (options_.learn_nodes) scheduler_.LearnNodes(*args.nodes);
  return names;
}

HttpResponse ExtenderHandler::Filter(std::string_view body) {
  auto args = DecodeArgs(body, ReuseFrom(scheduler_.cache()));
  if (!args) return TextBadRequest(args.error());
  const std::vector<std::string> names = RequestedNodes(*args);
  ExtenderFilterResult result;
  auto verdict = scheduler_.ExtenderFilter(options_.profile, *args->pod, names);
  if (!verdict) {
    result.error = verdict.error();
    return Json(extender::EncodeFilterResult(result));
  }
  if (args->nodes) {
    // The passed nodes' objects as the request had them: `passed` is a subsequence of `names`.
    result.nodes.emplace();
    size_t next = 0;
    for (size_t i = 0; i < names.size() && next < verdict->passed.size(); ++i) {
      if (names[i] != verdict->passed[next]) continue;
      result.nodes->push_back((*args->nodes)[i]);
      ++next;
    }
  } else {
    result.node_names = std::move(verdict->passed);
  }
  result.failed_nodes = std::move(verdict->failed);
  result.failed_and_unresolvable_nodes = std::move(verdict->failed_and_unresolvable);
  return Json(extender::EncodeFilterResult(result));
}

HttpResponse ExtenderHandler::Prioritize(std::string_view body) {
  auto args = DecodeArgs(body, ReuseFrom(scheduler_.cache()));
  if (!args) return TextBadRequest(args.error());
  const std::vector<std::string> names = RequestedNodes(*args);
  auto priorities = scheduler_.ExtenderPrioritize(options_.profile, *args->pod, names);
  // HostPriorityList has no Error field: upstream's client takes any other status as the error.
  if (!priorities) return Refused(500, priorities.error());
  return Json(extender::EncodeHostPriorityList(*priorities));
}

HttpResponse ExtenderHandler::Preempt(std::string_view body) {
  auto args = extender::DecodePreemptionArgs(body);
  if (!args) return TextBadRequest(args.error());
  if (!args->pod) return TextBadRequest(kPodRequired);
  // The candidates the scheduler found; kubesched chooses its own victims on each of them.
  std::vector<std::string> names;
  if (args->node_name_to_meta_victims) {
    for (const auto& [node, victims] : *args->node_name_to_meta_victims) names.push_back(node);
  }
  if (args->node_name_to_victims) {
    for (const auto& [node, victims] : *args->node_name_to_victims) {
      if (!args->node_name_to_meta_victims || !args->node_name_to_meta_victims->contains(node)) names.push_back(node);
    }
  }
  auto chosen = scheduler_.ExtenderPreempt(options_.profile, *args->pod, names);
  if (!chosen) return Refused(500, chosen.error());
  ExtenderPreemptionResult result;
  result.node_name_to_meta_victims.emplace();
  for (const auto& [node, victims] : *chosen) {
    extender::MetaVictims meta;
    meta.num_pdb_violations = victims.num_pdb_violations;
    meta.pod_uids.reserve(victims.pods.size());
    for (const auto& pod : victims.pods) meta.pod_uids.push_back(pod->pod().metadata.uid);
    result.node_name_to_meta_victims->emplace(node, std::move(meta));
  }
  return Json(extender::EncodePreemptionResult(result));
}

HttpResponse ExtenderHandler::Bind(std::string_view body) {
  auto args = extender::DecodeBindingArgs(body);
  if (!args) return TextBadRequest(args.error());
  if (args->pod_name.empty()) return TextBadRequest("PodName: Required value");
  if (args->node.empty()) return TextBadRequest("Node: Required value");
  ExtenderBindingResult result;
  if (!options_.bind) {
    result.error = std::string(kNoClusterToBind);
  } else if (auto bound = options_.bind(*args); !bound) {
    result.error = bound.error();
  }
  return Json(extender::EncodeBindingResult(result));
}

}  // namespace kubesched::extender
