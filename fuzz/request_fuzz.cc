// Fuzz target for request handling in `kubesched apiserver`: the input is a short script of
// requests, each a request line ("POST /api/v1/namespaces/default/pods?fieldValidation=Strict"),
// optional "Content-Type:" and "Accept:" lines, a blank line and a body, the requests separated by
// a line "---". They run in order against a fresh store behind the API handler (server/api_handler.h,
// everything but the sockets), so a create followed by a patch, a bind or a watch reaches the
// code paths that need an object first. Never crash, hang or throw; every answer is a valid HTTP
// status with a JSON body for errors; a watch is read once without waiting and closed.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/json.h"
#include "server/api_handler.h"
#include "store/resources.h"
#include "util/clock.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

// "a=b&c" into the request's query (no percent-decoding: the HTTP layer does that before us).
void ParseQuery(std::string_view q, kubesched::server::HttpRequest& r) {
  while (!q.empty()) {
    const size_t amp = q.find('&');
    std::string_view kv = q.substr(0, amp);
    const size_t eq = kv.find('=');
    r.query.emplace(std::string(kv.substr(0, eq)), eq == std::string_view::npos ? "" : std::string(kv.substr(eq + 1)));
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
}

kubesched::server::HttpRequest ParseRequest(std::string_view text) {
  kubesched::server::HttpRequest r;
  size_t header_end = text.find("\n\n");
  std::string_view head = text.substr(0, header_end);
  r.body = header_end == std::string_view::npos ? "" : std::string(text.substr(header_end + 2));
  bool first = true;
  while (!head.empty()) {
    const size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    if (first) {
      const size_t sp = line.find(' ');
      r.method = std::string(line.substr(0, sp));
      std::string_view target = sp == std::string_view::npos ? "/" : line.substr(sp + 1);
      const size_t qm = target.find('?');
      r.path = std::string(target.substr(0, qm));
      if (qm != std::string_view::npos) ParseQuery(target.substr(qm + 1), r);
      first = false;
    } else if (line.starts_with("Content-Type: ")) {
      r.content_type = std::string(line.substr(14));
    } else if (line.starts_with("Accept: ")) {
      r.accept = std::string(line.substr(8));
    }
    if (nl == std::string_view::npos) break;
    head.remove_prefix(nl + 1);
  }
  if (r.content_type.empty() && !r.body.empty()) r.content_type = "application/json";
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kubesched;
  if (size > 64 * 1024) return 0;  // the handler's own 413 is tested; big inputs only slow fuzzing
  util::VirtualClock clock(1'700'000'000LL * util::kNanosPerSecond);
  store::StoreOptions options;
  options.seed = 1;
  options.future_resource_version_wait = std::chrono::milliseconds(0);
  auto st = store::NewBuiltinStore(clock, options);
  server::ApiHandlerOptions handler_options;
  handler_options.default_watch_timeout = std::chrono::seconds(1);
  server::ApiHandler handler(*st, handler_options);

  std::string_view script(reinterpret_cast<const char*>(data), size);
  for (int i = 0; i < 16 && !script.empty(); ++i) {
    const size_t sep = script.find("\n---\n");
    const server::HttpRequest request = ParseRequest(script.substr(0, sep));
    script = sep == std::string_view::npos ? std::string_view() : script.substr(sep + 5);
    server::HttpResponse response = handler.Handle(request);
    Check(response.status >= 200 && response.status < 600);
    if (response.stream) {
      (void)response.stream->Next(std::chrono::milliseconds(0));
      continue;
    }
    if (response.status >= 400 && response.content_type.starts_with("application/json")) {
      // Every error is a metav1.Status.
      api::json::Document doc;
      Check(api::json::Parse(response.body, doc).has_value());
      Check(api::json::GetString(doc, "kind") == "Status");
    }
    clock.Advance(util::kNanosPerSecond);
  }
  return 0;
}
