#pragma once
// Typed plugin args: upstream's `<Plugin>Args` kinds of kubescheduler.config.k8s.io/v1. A plugin
// that has one registers an ArgsType beside its factory, so that the configuration loader can
// check a file's args (every error, with its full field path) before any plugin is built, and
// `kubesched plugins` can show the fields and their defaults.

#include <expected>
#include <functional>
#include <string>
#include <vector>

#include "framework/args_view.h"

namespace kubesched::framework {

//! What is wrong with a plugin's args, each error a field error with its full path
//! (`profiles[0].pluginConfig[1].args.scoringStrategy.type: Unsupported value: ...`, or
//! `unknown field "profiles[0].pluginConfig[1].args.foo"`).
struct ArgsErrors {
  //! True for decoding errors (an unknown field, a value of the wrong type): upstream's strict
  //! decoder fails on them before validation runs, so no validation error is listed with them.
  bool decoding = false;
  std::vector<std::string> errors;
};

struct ArgsType {
  //! The args kind, "<Plugin>Args".
  std::string kind;
  //! Decodes `args` strictly (null: none given), applies upstream's v1 defaults and validates.
  //! Returns the defaulted args encoded as in a configuration file, as compact JSON text (fields
  //! in upstream's order, unset optional fields as null; written with ArgsWriter), or every
  //! error, paths rooted at `path` ("" for relative paths). Pure: safe to call from any thread.
  std::function<std::expected<std::string, ArgsErrors>(const ArgsView& args, const std::string& path)> decode;
};

}  // namespace kubesched::framework
