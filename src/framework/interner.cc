#include "framework/interner.h"

namespace kubesched::framework {

uint32_t StringInterner::Intern(std::string_view value) {
  std::lock_guard lock(mu_);
  auto it = ids_.find(value);
  if (it != ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(ids_.size());
  ids_.emplace(std::string(value), id);
  return id;
}

uint32_t StringInterner::size() const {
  std::lock_guard lock(mu_);
  return static_cast<uint32_t>(ids_.size());
}

StringInterner& StringInterner::PodLabelSets() {
  static StringInterner interner;
  return interner;
}

StringInterner& StringInterner::AffinityTerms() {
  static StringInterner interner;
  return interner;
}

}  // namespace kubesched::framework
