#include "cluster/event_recorder.h"

#include <unistd.h>

#include <chrono>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

#include "api/json.h"
#include "api/json_writer.h"
#include "api/time_format.h"
#include "util/log.h"

namespace kubesched::cluster {

namespace {

using Reason = store::Error::Reason;

const store::ResourceType& EventsResource(const store::Store& store) {
  const store::ResourceType* type = store.FindResource("events.k8s.io", "events");
  if (type == nullptr) throw std::logic_error("the store does not serve events.k8s.io events");
  return *type;
}

std::string Hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

// corev1.ObjectReference's JSON, its members in the Go struct's order, empty ones left out.
void WriteReference(api::json::StringWriter& w, const framework::EventObjectReference& ref) {
  w.StartObject();
  auto member = [&w](std::string_view key, std::string_view value) {
    if (value.empty()) return;
    w.Key(key);
    w.String(value);
  };
  member("kind", ref.kind);
  member("namespace", ref.namespace_);
  member("name", ref.name);
  member("uid", ref.uid);
  member("apiVersion", ref.api_version);
  member("resourceVersion", ref.resource_version);
  w.EndObject();
}

void WriteSeries(api::json::StringWriter& w, int32_t count, int64_t last_observed_ns) {
  w.StartObject();
  w.Key("count");
  w.Int(count);
  w.Key("lastObservedTime");
  w.String(api::FormatRFC3339Micro(last_observed_ns));
  w.EndObject();
}

}  // namespace

EventRecorder::EventRecorder(store::Store& store, const util::Clock& clock, EventRecorderOptions options)
    : store_(store), clock_(clock), events_(EventsResource(store)), options_(std::move(options)) {
  if (options_.hostname.empty()) options_.hostname = Hostname();
  // wait.Until runs finishSeries and the refresh at once and then every period; on an empty
  // cache the first runs do nothing, so the timers start one period from now.
  const int64_t now = clock_.NowNs();
  next_finish_ns_ = now + kFinishTimeNs;
  next_refresh_ns_ = now + kRefreshTimeNs;
  rng_.seed(static_cast<uint32_t>(now));
}

EventRecorder::~EventRecorder() { Stop(); }

std::string EventRecorder::ReportingInstance(std::string_view reporting_controller) const {
  return fmt::format("{}-{}", reporting_controller, options_.hostname);
}

uint64_t EventRecorder::dropped() const {
  std::lock_guard lock(queue_mu_);
  return dropped_;
}

bool EventRecorder::Record(const framework::EventRecord& event) {
  const int64_t now = clock_.NowNs();
  {
    std::lock_guard lock(queue_mu_);
    if (queue_.size() < options_.queue_capacity) {
      queue_.push_back({event, now});
      queue_cv_.notify_one();
      return true;
    }
    ++dropped_;
  }
  KS_LOG.WarningS("Unable to record event: too many queued events, dropped event", "object",
                  fmt::format("{}/{}", event.regarding.namespace_, event.regarding.name), "reason", event.reason,
                  "type", event.type);
  return false;
}

void EventRecorder::Start() {
  std::lock_guard lock(queue_mu_);
  if (worker_.joinable() || stopping_) return;
  worker_ = std::thread([this] { Work(); });
}

void EventRecorder::Stop() {
  {
    std::lock_guard lock(queue_mu_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
  // What was queued before Stop() is written even when no worker ran.
  Flush();
}

void EventRecorder::Flush() { WriteQueuedAndDue(); }

void EventRecorder::Work() {
  for (;;) {
    bool stopping = false;
    {
      std::unique_lock lock(queue_mu_);
      // Wakes for new occurrences at once, and at least every second for the retries and timers
      // (the clock may be virtual, so their due times cannot be waited for as such).
      queue_cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_ || !queue_.empty(); });
      stopping = stopping_;
    }
    WriteQueuedAndDue();
    if (stopping) return;
  }
}

void EventRecorder::WriteQueuedAndDue() {
  std::lock_guard write_lock(write_mu_);
  for (;;) {
    std::deque<Occurrence> batch;
    {
      std::lock_guard lock(queue_mu_);
      batch.swap(queue_);
    }
    if (batch.empty()) break;
    for (const Occurrence& o : batch) Process(o);
  }
  const int64_t now = clock_.NowNs();
  RunRetries(now);
  RunTimers(now);
}

void EventRecorder::Process(const Occurrence& occurrence) {
  const framework::EventRecord& r = occurrence.record;
  Key key{r.type,      r.action,
          r.reason,    r.reporting_controller,
          r.regarding, r.related.value_or(framework::EventObjectReference{})};
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    Event& cached = it->second;
    if (cached.series) {
      // Later occurrences only count; the refresh or the series' end writes the count.
      ++cached.series->count;
      cached.series->last_observed_ns = occurrence.time_ns;
      return;
    }
    cached.series = Series{2, occurrence.time_ns};
    Event copy = cached;
    if (Write(copy) == Outcome::kRetry) ScheduleRetry(std::move(copy), 1);
    return;
  }
  // makeEvent: named after the regarding object and the time in hexadecimal nanoseconds, in its
  // namespace (or "default").
  Event event;
  event.name = fmt::format("{}.{:x}", r.regarding.name, occurrence.time_ns);
  event.namespace_ = r.regarding.namespace_.empty() ? std::string(api::kNamespaceDefault) : r.regarding.namespace_;
  event.event_time_ns = occurrence.time_ns;
  event.record = r;
  Event copy = event;
  cache_.emplace(std::move(key), std::move(event));
  if (Write(copy) == Outcome::kRetry) ScheduleRetry(std::move(copy), 1);
}

