#pragma once
// The API test bed's write-ahead journal (`kubesched apiserver --state FILE`, beside it as
// FILE.journal): every committed change appended as one line of JSON,
//   {"type":"ADDED|MODIFIED|DELETED","object":{...the object as stored...}}
// written and fdatasync'd by one thread in groups (the changes committed while one group is
// being synced make the next, as etcd's WAL batches them), and a write acknowledged only once its
// line is on disk. The snapshot SaveState writes plus the journal's lines after it are the
// store's state after a crash.

#include <condition_variable>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "api/json.h"
#include "store/store.h"

namespace kubesched::store {

class Journal {
 public:
  //! At most this many changes are committed and not yet on disk: a committer waits past it.
  //! Whoever saw a change (a watch) before a crash saw one of these at most, so a recovery that
  //! continues numbering this far past the last durable change never reuses a version a client
  //! saw (MemoryStore::OpenState).
  static constexpr uint64_t kMaxUnsynced = 100'000;

  //! Opens `path` for appending (created with mode 0600 when missing, and its directory synced so
  //! that the file itself survives a crash); the error names the path.
  static std::expected<std::unique_ptr<Journal>, std::string> Open(const std::string& path);
  //! fsync of the directory holding `path`: a file created, renamed or removed there is on disk.
  static std::expected<void, std::string> SyncDirectoryOf(const std::string& path);
  //! Syncs what is queued, then stops the writer.
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  //! Queues `event`'s line. Called with the store's lock held, so lines are in resourceVersion
  //! order; returns at once unless kMaxUnsynced changes are waiting for the disk.
  void Append(const WatchEvent& event);
  //! Waits until every line appended before the call is on disk. An error once a write or sync
  //! has failed (the journal refuses everything after: the disk is not to be trusted).
  std::expected<void, std::string> Sync();
  //! Empties the file, synced (a snapshot now holds everything it had).
  std::expected<void, std::string> Truncate();
  //! Bytes in the file (written so far).
  uint64_t Bytes() const;
  //! The file was renamed to `path` (error messages name it from now on).
  void Renamed(std::string path);

  //! A journal's lines in order: `apply` gets each whole one. A torn last line (a crash in the
  //! middle of a write, which nobody was told succeeded) is cut off the file. The number of lines
  //! applied, or an error naming the path and line (a malformed line before the last, or one
  //! `apply` refused). A missing file has no lines.
  using ApplyLine = std::function<std::expected<void, std::string>(EventType type, api::json::Document& object)>;
  static std::expected<size_t, std::string> Replay(const std::string& path, const ApplyLine& apply);

 private:
  Journal(int fd, std::string path, uint64_t bytes);
  void WriterLoop();

  const int fd_;

  mutable std::mutex mu_;  // guards the members below
  std::string path_;
  std::condition_variable queued_cv_;  // the writer waits for lines (or stopping)
  std::condition_variable synced_cv_;  // Sync and Append wait for the writer
  std::string queued_;                 //!< lines not yet handed to the writer
  uint64_t appended_ = 0;              //!< lines appended in all
  uint64_t synced_ = 0;                //!< lines on disk
  uint64_t bytes_ = 0;                 //!< bytes in the file
  bool writing_ = false;               //!< the writer holds a batch
  bool stopping_ = false;
  std::string failure_;  //!< the first write or sync error
  std::thread writer_;
};

}  // namespace kubesched::store
