#pragma once
// Upstream's validation vocabulary for plugin args: field.Error renderings
// (k8s.io/apimachinery/pkg/util/validation/field), the aggregate error text, and (from
// api/names.h) the name checks of k8s.io/apimachinery/pkg/util/validation, with upstream's exact
// wording so that messages match kube-scheduler's. The name checks themselves are api/names.h's.

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/names.h"
#include "util/go_quote.h"

namespace kubesched::config {

//! Go's %#v rendering of a []string: []string{"a", "b"}, or []string(nil) when empty.
std::string GoStringSlice(std::span<const std::string> values);

//! "<path>: Invalid value: <value>: <detail>"; `value` must already be rendered (util::GoQuote for
//! strings, plain digits for numbers). An empty path (the args object itself) drops "<path>: ".
std::string FieldInvalid(std::string_view path, std::string_view rendered_value, std::string_view detail);
//! "<path>: Unsupported value: "<value>": supported values: "a", "b"".
std::string FieldNotSupported(std::string_view path, std::string_view value,
                              std::initializer_list<std::string_view> supported);
//! "<path>: Required value: <detail>" ("<path>: Required value" without detail).
std::string FieldRequired(std::string_view path, std::string_view detail);
//! "<path>: Duplicate value: <value>"; `value` must already be rendered.
std::string FieldDuplicate(std::string_view path, std::string_view rendered_value);
//! "<path>: Forbidden: <detail>".
std::string FieldForbidden(std::string_view path, std::string_view detail);

//! errors.NewAggregate(errs).Error(): "" for none, the message alone for one, "[e1, e2]" for more
//! (duplicates dropped, as upstream).
std::string AggregateErrors(std::span<const std::string> errs);

//! Joins messages with "; " (how upstream folds several checks into one field.Error detail).
std::string JoinDetails(std::span<const std::string> msgs);

}  // namespace kubesched::config
