#pragma once
// What a framework built in a test runs against: a fake cluster client and nominator, a virtual
// clock, a parallelizer and the framework's own waiting pods. Header only: the tests that build
// frameworks link the runtime already.

#include <cstdint>

#include "framework/runtime/framework.h"
#include "framework/runtime/waiting_pods.h"
#include "testing/fake_handle.h"
#include "util/clock.h"
#include "util/parallelizer.h"

namespace kubesched::testing {

struct FakeFrameworkDeps {
  explicit FakeFrameworkDeps(int64_t start_ns = 0, int workers = 1) : clock(start_ns), parallelizer(workers) {}

  //! The dependencies Framework::Create takes, pointing at these fakes.
  framework::runtime::FrameworkDeps Deps() {
    framework::runtime::FrameworkDeps deps;
    deps.client = &client;
    deps.nominator = &nominator;
    deps.clock = &clock;
    deps.parallelizer = &parallelizer;
    deps.waiting_pods = &waiting;
    return deps;
  }

  FakeClusterClient client;
  FakePodNominator nominator;
  util::VirtualClock clock;
  util::Parallelizer parallelizer;
  framework::runtime::WaitingPodsMap waiting;
};

}  // namespace kubesched::testing
