#pragma once
// Test helpers for the DynamicResources plugin (header only, test binaries only): a cluster client
// that writes claim statuses into the scheduler's DRA cache as the API server and informer would,
// and a handle over a FakeHandle that serves that client and cache.
//
//   DraTestHandle handle({node});
//   handle.Add(claim);                        // as the informer would, with a resourceVersion
//   auto plugin = dynamic_resources::New(args, handle);
//   ... PreBind writes through handle.claim_client(), which applies the write to handle.dra().

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/resource_types.h"
#include "cache/dra_cache.h"
#include "cache/storage_cache.h"  // OlderVersion
#include "framework/handle.h"
#include "testing/fake_handle.h"

namespace kubesched::plugins::dynamic_resources::testing {

//! Writes ResourceClaim statuses as the API server does (a conflict unless the claim is written at
//! the stored resourceVersion, then a new resourceVersion) and delivers them to the DRA cache as
//! the informer would: at once, or when the test calls Deliver() (deliver_writes = false).
class FakeClaimClient final : public framework::ClusterClient {
 public:
  explicit FakeClaimClient(cache::DraCache& dra) : dra_(dra) {}

  //! When set, UpdateResourceClaimStatus fails with it (upstream's reactors): for the claims
  //! named in fail_only, or for every claim when fail_only is empty.
  std::optional<framework::Status> write_error;
  std::set<std::string> fail_only;
  //! False: writes wait for Deliver() (an informer that lags).
  bool deliver_writes = true;

  //! The next resourceVersion, as the API server numbers them.
  std::string NextVersion() {
    std::lock_guard lock(mu_);
    return std::to_string(++version_);
  }

  //! Every successful write, in order (the claim as stored).
  std::vector<std::shared_ptr<const api::ResourceClaim>> writes() const {
    std::lock_guard lock(mu_);
    return writes_;
  }

  //! Delivers the writes held back (deliver_writes = false) to the DRA cache.
  void Deliver() {
    std::vector<std::shared_ptr<const api::ResourceClaim>> pending;
    {
      std::lock_guard lock(mu_);
      pending.swap(pending_);
    }
    for (auto& claim : pending) dra_.Apply(claim);
  }

  framework::Status UpdateResourceClaimStatus(const api::ResourceClaim& claim) override {
    if (write_error && (fail_only.empty() || fail_only.contains(claim.metadata.name))) return *write_error;
    std::shared_ptr<const api::ResourceClaim> stored = Stored(claim);
    if (!stored) {
      return framework::Status::Error("resourceclaims.resource.k8s.io " + Quote(claim.metadata.name) + " not found");
    }
    if (stored->metadata.resource_version != claim.metadata.resource_version) {
      return framework::Status::Error("Operation cannot be fulfilled on resourceclaims.resource.k8s.io " +
                                      Quote(claim.metadata.name) +
                                      ": the object has been modified; please apply your changes to the latest "
                                      "version and try again");
    }
    auto next = std::make_shared<api::ResourceClaim>(*stored);
    next->allocation = claim.allocation;
    next->reserved_for = claim.reserved_for;
    next->metadata.resource_version = NextVersion();
    std::shared_ptr<const api::ResourceClaim> written = next;
    {
      std::lock_guard lock(mu_);
      writes_.push_back(written);
      latest_[written->Key()] = written;
      if (!deliver_writes) {
        pending_.push_back(written);
        return framework::Status();
      }
    }
    dra_.Apply(written);
    return framework::Status();
  }

  //! Someone else's update of a claim (a controller, another scheduler): `change` applied to the
  //! stored version, stored with a new resourceVersion and delivered to the DRA cache.
  std::shared_ptr<const api::ResourceClaim> Update(const std::string& namespace_, const std::string& name,
                                                   const std::function<void(api::ResourceClaim&)>& change) {
    auto key_claim = std::make_shared<api::ResourceClaim>();
    key_claim->metadata.namespace_ = namespace_;
    key_claim->metadata.name = name;
    std::shared_ptr<const api::ResourceClaim> stored = Stored(*key_claim);
    if (!stored) return nullptr;
    auto next = std::make_shared<api::ResourceClaim>(*stored);
    change(*next);
    next->metadata.resource_version = NextVersion();
    std::shared_ptr<const api::ResourceClaim> written = next;
    {
      std::lock_guard lock(mu_);
      latest_[written->Key()] = written;
    }
    dra_.Apply(written);
    return written;
  }

  framework::Status Bind(const api::Pod&, const std::string&) override { return framework::Status(); }
  framework::Status DeletePod(const api::Pod&, std::string_view) override { return framework::Status(); }
  framework::Status SetNominatedNodeName(const api::Pod&, const std::string&) override { return framework::Status(); }
  framework::Status SetPodScheduledCondition(const api::Pod&, const api::PodCondition&) override {
    return framework::Status();
  }
  std::optional<api::Labels> NamespaceLabels(std::string_view) const override { return api::Labels(); }
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> ListPodDisruptionBudgets() const override { return {}; }

 private:
  static std::string Quote(const std::string& s) { return "\"" + s + "\""; }

