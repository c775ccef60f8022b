#pragma once
// Failpoints: named places where a test makes the running process fail on
// purpose, always compiled in and off unless the environment turns them on
// (the pattern of TiKV's fail-rs and etcd's gofail, reduced to one action).
//
//   EXPORT_CENTER_FAILPOINTS=thread.consumer,thread.sse_poller export-center serve ...
//
// The variable is a comma-separated list of names, read once, on the first
// call. Each listed name fires once per process: the first
// FailpointFires(name) returns true, later calls false. The thread guard
// (common/thread_guard.h) asks for "thread.<name>" before it runs a body, and
// throws when it fires (docs/conventions.md#threads). Unset or empty, every
// call is one relaxed atomic load. Thread-safe.

#include <string_view>

namespace export_center {

inline constexpr const char* kFailpointsEnv = "EXPORT_CENTER_FAILPOINTS";

// Whether the failpoint `name` fires now (listed and not fired yet).
bool FailpointFires(std::string_view name);

// Whether any failpoint is listed at all: one relaxed atomic load, so a hot
// caller can skip building a name.
bool AnyFailpointArmed();

// Replaces the list read from the environment with `list` (same syntax) and
// re-arms every name in it. Public for tests.
void SetFailpointsForTest(std::string_view list);

}  // namespace export_center
