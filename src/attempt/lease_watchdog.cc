#include "attempt/lease_watchdog.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace export_center::attempt {

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

LeaseWatchdog::LeaseWatchdog(store::AttemptLedger* store, store::Attempt attempt, int lease_seconds,
                             int heartbeat_seconds, int max_duration_seconds, AbortSignal* abort)
    : store_(store),
      attempt_(std::move(attempt)),
      lease_seconds_(lease_seconds),
      heartbeat_seconds_(heartbeat_seconds),
      max_duration_seconds_(max_duration_seconds),
      abort_(abort),
      // The claim has just set lease_until = now + lease.
      renewed_at_(std::chrono::steady_clock::now()),
      worker_({"lease_watchdog", std::chrono::seconds(heartbeat_seconds),
               PeriodicWorker::FirstRound::kAfterWait},
              [this] { return Round(); }) {
  worker_.Start();
}

LeaseWatchdog::~LeaseWatchdog() { Stop(); }

void LeaseWatchdog::Stop() { worker_.Stop(); }

std::chrono::milliseconds LeaseWatchdog::SafetyMargin(int lease_seconds) {
  return std::max(std::chrono::milliseconds(1000), std::chrono::milliseconds(lease_seconds) * 200);
}

std::chrono::milliseconds LeaseWatchdog::RetryInterval(int heartbeat_seconds) {
  return std::clamp(std::chrono::milliseconds(heartbeat_seconds) * 200,
                    std::chrono::milliseconds(1000), std::chrono::milliseconds(5000));
}

// The lease was renewed to "database now + lease" at some instant after
// `renewed_at` was read, so renewed_at + lease is a safe underestimate of
// lease_until measured with this process's monotonic clock; no time is
// compared with the database's.
bool LeaseWatchdog::RenewOnce(std::chrono::steady_clock::time_point* renewed_at, bool* failing) {
  const auto before = std::chrono::steady_clock::now();
  auto outcome = store_->RenewLease(attempt_, lease_seconds_);
  if (outcome.ok()) {
    Status verdict = RenewalVerdict(outcome, max_duration_seconds_);
    if (!verdict.ok()) return Abort(verdict);
    if (*failing) {
      spdlog::info("task {} v{}: lease renewed again", attempt_.task_id, attempt_.dispatch_version);
    }
    *renewed_at = before;
    *failing = false;
    return true;
  }
  *failing = true;
  const auto give_up_at =
      *renewed_at + std::chrono::seconds(lease_seconds_) - SafetyMargin(lease_seconds_);
  if (std::chrono::steady_clock::now() + RetryInterval(heartbeat_seconds_) < give_up_at) {
    spdlog::warn("task {} v{}: lease renewal failed, retrying: {}", attempt_.task_id,
                 attempt_.dispatch_version, outcome.status().ToString());
    return true;
  }
  return Abort(RenewalVerdict(outcome, max_duration_seconds_));
}

bool LeaseWatchdog::Abort(const Status& verdict) {
  spdlog::error("task {} v{}: watchdog stops the attempt: {}", attempt_.task_id,
                attempt_.dispatch_version, verdict.ToString());
  abort_->Set(verdict);
  return false;
}

PeriodicWorker::Next LeaseWatchdog::Round() {
  if (!RenewOnce(&renewed_at_, &failing_)) return PeriodicWorker::Next::Finish();
  return failing_ ? PeriodicWorker::Next::After(RetryInterval(heartbeat_seconds_))
                  : PeriodicWorker::Next::Interval();
}

}  // namespace export_center::attempt
