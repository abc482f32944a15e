#pragma once
// Writes plugin args as compact JSON text: how a plugin encodes its defaulted args (ArgsType's
// result, shown by `kubesched plugins`). Output is the codec's (api::json::StringWriter's), so
// there is one JSON writer; this header, part of the plugin SDK, includes no JSON library.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kubesched::framework {

//! Events in document order; the caller pairs keys with values and opens with closes:
//!   ArgsWriter w;
//!   w.StartObject().Key("weight").Int64(1).Key("names").StringList({"a"}).EndObject();
//!   std::string text = std::move(w).Take();   // {"weight":1,"names":["a"]}
class ArgsWriter {
 public:
  ArgsWriter& StartObject();
  ArgsWriter& EndObject();
  ArgsWriter& StartArray();
  ArgsWriter& EndArray();
  ArgsWriter& Key(std::string_view key);
  ArgsWriter& String(std::string_view s);
  ArgsWriter& Int64(int64_t i);
  //! NaN and infinities, which JSON cannot hold, are written as null.
  ArgsWriter& Double(double d);
  ArgsWriter& Bool(bool b);
  ArgsWriter& Null();
  //! An array of strings.
  ArgsWriter& StringList(const std::vector<std::string>& items);
  //! A value already encoded as JSON text (by another writer), spliced in as it is.
  ArgsWriter& Json(std::string_view text);

  //! The text written.
  std::string Take() && { return std::move(out_); }
  const std::string& text() const { return out_; }

 private:
  void Separate();

  std::string out_;
  bool comma_ = false;  // a value was written at this level: the next needs a comma
};

}  // namespace kubesched::framework
