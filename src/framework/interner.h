#pragma once
// Dense ids for values that many pods share. Pods stamped from one template have equal labels
// and equal affinity terms, but each holds its own copy; interning gives equal values equal small
// ids once, when a PodInfo is made, so a scheduling cycle can remember "does this label set match
// my term?" per id instead of re-evaluating the selector for every pod (IdMemo).
//
// Ids are reference-counted by their holders (InternedId) and recycled when the last holder is
// gone: pods with unique labels (pod-template-hash, StatefulSet pod names) come and go for as long
// as the scheduler runs, and the tables must not grow with every value ever seen, only with the
// values alive at once.

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kubesched::framework {

//! The id of a value nobody interned: memos compute it every time.
inline constexpr uint32_t kNotInterned = UINT32_MAX;

class StringInterner;

//! A reference to an interned id; the id stays bound to its value while some InternedId holds it.
//! Copies take another reference; the default one is kNotInterned. Converts to the id.
class InternedId {
 public:
  InternedId() = default;
  InternedId(const InternedId& other);
  InternedId(InternedId&& other) noexcept : interner_(other.interner_), id_(other.id_) {
    other.interner_ = nullptr;
    other.id_ = kNotInterned;
  }
  InternedId& operator=(const InternedId& other);
  InternedId& operator=(InternedId&& other) noexcept;
  ~InternedId() { Reset(); }

  uint32_t value() const { return id_; }
  operator uint32_t() const { return id_; }  // NOLINT: an id where one is expected
  //! Drops the reference (kNotInterned afterwards).
  void Reset();

 private:
  friend class StringInterner;
  InternedId(StringInterner* interner, uint32_t id) : interner_(interner), id_(id) {}

  StringInterner* interner_ = nullptr;
  uint32_t id_ = kNotInterned;
};

//! Maps strings to small ids: equal strings get equal ids while some InternedId holds them. An
//! id whose last holder is gone is freed and may later be given to another value. Thread-safe.
//!
//! Recycling is safe for per-cycle memos (IdMemo) as long as whatever the memo was filled from
//! holds its ids for the memo's lifetime (the cycle's snapshot holds its PodInfos): a held id is
//! never rebound, and an id handed out after the memo was sized is >= its size ("compute").
class StringInterner {
 public:
  StringInterner() = default;
  StringInterner(const StringInterner&) = delete;
  StringInterner& operator=(const StringInterner&) = delete;

  InternedId Intern(std::string_view value);
  //! One more than the largest id that may be in use: bounds the ids a memo sized now can meet.
  //! Grows only with the number of values alive at once.
  uint32_t size() const;
  //! Values currently interned (held by some InternedId).
  size_t live() const;

  //! Pod label sets, keyed by namespace and labels (PodInfo::label_set_id).
  static StringInterner& PodLabelSets();
  //! Affinity terms, keyed by their whole content (AffinityTerm::id).
  static StringInterner& AffinityTerms();

 private:
  friend class InternedId;
  void AddRef(uint32_t id);
  void Release(uint32_t id);

  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Slot {
    const std::string* value = nullptr;  // the key in ids_ (stable: node-based map); null when free
    uint32_t refs = 0;
  };
  mutable std::mutex mu_;
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> ids_;  // guarded by mu_
  std::vector<Slot> slots_;                                               // by id; guarded by mu_
  std::vector<uint32_t> free_;                                            // freed ids; guarded by mu_
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
