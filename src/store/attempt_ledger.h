#pragma once
// AttemptLedger: one execution attempt of a task as the consumer, the export
// attempt and the lease watchdog write it (docs/task-lifecycle.md: claim,
// running an attempt, automatic retry). Every write of a running attempt is
// conditional on its Attempt (task, version, instance), decided with the
// database clock.
//
// Thread-safety: every method may be called from any thread concurrently;
// each is one transaction, safe to retry after Unavailable.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/task_catalog.h"
#include "task/task.h"

namespace export_center::store {

// Why a claim updated no row: the exhaustive table of claim branches
// (docs/task-lifecycle.md#claim-branches), decided with the database clock.
// Every branch acknowledges the command.
enum class ClaimMiss {
  kTaskMissing,
  kNewerVersion,         // task.dispatch_version > command's
  kOlderVersion,         // task.dispatch_version < command's (cannot happen normally)
  kFinished,             // SUCCEEDED/FAILED/EXPIRED/CANCELLED/STALE/INCONSISTENT
  kRunningLeaseLive,     // another instance holds a live lease
  kRunningLeaseExpired,  // left to the reconciler
  kPendingBackoff,       // PENDING and next_retry_at > now
  kLostRace,             // PENDING and due, yet the update hit 0 rows
  // PENDING and due, but its tenant already runs tenant_running_limit tasks
  // while another tenant has a task waiting: the command was handed back
  // (docs/dispatch.md#tenant-fairness).
  kTenantAtLimit,
};
std::string_view ToString(ClaimMiss miss);

struct ClaimRequest {
  int64_t task_id = 0;
  int32_t dispatch_version = 1;
  std::string instance;
  int lease_seconds = 300;
  int max_duration_seconds = 1800;
  // Tenant fairness (docs/dispatch.md#tenant-fairness). When > 0, the
  // task's tenant already has this many RUNNING tasks and a task of another
  // tenant is PENDING and due (the limit is work-conserving: a tenant alone
  // uses every slot), the task is not claimed (no attempt counted, version
  // unchanged): its outbox row goes back to PENDING, due after
  // handback_backoff_ms, and the miss is kTenantAtLimit.
  int tenant_running_limit = 0;
  int64_t handback_backoff_ms = 1000;
};

struct ClaimResult {
  bool claimed = false;
  std::optional<ClaimMiss> miss;   // set when !claimed
  std::optional<task::Task> task;  // the task as read after the attempt (absent if missing)
};

// Identifies one execution attempt: every write of a running attempt is
// conditional on all three (docs/task-lifecycle.md#running-an-attempt).
struct Attempt {
  int64_t task_id = 0;
  int32_t dispatch_version = 1;
  std::string instance;
};

enum class RenewOutcome {
  kRenewed,
  kLost,            // version/owner/status changed: abort, do not commit
  kDeadlinePassed,  // execution_deadline_at <= now: abort as transient timeout
};

// What a progress write learnt (the attempt still holds the task).
enum class ProgressOutcome {
  kContinue,
  kCancelRequested,  // a cancel was requested: stop and end CANCELLED
};

enum class CommitOutcome {
  kCommitted,  // SUCCEEDED
  // Nothing changed (lease lost, deadline passed or cancel requested): the
  // caller deletes its file.
  kNotCommitted,
};

enum class FinishOutcome {
  kFinished,  // the task is in the end state asked for
  kLost,      // the attempt no longer held the task: nothing changed
};

struct FileResult {
  std::string file_name;
  std::string object_key;
  std::string content_type;
  int64_t size_bytes = 0;
  int64_t total_rows = 0;
  std::string sha256_hex;          // of the stored bytes
  std::vector<int64_t> part_rows;  // data rows of each sheet or part
};

// What a failed attempt stores: `message`, the classified failure_message the
// user sees (attempt/failure_message.h), and `detail`, the operators' full
// text of the same failure (failure_detail; none when empty), shown only in
// the operators' console. Both are made valid UTF-8 and cut like every stored
// text. A plain string is a message without detail.
struct FailureText {
  FailureText(std::string m) : message(std::move(m)) {}  // NOLINT: implicit by design
  FailureText(const char* m) : message(m) {}             // NOLINT: implicit by design
  FailureText(std::string m, std::string d) : message(std::move(m)), detail(std::move(d)) {}
  std::string message;
  std::string detail;
};

// kCancelled: a cancel was requested during the attempt, so the task ended
// CANCELLED instead of going back to PENDING.
enum class RetryOutcome { kRescheduled, kFailedMaxAttempts, kCancelled, kLost };

// Used by the consumer (ClaimTask), the export attempt and its lease watchdog.
class AttemptLedger : public virtual TaskReader {
 public:
  virtual StatusOr<ClaimResult> ClaimTask(const ClaimRequest& request) = 0;
  // Renews the lease; the deadline check lives in the same statement.
  virtual StatusOr<RenewOutcome> RenewLease(const Attempt& attempt, int lease_seconds) = 0;
  // Progress is display-only and separate from the lease. Says whether a
  // cancel was requested (so the worker learns it at every page).
  // Conflict when the attempt no longer holds the task (lease lost).
  virtual StatusOr<ProgressOutcome> UpdateProgress(const Attempt& attempt, int64_t processed_rows,
                                                   std::optional<int64_t> total_rows) = 0;
  // RUNNING → SUCCEEDED, conditional on the attempt, the deadline and no
  // cancel request; sets expires_at = now + retention.
  virtual StatusOr<CommitOutcome> CommitSuccess(const Attempt& attempt, const FileResult& file,
                                                int retention_days) = 0;
  // RUNNING → to_state (FAILED, CANCELLED, STALE, INCONSISTENT), conditional on the attempt.
  virtual StatusOr<FinishOutcome> FinishAttempt(const Attempt& attempt, task::TaskState to_state,
                                                const std::string& failure_code,
                                                const FailureText& failure) = 0;
  // Transient failure (docs/task-lifecycle.md#automatic-retry): if a cancel
  // was requested, CANCELLED; else if attempt_count < max_attempts then
  // PENDING, version+1, next_retry_at=now+backoff, new outbox row due at the
  // same instant — one transaction; else FAILED with the message.
  virtual StatusOr<RetryOutcome> ScheduleRetry(const Attempt& attempt, const FailureText& failure,
                                               int64_t backoff_ms) = 0;
  // sql-template route: records `version` as the task's contract_version if
  // none was recorded at create, and returns the version now recorded (the
  // one to compare with; docs/task-lifecycle.md#stale-and-inconsistent).
  // Conflict when the attempt no longer holds the task.
  virtual StatusOr<std::string> PinContractVersion(const Attempt& attempt,
                                                   const std::string& version) = 0;
};

}  // namespace export_center::store
