#pragma once
// LeaseWatchdog: renews the lease of one running attempt on its own thread for
// the whole execution, including the final file write and commit
// (docs/task-lifecycle.md#lease-and-heartbeat). The renewal statement also
// carries the execution deadline (docs/task-lifecycle.md#execution-deadline),
// so a renewal that fails because the deadline passed stops the attempt too.
// Any failure — lease lost, deadline passed, database error — sets the abort
// signal; the watchdog never swallows an error.

#include <condition_variable>
#include <mutex>
#include <thread>

#include "dispatch/abort_signal.h"
#include "store/task_store.h"

namespace export_center::dispatch {

class LeaseWatchdog {
 public:
  // Starts renewing every heartbeat_seconds. `store` and `abort` must outlive it.
  LeaseWatchdog(store::TaskStore* store, store::Attempt attempt, int lease_seconds,
                int heartbeat_seconds, int max_duration_seconds, AbortSignal* abort);
  ~LeaseWatchdog();  // stops and joins
  LeaseWatchdog(const LeaseWatchdog&) = delete;
  LeaseWatchdog& operator=(const LeaseWatchdog&) = delete;

  void Stop();

 private:
  void Run();

  store::TaskStore* store_;
  const store::Attempt attempt_;
  const int lease_seconds_;
  const int heartbeat_seconds_;
  const int max_duration_seconds_;
  AbortSignal* abort_;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;
};

// What a renewal outcome means for the running attempt: OK to go on, or the
// Status it must stop with (Conflict: lease lost; DeadlineExceeded).
Status RenewalVerdict(const StatusOr<store::RenewOutcome>& outcome, int max_duration_seconds);

}  // namespace export_center::dispatch
