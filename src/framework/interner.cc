#include "framework/interner.h"

namespace kubesched::framework {

InternedId::InternedId(const InternedId& other) : interner_(other.interner_), id_(other.id_) {
  if (interner_ != nullptr) interner_->AddRef(id_);
}

InternedId& InternedId::operator=(const InternedId& other) {
  if (this == &other) return *this;
  if (other.interner_ != nullptr) other.interner_->AddRef(other.id_);  // before releasing ours
  Reset();
  interner_ = other.interner_;
  id_ = other.id_;
  return *this;
}

InternedId& InternedId::operator=(InternedId&& other) noexcept {
  if (this == &other) return *this;
  Reset();
  interner_ = other.interner_;
  id_ = other.id_;
  other.interner_ = nullptr;
  other.id_ = kNotInterned;
  return *this;
}

void InternedId::Reset() {
  if (interner_ != nullptr) interner_->Release(id_);
  interner_ = nullptr;
  id_ = kNotInterned;
}

InternedId StringInterner::Intern(std::string_view value) {
  std::lock_guard lock(mu_);
  auto it = ids_.find(value);
  if (it != ids_.end()) {
    ++slots_[it->second].refs;
    return InternedId(this, it->second);
  }
  uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  it = ids_.emplace(std::string(value), id).first;
  slots_[id] = Slot{&it->first, 1};
  return InternedId(this, id);
}

void StringInterner::AddRef(uint32_t id) {
  std::lock_guard lock(mu_);
  ++slots_[id].refs;
}

void StringInterner::Release(uint32_t id) {
  std::lock_guard lock(mu_);
  Slot& slot = slots_[id];
  if (--slot.refs != 0) return;
  ids_.erase(ids_.find(*slot.value));
  slot.value = nullptr;
  free_.push_back(id);
}

uint32_t StringInterner::size() const {
  std::lock_guard lock(mu_);
  return static_cast<uint32_t>(slots_.size());
}

size_t StringInterner::live() const {
  std::lock_guard lock(mu_);
  return ids_.size();
}

// Never destroyed: PodInfos in static storage may release their ids after static destruction.
StringInterner& StringInterner::PodLabelSets() {
  static auto* interner = new StringInterner;
  return *interner;
}

StringInterner& StringInterner::AffinityTerms() {
  static auto* interner = new StringInterner;
  return *interner;
}

}  // namespace kubesched::framework
