#include "store/controllers/expectations.h"

namespace kubesched::store::controllers {

bool Expectations::Satisfied(const std::string& owner_uid) const {
  auto it = pending_.find(owner_uid);
  return it == pending_.end() || (it->second.adds == 0 && it->second.deletes.empty());
}

void Expectations::ExpectCreations(const std::string& owner_uid, int64_t count) {
  if (count > 0) pending_[owner_uid].adds += count;
}

void Expectations::ExpectDeletion(const std::string& owner_uid, const std::string& pod_uid) {
  pending_[owner_uid].deletes.insert(pod_uid);
}

void Expectations::CreationObserved(const std::string& owner_uid) {
  auto it = pending_.find(owner_uid);
  if (it == pending_.end()) return;
  if (it->second.adds > 0) --it->second.adds;
  if (it->second.adds == 0 && it->second.deletes.empty()) pending_.erase(it);
}

void Expectations::DeletionObserved(const std::string& owner_uid, const std::string& pod_uid) {
  auto it = pending_.find(owner_uid);
  if (it == pending_.end()) return;
  it->second.deletes.erase(pod_uid);
  if (it->second.adds == 0 && it->second.deletes.empty()) pending_.erase(it);
}

void Expectations::Forget(const std::string& owner_uid) { pending_.erase(owner_uid); }

}  // namespace kubesched::store::controllers
