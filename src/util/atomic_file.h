#pragma once
// Writing a file whole or not at all, for everything kubesched writes for people or for a restart
// (the HTML report, the API test bed's kubeconfig and its --state file).

#include <sys/types.h>

#include <expected>
#include <string>
#include <string_view>

namespace kubesched::util {

//! Writes `content` to `path` through a fresh temporary file in the same directory, flushed to
//! disk and then renamed over `path`: a reader (or a restart after a crash) sees the old file or
//! the new one, never half of one. The file gets `mode` less the process's umask. The error names
//! the path and what failed; nothing is left behind on failure.
std::expected<void, std::string> WriteFileAtomically(const std::string& path, std::string_view content,
                                                     mode_t mode = 0666);

}  // namespace kubesched::util
