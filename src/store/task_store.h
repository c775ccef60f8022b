#pragma once
// TaskStore: the database as the only source of truth (docs/store.md, docs/guarantees.md).
//
// One implementation (SqlTaskStore, sql_task_store.h) runs one set of SQL
// statements on every database through a Database connection seam
// (database.h) and a small Dialect (dialect.h). Every time comparison —
// lease, back-off, deadline, expiry, dedupe window — happens inside SQL with
// the database's own clock; no method takes a "now" from the process.
//
// Thread-safety: every method may be called from any thread concurrently.
// Each method is one transaction (or one statement) and is safe to retry after
// an Unavailable error: conditional updates make repeats harmless.
// Codes: Unavailable for connection/lock/serialization trouble, NotFound for a
// missing task, Internal for broken invariants.

#include <compare>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/notification_outbox.h"
#include "task/task.h"

namespace export_center::store {

// ---- create -----------------------------------------------------------------

struct NewTask {
  std::string tenant_id;
  task::AppCode app_code = task::AppCode::kPlatform;
  std::string requested_by;
  std::string export_type;
  std::string task_name;
  task::FileFormat format = task::FileFormat::kXlsx;
  std::string parameters_json;  // canonical
  std::string params_hash;
  int32_t max_attempts = 3;
  std::optional<std::string> contract_version;
  std::string trace_id;
};

struct CreateLimits {
  int dedupe_window_seconds = 60;
  int max_active_per_user = 3;
  int max_active_per_type = 5;
};

struct CreateResult {
  task::Task task;
  bool deduplicated = false;  // an existing active task was returned
};

// ---- downloads (docs/http-api.md#download-audit) ------------------------------

// One answer that handed out file bytes or a URL to them (200, 206, or a 302
// to a presigned URL; docs/http-api.md#download-audit): the who, how and from
// where of its audit row.
struct DownloadRecord {
  int64_t task_id = 0;
  std::string tenant_id;
  task::AppCode app_code = task::AppCode::kPlatform;
  std::string user;         // the token's sub, or the signer of a signed link
  std::string export_type;  // copied so the audit survives the task row
  std::string via;          // DIRECT | SIGNED_LINK
  std::string served_by;    // STREAM | PRESIGNED_REDIRECT
  std::string client_address;
  std::string user_agent;  // cut to 512 bytes at a character boundary
  std::string request_id;
};

struct DownloadAuditEntry {
  int64_t id = 0;
  DownloadRecord record;
  int64_t downloaded_at = 0;  // epoch ms, database clock
};

struct DownloadAuditQuery {
  std::string tenant_id;  // always scoped to one tenant and app
  task::AppCode app_code = task::AppCode::kPlatform;
  std::optional<int64_t> task_id;
  std::optional<std::string> user;
  std::optional<int64_t> from_ms;  // inclusive
  std::optional<int64_t> to_ms;    // exclusive
  int page = 1;                    // from 1
  int size = 20;                   // 1..100
};

struct DownloadAuditPage {
  std::vector<DownloadAuditEntry> records;  // newest first
  int64_t total = 0;
};

// ---- outbox -----------------------------------------------------------------

enum class OutboxStatus { kPending, kClaimed, kSent, kQuarantined };
std::string_view ToString(OutboxStatus status);

struct OutboxEntry {
  int64_t id = 0;
  std::string event_id;
  int64_t task_id = 0;
  int32_t dispatch_version = 1;
  std::string payload_json;  // the encoded task::Command
  OutboxStatus status = OutboxStatus::kPending;
  int32_t attempt_count = 0;
  int64_t next_retry_at = 0;
  std::optional<std::string> lease_owner;
  std::optional<int64_t> lease_until;
  std::optional<int64_t> sent_at;
  std::optional<std::string> last_error;
  int64_t created_at = 0;
};

// ---- consumer ---------------------------------------------------------------

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
  // PENDING and due, but its tenant already runs tenant_running_limit tasks:
  // the command was handed back (docs/dispatch.md#tenant-fairness).
  kTenantAtLimit,
};
std::string_view ToString(ClaimMiss miss);

