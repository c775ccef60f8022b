#pragma once
// TaskMaintenance: the reconciler's repairs and clean-up
// (docs/task-lifecycle.md#reconciler-duties); CommandQuarantine: the DLQ
// handler's one write (docs/task-lifecycle.md#dead-letters-and-quarantine).
//
// Thread-safety: every method may be called from any thread concurrently;
// each is one transaction (or statement), safe to retry after Unavailable.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/task_catalog.h"

namespace export_center::store {

// What lease recovery did to one RUNNING task whose lease had expired.
enum class LeaseRecovery {
  kRequeued,   // PENDING, version+1, a new outbox row
  kFailed,     // max attempts reached → FAILED
  kCancelled,  // a cancel was requested → CANCELLED
};

struct RecoveredLease {
  int64_t task_id = 0;
  int32_t old_version = 0;
  LeaseRecovery outcome = LeaseRecovery::kRequeued;
  std::optional<std::string> object_key;  // partial file to delete, if recorded
  std::string export_type;
};

struct ExpiredArtifact {
  int64_t task_id = 0;
  std::string object_key;
};

enum class ExpireOutcome {
  kExpired,  // SUCCEEDED → EXPIRED
  kNotDue,   // the task was no longer SUCCEEDED with expires_at <= now: nothing changed
};

// Used by the reconciler.
class TaskMaintenance : public virtual TaskReader {
 public:
  // Case A: PENDING tasks due for grace seconds with no outbox row for their
  // version get one (same version, new event id). Returns rows inserted.
  virtual StatusOr<int> RedispatchMissingOutbox(int grace_seconds, int limit) = 0;
  // Case B: SENT rows older than sent_stale of still-PENDING tasks go back to
  // PENDING (same version). Returns rows changed.
  virtual StatusOr<int> ResendStaleSentOutbox(int sent_stale_seconds, int grace_seconds,
                                              int limit) = 0;
  // RUNNING with lease_until <= now: CANCELLED when a cancel was requested,
  // else PENDING + version+1 + new outbox, or FAILED at max attempts.
  virtual StatusOr<std::vector<RecoveredLease>> RecoverExpiredLeases(int limit) = 0;
  // CLAIMED outbox rows whose lease expired go back to PENDING, due now.
  virtual StatusOr<int> ReleaseStaleClaimedOutbox(int limit) = 0;
  // SUCCEEDED tasks whose expires_at <= now.
  virtual StatusOr<std::vector<ExpiredArtifact>> ListExpiredArtifacts(int limit) = 0;
  // SUCCEEDED → EXPIRED (after the file is gone).
  virtual StatusOr<ExpireOutcome> MarkExpired(int64_t task_id) = 0;
  // Deletes up to `limit` SENT rows older than `older_than_seconds`.
  virtual StatusOr<int> PurgeSentOutbox(int older_than_seconds, int limit) = 0;
  // History retention (retention.task-history-days): deletes up to `limit`
  // tasks in an end state without a file (FAILED, CANCELLED, EXPIRED, STALE,
  // INCONSISTENT) whose last change (updated_at) is older than
  // `older_than_days`, with their timeline and download-audit rows, in one
  // transaction; never an active task, never a SUCCEEDED one (its file is
  // still there: it goes once it has EXPIRED). Read through the
  // (updated_at, id) index. Returns the tasks deleted; idempotent.
  virtual StatusOr<int> DeleteOldHistory(int older_than_days, int limit) = 0;
};

// Used by the DLQ handler.
class CommandQuarantine {
 public:
  virtual ~CommandQuarantine() = default;
  // One transaction: the outbox row of (event, task, version) → QUARANTINED
  // and the task, PENDING at that version → FAILED with the reason; each
  // update must change exactly one row, else nothing changes. Repeating it
  // is Ok. Conflict when no PENDING/CLAIMED/SENT row matches or the task is
  // no longer PENDING at that version: an old or foreign message — audit it
  // and acknowledge, never quarantine the current version. Other errors:
  // the dead letter must not be acknowledged (it is retried).
  virtual Status QuarantineCommand(int64_t task_id, int32_t dispatch_version,
                                   const std::string& event_id, const std::string& reason) = 0;
};

}  // namespace export_center::store
