#pragma once
// Strict decoding of JSON into typed values, as upstream decodes a KubeSchedulerConfiguration and
// its plugins' args (sigs.k8s.io/json in strict mode): an unknown field or a value of the wrong
// type is an error naming its full field path, and every error is collected, not just the first.
// Used by the configuration loader and by each plugin's args decoding, so that both word their
// errors the same way:
//   unknown field "profiles[0].pluginConfig[0].args.foo"
//   profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid type: expected int32, got string
//   parallelism: Invalid value: 4294967296: out of range for int32

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_path.h"
#include "framework/args_view.h"

namespace kubesched::config {

//! The JSON type named in decoding errors: null, object, array, string, bool, integer, number.
inline std::string_view JsonTypeName(const framework::ArgsView& j) { return j.TypeName(); }

class StrictDecoder {
 public:
  //! Errors go to `sink` (several decoders may share one list, in order).
  explicit StrictDecoder(std::vector<std::string>& sink) : errors_(sink) {}

  //! True when `j` is an object; each member not in `fields` is reported as unknown. Null (an
  //! absent value) is false without error.
  bool Object(const framework::ArgsView& j, std::string_view path, std::initializer_list<std::string_view> fields);
  //! True when `j` is an array. Null is false without error.
  bool Array(const framework::ArgsView& j, std::string_view path);

  //! The value, or nullopt when null (absent) or on error. Integral floats (1.0) read as
  //! integers, as sigs.k8s.io/yaml converts them; other floats are type errors.
  std::optional<int32_t> Int32(const framework::ArgsView& j, std::string_view path);
  std::optional<int64_t> Int64(const framework::ArgsView& j, std::string_view path);
  std::optional<std::string> String(const framework::ArgsView& j, std::string_view path);
  std::optional<bool> Bool(const framework::ArgsView& j, std::string_view path);
  //! A duration in seconds: any JSON number (kubesched's own args, e.g. solverTimeoutSeconds).
  std::optional<double> Seconds(const framework::ArgsView& j, std::string_view path);
  //! A list of strings; null reads as empty.
  std::vector<std::string> StringList(const framework::ArgsView& j, std::string_view path);

  //! Adds an error (for checks the decoder cannot make itself, e.g. a wrong kind).
  void Add(std::string error) { errors_.push_back(std::move(error)); }
  size_t error_count() const { return errors_.size(); }

 private:
  template <class Int>
  std::optional<Int> Integer(const framework::ArgsView& j, std::string_view path, std::string_view type_name);
  void TypeError(const framework::ArgsView& j, std::string_view path, std::string_view expected);

  std::vector<std::string>& errors_;
};

}  // namespace kubesched::config
