#include "config/strict_decoder.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "config/validation.h"

namespace kubesched::config {

using framework::ArgsView;

bool StrictDecoder::Object(const ArgsView& j, std::string_view path, std::initializer_list<std::string_view> fields) {
  if (j.IsNull()) return false;
  if (!j.IsObject()) {
    TypeError(j, path, "object");
    return false;
  }
  // Unknown fields in name order, as they were always reported (and as a map holds them).
  std::vector<std::string_view> unknown;
  for (const auto [key, value] : j.Members()) {
    if (std::ranges::find(fields, key) == fields.end()) unknown.push_back(key);
  }
  std::ranges::sort(unknown);
  for (std::string_view key : unknown) {
    errors_.push_back(fmt::format("unknown field {}", util::GoQuote(api::field_path::Child(path, key))));
  }
  return true;
}

bool StrictDecoder::Array(const ArgsView& j, std::string_view path) {
  if (j.IsNull()) return false;
  if (!j.IsArray()) {
    TypeError(j, path, "array");
    return false;
  }
  return true;
}

template <class Int>
std::optional<Int> StrictDecoder::Integer(const ArgsView& j, std::string_view path, std::string_view type_name) {
  if (j.IsNull()) return std::nullopt;
  if (j.IsDouble()) {
    double d = j.GetDouble();
    if (std::isfinite(d) && d == std::trunc(d) && d >= static_cast<double>(std::numeric_limits<Int>::min()) &&
        d < -static_cast<double>(std::numeric_limits<Int>::min())) {
      return static_cast<Int>(d);
    }
    if (std::isfinite(d) && d == std::trunc(d)) {
      errors_.push_back(FieldInvalid(path, j.Encode(), fmt::format("out of range for {}", type_name)));
      return std::nullopt;
    }
  } else if (j.IsNumber()) {  // an integer, signed or unsigned
    bool fits = j.IsInt64()
                    ? j.GetInt64() >= std::numeric_limits<Int>::min() && j.GetInt64() <= std::numeric_limits<Int>::max()
                    : j.GetUint64() <= static_cast<uint64_t>(std::numeric_limits<Int>::max());
    if (fits) return static_cast<Int>(j.GetInt64());
    errors_.push_back(FieldInvalid(path, j.Encode(), fmt::format("out of range for {}", type_name)));
    return std::nullopt;
  }
  TypeError(j, path, type_name);
  return std::nullopt;
}

std::optional<int32_t> StrictDecoder::Int32(const ArgsView& j, std::string_view path) {
  return Integer<int32_t>(j, path, "int32");
}

std::optional<int64_t> StrictDecoder::Int64(const ArgsView& j, std::string_view path) {
  return Integer<int64_t>(j, path, "int64");
}

std::optional<std::string> StrictDecoder::String(const ArgsView& j, std::string_view path) {
  if (j.IsNull()) return std::nullopt;
  if (j.IsString()) return std::string(j.GetString());
  TypeError(j, path, "string");
  return std::nullopt;
}

std::optional<bool> StrictDecoder::Bool(const ArgsView& j, std::string_view path) {
  if (j.IsNull()) return std::nullopt;
  if (j.IsBool()) return j.GetBool();
  TypeError(j, path, "bool");
  return std::nullopt;
}

std::optional<double> StrictDecoder::Seconds(const ArgsView& j, std::string_view path) {
  if (j.IsNull()) return std::nullopt;
  if (j.IsNumber()) return j.GetDouble();
  errors_.push_back(fmt::format("{}: Invalid value: {}: expected a number of seconds", path, j.Encode()));
  return std::nullopt;
}

std::vector<std::string> StrictDecoder::StringList(const ArgsView& j, std::string_view path) {
  std::vector<std::string> out;
  if (!Array(j, path)) return out;
  for (size_t i = 0; i < j.Size(); ++i) {
    out.push_back(String(j[i], api::field_path::Index(path, i)).value_or(""));
  }
  return out;
}

void StrictDecoder::TypeError(const ArgsView& j, std::string_view path, std::string_view expected) {
  std::string message = fmt::format("Invalid type: expected {}, got {}", expected, j.TypeName());
  errors_.push_back(path.empty() ? message : fmt::format("{}: {}", path, message));
}

}  // namespace kubesched::config
