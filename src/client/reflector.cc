#include "client/reflector.h"

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "util/log.h"

namespace kubesched::client {

namespace json = api::json;

namespace {

// Query parameters are percent-encoded as Go's url.QueryEscape does (space as %20 here, which
// every server reads the same way).
std::string QueryEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

// The resourceVersion of a watch event's object, or of a list's metadata.
std::string ResourceVersionOf(const json::Value& object) {
  const json::Value* meta = json::Find(object, "metadata");
  return meta != nullptr ? std::string(json::GetString(*meta, "resourceVersion")) : std::string();
}

// Whether resourceVersion `a` is older than `b`. Versions are opaque to clients, but every API
// server (etcd's revision, the test bed's counter) numbers them in decimal: when both are numbers
// they are compared, and anything else is never called older.
bool Older(std::string_view a, std::string_view b) {
  auto number = [](std::string_view s) {
    s.remove_prefix(std::min(s.find_first_not_of('0'), s.size()));
    return s;
  };
  auto digits = [](std::string_view s) {
    return !s.empty() && s.size() <= 20 && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (!digits(a) || !digits(b)) return false;
  a = number(a);
  b = number(b);
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

// A Status body's code and message ("" when the text is not a Status).
std::pair<int64_t, std::string> StatusOf(const json::Value& status) {
  int64_t code = 0;
  if (const json::Value* c = json::Find(status, "code"); c != nullptr && c->IsInt64()) code = c->GetInt64();
  return {code, std::string(json::GetString(status, "message"))};
}

std::string BodyMessage(const Response& response) {
  json::Document doc;
  if (json::Parse(response.body, doc) && doc.IsObject()) {
    auto [code, message] = StatusOf(doc);
    if (!message.empty()) return message;
  }
  return response.body.substr(0, 200);
}

}  // namespace

Reflector::Reflector(RestClient& client, const store::ResourceType& type, ReflectorSink& sink, ReflectorOptions options)
    : client_(client), type_(type), sink_(sink), options_(std::move(options)), backoff_(options_.initial_backoff) {}

std::string Reflector::CollectionPath(const store::ResourceType& type) {
  if (type.group.empty()) return fmt::format("/api/{}/{}", type.version, type.resource);
  return fmt::format("/apis/{}/{}/{}", type.group, type.version, type.resource);
}

std::string Reflector::LastResourceVersion() const {
  std::lock_guard lock(mu_);
  return last_rv_;
}

void Reflector::SetResourceVersion(std::string rv) {
  if (rv.empty()) return;
  std::lock_guard lock(mu_);
  last_rv_ = std::move(rv);
}

std::string Reflector::Query(bool watch, const std::string& continue_token) const {
  std::vector<std::string> params;
  if (!options_.label_selector.empty()) params.push_back("labelSelector=" + QueryEscape(options_.label_selector));
  if (!options_.field_selector.empty()) params.push_back("fieldSelector=" + QueryEscape(options_.field_selector));
  if (watch) {
    params.push_back("watch=1");
    params.push_back("allowWatchBookmarks=true");
    params.push_back("resourceVersion=" + QueryEscape(LastResourceVersion()));
    static thread_local std::mt19937 rng{std::random_device{}()};
    const int64_t min = options_.min_watch_timeout.count();
    params.push_back(fmt::format("timeoutSeconds={}", min + std::uniform_int_distribution<int64_t>(0, min)(rng)));
  } else {
    if (options_.page_size > 0) params.push_back(fmt::format("limit={}", options_.page_size));
    if (!continue_token.empty()) params.push_back("continue=" + QueryEscape(continue_token));
  }
  std::string query;
  for (const std::string& p : params) {
    query += query.empty() ? '?' : '&';
    query += p;
  }
  return query;
}

bool Reflector::List(std::stop_token stop) {
  std::vector<json::Document> items;
  std::string continue_token;
  std::string rv;
  const std::string path = CollectionPath(type_);
  do {
    if (stop.stop_requested()) return false;
    auto response = client_.Do("GET", path + Query(false, continue_token));
    if (!response) {
      KS_LOG.WarningS("Failed to list", "resource", type_.resource, "err", response.error());
      return false;
    }
    // An optional resource the server does not serve (404), or does not let this client list
    // (403: a role written before the resource existed), is empty rather than a cache that never
    // syncs.
    if ((response->status == 404 || response->status == 403) && options_.absent_is_empty) {
      if (!absent_) {
        if (response->status == 404) {
          KS_LOG.InfoS("Resource not served; mirrored as empty until it is", "resource", type_.resource, "group",
                       type_.group);
        } else {
          KS_LOG.WarningS("Not allowed to list the resource; mirrored as empty until allowed", "resource",
                          type_.resource, "group", type_.group, "err", BodyMessage(*response));
        }
      }
      absent_ = true;
      items.clear();
      rv.clear();
      break;
    }
    if (response->status != 200) {
      KS_LOG.WarningS("Failed to list", "resource", type_.resource, "code", response->status, "err",
                      BodyMessage(*response));
      return false;
    }
    absent_ = false;
    json::Document list;
    if (auto parsed = json::Parse(response->body, list); !parsed || !list.IsObject()) {
      KS_LOG.WarningS("Failed to list", "resource", type_.resource, "err",
                      parsed ? std::string("not a JSON object") : parsed.error().ToString());
      return false;
    }
    const json::Value* meta = json::Find(list, "metadata");
    rv = ResourceVersionOf(list);
    continue_token = meta != nullptr ? std::string(json::GetString(*meta, "continue")) : "";
    if (const json::Value* array = json::Find(list, "items"); array != nullptr && array->IsArray()) {
      for (const json::Value& item : array->GetArray()) {
        if (!item.IsObject()) continue;
        json::Document doc;
        doc.CopyFrom(item, doc.GetAllocator());
        // List items come without apiVersion and kind; the objects kept say what they are.
        json::Set(doc, "apiVersion", json::MakeString(type_.GroupVersion(), doc.GetAllocator()), doc.GetAllocator());
        json::Set(doc, "kind", json::MakeString(type_.kind, doc.GetAllocator()), doc.GetAllocator());
        items.push_back(std::move(doc));
      }
    }
  } while (!continue_token.empty());
  sink_.Replace(type_, std::move(items));
  SetResourceVersion(rv);
  lists_.fetch_add(1);
  synced_.store(true, std::memory_order_release);
  KS_LOG_V(2).InfoS("Listed", "resource", type_.resource, "resourceVersion", rv);
  return true;
}

Reflector::WatchEnd Reflector::Watch(std::stop_token stop) {
  WatchEnd end = WatchEnd::kResume;
  std::string failure;
  auto on_line = [&](std::string_view line) {
    json::Document event;
    if (auto parsed = json::Parse(line, event); !parsed || !event.IsObject()) {
      failure = "malformed watch event: " + (parsed ? std::string("not an object") : parsed.error().ToString());
      end = WatchEnd::kRelist;
      return false;
    }
    const std::string_view kind = json::GetString(event, "type");
    json::Value* object = json::Find(event, "object");
    if (object == nullptr || !object->IsObject()) {
      failure = fmt::format("watch event {} without an object", kind);
      end = WatchEnd::kRelist;
      return false;
    }
    // A version older than one already seen means the server's history went back (restored
    // from a backup, or a store that lost writes): what was seen since may be gone, so the
    // mirror is rebuilt from a list rather than trusted.
    std::string rv = ResourceVersionOf(*object);
    if (const std::string last = LastResourceVersion(); Older(rv, last)) {
      failure = fmt::format("watch event {} has resourceVersion {}, older than {} already seen", kind, rv, last);
      end = WatchEnd::kRelist;
      return false;
    }
    if (kind == "BOOKMARK") {
      SetResourceVersion(std::move(rv));
      return true;
    }
    if (kind == "ERROR") {
      auto [code, message] = StatusOf(*object);
      failure = fmt::format("watch error {}: {}", code, message);
      end = WatchEnd::kRelist;
      return false;
    }
    store::EventType type;
    if (kind == "ADDED") {
      type = store::EventType::kAdded;
    } else if (kind == "MODIFIED") {
      type = store::EventType::kModified;
    } else if (kind == "DELETED") {
      type = store::EventType::kDeleted;
    } else {
      failure = fmt::format("unknown watch event type \"{}\"", kind);
      end = WatchEnd::kRelist;
      return false;
    }
    json::Document doc;
    doc.CopyFrom(*object, doc.GetAllocator());
    sink_.Apply(type_, type, std::move(doc));
    SetResourceVersion(std::move(rv));
    return true;
  };
  const auto started = std::chrono::steady_clock::now();
  auto response = client_.Stream(CollectionPath(type_) + Query(true, ""), on_line, stop);
  if (stop.stop_requested()) return WatchEnd::kStopped;
  if (!response) {
    KS_LOG.WarningS("Watch failed", "resource", type_.resource, "err", response.error());
    Backoff(stop);
    return WatchEnd::kResume;
  }
  if (response->status == 410 || (response->status == 504 && BodyMessage(*response).find("Too large") == 0)) {
    KS_LOG_V(2).InfoS("Watch expired; relisting", "resource", type_.resource, "code", response->status);
    return WatchEnd::kRelist;
  }
  if (response->status != 200) {
    KS_LOG.WarningS("Watch refused", "resource", type_.resource, "code", response->status, "err",
                    BodyMessage(*response));
    Backoff(stop);
    return WatchEnd::kRelist;
  }
  if (end == WatchEnd::kRelist) {
    // 410 Gone as an ERROR event is the usual way a watch learns its version was compacted.
    if (failure.find("watch error 410") != 0) {
      KS_LOG.WarningS("Watch ended; relisting", "resource", type_.resource, "reason", failure);
      Backoff(stop);
    } else {
      KS_LOG_V(2).InfoS("Watch ended; relisting", "resource", type_.resource, "reason", failure);
    }
    return WatchEnd::kRelist;
  }
  if (std::chrono::steady_clock::now() - started > std::chrono::seconds(60)) backoff_ = options_.initial_backoff;
  return WatchEnd::kResume;
}

void Reflector::Backoff(std::stop_token stop) {
  std::unique_lock lock(sleep_mu_);
  sleep_cv_.wait_for(lock, stop, backoff_, [] { return false; });
  backoff_ = std::min(backoff_ * 2, options_.max_backoff);
}

void Reflector::Run(std::stop_token stop) {
  bool need_list = true;
  while (!stop.stop_requested()) {
    if (need_list) {
      if (!List(stop)) {
        Backoff(stop);
        continue;
      }
      need_list = false;
      if (absent_) {
        // Nothing to watch yet: ask again later.
        Backoff(stop);
        need_list = true;
        continue;
      }
    }
    switch (Watch(stop)) {
      case WatchEnd::kResume:
        break;
      case WatchEnd::kRelist:
        need_list = true;
        break;
      case WatchEnd::kStopped:
        return;
    }
  }
}

}  // namespace kubesched::client
