#pragma once
// What the UI handler's unit tests share: a request to a handler as the page sends it, and a
// response header by name. Test-only (included by *_test.cc).

#include <string>
#include <string_view>
#include <utility>

#include "server/http_types.h"

namespace kubesched::server {

//! `method` `path` with `body` (the textarea's text) to `handler`, answered as JSON.
inline HttpResponse UiRequest(Handler& handler, std::string method, std::string path, std::string body = "") {
  HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.body = std::move(body);
  r.content_type = "text/plain";
  r.accept = "application/json";
  return handler.Handle(r);
}

//! The value of the response header `name`, or "" when it has none.
inline std::string ResponseHeader(const HttpResponse& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

}  // namespace kubesched::server
