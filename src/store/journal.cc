#include "store/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include <fmt/format.h>

namespace kubesched::store {
namespace {

namespace json = api::json;

std::string Errno(std::string_view what, const std::string& path) {
  return fmt::format("{}: {}: {}", path, what, std::strerror(errno));
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::optional<EventType> ParseType(std::string_view s) {
  if (s == "ADDED") return EventType::kAdded;
  if (s == "MODIFIED") return EventType::kModified;
  if (s == "DELETED") return EventType::kDeleted;
  return std::nullopt;
}

}  // namespace

std::expected<std::unique_ptr<Journal>, std::string> Journal::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return std::unexpected(Errno("cannot open the journal", path));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const std::string error = Errno("cannot read the journal", path);
    ::close(fd);
    return std::unexpected(error);
  }
  // Secrets are among the objects: the owner's alone, whatever the umask.
  ::fchmod(fd, 0600);
  if (auto synced = SyncDirectoryOf(path); !synced) {
    ::close(fd);
    return std::unexpected(synced.error());
  }
  return std::unique_ptr<Journal>(new Journal(fd, path, static_cast<uint64_t>(st.st_size)));
}

std::expected<void, std::string> Journal::SyncDirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(Errno("cannot open the directory", dir));
  const bool ok = ::fsync(fd) == 0;
  const std::string error = ok ? std::string() : Errno("cannot sync the directory", dir);
  ::close(fd);
  if (!ok) return std::unexpected(error);
  return {};
}

void Journal::Renamed(std::string path) {
  std::lock_guard lock(mu_);
  path_ = std::move(path);
}

Journal::Journal(int fd, std::string path, uint64_t bytes) : fd_(fd), path_(std::move(path)), bytes_(bytes) {
  writer_ = std::thread([this] { WriterLoop(); });
}

Journal::~Journal() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  queued_cv_.notify_all();
  writer_.join();
  ::close(fd_);
}

void Journal::Append(const WatchEvent& event) {
  std::unique_lock lock(mu_);
  // Backpressure for a disk that cannot keep up (see kMaxUnsynced).
  synced_cv_.wait(lock, [&] { return appended_ - synced_ < kMaxUnsynced || !failure_.empty(); });
  queued_ += "{\"type\":\"";
  queued_ += ToString(event.type);
  queued_ += "\",\"object\":";
  queued_ += event.object->json;
  queued_ += "}\n";
  ++appended_;
  if (!writing_) queued_cv_.notify_one();
}

std::expected<void, std::string> Journal::Sync() {
  std::unique_lock lock(mu_);
  const uint64_t target = appended_;
  synced_cv_.wait(lock, [&] { return synced_ >= target || !failure_.empty(); });
  if (!failure_.empty()) return std::unexpected(failure_);
  return {};
}

void Journal::WriterLoop() {
  std::unique_lock lock(mu_);
  while (true) {
    queued_cv_.wait(lock, [&] { return stopping_ || !queued_.empty(); });
    if (queued_.empty()) return;  // stopping, and everything is written
    std::string batch;
    batch.swap(queued_);
    const uint64_t upto = appended_;
    const std::string path = path_;
    writing_ = true;
    lock.unlock();
    // One write and one sync for everything committed since the last group.
    std::string error;
    if (!WriteAll(fd_, batch)) {
      error = Errno("cannot write the journal", path);
    } else if (::fdatasync(fd_) != 0) {
      error = Errno("cannot sync the journal", path);
    }
    lock.lock();
    writing_ = false;
    if (!error.empty() && failure_.empty()) failure_ = error;
    if (error.empty()) {
      bytes_ += batch.size();
      synced_ = upto;
    }
    synced_cv_.notify_all();
  }
}

std::expected<void, std::string> Journal::Truncate() {
  if (auto synced = Sync(); !synced) return synced;
  std::lock_guard lock(mu_);
  // Nothing is queued or being written: the caller holds the store's lock, so nothing is appended.
  if (::ftruncate(fd_, 0) != 0 || ::fdatasync(fd_) != 0) {
    failure_ = Errno("cannot truncate the journal", path_);
    return std::unexpected(failure_);
  }
  bytes_ = 0;
  return {};
}

uint64_t Journal::Bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

std::expected<size_t, std::string> Journal::Replay(const std::string& path, const ApplyLine& apply) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return 0;
    return std::unexpected(Errno("cannot open the journal", path));
  }
  std::string content;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string error = Errno("cannot read the journal", path);
      ::close(fd);
      return std::unexpected(error);
    }
    if (n == 0) break;
    content.append(buf, static_cast<size_t>(n));
  }
  size_t applied = 0;
  size_t pos = 0;
  size_t line_no = 0;
  std::string error;
  while (pos < content.size()) {
    ++line_no;
    const size_t end = content.find('\n', pos);
    const bool last = end == std::string::npos || end + 1 == content.size();
    const std::string_view line(content.data() + pos, (end == std::string::npos ? content.size() : end) - pos);
    json::Document doc;
    const bool parsed = end != std::string::npos && json::Parse(line, doc).has_value() && doc.IsObject();
    const json::Value* object = parsed ? json::Find(doc, "object") : nullptr;
    const auto type = parsed ? ParseType(json::GetString(doc, "type")) : std::nullopt;
    if (!parsed || object == nullptr || !object->IsObject() || !type) {
      if (last) {
        // Torn by a crash in the middle of its write: never acknowledged, so dropped.
        if (::ftruncate(fd, static_cast<off_t>(pos)) != 0 || ::fsync(fd) != 0) {
          error = Errno("cannot cut a torn line off the journal", path);
        }
        break;
      }
      error = fmt::format("{}: line {}: not a journal line", path, line_no);
      break;
    }
    json::Document one;
    one.CopyFrom(*object, one.GetAllocator());
    if (auto ok = apply(*type, one); !ok) {
      error = fmt::format("{}: line {}: {}", path, line_no, ok.error());
      break;
    }
    ++applied;
    pos = end + 1;
  }
  ::close(fd);
  if (!error.empty()) return std::unexpected(error);
  return applied;
}

}  // namespace kubesched::store
