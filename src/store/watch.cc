#include "store/watch.h"

#include <fmt/format.h>

#include "store/meta.h"

namespace kubesched::store {

namespace json = api::json;

ObjectPtr Present(const ResourceType& served, ObjectPtr stored) {
  if (served.stored_as == nullptr || stored == nullptr || stored->type == &served) return stored;
  json::Document doc = ParseObject(*stored);
  if (served.from_storage) served.from_storage(doc);
  return MakeObject(served, doc, stored->resource_version);
}

ObjectPtr MakeBookmark(const ResourceType& served, uint64_t rv, bool initial_events_end) {
  json::Document doc;
  doc.SetObject();
  auto& a = doc.GetAllocator();
  json::Set(doc, "kind", json::MakeString(served.kind, a), a);
  json::Set(doc, "apiVersion", json::MakeString(served.GroupVersion(), a), a);
  json::Value& meta = json::Child(doc, "metadata", a);
  json::Set(meta, "resourceVersion", json::MakeString(std::to_string(rv), a), a);
  if (initial_events_end) {
    json::Set(json::Child(meta, "annotations", a), "k8s.io/initial-events-end", json::MakeString("true", a), a);
  }
  auto obj = std::make_shared<Object>();
  obj->type = &served;
  obj->resource_version = rv;
  obj->json = json::Encode(doc);
  return obj;
}

WatchState::WatchState(const ResourceType& served, std::string namespace_, CompiledSelectors selectors,
                       bool allow_bookmarks, size_t capacity, std::chrono::milliseconds bookmark_interval)
    : served_(served),
      stored_(served.stored_as ? *served.stored_as : served),
      namespace_(std::move(namespace_)),
      selectors_(std::move(selectors)),
      allow_bookmarks_(allow_bookmarks),
      capacity_(capacity),
      bookmark_interval_(bookmark_interval),
      last_sent_(std::chrono::steady_clock::now()) {}

bool WatchState::Selects(const Object& object) const {
  if (!namespace_.empty() && object.namespace_ != namespace_) return false;
  return selectors_.Matches(object);
}

void WatchState::Offer(const WatchEvent& event, bool replay) {
  std::optional<WatchEvent> out;
  if (event.object && event.object->type == &stored_) {
    const bool now = Selects(*event.object);
    const bool before = event.old_object && Selects(*event.old_object);
    switch (event.type) {
      case EventType::kAdded:
        if (now) out = event;
        break;
      case EventType::kModified:
        if (now && before) {
          out = event;
        } else if (now) {
          out = WatchEvent{EventType::kAdded, event.object, nullptr};
        } else if (before) {
          // cacher.go: the previous version, with the change's resourceVersion.
          out = WatchEvent{EventType::kDeleted, WithResourceVersion(*event.old_object, event.object->resource_version),
                           event.old_object};
        }
        break;
      case EventType::kDeleted:
        if (before || (!event.old_object && now)) out = event;
        break;
      case EventType::kBookmark:
        break;
    }
  }
  std::unique_lock lock(mu_);
  if (closed_) return;
  if (event.object) progress_rv_ = std::max(progress_rv_, event.object->resource_version);
  if (!out) return;
  if (!replay && queue_.size() >= capacity_) {
    // The API server drops a watcher that cannot keep up rather than stall every writer.
    closed_ = true;
    close_reason_ = fmt::format("too slow: more than {} events queued", capacity_);
    queue_.clear();
    cv_.notify_all();
    Wake(lock);
    return;
  }
  queue_.push_back(std::move(*out));
  cv_.notify_one();
  Wake(lock);
}

void WatchState::Push(WatchEvent event) {
  std::unique_lock lock(mu_);
  if (closed_) return;
  if (event.object) progress_rv_ = std::max(progress_rv_, event.object->resource_version);
  queue_.push_back(std::move(event));
  cv_.notify_one();
  Wake(lock);
}

void WatchState::Close(std::string reason) {
  std::unique_lock lock(mu_);
  if (closed_) return;
  closed_ = true;
  close_reason_ = std::move(reason);
  queue_.clear();
  cv_.notify_all();
  Wake(lock);
}

void WatchState::SetWakeup(std::function<void()> wake) {
  std::unique_lock lock(mu_);
  wake_ = std::move(wake);
  // Events queued before the consumer registered (the initial list) are waiting already.
  if (!queue_.empty() || closed_) Wake(lock);
}

void WatchState::Wake(std::unique_lock<std::mutex>& lock) {
  if (!wake_) return;
  std::function<void()> wake = wake_;
  lock.unlock();
  wake();
}

bool WatchState::Closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

std::string WatchState::CloseReason() const {
  std::lock_guard lock(mu_);
  return close_reason_;
}

std::optional<WatchEvent> WatchState::Next(std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  std::unique_lock lock(mu_);
  while (true) {
    if (closed_) return std::nullopt;
    if (!queue_.empty()) {
      WatchEvent e = std::move(queue_.front());
      queue_.pop_front();
      last_sent_ = Clock::now();
      lock.unlock();
      // Conversion (events.k8s.io) happens here, on the consumer's thread, not the writer's.
      e.object = Present(served_, std::move(e.object));
      if (e.old_object) e.old_object = Present(served_, std::move(e.old_object));
      return e;
    }
    const auto now = Clock::now();
    if (allow_bookmarks_ && now >= last_sent_ + bookmark_interval_ && progress_rv_ > 0) {
      last_sent_ = now;
      return WatchEvent{EventType::kBookmark, MakeBookmark(served_, progress_rv_, false), nullptr};
    }
    if (now >= deadline) return std::nullopt;
    auto wake = deadline;
    if (allow_bookmarks_) wake = std::min(wake, last_sent_ + bookmark_interval_);
    cv_.wait_until(lock, wake);
  }
}

}  // namespace kubesched::store
