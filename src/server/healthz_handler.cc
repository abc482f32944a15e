#include "server/healthz_handler.h"

#include <algorithm>

#include <fmt/format.h>

#include "server/status.h"

namespace kubesched::server {
namespace {

HttpResponse Text(int status, std::string body) {
  HttpResponse r = TextResponse(status, std::move(body));
  // As upstream's healthz handlers: a probe must never see a cached answer.
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Cache-Control", "no-cache, private");
  return r;
}

std::vector<NamedCheck> WithPing(std::vector<NamedCheck> checks) {
  checks.insert(checks.begin(), NamedCheck{"ping", [] { return std::expected<void, std::string>(); }});
  return checks;
}

}  // namespace

HealthzHandler::HealthzHandler(HealthzOptions options)
    : healthz_(WithPing(std::move(options.healthz))),
      readyz_(WithPing(std::move(options.readyz))),
      metrics_(std::move(options.metrics)),
      authorize_(std::move(options.authorize)) {}

HttpResponse HealthzHandler::Handle(const HttpRequest& request) {
  // Authentication and authorization come first, as upstream's filters wrap every handler.
  if (authorize_) {
    auto [status, message] = authorize_(request);
    if (status != 0) {
      ApiError e;
      e.code = status;
      e.reason = status == 401 ? "Unauthorized" : status == 403 ? "Forbidden" : "InternalError";
      e.message = std::move(message);
      HttpResponse r;
      r.status = status;
      r.body = EncodeStatus(e);
      return r;
    }
  }
  if (request.method != "GET" && request.method != "HEAD") return Refused(405, "");
  std::string_view path = request.path;
  if (path == "/metrics" && metrics_) {
    HttpResponse r;
    r.content_type = std::string(kMetricsContentType);
    r.body = metrics_();
    return r;
  }
  for (auto [endpoint, checks] :
       {std::pair{std::string_view("healthz"), &healthz_}, std::pair{std::string_view("livez"), &healthz_},
        std::pair{std::string_view("readyz"), &readyz_}}) {
    if (!path.starts_with("/") || !path.substr(1).starts_with(endpoint)) continue;
    std::string_view rest = path.substr(1 + endpoint.size());
    if (rest.empty() || rest == "/") return RunChecks(endpoint, *checks, request);
    if (!rest.starts_with("/")) continue;
    // /readyz/<check>: that check alone, as upstream installs one path per check.
    rest.remove_prefix(1);
    auto it = std::ranges::find_if(*checks, [&](const NamedCheck& c) { return c.name == rest; });
    if (it == checks->end()) break;
    auto result = it->check();
    if (result) return Text(200, "ok");
    return Text(500, fmt::format("internal server error: {}\n", result.error()));
  }
  return Refused(404, "");
}

HttpResponse HealthzHandler::RunChecks(std::string_view name, const std::vector<NamedCheck>& checks,
                                       const HttpRequest& request) const {
  std::vector<std::string> excluded;
  for (auto [it, end] = request.query.equal_range("exclude"); it != end; ++it) excluded.push_back(it->second);
  std::string lines;
  bool failed = false;
  for (const NamedCheck& c : checks) {
    if (std::ranges::find(excluded, c.name) != excluded.end()) {
      lines += fmt::format("[+]{} excluded: ok\n", c.name);
      continue;
    }
    auto result = c.check();
    if (result) {
      lines += fmt::format("[+]{} ok\n", c.name);
    } else {
      // Upstream withholds the reason from the response (it goes to the log) and so do we.
      lines += fmt::format("[-]{} failed: reason withheld\n", c.name);
      failed = true;
    }
  }
  if (failed) return Text(500, lines + fmt::format("{} check failed\n", name));
  if (!request.HasQuery("verbose")) return Text(200, "ok");
  return Text(200, lines + fmt::format("{} check passed\n", name));
}

HttpResponse HealthzHandler::Refused(int status, std::string_view detail) const {
  switch (status) {
    case 404:
      return Text(404, "404 page not found\n");  // Go's http.NotFound
    case 405:
      return Text(405, "Method Not Allowed\n");
    case 413:
      return Text(413, "Request Entity Too Large\n");
    case 500:
      return Text(500, fmt::format("Internal Server Error: {}\n", detail));
    default:
      return Text(status, "Bad Request\n");
  }
}

}  // namespace kubesched::server
