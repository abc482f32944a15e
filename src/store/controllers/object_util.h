#pragma once
// What the controllers read from objects' JSON: owners, pod states, selectors; shared so each
// controller reads them the same way as upstream's helpers (controller.GetControllerOf,
// podutil.IsPodReady, ...).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/json.h"
#include "store/store.h"

namespace kubesched::store::controllers {

api::json::Document Parse(const Object& object);
//! The event's object as a DOM: the store's own (WatchEvent::parsed) when the event carries one,
//! else parsed into `scratch`.
const api::json::Value& ParsedObject(const WatchEvent& event, api::json::Document& scratch);

struct OwnerRef {
  std::string kind;
  std::string name;
  std::string uid;
};
//! The ownerReference with controller: true (metav1.GetControllerOf).
std::optional<OwnerRef> ControllerOf(const api::json::Value& object);

//! Not terminating and not finished (controller.IsPodActive).
bool IsPodActive(const api::json::Value& pod);
//! The Ready condition is True (podutil.IsPodReady).
bool IsPodReady(const api::json::Value& pod);
bool IsTerminating(const api::json::Value& object);

//! An integer member, or `fallback`.
int64_t GetInt(const api::json::Value& object, std::string_view key, int64_t fallback = 0);
//! The member at a path of keys, or null.
const api::json::Value* At(const api::json::Value& root, std::initializer_list<std::string_view> keys);

//! Every object of `type` in `namespace_` ("" for all), or nothing when the list fails.
std::vector<ObjectPtr> ListAll(const Store& store, const ResourceType& type, std::string_view namespace_);

}  // namespace kubesched::store::controllers