struct ClaimRequest {
  int64_t task_id = 0;
  int32_t dispatch_version = 1;
  std::string instance;
  int lease_seconds = 300;
  int max_duration_seconds = 1800;
  // Tenant fairness (docs/dispatch.md#tenant-fairness). When > 0 and the
  // task's tenant already has this many RUNNING tasks, the task is not
  // claimed (no attempt counted, version unchanged): its outbox row goes back
  // to PENDING, due after handback_backoff_ms, and the miss is kTenantAtLimit.
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

struct FileResult {
  std::string file_name;
  std::string object_key;
  std::string content_type;
  int64_t size_bytes = 0;
  int64_t total_rows = 0;
};

// kCancelled: a cancel was requested during the attempt, so the task ended
// CANCELLED instead of going back to PENDING.
enum class RetryOutcome { kRescheduled, kFailedMaxAttempts, kCancelled, kLost };

// ---- reconciler -------------------------------------------------------------

struct RecoveredLease {
  int64_t task_id = 0;
  int32_t old_version = 0;
  bool failed = false;                    // true: max attempts reached → FAILED
  bool cancelled = false;                 // true: a cancel was requested → CANCELLED
                                          // neither: PENDING, version+1
  std::optional<std::string> object_key;  // partial file to delete, if recorded
  std::string export_type;
};

struct ExpiredArtifact {
  int64_t task_id = 0;
  std::string object_key;
};

// The schema version a database holds beside the one this binary migrates to.
struct SchemaVersions {
  int current = 0;  // highest applied migration; 0 for an empty database
  int latest = 0;   // store::LatestSchemaVersion() of this binary
};

class TaskStore {
 public:
  virtual ~TaskStore() = default;

  // Creates the schema or migrates it to the newest version; idempotent.
  // Also makes sure the GLOBAL_CREATE guard row exists.
  virtual Status Migrate() = 0;
  // Fails with Internal when the guard row is missing (start-up check).
  virtual Status CheckGuardRow() = 0;
  // Reads the applied schema version without changing anything (`export-center
  // check`). The error of the read when the version table cannot be read (a
  // database never migrated has none). Idempotent; any thread.
  virtual StatusOr<SchemaVersions> ReadSchemaVersions() = 0;
  // Current database time in epoch ms (for display and tests; never compared in C++).
  virtual StatusOr<int64_t> DatabaseNowMs() = 0;

  // In one transaction holding the guard row: returns an active task of the
  // same user, type and params_hash created within the dedupe window
  // (deduplicated=true); else LimitExceeded when the user or the type has too
  // many active tasks; else inserts the task (PENDING, version 1) and its
  // outbox row (PENDING, due now).
  virtual StatusOr<CreateResult> CreateTask(const NewTask& task, const CreateLimits& limits) = 0;

  virtual StatusOr<task::Task> GetTask(int64_t task_id) = 0;

  struct ListQuery {
    std::string tenant_id;
    task::AppCode app_code = task::AppCode::kPlatform;
    std::optional<std::string> requested_by;  // nullopt: the whole tenant
    std::optional<task::TaskState> status;
    std::optional<std::string> export_type;
    // Any of these states (empty: any); applied besides `status`.
    std::vector<task::TaskState> any_status;
    // PENDING tasks only: true = already attempted (retrying), false = not yet (queued).
    std::optional<bool> retrying;
    // task_name contains this text (case-insensitive for ASCII; % and _ are literal).
    std::optional<std::string> name_contains;
    int page = 1;   // from 1
    int size = 20;  // 1..100
  };
  struct ListPage {
    std::vector<task::Task> records;  // newest first
    int64_t total = 0;
  };
  virtual StatusOr<ListPage> ListTasks(const ListQuery& query) = 0;

