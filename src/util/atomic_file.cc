#include "util/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace kubesched::util {

std::expected<void, std::string> WriteFileAtomically(const std::string& path, std::string_view content, mode_t mode) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  if (target.filename().empty()) return std::unexpected(path + ": not a file name");
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmp = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  const int fd = mkstemp(tmp.data());
  if (fd < 0) {
    return std::unexpected(path + ": cannot create a file in " + dir.string() + ": " + std::strerror(errno));
  }
  auto fail = [&](const char* what, int err) -> std::expected<void, std::string> {
    unlink(tmp.c_str());
    return std::unexpected(path + ": " + what + ": " + std::strerror(err));
  };
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      close(fd);
      return fail("write failed", err);
    }
    written += static_cast<size_t>(n);
  }
  // mkstemp creates the file for its owner only.
  const mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, mode & ~mask) != 0 || fsync(fd) != 0) {
    const int err = errno;
    close(fd);
    return fail("write failed", err);
  }
  if (close(fd) != 0) return fail("write failed", errno);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return fail("cannot replace the file", errno);
  return {};
}

}  // namespace kubesched::util
