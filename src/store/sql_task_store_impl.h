#pragma once
// The shared part of SqlTaskStore's files (sql_task_*.cc): the export_task
// and export_outbox column lists and their row mapping, the values the store
// itself writes, and the SqlTaskStore class. Internal to store/: no other
// component includes it (they use the role headers and sql_task_store.h).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ids.h"
#include "common/mutex.h"
#include "store/database.h"
#include "store/leased_queue.h"
#include "store/sql_notification_outbox.h"
#include "store/sql_task_queries.h"
#include "store/task_store.h"

namespace export_center::store::sql {

using task::Task;
using task::TaskState;

// ---- column lists -----------------------------------------------------------

inline constexpr char kTaskColumns[] =
    "id, tenant_id, app_code, requested_by, export_type, task_name, format, parameters_json,"
    " params_hash, status, file_name, object_key, content_type, size_bytes, total_rows,"
    " processed_rows, failure_code, failure_message, dispatch_version, attempt_count,"
    " max_attempts, next_retry_at, lease_owner, lease_until, last_heartbeat_at,"
    " execution_deadline_at, cancel_requested, contract_version, download_count,"
    " last_downloaded_at, requested_at, started_at, completed_at, expires_at, updated_at,"
    " file_sha256, part_rows, column_policy_json, failure_detail, locale, file_encrypted,"
    " file_key_id, file_key_wrapped";

// Positions in kTaskColumns.
enum TaskCol : size_t {
  kId,
  kTenant,
  kAppCode,
  kRequestedBy,
  kExportType,
  kTaskName,
  kFormat,
  kParams,
  kParamsHash,
  kStatus,
  kFileName,
  kObjectKey,
  kContentType,
  kSizeBytes,
  kTotalRows,
  kProcessedRows,
  kFailureCode,
  kFailureMessage,
  kVersion,
  kAttemptCount,
  kMaxAttempts,
  kNextRetryAt,
  kLeaseOwner,
  kLeaseUntil,
  kHeartbeat,
  kDeadline,
  kCancelRequested,
  kContractVersion,
  kDownloadCount,
  kLastDownloadedAt,
  kRequestedAt,
  kStartedAt,
  kCompletedAt,
  kExpiresAt,
  kUpdatedAt,
  kFileSha256,
  kPartRows,
  kColumnPolicy,
  kFailureDetail,
  kLocale,
  kFileEncrypted,
  kFileKeyId,
  kFileKeyWrapped,
  kTaskColumnCount
};

inline constexpr char kOutboxColumns[] =
    "id, event_id, task_id, dispatch_version, payload_json, status, attempt_count,"
    " next_retry_at, lease_owner, lease_until, sent_at, last_error, created_at";

inline constexpr char kActive[] = "('PENDING', 'RUNNING')";

// The broker routing columns of export_outbox (docs/store.md); the channel decides the real
// destination, these are kept for operators reading the table.
inline constexpr char kTopic[] = "export-center.commands";

// failure_code values written by the store itself.
inline constexpr char kCodeRetriesExhausted[] = "RETRIES_EXHAUSTED";
inline constexpr char kCodeLeaseLost[] = "LEASE_LOST";
inline constexpr char kCodeQuarantined[] = "COMMAND_QUARANTINED";
inline constexpr char kCodeCancelled[] = "CANCELLED";
inline constexpr char kCancelledMessage[] = "cancelled by the user";

// Longest message stored. Every message written (a failure, a send error, a
// quarantine reason) may quote a replica's, a provider's or a broker's bytes:
// it is made valid UTF-8 and cut between characters here, the one place all
// of them pass, since PostgreSQL and MariaDB refuse invalid text and the
// task would stay RUNNING until lease recovery.
inline constexpr size_t kMaxMessageBytes = 1000;

// Makes `text` valid UTF-8 and cuts it to kMaxMessageBytes between characters.
std::string Truncate(const std::string& text);
// A message quoted in a timeline event: valid UTF-8, at most kMaxEventTextBytes.
inline constexpr size_t kMaxEventTextBytes = 200;
std::string ShortText(const std::string& text);
// The failure_detail column's value: NULL when there is none.
std::optional<std::string> DetailText(const FailureText& failure);
// The part_rows column's text: a JSON array of counts.
std::string PartRowsText(const std::vector<int64_t>& part_rows);
// The column_policy_json column's value: NULL for an empty policy.
std::optional<std::string> ColumnPolicyText(const task::ColumnPolicy& policy);

StatusOr<Task> TaskFromRow(const Row& r);
// One page of `size` tasks, newest first, and their bounded total, read by
// `page` (sql_task_queries.h): the user's list and the operators' search.
StatusOr<TaskCatalog::ListPage> ReadNewestTasks(Connection& c, const Dialect& d,
                                                const PageStatements& page, int size);
// A bounded count (at most kExactTotalBound + 1) as a total and whether it is exact.
void BoundTotal(int64_t counted, int64_t* total, bool* exact);
StatusOr<OutboxEntry> OutboxFromRow(const Row& r);

// The one TaskStore: every role, one file each (sql_task_catalog.cc,
// sql_command_outbox.cc, sql_attempt_ledger.cc, sql_task_maintenance.cc;
// StoreAdmin and the shared helpers in sql_task_store.cc).
class SqlTaskStore final : public TaskStore {
 public:
  explicit SqlTaskStore(std::shared_ptr<Database> db)
      : db_(std::move(db)),
        d_(db_->dialect()),
        outbox_(db_, CommandOutboxTable()),
        notifications_(NewSqlNotificationOutbox(db_)) {}

