#pragma once
// The scheduler's client of an HTTP extender (upstream's HTTPExtender, pkg/scheduler/extender.go):
// each verb is a JSON POST to `<urlPrefix without trailing slashes>/<verb>` in the wire format of
// extender/wire.h, over client::RestClient (HTTP or HTTPS with the extender's tlsConfig, no
// client-side rate limit, httpTimeout per request, 5 s when unset). A transport failure, an
// answer other than 200, an undecodable body or an Error in the result is the call's error.

#include <expected>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "client/rest_client.h"
#include "config/types.h"
#include "framework/extender.h"

namespace kubesched::extender {

//! upstream's DefaultExtenderTimeout: the httpTimeout of an extender that sets none.
inline constexpr int64_t kDefaultExtenderTimeoutNs = 5'000'000'000;

class HttpExtender final : public framework::Extender {
 public:
  //! Reads the TLS material (files, or base64 *Data) and checks the URL; connects to nothing
  //! yet. enableHTTPS without a CA skips verification, as upstream's makeTransport.
  static std::expected<std::unique_ptr<HttpExtender>, std::string> Create(const config::Extender& config);

  const std::string& Name() const override { return config_.url_prefix; }
  bool IsIgnorable() const override { return config_.ignorable; }
  bool IsBinder() const override { return !config_.bind_verb.empty(); }
  bool SupportsPreemption() const override { return !config_.preempt_verb.empty(); }
  bool IsInterested(const api::Pod& pod) const override;

  //! Sends node names (nodeCacheCapable) or the nodes' JSON; the answer's nodes are mapped back
  //! to the given NodeInfos by name, one it was not given being an error.
  std::expected<framework::ExtenderFilterResult, std::string> Filter(
      const api::Pod& pod, std::span<const framework::NodeInfo* const> nodes) override;
  std::expected<framework::ExtenderPrioritizeResult, std::string> Prioritize(
      const api::Pod& pod, std::span<const framework::NodeInfo* const> nodes) override;
  //! Sends victims' UIDs (nodeCacheCapable) or the pods; the answer's UIDs are resolved among
  //! the pods `nodes` has on each node.
  std::expected<framework::NodeToVictims, std::string> ProcessPreemption(
      const api::Pod& pod, const framework::NodeToVictims& candidates, const framework::NodeInfoLister& nodes) override;
  std::expected<void, std::string> Bind(const api::Pod& pod, const std::string& node_name) override;

 private:
  HttpExtender(config::Extender config, std::unique_ptr<client::RestClient> client);
  //! POSTs `body` to the verb; the 200 answer's body.
  std::expected<std::string, std::string> Send(std::string_view verb, std::string_view body) const;

  const config::Extender config_;
  const std::unique_ptr<client::RestClient> client_;  // thread-safe
  const std::set<std::string, std::less<>> managed_resources_;
};

//! upstream's buildExtenders: one HttpExtender per entry, the ignorable ones moved to the tail
//! (in their order), as upstream orders them. An error names the entry ("extenders[1]: ...").
std::expected<std::vector<std::shared_ptr<framework::Extender>>, std::string> BuildExtenders(
    const std::vector<config::Extender>& configs);

}  // namespace kubesched::extender
