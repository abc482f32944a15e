#pragma once
// The kubesched plugin SDK: everything a plugin library includes (docs/writing-plugins.md).
//
// - The extension points (framework/interface.h): derive your plugin from Plugin and the points
//   it implements (PreFilterPlugin, FilterPlugin, ScorePlugin, PermitPlugin, ...); each method's
//   contract (allowed status codes, threading, when it is skipped) is documented there.
// - Status (framework/status.h), CycleState (framework/cycle_state.h), NodeInfo and PodInfo
//   (framework/node_info.h, framework/pod_info.h), the API objects (api/types.h).
// - Handle (framework/handle.h): the snapshot, waiting pods, the nominator, the cluster client,
//   the clock and the worker pool, given to the plugin's factory.
// - Typed args (sdk/args.h) and registration (sdk/args.h RegisterPlugin, framework/registry.h).
// - The library's entry point (sdk/library.h, KUBESCHED_PLUGIN_LIBRARY).
// - Logging as klog (util/log.h): KS_LOG_V(4).InfoS("message", "key", value), shown with --v 4.
//
// An exception that escapes a plugin's method becomes an Error status for the pod being
// scheduled (the pod is retried after backoff); it never stops kubesched. Prefer returning
// Status::Error yourself: the message is then yours.

#include "api/types.h"
#include "framework/cycle_state.h"
#include "framework/handle.h"
#include "framework/interface.h"
#include "framework/node_info.h"
#include "framework/pod_info.h"
#include "framework/registry.h"
#include "framework/status.h"
#include "sdk/args.h"
#include "sdk/library.h"
#include "util/log.h"
