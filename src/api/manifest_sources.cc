#include "api/manifest_sources.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>

namespace kubesched::api {
namespace {

std::string FormatBytes(size_t n) {
  if (n >= (size_t{1} << 30) && n % (size_t{1} << 30) == 0) return fmt::format("{} GiB", n >> 30);
  if (n >= (size_t{1} << 20) && n % (size_t{1} << 20) == 0) return fmt::format("{} MiB", n >> 20);
  return fmt::format("{} bytes", n);
}

bool IsDocumentMarker(std::string_view line) {
  if (!line.starts_with("---")) return false;
  return line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r' || line[3] == '\n';
}

bool IsBlank(std::string_view text) {
  // Only whitespace, comments and directives: what may precede the first "---".
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && line[first] != '#' && !(first == 0 && line[0] == '%')) return false;
    pos = end + 1;
  }
  return true;
}

}  // namespace

std::vector<RawDocument> SplitDocuments(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // UTF-8 byte order mark
  // What kubectl's YAMLOrJSONDecoder takes for JSON: a '{' first.
  if (const size_t first = text.find_first_not_of(" \t\r\n"); first != std::string_view::npos && text[first] == '{') {
    return {RawDocument{std::string(text), 0, true}};
  }
  return SplitYamlDocuments(text);
}

std::vector<RawDocument> SplitYamlDocuments(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::vector<RawDocument> docs;
  RawDocument current;
  int line_no = 0;
  size_t pos = 0;
  bool any_marker = false;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const size_t next = end == std::string_view::npos ? text.size() : end + 1;
    std::string_view line = text.substr(pos, next - pos);
    if (IsDocumentMarker(line)) {
      // The part before the first marker is a document only if it has content.
      if (any_marker || !IsBlank(current.text)) docs.push_back(std::move(current));
      any_marker = true;
      current = RawDocument{};
      current.first_line = line_no;
    }
    current.text.append(line);
    ++line_no;
    pos = next;
  }
  if (any_marker || !IsBlank(current.text)) docs.push_back(std::move(current));
  return docs;
}

namespace {

bool IsManifestFile(const std::filesystem::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

// kubectl's walk of a path given to -f: a directory stands for its manifest files in name order,
// its subdirectories walked in place when recursive (else skipped); symbolic links to directories
// are not followed inside a directory, as filepath.Walk does not. Anything else is a file.
}  // namespace

std::optional<std::string> ExpandPath(const std::string& path, bool recursive, std::vector<std::string>& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path == "-" || !fs::is_directory(path, ec)) {
    out.push_back(path);
    return std::nullopt;
  }
  auto walk = [&](auto& self, const fs::path& dir) -> std::optional<std::string> {
    std::vector<fs::directory_entry> entries;
    std::error_code walk_ec;
    for (fs::directory_iterator it(dir, walk_ec), end; !walk_ec && it != end; it.increment(walk_ec)) {
      entries.push_back(*it);
    }
    if (walk_ec) return "cannot read directory " + dir.string() + ": " + walk_ec.message();
    std::sort(entries.begin(), entries.end(), [](const fs::directory_entry& a, const fs::directory_entry& b) {
      return a.path().filename() < b.path().filename();
    });
    for (const fs::directory_entry& e : entries) {
      std::error_code type_ec;
      if (e.is_directory(type_ec) && !e.is_symlink(type_ec)) {
        if (!recursive) continue;
        if (auto err = self(self, e.path())) return err;
      } else if (IsManifestFile(e.path())) {
        out.push_back(e.path().string());
      }
    }
    return std::nullopt;
  };
  return walk(walk, fs::path(path));
}

std::optional<std::string> ReadFile(const std::string& path, std::string& out, size_t max_bytes) {
  auto too_large = [&] {
    return fmt::format("{} is larger than {} (the most kubesched reads from one source)",
                       path == "-" ? "standard input" : "the file", FormatBytes(max_bytes));
  };
  out.clear();
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    std::error_code ec;
    if (const auto size = std::filesystem::file_size(path, ec); !ec && size > max_bytes) return too_large();
    file.open(path, std::ios::binary);
    if (!file) return std::string("cannot open file: ") + std::strerror(errno);
    in = &file;
  }
  // In pieces, so that an endless or huge input is refused once past the limit, never held whole.
  constexpr size_t kPiece = 1 << 20;
  std::string piece(kPiece, '\0');
  while (*in) {
    in->read(piece.data(), static_cast<std::streamsize>(piece.size()));
    const auto got = static_cast<size_t>(in->gcount());
    if (out.size() + got > max_bytes) {
      out.clear();
      out.shrink_to_fit();
      return too_large();
    }
    out.append(piece.data(), got);
  }
  if (in->bad()) return std::string("cannot read file: ") + std::strerror(errno);
  return std::nullopt;
}

}  // namespace kubesched::api
