#pragma once
// The controllers' test fixture: a store on a virtual clock with the default controllers started,
// and helpers to list pods and move time.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "store/controllers/controller.h"
#include "store/store_test_util.h"

namespace kubesched::store::controllers::testing {

using store::testing::Field;
using store::testing::NodeJson;
using store::testing::PodJson;

class ControllerFixture : public store::testing::StoreFixture {
 public:
  ControllerFixture() : manager(NewDefaultControllerManager(*store, clock, 42)) { manager->Start(); }
  std::vector<ObjectPtr> ListPods(std::string_view label_selector = "") {
    auto r = store->List(Pods(), "", ListOptions{.selectors = {std::string(label_selector), ""}});
    EXPECT_TRUE(r.has_value());
    return r ? r->items : std::vector<ObjectPtr>{};
  }
  //! The pods not being deleted.
  std::vector<ObjectPtr> LivePods(std::string_view label_selector = "") {
    std::vector<ObjectPtr> out;
    for (auto& p : ListPods(label_selector)) {
      if (Field(*p, "metadata.deletionTimestamp") == "<none>") out.push_back(p);
    }
    return out;
  }
  std::vector<std::string> Names(const std::vector<ObjectPtr>& objects) {
    std::vector<std::string> out;
    for (const auto& o : objects) out.push_back(o->name);
    return out;
  }
  void Advance(int64_t seconds) {
    clock.Advance(seconds * util::kNanosPerSecond);
    manager->FireEvents();
  }
  //! Binds every unbound pod to `node` (the scheduler's part); they start at once.
  void BindAll(std::string_view node) {
    for (const auto& p : ListPods()) {
      if (Field(*p, "spec.nodeName") == "<none>" && Field(*p, "metadata.deletionTimestamp") == "<none>") {
        EXPECT_TRUE(store->Bind(p->namespace_, p->name, p->uid, node).has_value()) << p->name;
      }
    }
  }
  //! Sets a pod's phase through the status subresource (what a kubelet reports).
  void SetPhase(const ObjectPtr& pod, std::string_view phase) {
    ASSERT_TRUE(store->Patch(Pods(), pod->namespace_, pod->name, PatchType::kMergePatch,
                             "{\"status\":{\"phase\":\"" + std::string(phase) + "\"}}", "status"));
  }

  std::unique_ptr<ControllerManager> manager;
};

}  // namespace kubesched::store::controllers::testing