  // ---- StoreAdmin (sql_task_store.cc) ----
  Status Migrate() override;
  Status CheckGuardRow() override;
  StatusOr<SchemaVersions> ReadSchemaVersions() override;
  void SetNotificationRoutes(std::vector<NotificationRoute> routes) override EXCLUDES(routes_mu_);
  NotificationOutbox& notifications() override { return *notifications_; }
  StatusOr<Gauges> ReadGauges() override;

  // ---- TaskCatalog (sql_task_catalog.cc) ----
  StatusOr<int64_t> DatabaseNowMs() override;
  StatusOr<CreateResult> CreateTask(const NewTask& task, const CreateLimits& limits) override;
  StatusOr<Task> GetTask(int64_t task_id) override;
  StatusOr<ListPage> ListTasks(const ListQuery& query) override;
  StatusOr<std::vector<Task>> ListChangedTasks(const ChangeQuery& query) override;
  StatusOr<std::vector<ChangeKey>> ListChangeKeys(const ChangeQuery& query) override;
  StatusOr<TaskState> RequestCancel(int64_t task_id) override;
  StatusOr<Task> ManualRetry(int64_t task_id, const std::string& trace_id) override;
  StatusOr<DownloadCount> RecordDownload(const DownloadRecord& download,
                                         int window_seconds) override;
  StatusOr<DownloadAuditPage> ListDownloadAudit(const DownloadAuditQuery& query) override;
  StatusOr<std::vector<TaskEvent>> ListTaskEvents(int64_t task_id) override;  // sql_task_events.cc

  // ---- CommandOutbox (sql_command_outbox.cc) ----
  StatusOr<std::vector<int64_t>> SelectDueOutbox(int limit) override;
  StatusOr<std::optional<OutboxEntry>> ClaimOutbox(int64_t outbox_id, const std::string& instance,
                                                   int lease_seconds) override;
  StatusOr<MarkOutcome> MarkOutboxSent(int64_t outbox_id, const std::string& instance) override;
  StatusOr<MarkOutcome> MarkOutboxFailed(int64_t outbox_id, const std::string& instance,
                                         const std::string& error, int64_t backoff_ms) override;
  StatusOr<std::vector<OutboxEntry>> ListOutboxForTask(int64_t task_id) override;

