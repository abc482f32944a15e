#include "framework/args_writer.h"

#include <cmath>

#include "api/json_writer.h"

namespace kubesched::framework {

// Each scalar goes through a StringWriter of its own (whose separators start afresh), so the
// escapes and number formatting are the codec's; the separators between them are kept here.
void ArgsWriter::Separate() {
  if (comma_) out_ += ',';
  comma_ = true;
}

ArgsWriter& ArgsWriter::StartObject() {
  Separate();
  out_ += '{';
  comma_ = false;
  return *this;
}

ArgsWriter& ArgsWriter::EndObject() {
  out_ += '}';
  comma_ = true;
  return *this;
}

ArgsWriter& ArgsWriter::StartArray() {
  Separate();
  out_ += '[';
  comma_ = false;
  return *this;
}

ArgsWriter& ArgsWriter::EndArray() {
  out_ += ']';
  comma_ = true;
  return *this;
}

ArgsWriter& ArgsWriter::Key(std::string_view key) {
  Separate();
  api::json::StringWriter(out_).String(key);
  out_ += ':';
  comma_ = false;
  return *this;
}

ArgsWriter& ArgsWriter::String(std::string_view s) {
  Separate();
  api::json::StringWriter(out_).String(s);
  return *this;
}

ArgsWriter& ArgsWriter::Int64(int64_t i) {
  Separate();
  api::json::StringWriter(out_).Int64(i);
  return *this;
}

ArgsWriter& ArgsWriter::Double(double d) {
  if (!std::isfinite(d)) return Null();
  Separate();
  api::json::StringWriter(out_).Double(d);
  return *this;
}

ArgsWriter& ArgsWriter::Bool(bool b) {
  Separate();
  api::json::StringWriter(out_).Bool(b);
  return *this;
}

ArgsWriter& ArgsWriter::Null() {
  Separate();
  api::json::StringWriter(out_).Null();
  return *this;
}

ArgsWriter& ArgsWriter::Json(std::string_view text) {
  Separate();
  out_ += text;
  return *this;
}

ArgsWriter& ArgsWriter::StringList(const std::vector<std::string>& items) {
  StartArray();
  for (const auto& s : items) String(s);
  return EndArray();
}

}  // namespace kubesched::framework
