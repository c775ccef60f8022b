#pragma once
// LeaseWatchdog: renews the lease of one running attempt on its own thread for
// the whole execution, including the final file write and commit
// (docs/task-lifecycle.md#lease-and-heartbeat). The renewal statement also
// carries the execution deadline (docs/task-lifecycle.md#execution-deadline),
// so a renewal that fails because the deadline passed stops the attempt too.
// Lease lost or deadline passed sets the abort signal at once. A renewal that
// fails on a database error is retried (every RetryInterval) while the lease
// it last renewed still has more than SafetyMargin to run; past that the
// abort signal is set, so the attempt stops before another instance may take
// the task. The watchdog never swallows an error: it only defers it.

#include <chrono>

#include "attempt/abort_signal.h"
#include "common/periodic_worker.h"
#include "store/attempt_ledger.h"

namespace export_center::attempt {

class LeaseWatchdog {
 public:
  // Starts renewing every heartbeat_seconds. `store` and `abort` must outlive it.
  LeaseWatchdog(store::AttemptLedger* store, store::Attempt attempt, int lease_seconds,
                int heartbeat_seconds, int max_duration_seconds, AbortSignal* abort);
  ~LeaseWatchdog();  // stops and joins
  LeaseWatchdog(const LeaseWatchdog&) = delete;
  LeaseWatchdog& operator=(const LeaseWatchdog&) = delete;

  void Stop();

  // Time left before lease_until at which failing renewals give up:
  // lease/5, at least one second (60 s of the default 300 s lease).
  static std::chrono::milliseconds SafetyMargin(int lease_seconds);
  // Pause between renewals after one failed: a fifth of a heartbeat, 1..5 s.
  static std::chrono::milliseconds RetryInterval(int heartbeat_seconds);

 private:
  // Renews once; the next renewal is a heartbeat later, or RetryInterval
  // after a failed one, or never once the attempt must stop.
  PeriodicWorker::Next Round();
  // Renews once. Returns false (after setting the abort signal) when the
  // attempt must stop; `renewed_at` moves on success.
  bool RenewOnce(std::chrono::steady_clock::time_point* renewed_at, bool* failing);
  bool Abort(const Status& verdict);  // sets the abort signal; returns false

  store::AttemptLedger* store_;
  const store::Attempt attempt_;
  const int lease_seconds_;
  const int heartbeat_seconds_;
  const int max_duration_seconds_;
  AbortSignal* abort_;
  // Worker thread only: when the last renewal began, and whether renewals
  // are failing.
  std::chrono::steady_clock::time_point renewed_at_;
  bool failing_ = false;
  PeriodicWorker worker_;  // the first renewal a heartbeat after the claim
};

// What a renewal outcome means for the running attempt: OK to go on, or the
// Status it must stop with (Conflict: lease lost; DeadlineExceeded).
Status RenewalVerdict(const StatusOr<store::RenewOutcome>& outcome, int max_duration_seconds);

}  // namespace export_center::attempt
