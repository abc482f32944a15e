#include "config/validation.h"

#include <algorithm>
#include <cstdio>

namespace kubesched::config {

std::string GoStringSlice(std::span<const std::string> values) {
  if (values.empty()) return "[]string(nil)";
  std::string out = "[]string{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += util::GoQuote(values[i]);
  }
  return out + "}";
}

std::string FieldInvalid(std::string_view path, std::string_view rendered_value, std::string_view detail) {
  std::string out = path.empty() ? std::string() : std::string(path) + ": ";
  out += "Invalid value: " + std::string(rendered_value);
  if (!detail.empty()) out += ": " + std::string(detail);
  return out;
}

std::string FieldNotSupported(std::string_view path, std::string_view value,
                              std::initializer_list<std::string_view> supported) {
  std::string out = std::string(path) + ": Unsupported value: " + util::GoQuote(value);
  if (supported.size() > 0) {
    out += ": supported values: ";
    bool first = true;
    for (auto s : supported) {
      if (!first) out += ", ";
      first = false;
      out += util::GoQuote(s);
    }
  }
  return out;
}

std::string FieldRequired(std::string_view path, std::string_view detail) {
  std::string out = std::string(path) + ": Required value";
  if (!detail.empty()) out += ": " + std::string(detail);
  return out;
}

std::string FieldDuplicate(std::string_view path, std::string_view rendered_value) {
  return std::string(path) + ": Duplicate value: " + std::string(rendered_value);
}

std::string FieldForbidden(std::string_view path, std::string_view detail) {
  return std::string(path) + ": Forbidden: " + std::string(detail);
}

std::string AggregateErrors(std::span<const std::string> errs) {
  std::vector<std::string_view> seen;
  for (const auto& e : errs) {
    if (std::find(seen.begin(), seen.end(), e) == seen.end()) seen.push_back(e);
  }
  if (seen.empty()) return "";
  if (seen.size() == 1) return std::string(seen.front());
  std::string out = "[";
  for (size_t i = 0; i < seen.size(); ++i) {
    if (i > 0) out += ", ";
    out += seen[i];
  }
  return out + "]";
}

std::string JoinDetails(std::span<const std::string> msgs) {
  std::string out;
  for (size_t i = 0; i < msgs.size(); ++i) {
    if (i > 0) out += "; ";
    out += msgs[i];
  }
  return out;
}

}  // namespace kubesched::config
