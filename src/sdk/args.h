#pragma once
// Typed plugin args for plugin libraries: a plugin's `pluginConfig` args (JSON, as the
// configuration file gives them, read through framework::ArgsView) decoded strictly into a struct
// of the plugin's, with defaults and validation errors that name the field's full path, as
// kubesched's in-tree plugins report theirs; and encoded back (the defaults `kubesched plugins`
// shows) through ArgsEncoder. No JSON library's type is part of this API:
//
//   struct MyPluginArgs { int64_t arg = 42; };   // the defaults are the struct's initialisers
//
//   void Decode(sdk::ArgsDecoder& d, MyPluginArgs& args) {
//     d.Int64("arg", args.arg);                  // kept at 42 when absent
//     if (args.arg < 0) d.Invalid("arg", args.arg, "must not be negative");
//   }
//   void Encode(sdk::ArgsEncoder& e, const MyPluginArgs& args) { e.Int64("arg", args.arg); }
//
//   sdk::RegisterPlugin<MyPluginArgs>(registry, "MyPlugin", Decode, Encode,
//       [](const MyPluginArgs& args, framework::Handle&) { return std::make_unique<MyPlugin>(args); });
//
// A configuration with `args: {arg: "x", foo: 1}` is then refused before any plugin is built:
//   profiles[0].pluginConfig[0].args.arg: Invalid type: expected int64, got string
//   unknown field "profiles[0].pluginConfig[0].args.foo"

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "framework/args.h"
#include "framework/args_view.h"
#include "framework/args_writer.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/registry.h"

namespace kubesched::sdk {

//! Reads one JSON object of args. Each field read is remembered: members the decoder never asked
//! for are unknown fields (strict decoding, as upstream's). A field that is absent or null leaves
//! the target unchanged (its default). Type errors are decoding errors; the checks a plugin adds
//! (Invalid, Required, NotSupported) are validation errors, reported only when decoding succeeded,
//! as upstream's strict decoder fails before validation runs.
class ArgsDecoder {
 public:
  //! `path` is the object's field path in the configuration ("" for paths relative to the args).
  //! Null reads as an empty object; anything else that is not an object is a type error.
  ArgsDecoder(const framework::ArgsView& object, std::string path);
  //! False when the args are not an object (nothing can be read; Finish reports it).
  bool IsObject() const { return object_.IsNull() || object_.IsObject(); }
  ArgsDecoder(const ArgsDecoder&) = delete;
  ArgsDecoder& operator=(const ArgsDecoder&) = delete;

  void Int64(std::string_view field, int64_t& out);
  void Int32(std::string_view field, int32_t& out);
  void Double(std::string_view field, double& out);
  void Bool(std::string_view field, bool& out);
  void String(std::string_view field, std::string& out);
  void StringList(std::string_view field, std::vector<std::string>& out);
  //! A nested object: `read` decodes it with a decoder whose paths continue this one's.
  void Object(std::string_view field, const std::function<void(ArgsDecoder&)>& read);
  //! The member as given (null when absent), marked as known, for shapes the readers above do not
  //! cover; report problems with Invalid.
  framework::ArgsView Raw(std::string_view field);

  //! `<path>.<field>: Invalid value: <value>: <detail>`, the value as JSON (a string quoted).
  void Invalid(std::string_view field, const framework::ArgsView& value, std::string_view detail);
  void Invalid(std::string_view field, std::string_view value, std::string_view detail);
  void Invalid(std::string_view field, const char* value, std::string_view detail) {
    Invalid(field, std::string_view(value), detail);
  }
  void Invalid(std::string_view field, double value, std::string_view detail);
  template <std::integral Int>
  void Invalid(std::string_view field, Int value, std::string_view detail) {
    if constexpr (std::same_as<Int, bool>) {
      InvalidShown(field, value ? "true" : "false", detail);
    } else {
      InvalidShown(field, std::to_string(value), detail);
    }
  }
  //! `<path>.<field>: Required value: <detail>`.
  void Required(std::string_view field, std::string_view detail);
  //! `<path>.<field>: Unsupported value: "<value>": supported values: "a", "b"`.
  void NotSupported(std::string_view field, std::string_view value, const std::vector<std::string>& supported);

  //! The field's full path, for messages of the plugin's own.
  std::string PathOf(std::string_view field) const;
  //! Ends decoding: unknown fields become errors. Returns every error (decoding errors alone when
  //! there are any), or nothing when the args are valid.
  std::optional<framework::ArgsErrors> Finish();

 private:
  framework::ArgsView Member(std::string_view field);
  void InvalidShown(std::string_view field, std::string_view shown, std::string_view detail);

