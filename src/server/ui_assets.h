#pragma once
// The web UI's files (src/ui/assets/), embedded in the binary at build time by
// cmake/embed_ui.cmake into a generated ui_assets.cc: served by server/ui_handler.h.

#include <span>
#include <string_view>

namespace kubesched::server {

struct UiAsset {
  std::string_view name;          //!< "app.js": the path under /ui/ ("index.html" is /ui/ too)
  std::string_view content_type;  //!< "text/javascript; charset=utf-8"
  std::string_view body;
};

//! Every embedded file, in the order cmake/embed_ui.cmake was given them.
std::span<const UiAsset> UiAssets();

}  // namespace kubesched::server
