#pragma once
// The columns `kubectl get` shows for each kind, and each object's cells: upstream's server-side
// printers (pkg/printers/internalversion/printers.go) over the stored JSON. As upstream's
// TableConvertor, rows always carry every column (the wide ones included): kubectl drops the
// priority > 0 columns itself unless -o wide.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "api/json.h"
#include "store/store.h"

namespace kubesched::server {

struct Column {
  std::string_view name;
  std::string_view type;    //!< "string", "integer", "boolean", "date"
  std::string_view format;  //!< "name" for the name column, else ""
  std::string_view description;
  int priority = 0;  //!< 1: shown with -o wide only
};

using Cell = std::variant<std::string, int64_t, bool>;

//! A row condition (metav1.TableRowCondition): pods that completed or failed.
struct RowCondition {
  std::string_view type;
  std::string_view status;
  std::string_view reason;
  std::string_view message;
};

struct Printer {
  std::vector<Column> columns;
  //! Appends one cell per column for `object`, given the current Unix time in nanoseconds.
  void (*cells)(const api::json::Value& object, int64_t now_ns, std::vector<Cell>& out) = nullptr;
  //! The row's conditions, or null when the kind has none.
  std::optional<RowCondition> (*condition)(const api::json::Value& object) = nullptr;
};

//! The printer for `type` (by group and resource), or the default one: NAME, AGE.
const Printer& PrinterFor(const store::ResourceType& type);

//! apimachinery's duration.HumanDuration: "45s", "3m20s", "5h", "2d3h", "3y".
std::string HumanDuration(int64_t nanoseconds);
//! The age of a timestamp as kubectl shows it ("<unknown>" when absent or unreadable).
std::string TranslateTimestampSince(std::string_view timestamp, int64_t now_ns);
//! metav1.FormatLabelSelector: "app=web,tier in (a,b)", "<none>" when empty.
std::string FormatLabelSelector(const api::json::Value* selector);

//! The current Unix time in nanoseconds.
int64_t UnixNowNs();

}  // namespace kubesched::server
