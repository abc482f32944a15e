#pragma once
// One watch's queue: the store offers it every change (with the store's lock held), it keeps
// those its namespace and selectors let through, as upstream's cacher does (an object that stops
// matching is DELETED for this watcher, one that starts matching ADDED), and one consumer drains
// it. Overflow closes it instead of blocking the writer.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "store/selectors.h"
#include "store/store.h"

namespace kubesched::store {

//! `stored` as a client of `served` sees it: itself, or converted from its storage form (an
//! events.k8s.io/v1 Event from a stored core/v1 Event).
ObjectPtr Present(const ResourceType& served, ObjectPtr stored);
//! A BOOKMARK's object: kind, apiVersion and metadata.resourceVersion only; with
//! `initial_events_end`, the annotation "k8s.io/initial-events-end": "true".
ObjectPtr MakeBookmark(const ResourceType& served, uint64_t rv, bool initial_events_end);

class WatchState {
 public:
  WatchState(const ResourceType& served, std::string namespace_, CompiledSelectors selectors, bool allow_bookmarks,
             size_t capacity, std::chrono::milliseconds bookmark_interval);

  //! A committed change of any resource (the store's lock held): queued when it concerns this
  //! watch, after translation for the selectors. Closes the watch when the queue is full, unless
  //! `replay` (history replayed to a watch that resumes: queued however long, as the API server's
  //! watch cache serves a resumed watch from its window; only live events count against a slow
  //! watcher).
  void Offer(const WatchEvent& event, bool replay = false);
  //! An initial event (the current objects, past history): queued without the capacity check.
  void Push(WatchEvent event);
  //! Whether `object` is one this watch selects (namespace and selectors).
  bool Selects(const Object& object) const;
  void Close(std::string reason);
  bool Closed() const;
  std::string CloseReason() const;
  std::optional<WatchEvent> Next(std::chrono::milliseconds timeout);
  //! Called after an event is queued and when the state closes (Watcher::SetWakeup).
  void SetWakeup(std::function<void()> wake);

 private:
  //! Calls the wakeup, if any, with mu_ released.
  void Wake(std::unique_lock<std::mutex>& lock);

  const ResourceType& served_;
  const ResourceType& stored_;
  const std::string namespace_;
  const CompiledSelectors selectors_;
  const bool allow_bookmarks_;
  const size_t capacity_;
  const std::chrono::milliseconds bookmark_interval_;

  mutable std::mutex mu_;  // guards the members below
  std::condition_variable cv_;
  std::function<void()> wake_;
  std::deque<WatchEvent> queue_;
  bool closed_ = false;
  std::string close_reason_;
  //! The latest resourceVersion offered (matching or not): what a bookmark reports.
  uint64_t progress_rv_ = 0;
  //! When the consumer last received an event (bookmarks come after bookmark_interval_ of quiet).
  std::chrono::steady_clock::time_point last_sent_;
};

//! The Watcher handed to callers: drains a WatchState; stopping or destroying it closes the state,
//! which the store then drops.
class StoreWatcher final : public Watcher {
 public:
  explicit StoreWatcher(std::shared_ptr<WatchState> state) : state_(std::move(state)) {}
  ~StoreWatcher() override { state_->Close("stopped"); }
  std::optional<WatchEvent> Next(std::chrono::milliseconds timeout) override { return state_->Next(timeout); }
  bool Closed() const override { return state_->Closed(); }
  std::string CloseReason() const override { return state_->CloseReason(); }
  void Stop() override { state_->Close("stopped"); }
  void SetWakeup(std::function<void()> wake) override { state_->SetWakeup(std::move(wake)); }

 private:
  std::shared_ptr<WatchState> state_;
};

}  // namespace kubesched::store
