#pragma once
// Back-off schedules. Durations only: when a retry is due is decided by the
// database clock (next_retry_at = now + backoff inside SQL).

#include <cstdint>
#include <vector>

namespace export_center {

// Outbox send back-off (docs/dispatch.md#the-outbox-row): steps[attempt-1], the last step
// forever after. `attempt` is the already-incremented attempt_count (>= 1).
int64_t OutboxBackoffMs(const std::vector<int>& steps_seconds, int attempt);

// Execution retry back-off (docs/task-lifecycle.md#automatic-retry):
// steps[attempt-1] (last step after) with ±20 % jitter so that a burst of
// failures does not retry in lock-step.
// `unit_random` in [0, 1) is injected for tests.
int64_t RetryBackoffMs(const std::vector<int>& steps_seconds, int attempt, double unit_random);

}  // namespace export_center
