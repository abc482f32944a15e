#pragma once
// Reflector: keeps one resource of a remote API server mirrored, as client-go's reflector does
// for an informer. It LISTs (in pages), hands the whole list over as a replacement, then WATCHes
// from the list's resourceVersion with bookmarks, handing each change over as it arrives. A watch
// that ends is resumed from the last resourceVersion seen; a `410 Gone` (the version was
// compacted) or an ERROR event means a full relist, whose replacement tells the sink which objects
// went away meanwhile; so does an event whose resourceVersion is older than one already seen (the
// server's history went back: a restore, or a store that lost writes). Failures back off exponentially (0.8 s doubling
// to 30 s, as client-go), and the backoff resets once a watch has run cleanly for a while.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "api/json.h"
#include "client/rest_client.h"
#include "store/store.h"

namespace kubesched::client {

//! Where a reflector's results go. Called on the reflector's thread, one call at a time.
class ReflectorSink {
 public:
  virtual ~ReflectorSink() = default;
  //! The complete current list of `type` (each item with apiVersion and kind set): objects the
  //! sink holds that are not in it are gone.
  virtual void Replace(const store::ResourceType& type, std::vector<api::json::Document> items) = 0;
  //! One watch event (kAdded, kModified or kDeleted) with the object as the server sent it.
  virtual void Apply(const store::ResourceType& type, store::EventType event, api::json::Document object) = 0;
};

struct ReflectorOptions {
  std::string label_selector{};
  std::string field_selector{};
  //! Items per LIST page (client-go's default 500); 0: no paging.
  int64_t page_size = 500;
  std::chrono::milliseconds initial_backoff{800};
  std::chrono::milliseconds max_backoff{30'000};
  //! Each watch asks the server to end it after a random time in [min, 2×min) (client-go: 5 to
  //! 10 minutes), so connections are renewed and load balancers rebalance.
  std::chrono::seconds min_watch_timeout{300};
  //! A resource the server may not serve (an alpha API such as scheduling.k8s.io/v1alpha2
  //! PodGroups, a CRD's): a 404 on LIST counts as an empty list (the reflector is synced) and the
  //! list is retried after the backoff, so the resource is picked up once the server serves it. A
  //! 403 too (a role that does not grant it), with a warning.
  bool absent_is_empty = false;
};

class Reflector {
 public:
  Reflector(RestClient& client, const store::ResourceType& type, ReflectorSink& sink, ReflectorOptions options);

  //! Lists and watches until `stop` is requested.
  void Run(std::stop_token stop);
  //! Whether the first list has been handed to the sink.
  bool HasSynced() const { return synced_.load(std::memory_order_acquire); }
  //! Lists made so far (the first and every relist).
  int Lists() const { return lists_.load(); }
  //! The resourceVersion the next watch starts from.
  std::string LastResourceVersion() const;

  //! The API path of `type`'s collection ("/api/v1/pods", "/apis/apps/v1/replicasets"), all
  //! namespaces.
  static std::string CollectionPath(const store::ResourceType& type);

 private:
  enum class WatchEnd { kResume, kRelist, kStopped };
  //! LIST in pages; hands the result over. False when it failed (logged).
  bool List(std::stop_token stop);
  //! One WATCH request, from last_rv_.
  WatchEnd Watch(std::stop_token stop);
  //! Waits out the current backoff (or until stopped) and doubles it.
  void Backoff(std::stop_token stop);
  std::string Query(bool watch, const std::string& continue_token) const;
  void SetResourceVersion(std::string rv);

  RestClient& client_;
  const store::ResourceType& type_;
  ReflectorSink& sink_;
  ReflectorOptions options_;
  std::atomic<bool> synced_{false};
  std::atomic<int> lists_{0};
  //! The last LIST found the resource not served (absent_is_empty). Reflector thread only.
  bool absent_ = false;
  std::chrono::milliseconds backoff_;
  mutable std::mutex mu_;  // guards last_rv_
  std::string last_rv_;
  std::mutex sleep_mu_;
  std::condition_variable_any sleep_cv_;
};

}  // namespace kubesched::client
