#pragma once
// The shared core of the SQL store's role classes (sql_roles.h): the
// export_task and export_outbox column lists and their row mapping
// (task_rows.cc), the values the store itself writes, and SqlStoreCore — the
// database, dialect, id node, notification routes, the timeline and the one
// transition function every role shares. Internal to store/: no other
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
#include "store/sql/task_transitions.h"
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

// The export_outbox table as a leased queue (sql_command_outbox.cc).
LeasedQueueTable CommandOutboxTable();

// What every role class shares: one per store, owned by SqlTaskStore. It
// implements TaskTransitions::Effects, so the timeline event, the command row
// and the notification rows of a state change are written here, inside the
// change's transaction.
class SqlStoreCore final : private TaskTransitions::Effects {
 public:
  explicit SqlStoreCore(std::shared_ptr<Database> db);

  Database& db() const { return *db_; }
  const std::shared_ptr<Database>& shared_db() const { return db_; }
  const Dialect& dialect() const { return d_; }
  std::string Sql(std::string_view text) const { return d_.Expand(text); }
  Status Write(const std::function<Status(Connection&)>& fn) {
    return db_->WithTransaction(TxMode::kWrite, fn);
  }
  Status Read(const std::function<Status(Connection&)>& fn) {
    return db_->WithTransaction(TxMode::kRead, fn);
  }

  // Takes this store's id node from the database on first use, in its own
  // transaction before the caller opens one (docs/store.md#ids).
  Status EnsureIdNode() EXCLUDES(ids_mu_);
  int64_t NewId() { return ids_.load(std::memory_order_acquire)->Next(); }

  StatusOr<std::optional<Task>> ReadTask(Connection& c, int64_t task_id, bool for_update);
  StatusOr<Task> ReadExistingTask(Connection& c, int64_t task_id);

  // The one writer of export_task.status (store/sql/task_transitions.h).
  TaskTransitions& transitions() { return transitions_; }

  // Inserts the command row of the task's current (PENDING) version, due at
  // the task's own next_retry_at, so the publisher never sends it early
  // (docs/task-lifecycle.md#automatic-retry). Returns 0 when the row already exists.
  StatusOr<int64_t> InsertCommand(Connection& c, int64_t task_id, int32_t version,
                                  const std::string& export_type, const std::string& trace_id);

  // ---- the timeline (task_events.cc) ----
  // Appends one event of `task_id` at `version` with the caller's connection
  // `c`, inside the transaction of the change it records (never one of its
  // own), within the per-task cap (task_event.h). Needs EnsureIdNode first.
  // A state change's events come from transitions().
  Status RecordEvent(Connection& c, int64_t task_id, int32_t version, TaskEventKind kind,
                     const nlohmann::json& details) override;
  // A PROGRESS event, unless the sampling leaves this checkpoint out.
  Status RecordProgress(Connection& c, const Attempt& a, int64_t rows,
                        std::optional<int64_t> total);

  // The export_outbox table as a leased queue (sql_command_outbox.cc).
  const LeasedQueue& command_queue() const { return outbox_; }
  NotificationOutbox& notifications() { return *notifications_; }
  SubscriptionLedger& subscriptions() { return *subscriptions_; }
  void SetNotificationRoutes(std::vector<NotificationRoute> routes) EXCLUDES(routes_mu_);

 private:
  // ---- TaskTransitions::Effects ----
  Status InsertCommandOrFail(Connection& c, const Task& t, const std::string& trace_id) override;
  // Erases the ended task's wrapped file key (no attempt needs it any more)
  // and writes the notification rows of the routes in force (docs/notifications.md).
  Status NotifyEnded(Connection& c, int64_t task_id) override;

  std::shared_ptr<const std::vector<NotificationRoute>> Routes() const EXCLUDES(routes_mu_);
  // False when the cap drops an event of `kind`; may delete an older event.
  StatusOr<bool> MakeRoomForEvent(Connection& c, int64_t task_id, TaskEventKind kind);

  std::shared_ptr<Database> db_;
  const Dialect d_;
  const LeasedQueue outbox_;
  const std::unique_ptr<NotificationOutbox> notifications_;
  const std::unique_ptr<SubscriptionLedger> subscriptions_;
  mutable Mutex routes_mu_;
  std::shared_ptr<const std::vector<NotificationRoute>> routes_ GUARDED_BY(routes_mu_);
  Mutex ids_mu_;
  std::unique_ptr<IdGenerator> ids_owner_ GUARDED_BY(ids_mu_);
  // Set once by EnsureIdNode (under ids_mu_), then read without the lock.
  std::atomic<IdGenerator*> ids_{nullptr};
  // After d_: the one writer of export_task.status.
  TaskTransitions transitions_;
};

// The base of every role class: the core's parts under the names the role
// files use. Holds references only; SqlTaskStore owns the core.
class SqlRole {
 protected:
  explicit SqlRole(SqlStoreCore& core)
      : core_(core), db_(core.shared_db()), d_(core.dialect()), transitions_(core.transitions()) {}

  std::string Sql(std::string_view text) const { return core_.Sql(text); }
  Status Write(const std::function<Status(Connection&)>& fn) { return core_.Write(fn); }
  Status Read(const std::function<Status(Connection&)>& fn) { return core_.Read(fn); }
  Status EnsureIdNode() { return core_.EnsureIdNode(); }
  int64_t NewId() { return core_.NewId(); }
  StatusOr<std::optional<Task>> ReadTask(Connection& c, int64_t task_id, bool for_update) {
    return core_.ReadTask(c, task_id, for_update);
  }
  StatusOr<Task> ReadExistingTask(Connection& c, int64_t task_id) {
    return core_.ReadExistingTask(c, task_id);
  }
  Status RecordEvent(Connection& c, int64_t task_id, int32_t version, TaskEventKind kind,
                     const nlohmann::json& details) {
    return core_.RecordEvent(c, task_id, version, kind, details);
  }

  SqlStoreCore& core_;
  const std::shared_ptr<Database> db_;
  const Dialect& d_;
  TaskTransitions& transitions_;
};

}  // namespace export_center::store::sql
