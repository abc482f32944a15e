#pragma once
// For the client's tests: kubesched's own API test bed (the in-memory store behind ApiHandler and
// HttpServer) on a free loopback port, served on a thread, as the cluster a client talks to.

#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "server/api_handler.h"
#include "server/http_server.h"
#include "server/tls.h"
#include "store/resources.h"
#include "util/clock.h"

namespace kubesched::testing {

class ApiTestBed {
 public:
  explicit ApiTestBed(store::StoreOptions options = {}, std::shared_ptr<const server::TlsIdentity> tls = nullptr,
                      server::ApiHandlerOptions handler_options = {})
      : store_(store::NewBuiltinStore(clock_, options)), handler_(*store_, std::move(handler_options)) {
    server::HttpServerOptions http;
    http.port = 0;
    http.threads = 4;
    http.tls = std::move(tls);
    auto bound = server::HttpServer::Bind(handler_, http);
    EXPECT_TRUE(bound.has_value()) << bound.error();
    server_ = std::move(*bound);
    thread_ = std::thread([this] { server_->Run(); });
  }
  explicit ApiTestBed(std::shared_ptr<const server::TlsIdentity> tls)
      : ApiTestBed(store::StoreOptions{}, std::move(tls)) {}
  ~ApiTestBed() {
    server_->Shutdown();
    thread_.join();
  }
  ApiTestBed(const ApiTestBed&) = delete;
  ApiTestBed& operator=(const ApiTestBed&) = delete;

  std::string Url() const { return server_->Url(); }
  //! The server's store, to change the cluster behind the client's back.
  store::Store& store() { return *store_; }
  const store::ResourceType& Pods() const { return *store_->FindResource("", "pods"); }

 private:
  util::SystemClock clock_;
  std::unique_ptr<store::Store> store_;
  server::ApiHandler handler_;
  std::unique_ptr<server::HttpServer> server_;
  std::thread thread_;
};

}  // namespace kubesched::testing
