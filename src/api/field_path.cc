#include "api/field_path.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace kubesched::api::field_path {
namespace {

bool IsPlainKey(std::string_view key) {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

// Levenshtein distance, ignoring case.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      const bool same =
          std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string Child(std::string_view path, std::string_view name) {
  std::string out;
  out.reserve(path.size() + 1 + name.size());
  out += path;
  if (!path.empty()) out += '.';
  out += name;
  return out;
}

std::string Index(std::string_view path, size_t index) {
  std::string out(path);
  AppendIndex(out, index);
  return out;
}

void AppendField(std::string& path, std::string_view key) {
  if (!IsPlainKey(key)) {
    path += '[';
    path += key;
    path += ']';
    return;
  }
  if (!path.empty()) path += '.';
  path += key;
}

std::string_view Closest(std::string_view word, std::span<const std::string_view> candidates) {
  // Up to 2 edits, more for long words (a quarter of the length).
  size_t limit = std::max<size_t>(2, word.size() / 4);
  std::string_view best;
  for (std::string_view c : candidates) {
    const size_t d = EditDistance(word, c);
    if (d <= limit && (best.empty() || d < limit)) {
      best = c;
      limit = d;
    }
  }
  return best;
}

void AppendIndex(std::string& path, size_t index) {
  path += '[';
  path += std::to_string(index);
  path += ']';
}

}  // namespace kubesched::api::field_path