  // ---- AttemptLedger (sql_attempt_ledger.cc) ----
  StatusOr<ClaimResult> ClaimTask(const ClaimRequest& request) override;
  StatusOr<RenewOutcome> RenewLease(const Attempt& attempt, int lease_seconds) override;
  StatusOr<ProgressOutcome> UpdateProgress(const Attempt& attempt, int64_t processed_rows,
                                           std::optional<int64_t> total_rows) override;
  StatusOr<CommitOutcome> CommitSuccess(const Attempt& attempt, const FileResult& file,
                                        int retention_days) override;
  StatusOr<FinishOutcome> FinishAttempt(const Attempt& attempt, TaskState to_state,
                                        const std::string& failure_code,
                                        const FailureText& failure) override;
  StatusOr<RetryOutcome> ScheduleRetry(const Attempt& attempt, const FailureText& failure,
                                       int64_t backoff_ms) override;
  StatusOr<std::string> PinContractVersion(const Attempt& attempt,
                                           const std::string& version) override;

  // ---- TaskMaintenance (sql_task_maintenance.cc) ----
  StatusOr<int> RedispatchMissingOutbox(int grace_seconds, int limit) override;
  StatusOr<int> ResendStaleSentOutbox(int sent_stale_seconds, int grace_seconds,
                                      int limit) override;
  StatusOr<std::vector<RecoveredLease>> RecoverExpiredLeases(int limit) override;
  StatusOr<int> ReleaseStaleClaimedOutbox(int limit) override;
  StatusOr<std::vector<ExpiredArtifact>> ListExpiredArtifacts(int limit) override;
  StatusOr<ExpireOutcome> MarkExpired(int64_t task_id) override;
  StatusOr<int> PurgeSentOutbox(int older_than_seconds, int limit) override;
  StatusOr<int> DeleteOldHistory(int older_than_days, int limit) override;

  // ---- TaskOperations (sql_task_operations.cc) ----
  StatusOr<ListPage> SearchTasks(const OperatorFilter& filter, int page, int size,
                                 const std::optional<PageKey>& after) override;
  StatusOr<int64_t> CountTasks(const OperatorFilter& filter) override;
  StatusOr<std::vector<int64_t>> ListTaskIds(const OperatorFilter& filter, int64_t after_id,
                                             int limit) override;
  StatusOr<TaskDispatch> ReadTaskDispatch(int64_t task_id) override;
  StatusOr<int64_t> BeginBulkAction(const BulkActionRecord& record) override;
  Status FinishBulkAction(const BulkActionRecord& record) override;
  StatusOr<std::vector<BulkActionRecord>> ListBulkActions(const OperatorScope& scope,
                                                          int limit) override;
  StatusOr<std::vector<TypeStats>> ReadTypeStats(const OperatorScope& scope,
                                                 int64_t window_ms) override;
  StatusOr<QueueHealth> ReadQueueHealth(const OperatorScope& scope) override;
  StatusOr<std::vector<NotificationEntry>> ListDeadNotifications(const OperatorScope& scope,
                                                                 int limit) override;
  Status RedeliverNotification(const OperatorScope& scope, int64_t notification_id) override;

  // ---- CommandQuarantine (sql_task_maintenance.cc) ----
  Status QuarantineCommand(int64_t task_id, int32_t dispatch_version, const std::string& event_id,
                           const std::string& reason) override;

 private:
  std::string Sql(std::string_view text) const { return d_.Expand(text); }

  // Takes this store's id node from the database on first use, in its own
  // transaction before the caller opens one (docs/store.md#ids).
  Status EnsureIdNode() EXCLUDES(ids_mu_);
  int64_t NewId() { return ids_.load(std::memory_order_acquire)->Next(); }

  Status Write(const std::function<Status(Connection&)>& fn) {
    return db_->WithTransaction(TxMode::kWrite, fn);
  }
  Status Read(const std::function<Status(Connection&)>& fn) {
    return db_->WithTransaction(TxMode::kRead, fn);
  }

