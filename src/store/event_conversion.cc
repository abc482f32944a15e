#include "store/event_conversion.h"

#include <string_view>
#include <utility>

namespace kubesched::store {

namespace json = api::json;

namespace {

// (events.k8s.io/v1 name, core/v1 name); eventTime, series, action, related, reason, type and
// reportingInstance are spelt the same in both.
constexpr std::pair<std::string_view, std::string_view> kRenames[] = {
    {"note", "message"},
    {"regarding", "involvedObject"},
    {"reportingController", "reportingComponent"},
    {"deprecatedSource", "source"},
    {"deprecatedFirstTimestamp", "firstTimestamp"},
    {"deprecatedLastTimestamp", "lastTimestamp"},
    {"deprecatedCount", "count"},
};

void Rename(json::Document& doc, std::string_view from, std::string_view to) {
  json::Value* v = json::Find(doc, from);
  if (v == nullptr) return;
  json::Value moved(std::move(*v));
  json::Remove(doc, from);
  json::Set(doc, to, std::move(moved), doc.GetAllocator());
}

}  // namespace

void EventsV1ToCore(json::Document& event) {
  if (!event.IsObject()) return;
  for (auto [v1, core] : kRenames) Rename(event, v1, core);
  auto& a = event.GetAllocator();
  json::Set(event, "apiVersion", json::MakeString("v1", a), a);
  json::Set(event, "kind", json::MakeString("Event", a), a);
}

void CoreToEventsV1(json::Document& event) {
  if (!event.IsObject()) return;
  for (auto [v1, core] : kRenames) Rename(event, core, v1);
  auto& a = event.GetAllocator();
  json::Set(event, "apiVersion", json::MakeString("events.k8s.io/v1", a), a);
  json::Set(event, "kind", json::MakeString("Event", a), a);
}

}  // namespace kubesched::store
