#pragma once
// CycleState: data a plugin computes at one extension point and reads at later ones, for one pod's
// scheduling cycle (and its binding cycle).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kubesched::framework {

//! Per-cycle data a plugin stores. Clone is used when the cycle state is copied for preemption's
//! what-if evaluation, so it must deep-copy anything AddPod/RemovePod mutate.
class StateData {
 public:
  virtual ~StateData() = default;
  virtual std::unique_ptr<StateData> Clone() const = 0;
};

//! A key into CycleState. Each key gets a dense slot at program start, so reads on the per-node
//! hot path are an index, not a map lookup. Define keys as namespace-scope constants.
class StateKey {
 public:
  explicit StateKey(std::string_view name) : name_(name), slot_(next_slot_.fetch_add(1)) {}
  StateKey(const StateKey&) = delete;
  StateKey& operator=(const StateKey&) = delete;
  size_t slot() const { return slot_; }
  std::string_view name() const { return name_; }

 private:
  static inline std::atomic<size_t> next_slot_{0};
  std::string name_;
  size_t slot_;
};

//! Not synchronized: written at serial points (PreFilter, PreScore, Reserve, ...) and only read
//! while Filter and Score run concurrently over nodes.
class CycleState {
 public:
  CycleState() = default;
  CycleState(const CycleState&) = delete;
  CycleState& operator=(const CycleState&) = delete;

  void Write(const StateKey& key, std::unique_ptr<StateData> data);
  //! The data stored under key, or nullptr.
  StateData* Read(const StateKey& key) const { return key.slot() < slots_.size() ? slots_[key.slot()].get() : nullptr; }
  //! Typed read: T must be the type written under key (keys are private to their plugin).
  template <typename T>
  T* Get(const StateKey& key) const {
    return static_cast<T*>(Read(key));
  }
  void Delete(const StateKey& key);

  //! Deep copy (StateData::Clone) for what-if evaluation.
  std::unique_ptr<CycleState> Clone() const;

  //! Plugins whose PreFilter returned Skip: their Filter is not run this cycle.
  std::vector<std::string_view> skip_filter_plugins;
  //! Plugins whose PreScore returned Skip: their Score is not run this cycle.
  std::vector<std::string_view> skip_score_plugins;
  bool SkipsFilter(std::string_view plugin) const;
  bool SkipsScore(std::string_view plugin) const;
  //! The same as bit sets over the profile's Filter plugins (bit i: the i-th Filter plugin), kept
  //! by the framework runtime so the per-node loop tests a bit instead of comparing names.
  uint64_t skip_filter_mask = 0;
  //! skip_filter_plugins.size() when the mask was computed; the mask is used only while it matches.
  size_t skip_filter_mask_entries = 0;

  //! Whether the framework should record per-plugin details (simulate --explain).
  bool record_plugin_metrics = false;

 private:
  std::vector<std::unique_ptr<StateData>> slots_;
};

}  // namespace kubesched::framework
