#include "sim/timeline.h"

#include "api/time_format.h"
#include "store/meta.h"
#include "util/duration.h"
#include "util/log.h"

namespace kubesched::sim {

Timeline::Timeline(store::Store& store, const util::Clock& clock) : store_(store), clock_(clock) {}

void Timeline::Add(const store::ResourceType& type, std::string namespace_, std::string name, std::string json,
                   std::optional<int64_t> create_at_ns, std::optional<int64_t> delete_at_ns) {
  const size_t index = entries_.size();
  entries_.push_back(Entry{&type, std::move(namespace_), std::move(name), create_at_ns ? std::move(json) : ""});
  if (create_at_ns) due_.emplace(*create_at_ns, Due{true, index});
  if (delete_at_ns) due_.emplace(*delete_at_ns, Due{false, index});
}

std::optional<int64_t> Timeline::NextEventNs() const {
  if (due_.empty()) return std::nullopt;
  return due_.begin()->first;
}

void Timeline::FireEvents(int64_t now_ns) {
  while (!due_.empty() && due_.begin()->first <= now_ns) {
    const Due due = due_.begin()->second;
    due_.erase(due_.begin());
    Entry& e = entries_[due.entry];
    if (due.create) {
      if (e.json.empty()) continue;  // deleted before it was created
      api::json::Document doc;
      if (!api::json::Parse(e.json, doc)) continue;
      e.json.clear();
      // The API server stamps the object when it is created, now.
      api::json::Value& meta = store::Metadata(doc);
      api::json::Set(meta, "creationTimestamp",
                     api::json::MakeString(api::FormatRFC3339(clock_.NowNs()), doc.GetAllocator()), doc.GetAllocator());
      if (auto created = store_.Restore(*e.type, e.namespace_, std::move(doc)); !created) {
        KS_LOG.WarningS("Timeline: creating an object failed", "kind", e.type->singular, "object",
                        log::KRef(e.namespace_, e.name), "err", created.error().message);
      }
      continue;
    }
    if (!e.json.empty()) {  // not created yet: it never will be
      e.json.clear();
      continue;
    }
    if (auto deleted = store_.Delete(*e.type, e.namespace_, e.name, {}); !deleted) {
      KS_LOG_V(4).InfoS("Timeline: deleting an object failed", "kind", e.type->singular, "object",
                        log::KRef(e.namespace_, e.name), "err", deleted.error().message);
    }
  }
}

std::optional<int64_t> TimelineTime(const api::ObjectMeta& meta, std::string_view annotation, int64_t start_ns) {
  const std::string* text = meta.annotations.Find(annotation);
  if (text == nullptr) return std::nullopt;
  auto d = util::ParseDuration(*text);
  if (!d || *d < 0) return std::nullopt;
  return start_ns + *d;
}

}  // namespace kubesched::sim