EventRecorder::Outcome EventRecorder::Write(const Event& event) {
  const framework::EventRecord& r = event.record;
  store::Result<store::ObjectPtr> result;
  if (event.series) {
    // createPatchBytesForSeries: the two-way strategic merge patch from the Event without its
    // series to the Event with it, which is the series alone.
    std::string patch;
    api::json::StringWriter w(patch);
    w.StartObject();
    w.Key("series");
    WriteSeries(w, event.series->count, event.series->last_observed_ns);
    w.EndObject();
    w.Finish();
    result = store_.Patch(events_, event.namespace_, event.name, store::PatchType::kStrategicMergePatch, patch, "");
  }
  // A series whose Event is gone (deleted, or its create still failing) is created whole.
  if (!event.series || (!result && result.error().reason == Reason::kNotFound)) {
    std::string text;
    api::json::StringWriter w(text);
    w.StartObject();
    w.Key("apiVersion");
    w.String(events_.GroupVersion());
    w.Key("kind");
    w.String(events_.kind);
    w.Key("metadata");
    w.StartObject();
    w.Key("name");
    w.String(event.name);
    w.Key("namespace");
    w.String(event.namespace_);
    w.EndObject();
    w.Key("eventTime");
    w.String(api::FormatRFC3339Micro(event.event_time_ns));
    if (event.series) {
      w.Key("series");
      WriteSeries(w, event.series->count, event.series->last_observed_ns);
    }
    w.Key("reportingController");
    w.String(r.reporting_controller);
    w.Key("reportingInstance");
    w.String(ReportingInstance(r.reporting_controller));
    w.Key("action");
    w.String(r.action);
    w.Key("reason");
    w.String(r.reason);
    w.Key("regarding");
    WriteReference(w, r.regarding);
    if (r.related) {
      w.Key("related");
      WriteReference(w, *r.related);
    }
    w.Key("note");
    w.String(r.note);
    w.Key("type");
    w.String(r.type);
    w.EndObject();
    w.Finish();
    api::json::Document body;
    if (!api::json::Parse(text, body)) {
      KS_LOG.ErrorS("malformed JSON", "Unable to construct event (will not retry!)", "event", event.name);
      return Outcome::kDropped;
    }
    result = store_.Create(events_, event.namespace_, std::move(body));
  }
  if (result) return Outcome::kWritten;
  const store::Error& error = result.error();
  switch (error.reason) {
    case Reason::kAlreadyExists:
      // A series' create after its patch found nothing: the first create landed meanwhile, so
      // the patch will find it now.
      if (event.series) return Outcome::kRetry;
      KS_LOG_V(5).InfoS("Server rejected event (will not retry!)", "event", event.name, "err", error.message);
      return Outcome::kDropped;
    case Reason::kInternal:
    case Reason::kTimeout:
      // What a store reports when it cannot reach the server (client-go retries transport
      // errors).
      KS_LOG.ErrorS(error.message, "Unable to write event (may retry after sleeping)", "event", event.name);
      return Outcome::kRetry;
    default:
      KS_LOG.ErrorS(error.message, "Server rejected event (will not retry!)", "event", event.name);
      return Outcome::kDropped;
  }
}

void EventRecorder::ScheduleRetry(Event event, int tries) {
  if (tries >= options_.max_tries) {
    KS_LOG.ErrorS("", "Unable to write event (retry limit exceeded!)", "event", event.name);
    return;
  }
  // wait.Jitter(sleepDuration, 0.25).
  const double jitter = std::uniform_real_distribution<double>(0.0, 0.25)(rng_);
  const auto delay = static_cast<int64_t>(static_cast<double>(options_.retry_interval_ns) * (1.0 + jitter));
  retries_.push_back({std::move(event), tries, clock_.NowNs() + delay});
}

void EventRecorder::RunRetries(int64_t now_ns) {
  std::vector<Retry> due;
  for (auto it = retries_.begin(); it != retries_.end();) {
    if (it->due_ns <= now_ns) {
      due.push_back(std::move(*it));
      it = retries_.erase(it);
    } else {
      ++it;
    }
  }
  for (Retry& r : due) {
    if (Write(r.event) == Outcome::kRetry) ScheduleRetry(std::move(r.event), r.tries + 1);
  }
}

void EventRecorder::RunTimers(int64_t now_ns) {
  if (now_ns >= next_finish_ns_) {
    // finishSeries: a series idle for finishTime gets its final count written and is forgotten
    // (kept while that write must be retried); a single Event is forgotten finishTime after it.
    for (auto it = cache_.begin(); it != cache_.end();) {
      const Event& e = it->second;
      bool forget = false;
      if (e.series) {
        forget = e.series->last_observed_ns < now_ns - kFinishTimeNs && Write(e) != Outcome::kRetry;
      } else {
        forget = e.event_time_ns < now_ns - kFinishTimeNs;
      }
      it = forget ? cache_.erase(it) : std::next(it);
    }
    next_finish_ns_ = now_ns + kFinishTimeNs;
  }
  if (now_ns >= next_refresh_ns_) {
    // refreshExistingEventSeries: the heartbeat that writes every series' current count.
    for (const auto& [key, e] : cache_) {
      if (e.series) (void)Write(e);
    }
    next_refresh_ns_ = now_ns + kRefreshTimeNs;
  }
}

}  // namespace kubesched::cluster