  StatusOr<std::optional<Task>> ReadTask(Connection& c, int64_t task_id, bool for_update);
  // RUNNING → an end state, conditional on the attempt, inside a transaction.
  Status EndAttempt(Connection& c, const Attempt& a, TaskState to_state, const std::string& code,
                    const FailureText& failure);
  StatusOr<Task> ReadExistingTask(Connection& c, int64_t task_id);
  // Inserts the command row of the task's current (PENDING) version, due at
  // the task's own next_retry_at, so the publisher never sends it early
  // (docs/task-lifecycle.md#automatic-retry). Returns 0 when the row already exists.
  StatusOr<int64_t> InsertCommand(Connection& c, int64_t task_id, int32_t version,
                                  const std::string& export_type, const std::string& trace_id);
  // Same, but a missing row is a broken invariant.
  Status InsertCommandOrFail(Connection& c, const Task& t, const std::string& trace_id);

  StatusOr<std::optional<Task>> FindDuplicate(Connection& c, const NewTask& t, int window_seconds);
  Status CheckActiveLimits(Connection& c, const NewTask& t, const CreateLimits& limits);
  StatusOr<ClaimMiss> ExplainClaimMiss(Connection& c, const ClaimRequest& r,
                                       std::optional<Task>* task);
  Status RecoverOne(Connection& c, const Row& row, std::vector<RecoveredLease>* out);
  // Puts each picked outbox row (id, task_id, dispatch_version) still
  // matching `from` back to PENDING with `set`, and records why (`cause`).
  Status RequeueOutboxRows(Connection& c, const Rows& picked, std::string_view from,
                           std::string_view set, const char* cause, int* requeued);
  // Called inside the transaction that just moved `task_id` to an end state
  // (every such statement of this file is followed by it): erases the task's
  // wrapped file key (no attempt needs it any more) and writes the
  // notification rows of the routes in force (docs/notifications.md).
  Status NotifyEnded(Connection& c, int64_t task_id);
  std::shared_ptr<const std::vector<NotificationRoute>> Routes() const EXCLUDES(routes_mu_);
  // Inside the claim transaction: true when the task's tenant is at
  // r.tenant_running_limit while another tenant has a task waiting, and the
  // command was handed back.
  StatusOr<bool> HandBackIfTenantAtLimit(Connection& c, const ClaimRequest& r);
  // True when a task of a tenant other than `tenant` is PENDING and due.
  StatusOr<bool> AnotherTenantWaits(Connection& c, const std::string& tenant);

  // ---- the timeline (sql_task_events.cc) ----
  // Appends one event of `task_id` at `version` with the caller's connection
  // `c`, inside the transaction of the change it records (never one of its
  // own), within the per-task cap (task_event.h). Needs EnsureIdNode first.
  Status RecordEvent(Connection& c, int64_t task_id, int32_t version, TaskEventKind kind,
                     const nlohmann::json& details);
  // Same, at the task's current version; nothing when the task is gone.
  Status RecordCurrentVersionEvent(Connection& c, int64_t task_id, TaskEventKind kind,
                                   const nlohmann::json& details);
  // The FINISHED event of a task that has just reached an end state: status,
  // code, rows, bytes and duration read back from its row.
  Status RecordFinished(Connection& c, int64_t task_id);
  // A PROGRESS event, unless the sampling leaves this checkpoint out.
  Status RecordProgress(Connection& c, const Attempt& a, int64_t rows,
                        std::optional<int64_t> total);
  // False when the cap drops an event of `kind`; may delete an older event.
  StatusOr<bool> MakeRoomForEvent(Connection& c, int64_t task_id, TaskEventKind kind);

  // The export_outbox table as a leased queue (sql_command_outbox.cc).
  static LeasedQueueTable CommandOutboxTable();

  std::shared_ptr<Database> db_;
  const Dialect d_;
  const LeasedQueue outbox_;
  const std::unique_ptr<NotificationOutbox> notifications_;
  mutable Mutex routes_mu_;
  std::shared_ptr<const std::vector<NotificationRoute>> routes_ GUARDED_BY(routes_mu_);
  Mutex ids_mu_;
  std::unique_ptr<IdGenerator> ids_owner_ GUARDED_BY(ids_mu_);
  // Set once by EnsureIdNode (under ids_mu_), then read without the lock.
  std::atomic<IdGenerator*> ids_{nullptr};
};

}  // namespace export_center::store::sql
