#pragma once
// The Kubernetes REST API over the store: the API test bed's request handler. It routes a
// request (server/request_info.h), serves discovery, OpenAPI, /version and the health checks,
// and maps each verb on a resource onto the store, encoding the answer in the representation the
// client negotiated (object, Table, PartialObjectMetadata) and every failure as a metav1.Status.
// A request is all-or-nothing: every check runs before the store is written.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/access_review.h"
#include "server/discovery.h"
#include "server/http_types.h"
#include "server/openapi.h"
#include "server/request_info.h"
#include "server/status.h"
#include "store/store.h"

namespace kubesched::server {

struct ApiHandlerOptions {
  //! host:port the server is reached at (discovery's serverAddressByClientCIDRs).
  std::string server_address = "127.0.0.1:8080";
  //! A watch without ?timeoutSeconds ends after this long (upstream: 30 to 60 minutes).
  std::chrono::seconds default_watch_timeout{1800};
  //! Request bodies above this are refused with 413 (upstream's 3 MiB).
  size_t max_body_bytes = 3 * 1024 * 1024;
  //! The tokens TokenReview accepts (--token-auth-file; server/access_review.h).
  std::vector<StaticToken> tokens;
};

class ApiHandler final : public Handler {
 public:
  //! `store` must outlive the handler.
  ApiHandler(store::Store& store, ApiHandlerOptions options);

  //! Serves one request. Thread-safe.
  HttpResponse Handle(const HttpRequest& request) override;
  //! A metav1.Status for what the HTTP layer refused.
  HttpResponse Refused(int status, std::string_view detail) const override;
  size_t MaxBodyBytes() const override { return options_.max_body_bytes; }

  //! Ends every open watch stream (at their next step) and refuses new requests with 503.
  void Stop() override { stopping_.store(true); }
  const std::atomic<bool>& Stopping() const { return stopping_; }
  const ApiHandlerOptions& Options() const { return options_; }
  //! Sets the address discovery reports, once the listening port is known (before serving).
  void SetServerAddress(std::string address) { options_.server_address = std::move(address); }

 private:
  // A resource request routed to a served resource.
  struct Target {
    const RequestInfo& info;
    const store::ResourceType& type;
    //! The namespace the store is asked for: the path's, or "" for cluster-scoped resources.
    std::string namespace_;
  };

  HttpResponse HandleNonResource(const HttpRequest& request, bool& handled);
  HttpResponse HandleDiscovery(const HttpRequest& request, const RequestInfo& info);
  HttpResponse HandleResource(const HttpRequest& request, const RequestInfo& info);
  //! Who a request comes from, for the self reviews: a --token-auth-file token's user, else
  //! system:anonymous (the test bed serves every request whoever sends it).
  AccessSubject Requester(const HttpRequest& request) const;

  // resource_verbs.cc
  std::expected<void, ApiError> AdmitNamespaceLifecycle(const Target& target) const;
  HttpResponse Get(const HttpRequest& request, const Target& target);
  HttpResponse List(const HttpRequest& request, const Target& target);
  HttpResponse Watch(const HttpRequest& request, const Target& target);
  HttpResponse Create(const HttpRequest& request, const Target& target);
  HttpResponse Update(const HttpRequest& request, const Target& target);
  HttpResponse Patch(const HttpRequest& request, const Target& target);
  HttpResponse Delete(const HttpRequest& request, const Target& target);
  HttpResponse DeleteCollection(const HttpRequest& request, const Target& target);

  // subresources.cc
  HttpResponse Binding(const HttpRequest& request, const Target& target);
  //! POST /api/v1/namespaces/{ns}/bindings: the same Binding, the pod named by its metadata.name.
  HttpResponse Bindings(const HttpRequest& request, const RequestInfo& info);
  HttpResponse Eviction(const HttpRequest& request, const Target& target);
  HttpResponse Scale(const HttpRequest& request, const Target& target);

  // Discovery and OpenAPI for the resources served now: rebuilt when the store's served
  // resources change (a CustomResourceDefinition was created, changed or deleted).
  struct ApiDocuments {
    ApiDocuments(uint64_t generation, std::vector<const store::ResourceType*> types)
        : generation(generation), discovery(std::move(types)), openapi(discovery) {}
    uint64_t generation;
    Discovery discovery;
    OpenApi openapi;
  };
  std::shared_ptr<const ApiDocuments> Documents() const;

  store::Store& store_;
  ApiHandlerOptions options_;
  mutable std::mutex documents_mu_;
  mutable std::shared_ptr<const ApiDocuments> documents_;  // guarded by documents_mu_
  std::atomic<bool> stopping_{false};
};

//! A response carrying `error` as a Status.
HttpResponse ErrorResponse(const ApiError& error);
//! A JSON response with `status`.
HttpResponse JsonResponse(int status, std::string body, std::string content_type = "application/json");

}  // namespace kubesched::server