  // Tasks changed after a point of the database clock, for live task events
  // (docs/http-api.md#get-export-tasksevents--task-events), oldest change
  // first — ordered by the change key (updated_at, id) — at most `limit`.
  // Without after_id: updated_at > updated_after_ms. With after_id: keyset
  // paging, (updated_at, id) > (updated_after_ms, after_id), so a reader
  // pages through any number of changes of one millisecond by passing the
  // last key it got. With up_to: only keys <= *up_to. Limited to one tenant
  // and app (and user) when tenant_id is set. Served by the export_task
  // (updated_at, id) index. Read-only; safe to retry.
  struct ChangeKey {
    int64_t updated_at = 0;
    int64_t id = 0;
    auto operator<=>(const ChangeKey&) const = default;
  };
  struct ChangeQuery {
    int64_t updated_after_ms = 0;
    std::optional<int64_t> after_id;
    std::optional<ChangeKey> up_to;
    std::optional<std::string> tenant_id;
    task::AppCode app_code = task::AppCode::kPlatform;
    std::optional<std::string> requested_by;
    int limit = 500;  // 1..10000
  };
  virtual StatusOr<std::vector<task::Task>> ListChangedTasks(const ChangeQuery& query) = 0;
  // The same changes as ListChangedTasks, only their keys: an index-only
  // read, for the task events' look-back for late commits.
  virtual StatusOr<std::vector<ChangeKey>> ListChangeKeys(const ChangeQuery& query) = 0;

  // PENDING → CANCELLED at once (returns the new state); RUNNING → sets
  // cancel_requested (state stays RUNNING). Other states: Conflict.
  virtual StatusOr<task::TaskState> RequestCancel(int64_t task_id) = 0;

  // From FAILED/CANCELLED/INCONSISTENT (task::CanManualRetry; a STALE task is
  // exported again as a new task instead): PENDING, version+1,
  // attempt_count=0, next_retry_at=now, cancel_requested=0, result cleared,
  // new outbox row — one transaction. Other states: Conflict.
  virtual StatusOr<task::Task> ManualRetry(int64_t task_id, const std::string& trace_id) = 0;

  // Audits one answer that handed out the file, once per (task, user) and
  // window: one transaction that locks the task row, and unless an audit row
  // of the same task and user is younger than `window_seconds` (database
  // clock), adds download_count+1, last_downloaded_at=now and one
  // export_download_audit row. Returns true when it counted, false when the
  // window already held a row (nothing written). The row lock makes
  // concurrent calls for one (task, user) count once: a download manager's
  // parallel ranges are one download. window_seconds <= 0 counts every call.
  // NotFound (and no row) when the task is gone. Safe to retry after
  // Unavailable within the window (a repeat finds the first row).
  virtual StatusOr<bool> RecordDownload(const DownloadRecord& download, int window_seconds) = 0;
  // The audit rows of one tenant and app matching the filters, newest first.
  virtual StatusOr<DownloadAuditPage> ListDownloadAudit(const DownloadAuditQuery& query) = 0;

  // ---- outbox publisher (docs/dispatch.md#the-outbox-row) ----
  // Ids of up to `limit` PENDING rows due now, in fair order
  // (docs/dispatch.md#tenant-fairness): round-robin across tenants, and
  // across users inside a tenant; oldest first within each round.
  virtual StatusOr<std::vector<int64_t>> SelectDueOutbox(int limit) = 0;
  // Conditional PENDING → CLAIMED with lease and attempt_count+1; nullopt when
  // another instance won.
  virtual StatusOr<std::optional<OutboxEntry>> ClaimOutbox(int64_t outbox_id,
                                                           const std::string& instance,
                                                           int lease_seconds) = 0;
  // CLAIMED(by instance) → SENT, sent_at=now, lease cleared. false if the lease was lost.
  virtual StatusOr<bool> MarkOutboxSent(int64_t outbox_id, const std::string& instance) = 0;
  // CLAIMED(by instance) → PENDING, next_retry_at=now+backoff, last_error.
  virtual StatusOr<bool> MarkOutboxFailed(int64_t outbox_id, const std::string& instance,
                                          const std::string& error, int64_t backoff_ms) = 0;
  virtual StatusOr<std::vector<OutboxEntry>> ListOutboxForTask(int64_t task_id) = 0;

