#include "server/watch_stream.h"

#include <algorithm>

#include "server/json_writer.h"
#include "server/printers.h"

namespace kubesched::server {

std::string EncodeWatchEvent(const store::WatchEvent& event, const store::ResourceType& type,
                             const ObjectOutput& output, const TableOptions& table) {
  JsonWriter w;
  w.StartObject();
  w.Member("type", store::ToString(event.type));
  w.Key("object");
  if (event.type == store::EventType::kBookmark) {
    // A bookmark carries only the resourceVersion (and the store's annotations, such as
    // k8s.io/initial-events-end, when it gives a whole object).
    if (event.object != nullptr && !event.object->json.empty()) {
      w.Raw(event.object->json);
    } else {
      w.StartObject();
      w.Member("kind", type.kind);
      w.Member("apiVersion", type.GroupVersion());
      w.Key("metadata");
      w.StartObject();
      w.Member("resourceVersion", std::to_string(event.object != nullptr ? event.object->resource_version : 0));
      w.EndObject();
      w.EndObject();
    }
  } else {
    switch (output.format) {
      case ObjectFormat::kTable:
        w.Raw(EncodeTable(type, {event.object}, ListMeta{.resource_version = event.object->resource_version}, table));
        break;
      case ObjectFormat::kPartialObjectMetadata:
      case ObjectFormat::kPartialObjectMetadataList:
        w.Raw(EncodePartialObjectMetadata(*event.object, output.meta_version));
        break;
      case ObjectFormat::kObject:
        w.Raw(event.object->json);
        break;
    }
  }
  w.EndObject();
  return w.Take() + "\n";
}

std::string EncodeErrorEvent(const ApiError& error) {
  JsonWriter w;
  w.StartObject();
  w.Member("type", "ERROR");
  w.MemberRaw("object", EncodeStatus(error));
  w.EndObject();
  return w.Take() + "\n";
}

WatchStream::WatchStream(std::unique_ptr<store::Watcher> watcher, const store::ResourceType& type, ObjectOutput output,
                         TableOptions table, std::chrono::steady_clock::time_point deadline,
                         const std::atomic<bool>& stopping)
    : watcher_(std::move(watcher)),
      type_(type),
      output_(std::move(output)),
      table_(std::move(table)),
      deadline_(deadline),
      last_write_(std::chrono::steady_clock::now()),
      stopping_(stopping) {}

WatchStream::~WatchStream() { watcher_->Stop(); }

std::optional<std::string> WatchStream::Next(std::chrono::milliseconds wait) {
  const auto now = std::chrono::steady_clock::now();
  if (stopping_.load() || now >= deadline_ || watcher_->Closed()) return std::nullopt;
  const auto until_deadline = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - now);
  std::optional<store::WatchEvent> event = watcher_->Next(std::min(wait, until_deadline));
  if (!event) {
    if (watcher_->Closed() || stopping_.load()) return std::nullopt;
    if (std::chrono::steady_clock::now() - last_write_ >= kKeepAlive) {
      last_write_ = std::chrono::steady_clock::now();
      return std::string("\n");
    }
    return std::string();
  }
  table_.now_ns = UnixNowNs();  // ages as of the event, not as of the watch's start
  std::string line = EncodeWatchEvent(*event, type_, output_, table_);
  if (event->type != store::EventType::kBookmark) table_.no_headers = true;
  last_write_ = std::chrono::steady_clock::now();
  return line;
}

}  // namespace kubesched::server
