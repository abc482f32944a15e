#include "plugins/default_binder/default_binder.h"

#include <gtest/gtest.h>

#include "testing/builders.h"
#include "testing/fake_handle.h"
#include "testing/printers.h"

namespace kubesched::plugins::default_binder {
namespace {

// Mirrors upstream's defaultbinder TestDefaultBinder.
TEST(DefaultBinderTest, Bind) {
  struct Case {
    std::string name;
    std::optional<framework::Status> client_result;
    framework::Status want;
    size_t want_binds;
  };
  const std::vector<Case> cases = {
      {"successful", std::nullopt, framework::Status::Success(), 1},
      {"binding error", framework::Status::Error("failed"), framework::Status::Error("failed"), 0},
      {"client rejection becomes an error", framework::Status::Unschedulable("pod is gone"),
       framework::Status::Error("pod is gone"), 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    testing::FakeHandle handle;
    handle.fake_client().SetBindResult(c.client_result);
    auto plugin = New({}, handle);
    ASSERT_TRUE(plugin.has_value());
    auto* binder = dynamic_cast<framework::BindPlugin*>(plugin->get());
    ASSERT_NE(binder, nullptr);
    EXPECT_EQ(binder->Name(), "DefaultBinder");
    auto pod = testing::MakePod().Namespace("ns").Name("foo").Info();
    framework::CycleState state;
    EXPECT_EQ(binder->Bind(state, *pod, "foohost.kubernetes.mydomain.com"), c.want);
    auto binds = handle.fake_client().binds();
    ASSERT_EQ(binds.size(), c.want_binds);
    if (c.want_binds == 1) {
      EXPECT_EQ(binds[0].pod_key, "ns/foo");
      EXPECT_EQ(binds[0].node_name, "foohost.kubernetes.mydomain.com");
    }
  }
}

}  // namespace
}  // namespace kubesched::plugins::default_binder
