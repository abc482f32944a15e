#pragma once
// ArgsView and ArgsDocument over the codec's values (api/json.h), for the code that owns the
// documents (the configuration loader, tests): not a plugin-facing header.

#include "api/json.h"
#include "framework/args_view.h"

namespace kubesched::framework {

struct ArgsViewAccess {
  static ArgsView View(const api::json::Value& value) { return ArgsView(&value); }
  //! The viewed value; nullptr for a null view of nothing (an absent member).
  static const api::json::Value* Value(ArgsView view) { return static_cast<const api::json::Value*>(view.value_); }
  static ArgsDocument Adopt(api::json::Document doc);
};

//! A view of `value` (which must outlive it).
inline ArgsView ViewOf(const api::json::Value& value) { return ArgsViewAccess::View(value); }
//! The value a view shows; nullptr when it shows nothing (null).
inline const api::json::Value* ValueOf(ArgsView view) { return ArgsViewAccess::Value(view); }
//! An ArgsDocument owning `doc`.
inline ArgsDocument AdoptArgs(api::json::Document doc) { return ArgsViewAccess::Adopt(std::move(doc)); }
//! An ArgsDocument holding a copy of `value`.
ArgsDocument CopyArgs(const api::json::Value& value);

}  // namespace kubesched::framework
