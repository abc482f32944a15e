#pragma once
// Test helpers for plugin libraries (link kubesched::testing): a fake Handle with an in-memory
// snapshot of nodes and pods (testing/fake_handle.h) and fluent builders for Pods, Nodes and
// NodeInfos (testing/builders.h), the ones kubesched's own plugin tests use:
//
//   auto node = testing::MakeNode().Name("node1").Obj();
//   auto pod = testing::MakePod().Name("pod1").Obj();
//   testing::FakeHandle handle({node}, {});
//   auto plugin = ...;  // your factory, given `handle`
//   framework::CycleState state;
//   auto [score, status] = plugin->Score(state, *framework::PodInfo::Create(pod), *handle.snapshot().Get("node1"));

#include "sdk/plugin.h"
#include "testing/builders.h"
#include "testing/fake_handle.h"
