#pragma once
// The scenario timeline of `simulate`: pods and nodes that come and go at set times after the
// simulation starts (annotations api::kAnnotationCreateAfter and api::kAnnotationDeleteAfter, Go
// durations). It is a simulate-only event source beside the store's controllers: at each time it
// writes to the store as a user would, creating the object (stamped with that time) or deleting
// it (a bound pod gracefully; a node, whose pods the node lifecycle then removes and their
// controllers recreate). An object deleted before it was created never is.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "api/json.h"
#include "store/controllers/controller.h"

namespace kubesched::sim {

class Timeline final : public store::controllers::Controller {
 public:
  Timeline(store::Store& store, const util::Clock& clock);

  //! Schedules the object (`json` its full JSON, as Store::Restore takes it) to be created at
  //! `create_at_ns` (nullopt: it exists already) and deleted at `delete_at_ns` (nullopt: never).
  void Add(const store::ResourceType& type, std::string namespace_, std::string name, std::string json,
           std::optional<int64_t> create_at_ns, std::optional<int64_t> delete_at_ns);

  std::string_view Name() const override { return "scenario-timeline"; }
  void OnEvent(const store::WatchEvent&) override {}
  void Resync() override {}
  std::optional<int64_t> NextEventNs() const override;
  void FireEvents(int64_t now_ns) override;
  //! When the last scheduled creation or deletion is due; nullopt when none is pending.
  std::optional<int64_t> LastEventNs() const {
    return due_.empty() ? std::nullopt : std::optional(due_.rbegin()->first);
  }

 private:
  struct Entry {
    const store::ResourceType* type = nullptr;
    std::string namespace_;
    std::string name;
    std::string json;  //!< empty once created
  };
  struct Due {
    bool create = false;
    size_t entry = 0;
  };

  store::Store& store_;
  const util::Clock& clock_;
  std::vector<Entry> entries_;
  //! What is due, by time; equal times keep the order they were added in.
  std::multimap<int64_t, Due> due_;
};

//! The time an object's timeline annotation names, counted from `start_ns`; nullopt when the
//! annotation is absent or does not parse (the loader reported that already).
std::optional<int64_t> TimelineTime(const api::ObjectMeta& meta, std::string_view annotation, int64_t start_ns);

}  // namespace kubesched::sim
