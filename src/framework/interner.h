#pragma once
// Dense ids for values that many pods share. Pods stamped from one template have equal labels
// and equal affinity terms, but each holds its own copy; interning gives equal values equal small
// ids once, when a PodInfo is made, so a scheduling cycle can remember "does this label set match
// my term?" per id instead of re-evaluating the selector for every pod (IdMemo).

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kubesched::framework {

//! Maps strings to ids 0, 1, 2, ...: equal strings get equal ids. Ids are never reused (the table
//! only grows, by the number of distinct values seen). Thread-safe.
class StringInterner {
 public:
  uint32_t Intern(std::string_view value);
  //! One more than the largest id handed out so far.
  uint32_t size() const;

  //! Pod label sets, keyed by namespace and labels (PodInfo::label_set_id).
  static StringInterner& PodLabelSets();
  //! Affinity terms, keyed by their whole content (AffinityTerm::id).
  static StringInterner& AffinityTerms();

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  mutable std::mutex mu_;
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> ids_;  // guarded by mu_
};

//! A per-cycle memo of a small bit set computed from an interned id: Get(id, compute) calls
//! compute() once per id. Ids at or beyond the size given (interned after the memo was made) are
//! computed every time. Not thread-safe: one memo per thread.
class IdMemo {
 public:
  explicit IdMemo(uint32_t size) : slots_(size, 0) {}

  template <typename Compute>
  uint32_t Get(uint32_t id, Compute&& compute) {
    if (id >= slots_.size()) return compute();
    uint32_t& slot = slots_[id];
    if (slot == 0) slot = compute() | kKnown;
    return slot & ~kKnown;
  }

  //! Bits a compute() result may use.
  static constexpr int kBits = 31;

 private:
  static constexpr uint32_t kKnown = 1u << 31;
  std::vector<uint32_t> slots_;
};

}  // namespace kubesched::framework
