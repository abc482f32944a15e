#include "sdk/args.h"

#include <algorithm>

#include <fmt/format.h>

#include "config/strict_decoder.h"
#include "config/validation.h"

namespace kubesched::sdk {

ArgsDecoder::ArgsDecoder(const framework::ArgsView& object, std::string path)
    : object_(object), path_(std::move(path)), known_{"apiVersion", "kind"} {
  if (!IsObject()) {
    const std::string message = fmt::format("Invalid type: expected object, got {}", object_.TypeName());
    decoding_errors_.push_back(path_.empty() ? message : path_ + ": " + message);
  }
}

std::string ArgsDecoder::PathOf(std::string_view field) const { return api::field_path::Child(path_, field); }

// The member, null when absent or null (both leave the target unchanged).
framework::ArgsView ArgsDecoder::Member(std::string_view field) {
  known_.emplace_back(field);
  return object_.Find(field);
}

// Each reader goes through the shared strict decoder, so that type errors are worded as the
// in-tree plugins' and the configuration's ("Invalid type: expected int64, got string").
void ArgsDecoder::Int64(std::string_view field, int64_t& out) {
  if (const framework::ArgsView j = Member(field); !j.IsNull()) {
    if (auto v = config::StrictDecoder(decoding_errors_).Int64(j, PathOf(field))) out = *v;
  }
}

void ArgsDecoder::Int32(std::string_view field, int32_t& out) {
  if (const framework::ArgsView j = Member(field); !j.IsNull()) {
    if (auto v = config::StrictDecoder(decoding_errors_).Int32(j, PathOf(field))) out = *v;
  }
}

void ArgsDecoder::Double(std::string_view field, double& out) {
  if (const framework::ArgsView j = Member(field); !j.IsNull()) {
    if (auto v = config::StrictDecoder(decoding_errors_).Seconds(j, PathOf(field))) out = *v;
  }
}

void ArgsDecoder::Bool(std::string_view field, bool& out) {
  if (const framework::ArgsView j = Member(field); !j.IsNull()) {
    if (auto v = config::StrictDecoder(decoding_errors_).Bool(j, PathOf(field))) out = *v;
  }
}

void ArgsDecoder::String(std::string_view field, std::string& out) {
  if (const framework::ArgsView j = Member(field); !j.IsNull()) {
    if (auto v = config::StrictDecoder(decoding_errors_).String(j, PathOf(field))) out = std::move(*v);
  }
}

void ArgsDecoder::StringList(std::string_view field, std::vector<std::string>& out) {
  if (const framework::ArgsView j = Member(field); !j.IsNull()) {
    const size_t before = decoding_errors_.size();
    auto v = config::StrictDecoder(decoding_errors_).StringList(j, PathOf(field));
    if (decoding_errors_.size() == before) out = std::move(v);
  }
}

void ArgsDecoder::Object(std::string_view field, const std::function<void(ArgsDecoder&)>& read) {
  const framework::ArgsView j = Member(field);
  if (j.IsNull()) return;
  ArgsDecoder child(j, PathOf(field));
  if (child.IsObject()) read(child);
  if (auto errors = child.Finish()) {
    auto& sink = errors->decoding ? decoding_errors_ : validation_errors_;
    sink.insert(sink.end(), errors->errors.begin(), errors->errors.end());
  }
}

framework::ArgsView ArgsDecoder::Raw(std::string_view field) { return Member(field); }

void ArgsDecoder::Invalid(std::string_view field, const framework::ArgsView& value, std::string_view detail) {
  InvalidShown(field, value.IsString() ? util::GoQuote(value.GetString()) : value.Encode(), detail);
}

void ArgsDecoder::Invalid(std::string_view field, std::string_view value, std::string_view detail) {
  InvalidShown(field, util::GoQuote(value), detail);
}

void ArgsDecoder::Invalid(std::string_view field, double value, std::string_view detail) {
  InvalidShown(field, framework::FormatMessageNumber(value), detail);
}

void ArgsDecoder::InvalidShown(std::string_view field, std::string_view shown, std::string_view detail) {
  validation_errors_.push_back(config::FieldInvalid(PathOf(field), shown, detail));
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

void ArgsEncoder::Object(std::string_view field, const std::function<void(ArgsEncoder&)>& write) {
  writer_.Key(field).StartObject();
  ArgsEncoder child(writer_);
  write(child);
  writer_.EndObject();
}

std::optional<framework::ArgsErrors> ArgsDecoder::Finish() {
  if (!finished_ && object_.IsObject()) {
    // In name order, as they were always reported.
    std::vector<std::string_view> unknown;
    for (const auto [key, value] : object_.Members()) {
      if (std::ranges::find(known_, key) == known_.end()) unknown.push_back(key);
    }
    std::ranges::sort(unknown);
    for (std::string_view key : unknown) {
      decoding_errors_.push_back(fmt::format("unknown field {}", util::GoQuote(PathOf(key))));
    }
  }
  finished_ = true;
  if (!decoding_errors_.empty()) return framework::ArgsErrors{true, std::move(decoding_errors_)};
  if (!validation_errors_.empty()) return framework::ArgsErrors{false, std::move(validation_errors_)};
  return std::nullopt;
}

}  // namespace kubesched::sdk