  // The API server's version: the newer of the last write and what the informer has.
  std::shared_ptr<const api::ResourceClaim> Stored(const api::ResourceClaim& claim) {
    std::shared_ptr<const api::ResourceClaim> written;
    {
      std::lock_guard lock(mu_);
      auto it = latest_.find(claim.Key());
      if (it != latest_.end()) written = it->second;
    }
    std::shared_ptr<const api::ResourceClaim> informed = dra_.ApiClaim(claim.metadata.namespace_, claim.metadata.name);
    if (!written) return informed;
    if (!informed) return written;
    return cache::OlderVersion(written->metadata.resource_version, informed->metadata.resource_version) ? informed
                                                                                                        : written;
  }

  cache::DraCache& dra_;
  mutable std::mutex mu_;
  int64_t version_ = 100;                                                    // guarded by mu_
  std::vector<std::shared_ptr<const api::ResourceClaim>> writes_;            // guarded by mu_
  std::vector<std::shared_ptr<const api::ResourceClaim>> pending_;           // guarded by mu_
  std::map<std::string, std::shared_ptr<const api::ResourceClaim>> latest_;  // guarded by mu_
};

//! A handle over a FakeHandle whose DRA lister is a real cache::DraCache and whose cluster client
//! is a FakeClaimClient writing into it.
class DraTestHandle final : public framework::Handle {
 public:
  explicit DraTestHandle(const std::vector<std::shared_ptr<api::Node>>& nodes = {}) : fake_(nodes, {}), client_(dra_) {
    fake_.set_dra(&dra_);
  }

  cache::DraCache& dra() { return dra_; }
  FakeClaimClient& claim_client() { return client_; }
  kubesched::testing::FakeHandle& fake() { return fake_; }

  //! Adds (or updates) an object as the informer would. A claim without a resourceVersion gets
  //! the API server's next one, and a UID when it has none (upstream's test reactor).
  void Add(std::shared_ptr<api::ResourceClaim> claim) {
    if (claim->metadata.resource_version.empty()) claim->metadata.resource_version = client_.NextVersion();
    if (claim->metadata.uid.empty())
      claim->metadata.uid = "UID-" + claim->metadata.namespace_ + "-" + claim->metadata.name;
    dra_.Apply(std::shared_ptr<const api::ResourceClaim>(std::move(claim)));
  }
  void Add(std::shared_ptr<api::DeviceClass> c) { dra_.Apply(std::shared_ptr<const api::DeviceClass>(std::move(c))); }
  void Add(std::shared_ptr<api::ResourceSlice> s) {
    dra_.Apply(std::shared_ptr<const api::ResourceSlice>(std::move(s)));
  }

  // framework::PluginsRunner
  std::pair<framework::PreFilterResult, framework::Status> RunPreFilterPlugins(framework::CycleState& state,
                                                                               const framework::PodInfo& pod) override {
    return fake_.RunPreFilterPlugins(state, pod);
  }
  framework::Status RunPreFilterExtensionAddPod(framework::CycleState& state, const framework::PodInfo& pod,
                                                const framework::PodInfo& add,
                                                const framework::NodeInfo& node) override {
    return fake_.RunPreFilterExtensionAddPod(state, pod, add, node);
  }
  framework::Status RunPreFilterExtensionRemovePod(framework::CycleState& state, const framework::PodInfo& pod,
                                                   const framework::PodInfo& remove,
                                                   const framework::NodeInfo& node) override {
    return fake_.RunPreFilterExtensionRemovePod(state, pod, remove, node);
  }
  framework::Status RunFilterPlugins(const framework::CycleState& state, const framework::PodInfo& pod,
                                     const framework::NodeInfo& node) override {
    return fake_.RunFilterPlugins(state, pod, node);
  }
  framework::Status RunFilterPluginsWithNominatedPods(framework::CycleState& state, const framework::PodInfo& pod,
                                                      const framework::NodeInfo& node) override {
    return fake_.RunFilterPluginsWithNominatedPods(state, pod, node);
  }

  // framework::Handle
  const framework::NodeInfoLister& SnapshotSharedLister() const override { return fake_.SnapshotSharedLister(); }
  void IterateOverWaitingPods(const std::function<void(framework::WaitingPod&)>& fn) override {
    fake_.IterateOverWaitingPods(fn);
  }
  std::shared_ptr<framework::WaitingPod> GetWaitingPod(std::string_view uid) override {
    return fake_.GetWaitingPod(uid);
  }
  bool RejectWaitingPod(std::string_view uid) override { return fake_.RejectWaitingPod(uid); }
  framework::ClusterClient& client() override { return client_; }
  framework::PodNominator& nominator() override { return fake_.nominator(); }
  const util::Clock& clock() const override { return fake_.clock(); }
  util::Parallelizer& parallelizer() override { return fake_.parallelizer(); }
  std::string_view profile_name() const override { return fake_.profile_name(); }
  framework::DraLister& Dra() const override { return dra_; }

 private:
  mutable cache::DraCache dra_;
  kubesched::testing::FakeHandle fake_;
  FakeClaimClient client_;
};

}  // namespace kubesched::plugins::dynamic_resources::testing
