#pragma once
// EventRecorder: writes the scheduler's Events (events.k8s.io/v1) through the object store, as
// client-go's tools/events broadcaster writes them to the API server (event_broadcaster.go).
// Isomorphic occurrences (same type, action, reason, reporting controller and instance,
// regarding and related object; the note is not compared) aggregate into one Event: the first is
// created; the second PATCHes series {count: 2, lastObservedTime} onto it; later ones only bump
// the cached series, which the 30-minute refresh writes. Every 6 minutes, entries idle for 6
// minutes are dropped (a series after its final count is written), so the next occurrence
// creates a new Event.
//
// Recording never blocks the scheduling cycle: Record() enqueues (a bounded queue that drops
// when full) and a worker thread, or Flush() on the caller's thread, does the store writes. It
// works over any store::Store, the in-process one and a remote one alike.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "framework/client.h"
#include "store/store.h"
#include "util/clock.h"

namespace kubesched::cluster {

struct EventRecorderOptions {
  //! Occurrences waiting to be written before Record() drops new ones (client-go's
  //! maxQueuedEvents).
  size_t queue_capacity = 1000;
  //! The host in reportingInstance (`<reportingController>-<host>`); empty: gethostname().
  std::string hostname{};
  //! A write that failed for want of the server (store errors kInternal and kTimeout, and a
  //! series' create that raced another) is tried again after this long, jittered by up to 25%,
  //! at most max_tries times in all (client-go: 10 s and 12).
  int64_t retry_interval_ns = 10 * util::kNanosPerSecond;
  int max_tries = 12;
};

class EventRecorder {
 public:
  //! A series idle this long is finished (and a single Event forgotten); also how often that is
  //! checked (client-go's finishTime).
  static constexpr int64_t kFinishTimeNs = 6 * 60 * util::kNanosPerSecond;
  //! How often the cached series counts are written (client-go's refreshTime).
  static constexpr int64_t kRefreshTimeNs = 30 * 60 * util::kNanosPerSecond;

  //! `store` must serve events.k8s.io/v1 events and outlive the recorder. `clock` is Unix time
  //! (util::SystemClock, or a VirtualClock in tests and simulations): it stamps eventTime, names
  //! Events and drives the 6- and 30-minute timers, which start now.
  EventRecorder(store::Store& store, const util::Clock& clock, EventRecorderOptions options = {});
  //! Stop().
  ~EventRecorder();
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  //! Enqueues one occurrence, stamped with the clock's time now. Thread-safe; never waits for the
  //! store. Returns false when the queue is full: the occurrence is dropped with a warning.
  bool Record(const framework::EventRecord& event);

  //! Starts the worker thread: it writes occurrences as they are queued, retries due writes and
  //! runs the timers as the clock reaches them. At most once.
  void Start();
  //! Writes what is queued, then stops and joins the worker. Idempotent; Record() still queues
  //! afterwards (for a later Flush()).
  void Stop();
  //! On the caller's thread: writes every queued occurrence, then the retries and timers due by
  //! the clock. What tests and virtual clocks drive the recorder with; safe beside the worker.
  void Flush();

  //! Occurrences dropped because the queue was full.
  uint64_t dropped() const;
  //! `<reportingController>-<host>` for this controller.
  std::string ReportingInstance(std::string_view reporting_controller) const;

 private:
  struct Occurrence {
    framework::EventRecord record;
    int64_t time_ns = 0;
  };
  //! getKey: what makes two occurrences isomorphic (the reporting instance is fixed per
  //! controller, so the controller stands for both).
  struct Key {
    std::string type;
    std::string action;
    std::string reason;
    std::string reporting_controller;
    framework::EventObjectReference regarding;
    framework::EventObjectReference related;
    auto operator<=>(const Key&) const = default;
  };
  struct Series {
    int32_t count = 0;
    int64_t last_observed_ns = 0;
  };
  //! An Event as created (the first occurrence's note and time), with its series once repeated.
  struct Event {
    std::string name;
    std::string namespace_;
    int64_t event_time_ns = 0;
    framework::EventRecord record;
    std::optional<Series> series;
  };
  enum class Outcome { kWritten, kDropped, kRetry };
  struct Retry {
    Event event;
    int tries = 0;
    int64_t due_ns = 0;
  };

  //! Drains the queue and runs what is due. Holds write_mu_.
  void WriteQueuedAndDue();
  void Process(const Occurrence& occurrence);
  //! recordEvent: a series is patched (created when gone), a single Event created.
  Outcome Write(const Event& event);
  void ScheduleRetry(Event event, int tries);
  void RunRetries(int64_t now_ns);
  void RunTimers(int64_t now_ns);
  void Work();

  store::Store& store_;
  const util::Clock& clock_;
  const store::ResourceType& events_;
  EventRecorderOptions options_;

  mutable std::mutex queue_mu_;  // guards queue_, dropped_, stopping_
  std::condition_variable queue_cv_;
  std::deque<Occurrence> queue_;
  uint64_t dropped_ = 0;
  bool stopping_ = false;

  std::mutex write_mu_;  // guards cache_, retries_, next_*_ns_, rng_: one writer at a time
  std::map<Key, Event> cache_;
  std::vector<Retry> retries_;
  int64_t next_finish_ns_ = 0;
  int64_t next_refresh_ns_ = 0;
  std::minstd_rand rng_;

  std::thread worker_;
};

}  // namespace kubesched::cluster