  // ---- consumer (docs/task-lifecycle.md: claim, running an attempt, automatic retry) ----
  virtual StatusOr<ClaimResult> ClaimTask(const ClaimRequest& request) = 0;
  // Renews the lease; the deadline check lives in the same statement.
  virtual StatusOr<RenewOutcome> RenewLease(const Attempt& attempt, int lease_seconds) = 0;
  // Progress is display-only and separate from the lease. Returns whether a
  // cancel was requested (so the worker learns it at every page).
  // Conflict when the attempt no longer holds the task (lease lost).
  virtual StatusOr<bool> UpdateProgress(const Attempt& attempt, int64_t processed_rows,
                                        std::optional<int64_t> total_rows) = 0;
  // RUNNING → SUCCEEDED, conditional on the attempt, the deadline and no
  // cancel request; sets expires_at = now + retention. false: nothing
  // changed, caller deletes its file.
  virtual StatusOr<bool> CommitSuccess(const Attempt& attempt, const FileResult& file,
                                       int retention_days) = 0;
  // RUNNING → to_state (FAILED, CANCELLED, STALE, INCONSISTENT), conditional on the attempt.
  virtual StatusOr<bool> FinishAttempt(const Attempt& attempt, task::TaskState to_state,
                                       const std::string& failure_code,
                                       const std::string& message) = 0;
  // Transient failure (docs/task-lifecycle.md#automatic-retry): if a cancel
  // was requested, CANCELLED; else if attempt_count < max_attempts then
  // PENDING, version+1, next_retry_at=now+backoff, new outbox row due at the
  // same instant — one transaction; else FAILED with the message.
  virtual StatusOr<RetryOutcome> ScheduleRetry(const Attempt& attempt, const std::string& message,
                                               int64_t backoff_ms) = 0;
  // sql-template route: records `version` as the task's contract_version if
  // none was recorded at create, and returns the version now recorded (the
  // one to compare with; docs/task-lifecycle.md#stale-and-inconsistent).
  // Conflict when the attempt no longer holds the task.
  virtual StatusOr<std::string> PinContractVersion(const Attempt& attempt,
                                                   const std::string& version) = 0;

  // ---- reconciler (docs/task-lifecycle.md#reconciler-duties) ----
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
  virtual StatusOr<bool> MarkExpired(int64_t task_id) = 0;
  // Deletes up to `limit` SENT rows older than `older_than_seconds`.
  virtual StatusOr<int> PurgeSentOutbox(int older_than_seconds, int limit) = 0;

  // ---- dead letters (docs/task-lifecycle.md#dead-letters-and-quarantine) ----
  // One transaction: the outbox row of (event, task, version) → QUARANTINED
  // and the task, PENDING at that version → FAILED with the reason; each
  // update must change exactly one row, else nothing changes. Repeating it
  // is Ok. Conflict when no PENDING/CLAIMED/SENT row matches or the task is
  // no longer PENDING at that version: an old or foreign message — audit it
  // and acknowledge, never quarantine the current version. Other errors:
  // the dead letter must not be acknowledged (it is retried).
  virtual Status QuarantineCommand(int64_t task_id, int32_t dispatch_version,
                                   const std::string& event_id, const std::string& reason) = 0;

  // ---- notifications (docs/notifications.md) ----
  // The routes in force: every later change of a task to an end state
  // writes, in its own transaction, one export_notification row per route
  // that matches the task. Empty (the default): no rows. Thread-safe; app/
  // sets them once at start-up.
  virtual void SetNotificationRoutes(std::vector<NotificationRoute> routes) = 0;
  // The notification outbox on the same database, owned by this store.
  virtual NotificationOutbox& notifications() = 0;

  // ---- metrics ----
  // Tasks of one tenant that are queued (PENDING) or RUNNING.
  struct TenantLoad {
    std::string tenant_id;
    int64_t queued = 0;
    int64_t running = 0;
  };
  struct Gauges {
    int64_t outbox_pending = 0;
    int64_t outbox_oldest_age_seconds = 0;
    int64_t outbox_max_attempt = 0;
    int64_t task_queue_age_seconds = 0;
    std::vector<TenantLoad> tenants;  // only tenants with a PENDING or RUNNING task
  };
  virtual StatusOr<Gauges> ReadGauges() = 0;
};

}  // namespace export_center::store
