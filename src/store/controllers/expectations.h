#pragma once
// upstream's UIDTrackingControllerExpectations (pkg/controller/controller_utils.go): the pods a
// controller has created or deleted but whose events its informer has not delivered yet. Until
// they arrive the owner is not "satisfied" and its sync must not add or remove pods again, or a
// lagging informer would make it create (or delete) twice.

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace kubesched::store::controllers {

class Expectations {
 public:
  //! Whether every create and delete expected for the owner has been observed.
  bool Satisfied(const std::string& owner_uid) const;
  void ExpectCreations(const std::string& owner_uid, int64_t count);
  //! A pod the owner is deleting: observed when its deletion starts or it is gone.
  void ExpectDeletion(const std::string& owner_uid, const std::string& pod_uid);
  //! An owned pod appeared (or a create failed and will not appear).
  void CreationObserved(const std::string& owner_uid);
  //! An owned pod started terminating or went (or a delete failed).
  void DeletionObserved(const std::string& owner_uid, const std::string& pod_uid);
  //! The owner is gone.
  void Forget(const std::string& owner_uid);

 private:
  struct Pending {
    int64_t adds = 0;
    std::unordered_set<std::string> deletes;
  };
  std::unordered_map<std::string, Pending> pending_;
};

}  // namespace kubesched::store::controllers
