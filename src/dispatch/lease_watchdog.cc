#include "dispatch/lease_watchdog.h"

#include <spdlog/spdlog.h>

namespace export_center::dispatch {

Status RenewalVerdict(const StatusOr<store::RenewOutcome>& outcome, int max_duration_seconds) {
  if (!outcome.ok()) {
    return Unavailable("lease renewal failed: " + outcome.status().message());
  }
  switch (*outcome) {
    case store::RenewOutcome::kRenewed:
      return Status::Ok();
    case store::RenewOutcome::kLost:
      return Conflict("the execution lease was lost to another attempt");
    case store::RenewOutcome::kDeadlinePassed:
      return DeadlineExceeded("execution exceeded the maximum duration of " +
                              std::to_string(max_duration_seconds / 60) + " minutes (" +
                              std::to_string(max_duration_seconds) + " s)");
  }
  return Internal("unknown renewal outcome");
}

LeaseWatchdog::LeaseWatchdog(store::TaskStore* store, store::Attempt attempt, int lease_seconds,
                             int heartbeat_seconds, int max_duration_seconds, AbortSignal* abort)
    : store_(store),
      attempt_(std::move(attempt)),
      lease_seconds_(lease_seconds),
      heartbeat_seconds_(heartbeat_seconds),
      max_duration_seconds_(max_duration_seconds),
      abort_(abort),
      thread_([this] { Run(); }) {}

LeaseWatchdog::~LeaseWatchdog() { Stop(); }

void LeaseWatchdog::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  stop_cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

void LeaseWatchdog::Run() {
  while (true) {
    {  // Sleeps for the heartbeat; Stop() ends it early.
      MutexLock lock(&mu_);
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(heartbeat_seconds_);
      while (!stopping_ && stop_cv_.WaitUntil(&mu_, deadline)) {
      }
      if (stopping_) return;
    }
    Status verdict =
        RenewalVerdict(store_->RenewLease(attempt_, lease_seconds_), max_duration_seconds_);
    if (!verdict.ok()) {
      spdlog::error("task {} v{}: watchdog stops the attempt: {}", attempt_.task_id,
                    attempt_.dispatch_version, verdict.ToString());
      abort_->Set(verdict);
      return;
    }
  }
}

}  // namespace export_center::dispatch
