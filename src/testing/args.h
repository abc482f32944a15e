#pragma once
// Plugin args for tests, from JSON text.

#include <ostream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "framework/args_view.h"

namespace kubesched::testing {

//! `json` parsed as plugin args (a test's input; a parse error throws, failing the test).
inline framework::ArgsDocument ArgsJson(std::string_view json) {
  auto doc = framework::ArgsDocument::Parse(json);
  if (!doc) throw std::invalid_argument(doc.error());
  return std::move(*doc);
}

}  // namespace kubesched::testing

namespace kubesched::framework {

//! gtest prints a view as its JSON.
inline void PrintTo(const ArgsView& view, std::ostream* os) { *os << view.Encode(); }
inline void PrintTo(const ArgsDocument& doc, std::ostream* os) { *os << doc.View().Encode(); }

}  // namespace kubesched::framework
