#pragma once
// kube-scheduler's secure-port endpoints: /healthz, /livez and /readyz with upstream's check
// output (k8s.io/apiserver/pkg/server/healthz), and /metrics in Prometheus' text format. The
// checks and the metrics are functions the owner supplies (kubesched run: cache sync, leader
// election, the scheduler's metrics), so the handler is tested without a scheduler.

#include <expected>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/http_types.h"

namespace kubesched::server {

//! One named health check: succeeds, or fails saying why.
struct NamedCheck {
  std::string name;  //!< as upstream names it: "ping", "leaderElection", "sched-handler-sync"
  std::function<std::expected<void, std::string>()> check;
};

struct HealthzOptions {
  //! /healthz and /livez run "ping" then these.
  std::vector<NamedCheck> healthz;
  //! /readyz runs "ping" then these.
  std::vector<NamedCheck> readyz;
  //! The body of /metrics; empty: /metrics is not served (404).
  std::function<std::string()> metrics;
  //! Whether a request may be served (kubesched run: delegated authentication and authorization,
  //! client/delegated_auth.h): 0, or the refusal's status (401, 403, 500) and message, answered
  //! as upstream's filters answer it (a metav1.Status). Unset: every request is served.
  std::function<std::pair<int, std::string>(const HttpRequest&)> authorize;
};

//! Upstream's Prometheus text exposition content type.
inline constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

class HealthzHandler final : public Handler {
 public:
  explicit HealthzHandler(HealthzOptions options);

  //! GET /healthz, /livez, /readyz: 200 "ok" when every check passes, else 500 listing each
  //! check ("[+]ping ok", "[-]sched-handler-sync failed: reason withheld") and "<path> check
  //! failed"; ?verbose lists them on success too, ?exclude=<name> skips one. /<path>/<check>
  //! runs that check alone. GET /metrics: the metrics. Anything else: 404. Thread-safe.
  HttpResponse Handle(const HttpRequest& request) override;
  HttpResponse Refused(int status, std::string_view detail) const override;
  size_t MaxBodyBytes() const override { return 1024 * 1024; }
  //! Nothing to end: no response is streamed.
  void Stop() override {}

 private:
  HttpResponse RunChecks(std::string_view name, const std::vector<NamedCheck>& checks,
                         const HttpRequest& request) const;

  std::vector<NamedCheck> healthz_;
  std::vector<NamedCheck> readyz_;
  std::function<std::string()> metrics_;
  std::function<std::pair<int, std::string>(const HttpRequest&)> authorize_;
};

}  // namespace kubesched::server
