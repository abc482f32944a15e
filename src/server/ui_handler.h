#pragma once
// The web UI of `kubesched apiserver --ui`: a Handler in front of the API handler that serves
// /ui/ (the page, its script and style, embedded from src/ui/assets/) and /ui/apply and
// /ui/delete (pasted manifests created or deleted) and /ui/scenario (the test bed saved as a
// `kubesched simulate` scenario, server/scenario.h), and hands every other request to the API.
// The page itself reads the cluster through the ordinary REST API (list and watch).
//
// /ui/apply and /ui/delete decode the manifests with the server's manifest decoding
// (server/manifest_objects.h) and send each object through the API handler as a REST create or
// delete, so that admission, validation and watches are the REST API's own. All or nothing: every
// object is first tried with ?dryRun=All, and nothing is written unless every one passes.
// No authentication, as the rest of the test bed: the server listens on loopback by default.

#include <string>
#include <string_view>

#include "server/http_types.h"
#include "store/store.h"

namespace kubesched::server {

class UiHandler final : public Handler {
 public:
  //! `api` and `store` (the one `api` serves) must outlive the handler.
  UiHandler(Handler& api, const store::Store& store) : api_(api), store_(store) {}

  //! /ui → a redirect to /ui/; /ui/... → the UI; anything else → the API handler. Thread-safe.
  HttpResponse Handle(const HttpRequest& request) override;
  HttpResponse Refused(int status, std::string_view detail) const override { return api_.Refused(status, detail); }
  size_t MaxBodyBytes() const override { return api_.MaxBodyBytes(); }
  void Stop() override { api_.Stop(); }

 private:
  //! POST /ui/apply (`remove` false) or /ui/delete (`remove` true): the body is the manifests'
  //! text (YAML or JSON, several documents). 200 with {"created"|"deleted": [...]}, or 400
  //! (undecodable), 404/409/422 (an object the API refuses) with {"error": {...}}.
  //! KubeSchedulerConfiguration documents (a scenario's) are left out and listed under
  //! "skipped" ({kind, apiVersion, source, reason}); the running scheduler keeps its own.
  HttpResponse ApplyManifests(const HttpRequest& request, bool remove);
  //! GET /ui/scenario: BuildScenario's YAML, as an attachment named scenario.yaml.
  HttpResponse Scenario() const;

  Handler& api_;
  const store::Store& store_;
};

}  // namespace kubesched::server
