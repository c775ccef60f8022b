#pragma once
// LeaseWatchdog: renews the lease of one running attempt on its own thread for
// the whole execution, including the final file write and commit (seed 000
// §8.3). The renewal statement also carries the execution deadline (§8.3.1),
// so a renewal that fails because the deadline passed stops the attempt too.
// Any failure — lease lost, deadline passed, database error — sets the abort
// signal; the watchdog never swallows an error.

#include <thread>

#include "common/mutex.h"
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

  void Stop() EXCLUDES(mu_);

 private:
  void Run() EXCLUDES(mu_);

  store::TaskStore* store_;
  const store::Attempt attempt_;
  const int lease_seconds_;
  const int heartbeat_seconds_;
  const int max_duration_seconds_;
  AbortSignal* abort_;
  Mutex mu_;
  CondVar stop_cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// What a renewal outcome means for the running attempt: OK to go on, or the
// Status it must stop with (Conflict: lease lost; DeadlineExceeded).
Status RenewalVerdict(const StatusOr<store::RenewOutcome>& outcome, int max_duration_seconds);

}  // namespace export_center::dispatch
