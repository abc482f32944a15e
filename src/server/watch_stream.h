#pragma once
// A watch as a streamed HTTP body: one JSON event per line ({"type":"ADDED","object":{...}}), as
// the API server's JSON watch encoding sends them. The object is in the representation the
// client negotiated (the object, a one-row Table for `kubectl get -w` with the column definitions
// in the first event only, or PartialObjectMetadata). The stream ends when its timeout passes,
// when the store closes the watcher (a watcher too slow to keep up), or when the server stops.

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "server/http_types.h"
#include "server/media_type.h"
#include "server/status.h"
#include "server/table.h"
#include "store/store.h"

namespace kubesched::server {

//! The event's line (with its newline) in `output`'s representation; `table` as for EncodeTable
//! (its no_headers is honoured).
std::string EncodeWatchEvent(const store::WatchEvent& event, const store::ResourceType& type,
                             const ObjectOutput& output, const TableOptions& table);
//! An ERROR event carrying `error` as a Status (a watch from a compacted resourceVersion: 410).
std::string EncodeErrorEvent(const ApiError& error);

class WatchStream final : public ResponseStream {
 public:
  //! `stopping` is the server's shutdown flag, read at every step; it must outlive the stream.
  WatchStream(std::unique_ptr<store::Watcher> watcher, const store::ResourceType& type, ObjectOutput output,
              TableOptions table, std::chrono::steady_clock::time_point deadline, const std::atomic<bool>& stopping);
  ~WatchStream() override;

  std::optional<std::string> Next(std::chrono::milliseconds wait) override;
  void SetWakeup(std::function<void()> wake) override { watcher_->SetWakeup(std::move(wake)); }

  //! After this long without an event the stream sends a bare newline, which JSON stream
  //! decoders skip: a write is the only way to learn that the client has gone, so its connection
  //! is closed instead of waiting for the next event.
  static constexpr std::chrono::seconds kKeepAlive{10};

 private:
  std::unique_ptr<store::Watcher> watcher_;
  const store::ResourceType& type_;
  ObjectOutput output_;
  TableOptions table_;
  std::chrono::steady_clock::time_point deadline_;
  std::chrono::steady_clock::time_point last_write_;
  const std::atomic<bool>& stopping_;
};

}  // namespace kubesched::server
