#pragma once
// events.k8s.io/v1 Events are core/v1 Events with other field names (upstream stores both in one
// place and converts: pkg/apis/events/v1/conversion.go). The store keeps core/v1 and converts a
// whole object each way, so `kubectl get events` shows what the scheduler recorded through
// events.k8s.io.

#include "api/json.h"

namespace kubesched::store {

//! events.k8s.io/v1 → core/v1: note→message, regarding→involvedObject,
//! reportingController→reportingComponent, deprecatedSource→source,
//! deprecatedFirstTimestamp→firstTimestamp, deprecatedLastTimestamp→lastTimestamp,
//! deprecatedCount→count; apiVersion v1.
void EventsV1ToCore(api::json::Document& event);
//! core/v1 → events.k8s.io/v1, the reverse renames; apiVersion events.k8s.io/v1.
void CoreToEventsV1(api::json::Document& event);

}  // namespace kubesched::store
