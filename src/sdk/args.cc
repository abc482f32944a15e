#include "sdk/args.h"

#include <algorithm>

#include <fmt/format.h>

#include "config/strict_decoder.h"
#include "config/validation.h"

namespace kubesched::sdk {

namespace {
const nlohmann::json kEmptyObject = nlohmann::json::object();
}  // namespace

ArgsDecoder::ArgsDecoder(const nlohmann::json& object, std::string path)
    : object_(object.is_null() ? kEmptyObject : object), path_(std::move(path)), known_{"apiVersion", "kind"} {
  if (!object_.is_object()) {
    const std::string message = fmt::format("Invalid type: expected object, got {}", config::JsonTypeName(object_));
    decoding_errors_.push_back(path_.empty() ? message : path_ + ": " + message);
  }
}

std::string ArgsDecoder::PathOf(std::string_view field) const { return api::field_path::Child(path_, field); }

const nlohmann::json* ArgsDecoder::Member(std::string_view field) {
  known_.emplace_back(field);
  if (!object_.is_object()) return nullptr;
  auto it = object_.find(field);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

// Each reader goes through the shared strict decoder, so that type errors are worded as the
// in-tree plugins' and the configuration's ("Invalid type: expected int64, got string").
void ArgsDecoder::Int64(std::string_view field, int64_t& out) {
  if (const nlohmann::json* j = Member(field)) {
    if (auto v = config::StrictDecoder(decoding_errors_).Int64(*j, PathOf(field))) out = *v;
  }
}

void ArgsDecoder::Int32(std::string_view field, int32_t& out) {
  if (const nlohmann::json* j = Member(field)) {
    if (auto v = config::StrictDecoder(decoding_errors_).Int32(*j, PathOf(field))) out = *v;
  }
}

void ArgsDecoder::Double(std::string_view field, double& out) {
  if (const nlohmann::json* j = Member(field)) {
    if (auto v = config::StrictDecoder(decoding_errors_).Seconds(*j, PathOf(field))) out = *v;
  }
}

void ArgsDecoder::Bool(std::string_view field, bool& out) {
  if (const nlohmann::json* j = Member(field)) {
    if (auto v = config::StrictDecoder(decoding_errors_).Bool(*j, PathOf(field))) out = *v;
  }
}

void ArgsDecoder::String(std::string_view field, std::string& out) {
  if (const nlohmann::json* j = Member(field)) {
    if (auto v = config::StrictDecoder(decoding_errors_).String(*j, PathOf(field))) out = std::move(*v);
  }
}

void ArgsDecoder::StringList(std::string_view field, std::vector<std::string>& out) {
  if (const nlohmann::json* j = Member(field)) {
    const size_t before = decoding_errors_.size();
    auto v = config::StrictDecoder(decoding_errors_).StringList(*j, PathOf(field));
    if (decoding_errors_.size() == before) out = std::move(v);
  }
}

void ArgsDecoder::Object(std::string_view field, const std::function<void(ArgsDecoder&)>& read) {
  const nlohmann::json* j = Member(field);
  if (j == nullptr) return;
  ArgsDecoder child(*j, PathOf(field));
  if (child.IsObject()) read(child);
  if (auto errors = child.Finish()) {
    auto& sink = errors->decoding ? decoding_errors_ : validation_errors_;
    sink.insert(sink.end(), errors->errors.begin(), errors->errors.end());
  }
}

const nlohmann::json& ArgsDecoder::Raw(std::string_view field) {
  static const nlohmann::json kNull;
  const nlohmann::json* j = Member(field);
  return j != nullptr ? *j : kNull;
}

void ArgsDecoder::Invalid(std::string_view field, const nlohmann::json& value, std::string_view detail) {
  const std::string rendered = value.is_string() ? util::GoQuote(value.get<std::string>()) : value.dump();
  validation_errors_.push_back(config::FieldInvalid(PathOf(field), rendered, detail));
}

void ArgsDecoder::Required(std::string_view field, std::string_view detail) {
  validation_errors_.push_back(config::FieldRequired(PathOf(field), detail));
}

void ArgsDecoder::NotSupported(std::string_view field, std::string_view value,
                               const std::vector<std::string>& supported) {
  std::string list;
  for (const auto& s : supported) list += (list.empty() ? "" : ", ") + util::GoQuote(s);
  validation_errors_.push_back(
      fmt::format("{}: Unsupported value: {}: supported values: {}", PathOf(field), util::GoQuote(value), list));
}

std::optional<framework::ArgsErrors> ArgsDecoder::Finish() {
  if (!finished_ && object_.is_object()) {
    for (const auto& [key, value] : object_.items()) {
      if (std::ranges::find(known_, key) == known_.end()) {
        decoding_errors_.push_back(fmt::format("unknown field {}", util::GoQuote(PathOf(key))));
      }
    }
  }
  finished_ = true;
  if (!decoding_errors_.empty()) return framework::ArgsErrors{true, std::move(decoding_errors_)};
  if (!validation_errors_.empty()) return framework::ArgsErrors{false, std::move(validation_errors_)};
  return std::nullopt;
}

}  // namespace kubesched::sdk
