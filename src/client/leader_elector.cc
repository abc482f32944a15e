#include "client/leader_elector.h"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <random>

#include <fmt/format.h>

#include "api/time_format.h"
#include "store/meta.h"
#include "util/log.h"

namespace kubesched::client {

namespace json = api::json;

namespace {

// Waits `ns` or until `stop`; false when stopped.
bool Sleep(std::stop_token stop, int64_t ns) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lock(mu);
  cv.wait_for(lock, stop, std::chrono::nanoseconds(ns), [] { return false; });
  return !stop.stop_requested();
}

// client-go's wait.Jitter(period, 1.2): period plus up to 1.2 periods at random.
int64_t Jittered(int64_t period_ns) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return period_ns + static_cast<int64_t>(std::uniform_real_distribution<double>(0, 1.2)(rng) * period_ns);
}

int64_t IntMember(const json::Value& object, std::string_view key) {
  const json::Value* v = json::Find(object, key);
  return v != nullptr && v->IsInt64() ? v->GetInt64() : 0;
}

}  // namespace

std::string LeaderElectionIdentity() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  api::Rng rng{std::random_device{}()};
  return fmt::format("{}_{}", host, store::NewUid(rng));
}

LeaderElector::LeaderElector(store::Store& store, const util::Clock& clock, LeaderElectionOptions options)
    : store_(store),
      clock_(clock),
      options_(std::move(options)),
      leases_(store.FindResource("coordination.k8s.io", "leases")) {
  if (leases_ == nullptr) throw std::logic_error("the store does not serve coordination.k8s.io leases");
  if (options_.identity.empty()) options_.identity = LeaderElectionIdentity();
}

std::string LeaderElector::ObservedHolder() const {
  std::lock_guard lock(mu_);
  return observed_holder_;
}

void LeaderElector::ObserveOwnRecord(const std::string& renew_time, int64_t now_ns) {
  std::lock_guard lock(mu_);
  observed_holder_ = options_.identity;
  observed_renew_time_ = renew_time;
  observed_at_ns_ = now_ns;
}