  framework::ArgsView object_;
  std::string path_;
  std::vector<std::string> known_;
  std::vector<std::string> decoding_errors_;
  std::vector<std::string> validation_errors_;
  bool finished_ = false;
};

//! Writes one JSON object of args, fields in the order written (upstream's order, by convention).
class ArgsEncoder {
 public:
  explicit ArgsEncoder(framework::ArgsWriter& writer) : writer_(writer) {}
  ArgsEncoder(const ArgsEncoder&) = delete;
  ArgsEncoder& operator=(const ArgsEncoder&) = delete;

  void Int64(std::string_view field, int64_t value) { writer_.Key(field).Int64(value); }
  void Double(std::string_view field, double value) { writer_.Key(field).Double(value); }
  void Bool(std::string_view field, bool value) { writer_.Key(field).Bool(value); }
  void String(std::string_view field, std::string_view value) { writer_.Key(field).String(value); }
  void StringList(std::string_view field, const std::vector<std::string>& value) {
    writer_.Key(field).StringList(value);
  }
  //! An unset optional field.
  void Null(std::string_view field) { writer_.Key(field).Null(); }
  //! A nested object, written by `write`.
  void Object(std::string_view field, const std::function<void(ArgsEncoder&)>& write);
  //! The writer, after the field's key: for shapes the writers above do not cover (exactly one
  //! value must be written).
  framework::ArgsWriter& Raw(std::string_view field) { return writer_.Key(field); }

 private:
  framework::ArgsWriter& writer_;
};

//! `args` as compact JSON text, one object written by `encode`.
template <class Args>
std::string EncodeArgs(const Args& args, void (*encode)(ArgsEncoder&, const Args&)) {
  framework::ArgsWriter writer;
  writer.StartObject();
  ArgsEncoder e(writer);
  encode(e, args);
  writer.EndObject();
  return std::move(writer).Take();
}

//! Decodes `args` (null when the configuration gives none) at `path` into a default-constructed
//! Args with `decode`.
template <class Args>
std::expected<Args, framework::ArgsErrors> DecodeArgs(const framework::ArgsView& args, const std::string& path,
                                                      void (*decode)(ArgsDecoder&, Args&)) {
  static_assert(std::is_default_constructible_v<Args>, "plugin args need a default constructor (their defaults)");
  Args out{};
  ArgsDecoder d(args, path);
  if (d.IsObject()) decode(d, out);
  if (auto errors = d.Finish()) return std::unexpected(std::move(*errors));
  return out;
}

//! Registers a plugin with typed args: the configuration loader checks a file's args with
//! `decode` (every error, full field paths) before any plugin is built, `kubesched plugins`
//! shows `encode` of the defaults, and `make` builds the plugin from the decoded args. Returns the
//! registry's error when the name is taken.
template <class Args, class Make>
std::expected<void, std::string> RegisterPlugin(framework::Registry& registry, std::string name,
                                                void (*decode)(ArgsDecoder&, Args&),
                                                void (*encode)(ArgsEncoder&, const Args&), Make make) {
  framework::ArgsType type{
      name + "Args",
      [decode, encode](const framework::ArgsView& args,
                       const std::string& path) -> std::expected<std::string, framework::ArgsErrors> {
        auto decoded = DecodeArgs<Args>(args, path, decode);
        if (!decoded) return std::unexpected(std::move(decoded.error()));
        return EncodeArgs<Args>(*decoded, encode);
      }};
  framework::PluginFactory factory =
      [decode, make](const framework::ArgsView& args,
                     framework::Handle& handle) -> std::expected<std::unique_ptr<framework::Plugin>, std::string> {
    auto decoded = DecodeArgs<Args>(args, "", decode);
    if (!decoded) {
      std::string message;
      for (const auto& e : decoded.error().errors) message += (message.empty() ? "" : ", ") + e;
      return std::unexpected(std::move(message));
    }
    return std::unique_ptr<framework::Plugin>(make(*decoded, handle));
  };
  return registry.Register(std::move(name), std::move(factory), std::move(type));
}

//! Registers a plugin without args (args given in the configuration are an error).
template <class Make>
std::expected<void, std::string> RegisterPlugin(framework::Registry& registry, std::string name, Make make) {
  framework::PluginFactory factory =
      [name, make](const framework::ArgsView& args,
                   framework::Handle& handle) -> std::expected<std::unique_ptr<framework::Plugin>, std::string> {
    if (!args.IsNull() && !(args.IsObject() && args.Size() == 0)) {
      return std::unexpected("plugin " + name + " takes no args");
    }
    return std::unique_ptr<framework::Plugin>(make(handle));
  };
  return registry.Register(std::move(name), std::move(factory));
}

}  // namespace kubesched::sdk
