#include "config/strict_decoder.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/validation.h"

namespace kubesched::config {

using json = nlohmann::json;

std::string_view JsonTypeName(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "bool";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    default:
      return "value";
  }
}

const json& Member(const json& object, std::string_view key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it != object.end() ? *it : kNull;
}

bool StrictDecoder::Object(const json& j, std::string_view path, std::initializer_list<std::string_view> fields) {
  if (j.is_null()) return false;
  if (!j.is_object()) {
    TypeError(j, path, "object");
    return false;
  }
  for (const auto& [key, value] : j.items()) {
    if (std::ranges::find(fields, std::string_view(key)) == fields.end()) {
      errors_.push_back(fmt::format("unknown field {}", util::GoQuote(api::field_path::Child(path, key))));
    }
  }
  return true;
}

bool StrictDecoder::Array(const json& j, std::string_view path) {
  if (j.is_null()) return false;
  if (!j.is_array()) {
    TypeError(j, path, "array");
    return false;
  }
  return true;
}

template <class Int>
std::optional<Int> StrictDecoder::Integer(const json& j, std::string_view path, std::string_view type_name) {
  if (j.is_null()) return std::nullopt;
  if (j.is_number_float()) {
    double d = j.get<double>();
    if (std::isfinite(d) && d == std::trunc(d) && d >= static_cast<double>(std::numeric_limits<Int>::min()) &&
        d < -static_cast<double>(std::numeric_limits<Int>::min())) {
      return static_cast<Int>(d);
    }
    if (std::isfinite(d) && d == std::trunc(d)) {
      errors_.push_back(FieldInvalid(path, j.dump(), fmt::format("out of range for {}", type_name)));
      return std::nullopt;
    }
  }
  if (j.is_number_integer()) {  // signed or unsigned
    bool fits = j.is_number_unsigned() ? j.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<Int>::max())
                                       : j.get<int64_t>() >= std::numeric_limits<Int>::min() &&
                                             j.get<int64_t>() <= std::numeric_limits<Int>::max();
    if (fits) return static_cast<Int>(j.get<int64_t>());
    errors_.push_back(FieldInvalid(path, j.dump(), fmt::format("out of range for {}", type_name)));
    return std::nullopt;
  }
  TypeError(j, path, type_name);
  return std::nullopt;
}

std::optional<int32_t> StrictDecoder::Int32(const json& j, std::string_view path) {
  return Integer<int32_t>(j, path, "int32");
}

std::optional<int64_t> StrictDecoder::Int64(const json& j, std::string_view path) {
  return Integer<int64_t>(j, path, "int64");
}

std::optional<std::string> StrictDecoder::String(const json& j, std::string_view path) {
  if (j.is_null()) return std::nullopt;
  if (j.is_string()) return j.get<std::string>();
  TypeError(j, path, "string");
  return std::nullopt;
}

std::optional<bool> StrictDecoder::Bool(const json& j, std::string_view path) {
  if (j.is_null()) return std::nullopt;
  if (j.is_boolean()) return j.get<bool>();
  TypeError(j, path, "bool");
  return std::nullopt;
}

std::optional<double> StrictDecoder::Seconds(const json& j, std::string_view path) {
  if (j.is_null()) return std::nullopt;
  if (j.is_number()) return j.get<double>();
  errors_.push_back(fmt::format("{}: Invalid value: {}: expected a number of seconds", path, j.dump()));
  return std::nullopt;
}

std::vector<std::string> StrictDecoder::StringList(const json& j, std::string_view path) {
  std::vector<std::string> out;
  if (!Array(j, path)) return out;
  for (size_t i = 0; i < j.size(); ++i) {
    out.push_back(String(j[i], api::field_path::Index(path, i)).value_or(""));
  }
  return out;
}

void StrictDecoder::TypeError(const json& j, std::string_view path, std::string_view expected) {
  std::string message = fmt::format("Invalid type: expected {}, got {}", expected, JsonTypeName(j));
  errors_.push_back(path.empty() ? message : fmt::format("{}: {}", path, message));
}

}  // namespace kubesched::config