bool LeaderElector::TryAcquireOrRenew() {
  const int64_t now = clock_.NowNs();
  const std::string now_text = api::FormatRFC3339Micro(now);
  // Whole seconds, as the Lease holds it; rounded up so that a lease shorter than a second (tests)
  // does not read as already expired.
  const int64_t duration_seconds = std::max<int64_t>(1, (options_.lease_duration_ns + 999'999'999) / 1'000'000'000);
  auto current = store_.Get(*leases_, options_.lease_namespace, options_.lease_name);
  if (!current) {
    if (current.error().reason != store::Error::Reason::kNotFound) {
      KS_LOG.ErrorS(current.error().message, "Error retrieving lease", "lease",
                    options_.lease_namespace + "/" + options_.lease_name);
      return false;
    }
    json::Document lease;
    const std::string text = fmt::format(
        R"({{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{{"name":"{}","namespace":"{}"}},)"
        R"("spec":{{"holderIdentity":"{}","leaseDurationSeconds":{},"acquireTime":"{}","renewTime":"{}",)"
        R"("leaseTransitions":0}}}})",
        options_.lease_name, options_.lease_namespace, options_.identity, duration_seconds, now_text, now_text);
    if (!json::Parse(text, lease)) return false;
    auto created = store_.Create(*leases_, options_.lease_namespace, std::move(lease));
    if (!created) {
      KS_LOG_V(2).InfoS("Lease not created", "err", created.error().message);
      return false;
    }
    ObserveOwnRecord(now_text, now);
    return true;
  }
  json::Document lease = store::ParseObject(**current);
  json::Value& spec = json::Child(lease, "spec", lease.GetAllocator());
  const std::string holder(json::GetString(spec, "holderIdentity"));
  const std::string renew_time(json::GetString(spec, "renewTime"));
  const int64_t record_duration_ns = IntMember(spec, "leaseDurationSeconds") * 1'000'000'000;
  {
    std::lock_guard lock(mu_);
    // Expiry is measured on our clock from when we saw the record change, never from the
    // holder's timestamps (the candidates' clocks may disagree).
    if (holder != observed_holder_ || renew_time != observed_renew_time_ || observed_at_ns_ == 0) {
      observed_holder_ = holder;
      observed_renew_time_ = renew_time;
      observed_at_ns_ = now;
    }
    if (!holder.empty() && holder != options_.identity && observed_at_ns_ + record_duration_ns > now) {
      return false;  // held by another candidate, and not yet expired
    }
  }
  auto& a = lease.GetAllocator();
  if (holder != options_.identity) {
    json::Set(spec, "acquireTime", json::MakeString(now_text, a), a);
    json::Set(spec, "leaseTransitions", json::Value(IntMember(spec, "leaseTransitions") + 1), a);
  }
  json::Set(spec, "holderIdentity", json::MakeString(options_.identity, a), a);
  json::Set(spec, "leaseDurationSeconds", json::Value(duration_seconds), a);
  json::Set(spec, "renewTime", json::MakeString(now_text, a), a);
  store::UpdateRequest request;
  request.expected_resource_version = std::string(json::GetString(store::Metadata(lease), "resourceVersion"));
  auto updated = store_.Update(*leases_, options_.lease_namespace, options_.lease_name, std::move(lease), request);
  if (!updated) {
    KS_LOG_V(2).InfoS("Lease not updated", "err", updated.error().message);
    return false;
  }
  ObserveOwnRecord(now_text, now);
  return true;
}

void LeaderElector::Release() {
  auto current = store_.Get(*leases_, options_.lease_namespace, options_.lease_name);
  if (!current) return;
  json::Document lease = store::ParseObject(**current);
  json::Value& spec = json::Child(lease, "spec", lease.GetAllocator());
  if (json::GetString(spec, "holderIdentity") != options_.identity) return;
  auto& a = lease.GetAllocator();
  const std::string now_text = api::FormatRFC3339Micro(clock_.NowNs());
  // client-go's release: no holder, a one-second lease, so the next candidate takes it at once.
  json::Set(spec, "holderIdentity", json::MakeString("", a), a);
  json::Set(spec, "leaseDurationSeconds", json::Value(1), a);
  json::Set(spec, "renewTime", json::MakeString(now_text, a), a);
  json::Set(spec, "acquireTime", json::MakeString(now_text, a), a);
  store::UpdateRequest request;
  request.expected_resource_version = std::string(json::GetString(store::Metadata(lease), "resourceVersion"));
  if (auto updated = store_.Update(*leases_, options_.lease_namespace, options_.lease_name, std::move(lease), request);
      !updated) {
    KS_LOG.WarningS("Failed to release lease", "err", updated.error().message);
  }
}

bool LeaderElector::Run(std::stop_token stop, const std::function<void()>& on_started_leading) {
  const std::string lease = options_.lease_namespace + "/" + options_.lease_name;
  KS_LOG.InfoS("Attempting to acquire leader lease...", "lock", lease);
  while (!TryAcquireOrRenew()) {
    if (!Sleep(stop, Jittered(options_.retry_period_ns))) return false;
  }
  KS_LOG.InfoS("Successfully acquired lease", "lock", lease, "identity", options_.identity);
  leader_.store(true);
  on_started_leading();
  int64_t last_renew = clock_.NowNs();
  while (Sleep(stop, options_.retry_period_ns)) {
    if (TryAcquireOrRenew()) {
      last_renew = clock_.NowNs();
      continue;
    }
    if (clock_.NowNs() - last_renew > options_.renew_deadline_ns) {
      leader_.store(false);
      KS_LOG.ErrorS("failed to renew lease", "Leader election lost", "lock", lease);
      return false;
    }
  }
  leader_.store(false);
  if (options_.release_on_cancel) Release();
  return true;
}

}  // namespace kubesched::client
