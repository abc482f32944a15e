#pragma once
// The scheduler-extender protocol served to an upstream kube-scheduler (`kubesched extender`):
// POST <prefix>/filter, /prioritize, /preempt and /bind with upstream's extender/v1 JSON
// (src/extender/wire.h), answered by a kubesched Scheduler's profile (scheduler/extender_verbs.h);
// GET <prefix>/healthz. A request that cannot be read (malformed JSON, a wrong type, no Pod, a
// body over the limit) is a 400 with the reason as text; an evaluation that fails is the result's
// Error (filter, bind) or a 500 with the reason (prioritize and preempt have no Error field).

#include <cstddef>
#include <expected>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "extender/wire.h"
#include "scheduler/scheduler.h"
#include "server/http_types.h"

namespace kubesched::extender {

//! Room for 5,000 full Node objects (a few KiB each) in one filter request.
inline constexpr size_t kExtenderMaxBodyBytes = 64 * 1024 * 1024;

//! The bind verb's error without a cluster to bind in.
inline constexpr std::string_view kNoClusterToBind =
    "kubesched extender has no cluster to bind in: start it with --kubeconfig";

struct ExtenderHandlerOptions {
  //! The profile (schedulerName) whose plugins answer.
  std::string profile = "default-scheduler";
  //! Whether node objects a request carries go into the scheduler's view (no watch feeds it);
  //! otherwise the view's own version of each node is evaluated.
  bool learn_nodes = false;
  //! Binds the pod (pods/binding); unset: every bind fails with kNoClusterToBind.
  std::function<std::expected<void, std::string>(const ExtenderBindingArgs&)> bind;
  size_t max_body_bytes = kExtenderMaxBodyBytes;
};

class ExtenderHandler final : public server::Handler {
 public:
  //! `scheduler` must outlive the handler.
  ExtenderHandler(scheduler::Scheduler& scheduler, ExtenderHandlerOptions options);

  //! Never throws: whatever the request, the answer is a response. Thread-safe (the scheduler
  //! serializes the evaluations).
  server::HttpResponse Handle(const server::HttpRequest& request) override;
  //! 413 (a body past the HTTP layer's limit) becomes a 400 as for any unreadable request.
  server::HttpResponse Refused(int status, std::string_view detail) const override;
  size_t MaxBodyBytes() const override { return options_.max_body_bytes; }
  //! Nothing to end: no response is streamed.
  void Stop() override {}

 private:
  server::HttpResponse Route(const server::HttpRequest& request);
  //! The names of the nodes a filter or prioritize request carries; node objects go into the
  //! view first when options_.learn_nodes.
  std::vector<std::string> RequestedNodes(const ExtenderArgs& args);
  server::HttpResponse Filter(std::string_view body);
  server::HttpResponse Prioritize(std::string_view body);
  server::HttpResponse Preempt(std::string_view body);
  server::HttpResponse Bind(std::string_view body);

  scheduler::Scheduler& scheduler_;
  ExtenderHandlerOptions options_;
};

}  // namespace kubesched::extender
