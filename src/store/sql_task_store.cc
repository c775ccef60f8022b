#include "store/sql_task_store.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "common/mutex.h"
#include "common/time_format.h"
#include "common/utf8.h"
#include "store/migrations.h"
#include "store/sql_notification_outbox.h"
#include "task/command.h"

namespace export_center::store {
namespace {

using task::Task;
using task::TaskState;

// ---- column lists -----------------------------------------------------------

constexpr char kTaskColumns[] =
    "id, tenant_id, app_code, requested_by, export_type, task_name, format, parameters_json,"
    " params_hash, status, file_name, object_key, content_type, size_bytes, total_rows,"
    " processed_rows, failure_code, failure_message, dispatch_version, attempt_count,"
    " max_attempts, next_retry_at, lease_owner, lease_until, last_heartbeat_at,"
    " execution_deadline_at, cancel_requested, contract_version, download_count,"
    " last_downloaded_at, requested_at, started_at, completed_at, expires_at, updated_at";

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
  kTaskColumnCount
};

constexpr char kOutboxColumns[] =
    "id, event_id, task_id, dispatch_version, payload_json, status, attempt_count,"
    " next_retry_at, lease_owner, lease_until, sent_at, last_error, created_at";

constexpr char kActive[] = "('PENDING', 'RUNNING')";

// The broker routing columns of export_outbox (docs/store.md); the channel decides the real
// destination, these are kept for operators reading the table.
constexpr char kTopic[] = "export-center.commands";

// failure_code values written by the store itself.
constexpr char kCodeRetriesExhausted[] = "RETRIES_EXHAUSTED";
constexpr char kCodeLeaseLost[] = "LEASE_LOST";
constexpr char kCodeQuarantined[] = "COMMAND_QUARANTINED";
constexpr char kCodeCancelled[] = "CANCELLED";
constexpr char kCancelledMessage[] = "cancelled by the user";

// Longest message stored. Every message written (a failure, a send error, a
// quarantine reason) may quote a replica's, a provider's or a broker's bytes:
// it is made valid UTF-8 and cut between characters here, the one place all
// of them pass, since PostgreSQL and MariaDB refuse invalid text and the
// task would stay RUNNING until lease recovery.
constexpr size_t kMaxMessageBytes = 1000;

std::string Truncate(const std::string& text) { return utf8::Excerpt(text, kMaxMessageBytes); }

// The export_task_guard row that serialises the claims of one tenant
// (HandBackIfTenantAtLimit). The name column is VARCHAR(64) like tenant_id,
// so the tenant is hashed (64-bit FNV-1a) rather than appended.
std::string TenantClaimLockName(const std::string& tenant) {
  uint64_t hash = 1469598103934665603ULL;
  for (unsigned char ch : tenant) {
    hash ^= ch;
    hash *= 1099511628211ULL;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "TENANT_CLAIM:%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

// Informational only (the command's occurredAt): never compared.
std::string NowIso8601() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  return FormatIsoMillis(ms);
}

StatusOr<Task> TaskFromRow(const Row& r) {
  if (r.size() < kTaskColumnCount) return Internal("export_task row has too few columns");
  Task t;
  t.id = r.Int(kId);
  t.tenant_id = r.Text(kTenant);
  auto app = task::ParseAppCode(r.Text(kAppCode));
  auto format = task::ParseFileFormat(r.Text(kFormat));
  auto status = task::ParseTaskState(r.Text(kStatus));
  if (!app || !format || !status) {
    return Internal("export_task " + std::to_string(t.id) +
                    " has an unknown app_code, format or status");
  }
  t.app_code = *app;
  t.requested_by = r.Text(kRequestedBy);
  t.export_type = r.Text(kExportType);
  t.task_name = r.Text(kTaskName);
  t.format = *format;
  t.parameters_json = r.Text(kParams);
  t.params_hash = r.Text(kParamsHash);
  t.status = *status;
  t.file_name = r.OptText(kFileName);
  t.object_key = r.OptText(kObjectKey);
  t.content_type = r.OptText(kContentType);
  t.size_bytes = r.OptInt(kSizeBytes);
  t.total_rows = r.OptInt(kTotalRows);
  t.processed_rows = r.Int(kProcessedRows);
  t.failure_code = r.OptText(kFailureCode);
  t.failure_message = r.OptText(kFailureMessage);
  t.dispatch_version = static_cast<int32_t>(r.Int(kVersion));
  t.attempt_count = static_cast<int32_t>(r.Int(kAttemptCount));
  t.max_attempts = static_cast<int32_t>(r.Int(kMaxAttempts));
  t.next_retry_at = r.Int(kNextRetryAt);
  t.lease_owner = r.OptText(kLeaseOwner);
  t.lease_until = r.OptInt(kLeaseUntil);
  t.last_heartbeat_at = r.OptInt(kHeartbeat);
  t.execution_deadline_at = r.OptInt(kDeadline);
  t.cancel_requested = r.Int(kCancelRequested) != 0;
  t.contract_version = r.OptText(kContractVersion);
  t.download_count = r.Int(kDownloadCount);
  t.last_downloaded_at = r.OptInt(kLastDownloadedAt);
  t.requested_at = r.Int(kRequestedAt);
  t.started_at = r.OptInt(kStartedAt);
  t.completed_at = r.OptInt(kCompletedAt);
  t.expires_at = r.OptInt(kExpiresAt);
  t.updated_at = r.Int(kUpdatedAt);
  return t;
}

std::optional<OutboxStatus> ParseOutboxStatus(const std::string& text) {
  for (auto s : {OutboxStatus::kPending, OutboxStatus::kClaimed, OutboxStatus::kSent,
                 OutboxStatus::kQuarantined}) {
    if (ToString(s) == text) return s;
  }
  return std::nullopt;
}

StatusOr<OutboxEntry> OutboxFromRow(const Row& r) {
  OutboxEntry e;
  e.id = r.Int(0);
  e.event_id = r.Text(1);
  e.task_id = r.Int(2);
  e.dispatch_version = static_cast<int32_t>(r.Int(3));
  e.payload_json = r.Text(4);
  auto status = ParseOutboxStatus(r.Text(5));
  if (!status) return Internal("export_outbox " + std::to_string(e.id) + " has an unknown status");
  e.status = *status;
  e.attempt_count = static_cast<int32_t>(r.Int(6));
  e.next_retry_at = r.Int(7);
  e.lease_owner = r.OptText(8);
  e.lease_until = r.OptInt(9);
  e.sent_at = r.OptInt(10);
  e.last_error = r.OptText(11);
  e.created_at = r.Int(12);
  return e;
}

// A LIKE pattern matching `text` anywhere, with '!' as the escape character
// ('\\' would need doubling in MySQL's string literals, '!' means the same everywhere).
std::string ContainsPattern(const std::string& text) {
  std::string pattern = "%";
  for (char c : text) {
    if (c == '!' || c == '%' || c == '_') pattern += '!';
    pattern += c;
  }
  return pattern + "%";
}

// The filters the download-center page's tabs and search need
// (docs/http-api.md#get-export-tasks--list).
void AddListFilters(const TaskStore::ListQuery& q, std::string* where, SqlParams* params) {
  if (!q.any_status.empty()) {
    std::string marks;
    for (TaskState state : q.any_status) {
      marks += marks.empty() ? "?" : ", ?";
      params->emplace_back(task::ToString(state));
    }
    *where += " AND status IN (" + marks + ")";
  }
  if (q.retrying) {
    *where += *q.retrying ? " AND status = 'PENDING' AND attempt_count > 0"
                          : " AND status = 'PENDING' AND attempt_count = 0";
  }
  if (q.name_contains) {
    *where += " AND LOWER(task_name) LIKE LOWER(?) ESCAPE '!'";
    params->emplace_back(ContainsPattern(*q.name_contains));
  }
}

class SqlTaskStore final : public TaskStore {
 public:
  explicit SqlTaskStore(std::shared_ptr<Database> db)
      : db_(std::move(db)), d_(db_->dialect()), notifications_(NewSqlNotificationOutbox(db_)) {}

  // ---- schema ----
  Status Migrate() override;
  Status CheckGuardRow() override;
  StatusOr<SchemaVersions> ReadSchemaVersions() override;
  StatusOr<int64_t> DatabaseNowMs() override;

  // ---- tasks ----
  StatusOr<CreateResult> CreateTask(const NewTask& task, const CreateLimits& limits) override;
  StatusOr<Task> GetTask(int64_t task_id) override;
  StatusOr<ListPage> ListTasks(const ListQuery& query) override;
  StatusOr<std::vector<Task>> ListChangedTasks(const ChangeQuery& query) override;
  StatusOr<std::vector<ChangeKey>> ListChangeKeys(const ChangeQuery& query) override;
  StatusOr<TaskState> RequestCancel(int64_t task_id) override;
  StatusOr<Task> ManualRetry(int64_t task_id, const std::string& trace_id) override;
  StatusOr<bool> RecordDownload(const DownloadRecord& download, int window_seconds) override;
  StatusOr<DownloadAuditPage> ListDownloadAudit(const DownloadAuditQuery& query) override;

  // ---- outbox publisher ----
  StatusOr<std::vector<int64_t>> SelectDueOutbox(int limit) override;
  StatusOr<std::optional<OutboxEntry>> ClaimOutbox(int64_t outbox_id, const std::string& instance,
                                                   int lease_seconds) override;
  StatusOr<bool> MarkOutboxSent(int64_t outbox_id, const std::string& instance) override;
  StatusOr<bool> MarkOutboxFailed(int64_t outbox_id, const std::string& instance,
                                  const std::string& error, int64_t backoff_ms) override;
  StatusOr<std::vector<OutboxEntry>> ListOutboxForTask(int64_t task_id) override;

  // ---- consumer ----
  StatusOr<ClaimResult> ClaimTask(const ClaimRequest& request) override;
  StatusOr<RenewOutcome> RenewLease(const Attempt& attempt, int lease_seconds) override;
  StatusOr<bool> UpdateProgress(const Attempt& attempt, int64_t processed_rows,
                                std::optional<int64_t> total_rows) override;
  StatusOr<bool> CommitSuccess(const Attempt& attempt, const FileResult& file,
                               int retention_days) override;
  StatusOr<bool> FinishAttempt(const Attempt& attempt, TaskState to_state,
                               const std::string& failure_code,
                               const std::string& message) override;
  StatusOr<RetryOutcome> ScheduleRetry(const Attempt& attempt, const std::string& message,
                                       int64_t backoff_ms) override;
  StatusOr<std::string> PinContractVersion(const Attempt& attempt,
                                           const std::string& version) override;

  // ---- reconciler ----
  StatusOr<int> RedispatchMissingOutbox(int grace_seconds, int limit) override;
  StatusOr<int> ResendStaleSentOutbox(int sent_stale_seconds, int grace_seconds,
                                      int limit) override;
  StatusOr<std::vector<RecoveredLease>> RecoverExpiredLeases(int limit) override;
  StatusOr<int> ReleaseStaleClaimedOutbox(int limit) override;
  StatusOr<std::vector<ExpiredArtifact>> ListExpiredArtifacts(int limit) override;
  StatusOr<bool> MarkExpired(int64_t task_id) override;
  StatusOr<int> PurgeSentOutbox(int older_than_seconds, int limit) override;

  // ---- dead letters ----
  Status QuarantineCommand(int64_t task_id, int32_t dispatch_version, const std::string& event_id,
                           const std::string& reason) override;

  // ---- notifications ----
  void SetNotificationRoutes(std::vector<NotificationRoute> routes) override EXCLUDES(routes_mu_);
  NotificationOutbox& notifications() override { return *notifications_; }

  // ---- metrics ----
  StatusOr<Gauges> ReadGauges() override;

 private:
  std::string Sql(std::string_view text) const { return d_.Expand(text); }

  // Takes this store's id node from the database on first use, in its own
  // transaction before the caller opens one (docs/store.md#ids).
  Status EnsureIdNode();
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
                    const std::string& message);
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
  // Called inside the transaction that just moved `task_id` to an end state
  // (every such statement of this file is followed by it): writes the
  // notification rows of the routes in force (docs/notifications.md).
  Status NotifyEnded(Connection& c, int64_t task_id);
  std::shared_ptr<const std::vector<NotificationRoute>> Routes() const EXCLUDES(routes_mu_);
  // Inside the claim transaction: true when the task's tenant is at
  // r.tenant_running_limit and the command was handed back.
  StatusOr<bool> HandBackIfTenantAtLimit(Connection& c, const ClaimRequest& r);

  std::shared_ptr<Database> db_;
  const Dialect d_;
  const std::unique_ptr<NotificationOutbox> notifications_;
  mutable Mutex routes_mu_;
  std::shared_ptr<const std::vector<NotificationRoute>> routes_ GUARDED_BY(routes_mu_);
  std::mutex ids_mu_;
  std::unique_ptr<IdGenerator> ids_owner_;  // GUARDED_BY(ids_mu_)
  std::atomic<IdGenerator*> ids_{nullptr};  // set once by EnsureIdNode
};

// ---- helpers ----------------------------------------------------------------

Status SqlTaskStore::EndAttempt(Connection& c, const Attempt& a, TaskState to_state,
                                const std::string& code, const std::string& message) {
  EC_ASSIGN_OR_RETURN(
      int64_t n,
      c.Exec(Sql("UPDATE export_task SET status = ?, failure_code = ?, failure_message = ?,"
                 " completed_at = {NOW}, lease_owner = NULL, lease_until = NULL,"
                 " object_key = NULL, updated_at = {NOW}"
                 " WHERE id = ? AND status = 'RUNNING' AND dispatch_version = ?"
                 " AND lease_owner = ?"),
             {task::ToString(to_state), code, Truncate(message), a.task_id, a.dispatch_version,
              a.instance}));
  if (n == 1) EC_RETURN_IF_ERROR(NotifyEnded(c, a.task_id));
  return Status::Ok();
}

void SqlTaskStore::SetNotificationRoutes(std::vector<NotificationRoute> routes) {
  auto snapshot = std::make_shared<const std::vector<NotificationRoute>>(std::move(routes));
  MutexLock lock(&routes_mu_);
  routes_ = std::move(snapshot);
}

std::shared_ptr<const std::vector<NotificationRoute>> SqlTaskStore::Routes() const {
  MutexLock lock(&routes_mu_);
  return routes_;
}

Status SqlTaskStore::NotifyEnded(Connection& c, int64_t task_id) {
  std::shared_ptr<const std::vector<NotificationRoute>> routes = Routes();
  if (routes == nullptr || routes->empty()) return Status::Ok();
  // Read back inside the transaction: the payload is the committed end state.
  EC_ASSIGN_OR_RETURN(Task t, ReadExistingTask(c, task_id));
  return InsertTaskEndedNotifications(c, d_, t, *routes, [this] { return NewId(); }).status();
}

StatusOr<std::optional<Task>> SqlTaskStore::ReadTask(Connection& c, int64_t task_id,
                                                     bool for_update) {
  std::string sql = std::string("SELECT ") + kTaskColumns + " FROM export_task WHERE id = ?";
  if (for_update) sql += "{FOR_UPDATE}";
  EC_ASSIGN_OR_RETURN(Rows rows, c.Query(Sql(sql), {task_id}));
  if (rows.empty()) return std::optional<Task>();
  EC_ASSIGN_OR_RETURN(Task t, TaskFromRow(rows[0]));
  return std::optional<Task>(std::move(t));
}

StatusOr<Task> SqlTaskStore::ReadExistingTask(Connection& c, int64_t task_id) {
  EC_ASSIGN_OR_RETURN(std::optional<Task> t, ReadTask(c, task_id, false));
  if (!t) return NotFound("export task " + std::to_string(task_id) + " does not exist");
  return std::move(*t);
}

StatusOr<int64_t> SqlTaskStore::InsertCommand(Connection& c, int64_t task_id, int32_t version,
                                              const std::string& export_type,
                                              const std::string& trace_id) {
  task::Command command;
  command.event_id = NewUuid();
  command.task_id = task_id;
  command.export_type = export_type;
  command.dispatch_version = version;
  command.occurred_at = NowIso8601();
  command.trace_id = trace_id.empty() ? NewUuid() : trace_id;
  return c.Exec(
      Sql("{INSERT_IGNORE} export_outbox (id, event_id, task_id, dispatch_version, topic, tag,"
          " message_key, payload_json, status, attempt_count, next_retry_at, due_since,"
          " created_at, updated_at)"
          " SELECT ?, ?, t.id, t.dispatch_version, ?, t.export_type, ?, ?, 'PENDING', 0,"
          " t.next_retry_at, t.next_retry_at, {NOW}, {NOW}"
          " FROM export_task t WHERE t.id = ? AND t.dispatch_version = ? AND t.status = 'PENDING'"
          "{ON_CONFLICT_IGNORE}"),
      {NewId(), command.event_id, kTopic, std::to_string(task_id), task::EncodeCommand(command),
       task_id, version});
}

Status SqlTaskStore::InsertCommandOrFail(Connection& c, const Task& t,
                                         const std::string& trace_id) {
  EC_ASSIGN_OR_RETURN(int64_t n,
                      InsertCommand(c, t.id, t.dispatch_version, t.export_type, trace_id));
  if (n != 1) {
    return Internal("outbox row for task " + std::to_string(t.id) + " version " +
                    std::to_string(t.dispatch_version) + " already exists");
  }
  return Status::Ok();
}

// ---- schema -----------------------------------------------------------------

Status SqlTaskStore::Migrate() { return store::Migrate(*db_); }

// A counter, not random bits: two stores on one database get different nodes
// until 1024 more stores have started, so their ids cannot collide.
Status SqlTaskStore::EnsureIdNode() {
  if (ids_.load(std::memory_order_acquire) != nullptr) return Status::Ok();
  std::lock_guard lock(ids_mu_);
  if (ids_owner_ != nullptr) return Status::Ok();
  int64_t node = 0;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(int64_t n, c.Exec(Sql("UPDATE export_id_node SET next_node ="
                                              " next_node + 1, updated_at = {NOW}"
                                              " WHERE name = 'ID_NODE'")));
    if (n != 1) return Internal("export_id_node has no ID_NODE row; run `export-center migrate`");
    EC_ASSIGN_OR_RETURN(Rows rows,
                        c.Query("SELECT next_node FROM export_id_node WHERE name = 'ID_NODE'"));
    node = rows.at(0).Int(0) - 1;
    return Status::Ok();
  }));
  ids_owner_ = std::make_unique<IdGenerator>(static_cast<int>(node % IdGenerator::kNodeCount));
  ids_.store(ids_owner_.get(), std::memory_order_release);
  return Status::Ok();
}

Status SqlTaskStore::CheckGuardRow() {
  auto rows = db_->Query("SELECT COUNT(*) FROM export_task_guard WHERE name = 'GLOBAL_CREATE'");
  if (!rows.ok() || rows->at(0).Int(0) != 1) {
    std::string why = rows.ok() ? "row is missing" : rows.status().ToString();
    return Internal("guard row GLOBAL_CREATE of export_task_guard: " + why +
                    "; run `export-center migrate`");
  }
  return Status::Ok();
}

StatusOr<SchemaVersions> SqlTaskStore::ReadSchemaVersions() {
  EC_ASSIGN_OR_RETURN(int current, CurrentSchemaVersion(*db_));
  return SchemaVersions{current, LatestSchemaVersion()};
}

StatusOr<int64_t> SqlTaskStore::DatabaseNowMs() {
  EC_ASSIGN_OR_RETURN(Rows rows, db_->Query(Sql("SELECT {NOW}")));
  return rows.at(0).Int(0);
}

// ---- create -----------------------------------------------------------------

StatusOr<std::optional<Task>> SqlTaskStore::FindDuplicate(Connection& c, const NewTask& t,
                                                          int window_seconds) {
  if (window_seconds <= 0) return std::optional<Task>();
  EC_ASSIGN_OR_RETURN(
      Rows rows,
      c.Query(Sql(std::string("SELECT ") + kTaskColumns +
                  " FROM export_task WHERE requested_by = ? AND export_type = ?"
                  " AND params_hash = ? AND format = ? AND tenant_id = ? AND app_code = ?"
                  " AND status IN " +
                  kActive +
                  " AND requested_at >= {NOW} - ? ORDER BY requested_at DESC, id DESC LIMIT 1"),
              {t.requested_by, t.export_type, t.params_hash, task::ToString(t.format), t.tenant_id,
               task::ToString(t.app_code), int64_t{window_seconds} * 1000}));
  if (rows.empty()) return std::optional<Task>();
  EC_ASSIGN_OR_RETURN(Task found, TaskFromRow(rows[0]));
  return std::optional<Task>(std::move(found));
}

Status SqlTaskStore::CheckActiveLimits(Connection& c, const NewTask& t,
                                       const CreateLimits& limits) {
  if (limits.max_active_per_user > 0) {
    EC_ASSIGN_OR_RETURN(Rows rows, c.Query(std::string("SELECT COUNT(*) FROM export_task"
                                                       " WHERE tenant_id = ? AND requested_by = ?"
                                                       " AND status IN ") +
                                               kActive,
                                           {t.tenant_id, t.requested_by}));
    int64_t n = rows.at(0).Int(0);
    if (n >= limits.max_active_per_user) {
      return LimitExceeded("you already have " + std::to_string(n) +
                           " active export tasks; wait for one to finish");
    }
  }
  if (limits.max_active_per_type > 0) {
    // Global per type: the limit protects the business service behind it.
    EC_ASSIGN_OR_RETURN(Rows rows, c.Query(std::string("SELECT COUNT(*) FROM export_task"
                                                       " WHERE export_type = ? AND status IN ") +
                                               kActive,
                                           {t.export_type}));
    int64_t n = rows.at(0).Int(0);
    if (n >= limits.max_active_per_type) {
      return LimitExceeded("export type " + t.export_type + " already has " + std::to_string(n) +
                           " active tasks; try again in a few minutes");
    }
  }
  return Status::Ok();
}

StatusOr<CreateResult> SqlTaskStore::CreateTask(const NewTask& nt, const CreateLimits& limits) {
  EC_RETURN_IF_ERROR(EnsureIdNode());
  CreateResult result;
  Status status = Write([&](Connection& c) -> Status {
    // Every create serialises on this one row (docs/task-lifecycle.md#creating-a-task):
    // the duplicate check and the COUNTs below cannot be passed by two creators at once.
    EC_ASSIGN_OR_RETURN(Rows guard, c.Query(Sql("SELECT name FROM export_task_guard"
                                                " WHERE name = 'GLOBAL_CREATE'{FOR_UPDATE}")));
    if (guard.empty()) return Internal("guard row GLOBAL_CREATE is missing; run migrate");
    EC_ASSIGN_OR_RETURN(std::optional<Task> dup,
                        FindDuplicate(c, nt, limits.dedupe_window_seconds));
    if (dup) {
      result = {std::move(*dup), true};
      return Status::Ok();
    }
    EC_RETURN_IF_ERROR(CheckActiveLimits(c, nt, limits));
    const int64_t id = NewId();
    EC_RETURN_IF_ERROR(
        c.Exec(Sql("INSERT INTO export_task (id, tenant_id, app_code, requested_by, export_type,"
                   " task_name, format, parameters_json, params_hash, status, processed_rows,"
                   " dispatch_version, attempt_count, max_attempts, next_retry_at,"
                   " cancel_requested, contract_version, download_count, requested_at,"
                   " updated_at)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'PENDING', 0, 1, 0, ?, {NOW}, 0, ?, 0,"
                   " {NOW}, {NOW})"),
               {id, nt.tenant_id, task::ToString(nt.app_code), nt.requested_by, nt.export_type,
                nt.task_name, task::ToString(nt.format), nt.parameters_json, nt.params_hash,
                nt.max_attempts, nt.contract_version})
            .status());
    EC_ASSIGN_OR_RETURN(Task created, ReadExistingTask(c, id));
    EC_RETURN_IF_ERROR(InsertCommandOrFail(c, created, nt.trace_id));
    result = {std::move(created), false};
    return Status::Ok();
  });
  if (!status.ok()) return status;
  return result;
}

StatusOr<Task> SqlTaskStore::GetTask(int64_t task_id) {
  Task t;
  EC_RETURN_IF_ERROR(db_->WithConnection([&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(t, ReadExistingTask(c, task_id));
    return Status::Ok();
  }));
  return t;
}

StatusOr<TaskStore::ListPage> SqlTaskStore::ListTasks(const ListQuery& q) {
  std::string where = " WHERE tenant_id = ? AND app_code = ?";
  SqlParams params = {q.tenant_id, task::ToString(q.app_code)};
  if (q.requested_by) {
    where += " AND requested_by = ?";
    params.emplace_back(*q.requested_by);
  }
  if (q.status) {
    where += " AND status = ?";
    params.emplace_back(task::ToString(*q.status));
  }
  if (q.export_type) {
    where += " AND export_type = ?";
    params.emplace_back(*q.export_type);
  }
  AddListFilters(q, &where, &params);
  const int64_t size = std::clamp(q.size, 1, 100);
  const int64_t page = std::max(q.page, 1);
  ListPage out;
  EC_RETURN_IF_ERROR(Read([&](Connection& c) -> Status {
    out = ListPage();
    EC_ASSIGN_OR_RETURN(Rows count, c.Query("SELECT COUNT(*) FROM export_task" + where, params));
    out.total = count.at(0).Int(0);
    SqlParams page_params = params;
    page_params.emplace_back(size);
    page_params.emplace_back((page - 1) * size);
    EC_ASSIGN_OR_RETURN(
        Rows rows, c.Query(std::string("SELECT ") + kTaskColumns + " FROM export_task" + where +
                               " ORDER BY requested_at DESC, id DESC"
                               " LIMIT ? OFFSET ?",
                           page_params));
    for (const Row& r : rows) {
      EC_ASSIGN_OR_RETURN(Task t, TaskFromRow(r));
      out.records.push_back(std::move(t));
    }
    return Status::Ok();
  }));
  return out;
}

// The WHERE of ListChangedTasks and ListChangeKeys, and its parameters. The
// keyset bounds are written as a range on updated_at plus a tie-break on id,
// not as a row-value comparison: "updated_at >= ? AND (updated_at > ? OR id
// > ?)" is a range scan of the (updated_at, id) index on SQLite, PostgreSQL
// and MySQL/MariaDB alike (MariaDB does not use an index for row values).
std::string ChangeWhere(const TaskStore::ChangeQuery& q, SqlParams* params) {
  std::string where;
  if (q.after_id) {
    where = " WHERE updated_at >= ? AND (updated_at > ? OR id > ?)";
    *params = {q.updated_after_ms, q.updated_after_ms, *q.after_id};
  } else {
    where = " WHERE updated_at > ?";
    *params = {q.updated_after_ms};
  }
  if (q.up_to) {
    where += " AND updated_at <= ? AND (updated_at < ? OR id <= ?)";
    params->emplace_back(q.up_to->updated_at);
    params->emplace_back(q.up_to->updated_at);
    params->emplace_back(q.up_to->id);
  }
  if (q.tenant_id) {
    where += " AND tenant_id = ? AND app_code = ?";
    params->emplace_back(*q.tenant_id);
    params->emplace_back(task::ToString(q.app_code));
    if (q.requested_by) {
      where += " AND requested_by = ?";
      params->emplace_back(*q.requested_by);
    }
  }
  params->emplace_back(int64_t{std::clamp(q.limit, 1, 10000)});
  return where + " ORDER BY updated_at, id LIMIT ?";
}

StatusOr<std::vector<Task>> SqlTaskStore::ListChangedTasks(const ChangeQuery& q) {
  SqlParams params;
  const std::string where = ChangeWhere(q, &params);
  std::vector<Task> out;
  EC_RETURN_IF_ERROR(Read([&](Connection& c) -> Status {
    out.clear();
    EC_ASSIGN_OR_RETURN(
        Rows rows,
        c.Query(std::string("SELECT ") + kTaskColumns + " FROM export_task" + where, params));
    for (const Row& r : rows) {
      EC_ASSIGN_OR_RETURN(Task t, TaskFromRow(r));
      out.push_back(std::move(t));
    }
    return Status::Ok();
  }));
  return out;
}

StatusOr<std::vector<TaskStore::ChangeKey>> SqlTaskStore::ListChangeKeys(const ChangeQuery& q) {
  SqlParams params;
  const std::string where = ChangeWhere(q, &params);
  EC_ASSIGN_OR_RETURN(Rows rows,
                      db_->Query("SELECT updated_at, id FROM export_task" + where, params));
  std::vector<ChangeKey> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back({r.Int(0), r.Int(1)});
  return out;
}

StatusOr<TaskState> SqlTaskStore::RequestCancel(int64_t task_id) {
  EC_RETURN_IF_ERROR(EnsureIdNode());  // ids of the notification rows
  TaskState result = TaskState::kPending;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(std::optional<Task> t, ReadTask(c, task_id, true));
    if (!t) return NotFound("export task " + std::to_string(task_id) + " does not exist");
    if (t->status == TaskState::kPending) {
      EC_ASSIGN_OR_RETURN(int64_t n, c.Exec(Sql("UPDATE export_task SET status = 'CANCELLED',"
                                                " completed_at = {NOW}, updated_at = {NOW}"
                                                " WHERE id = ? AND status = 'PENDING'"),
                                            {task_id}));
      if (n != 1) return Unavailable("task changed while cancelling; retry");
      EC_RETURN_IF_ERROR(NotifyEnded(c, task_id));
      result = TaskState::kCancelled;
      return Status::Ok();
    }
    if (t->status == TaskState::kRunning) {
      // The worker checks the flag at every page and ends CANCELLED itself.
      EC_RETURN_IF_ERROR(c.Exec(Sql("UPDATE export_task SET cancel_requested = 1,"
                                    " updated_at = {NOW} WHERE id = ? AND status = 'RUNNING'"),
                                {task_id})
                             .status());
      result = TaskState::kRunning;
      return Status::Ok();
    }
    return Conflict("the task is " + std::string(task::ToString(t->status)) +
                    "; only pending or running tasks can be cancelled");
  }));
  return result;
}

StatusOr<Task> SqlTaskStore::ManualRetry(int64_t task_id, const std::string& trace_id) {
  EC_RETURN_IF_ERROR(EnsureIdNode());
  Task result;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(std::optional<Task> t, ReadTask(c, task_id, true));
    if (!t) return NotFound("export task " + std::to_string(task_id) + " does not exist");
    if (!task::CanManualRetry(t->status)) {
      return Conflict("the task is " + std::string(task::ToString(t->status)) +
                      "; only failed, cancelled or inconsistent tasks can be retried");
    }
    // A retry is a new execution attempt: version+1, counters and the previous
    // result cleared (docs/task-lifecycle.md#manual-retry).
    EC_ASSIGN_OR_RETURN(
        int64_t n, c.Exec(Sql("UPDATE export_task SET status = 'PENDING',"
                              " dispatch_version = dispatch_version + 1, attempt_count = 0,"
                              " next_retry_at = {NOW}, cancel_requested = 0, failure_code = NULL,"
                              " failure_message = NULL, processed_rows = 0, total_rows = NULL,"
                              " started_at = NULL, completed_at = NULL, expires_at = NULL,"
                              " file_name = NULL, object_key = NULL, content_type = NULL,"
                              " size_bytes = NULL, lease_owner = NULL, lease_until = NULL,"
                              " execution_deadline_at = NULL, updated_at = {NOW}"
                              " WHERE id = ? AND dispatch_version = ?"
                              " AND status IN ('FAILED', 'CANCELLED', 'INCONSISTENT')"),
                          {task_id, t->dispatch_version}));
    if (n != 1) return Unavailable("task changed while retrying; retry");
    EC_ASSIGN_OR_RETURN(result, ReadExistingTask(c, task_id));
    return InsertCommandOrFail(c, result, trace_id);
  }));
  return result;
}

StatusOr<bool> SqlTaskStore::RecordDownload(const DownloadRecord& d, int window_seconds) {
  EC_RETURN_IF_ERROR(EnsureIdNode());
  // The column widths are the limits; the API cuts first, this is the backstop.
  auto cut = [](const std::string& text, size_t bytes) {
    return std::string(utf8::TruncateBytes(text, bytes));
  };
  const std::string user = cut(d.user, 128);
  bool counted = false;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    counted = false;
    // The task row's lock serialises every audit of this task: a second
    // caller waits here and then sees the first one's committed row (every
    // write transaction reads committed data, docs/store.md), so parallel
    // ranges of one download count once.
    EC_ASSIGN_OR_RETURN(
        Rows task,
        c.Query(Sql("SELECT id FROM export_task WHERE id = ?{FOR_UPDATE}"), {d.task_id}));
    if (task.empty()) {
      return NotFound("export task " + std::to_string(d.task_id) + " does not exist");
    }
    if (window_seconds > 0) {
      EC_ASSIGN_OR_RETURN(
          Rows seen,
          c.Query(Sql("SELECT COUNT(*) FROM export_download_audit"
                      " WHERE task_id = ? AND user_id = ? AND downloaded_at > {NOW} - ?"),
                  {d.task_id, user, int64_t{window_seconds} * 1000}));
      if (!seen.empty() && seen[0].Int(0) > 0) return Status::Ok();
    }
    // updated_at too: the count is shown live (task events poll updated_at).
    EC_RETURN_IF_ERROR(c.Exec(Sql("UPDATE export_task SET download_count ="
                                  " download_count + 1, last_downloaded_at = {NOW},"
                                  " updated_at = {NOW} WHERE id = ?"),
                              {d.task_id})
                           .status());
    EC_RETURN_IF_ERROR(
        c.Exec(Sql("INSERT INTO export_download_audit (id, task_id, tenant_id, app_code, user_id,"
                   " export_type, via, served_by, client_address, user_agent, request_id,"
                   " downloaded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {NOW})"),
               {NewId(), d.task_id, cut(d.tenant_id, 64), task::ToString(d.app_code), user,
                cut(d.export_type, 128), d.via, d.served_by, cut(d.client_address, 64),
                cut(d.user_agent, 512), cut(d.request_id, 64)})
            .status());
    counted = true;
    return Status::Ok();
  }));
  return counted;
}

namespace {

constexpr char kAuditColumns[] =
    "id, task_id, tenant_id, app_code, user_id, export_type, via, served_by, client_address,"
    " user_agent, request_id, downloaded_at";

StatusOr<DownloadAuditEntry> AuditFromRow(const Row& r) {
  DownloadAuditEntry e;
  e.id = r.Int(0);
  e.record.task_id = r.Int(1);
  e.record.tenant_id = r.Text(2);
  auto app = task::ParseAppCode(r.Text(3));
  if (!app)
    return Internal("export_download_audit " + std::to_string(e.id) + " has a bad app_code");
  e.record.app_code = *app;
  e.record.user = r.Text(4);
  e.record.export_type = r.Text(5);
  e.record.via = r.Text(6);
  e.record.served_by = r.Text(7);
  e.record.client_address = r.Text(8);
  e.record.user_agent = r.Text(9);
  e.record.request_id = r.Text(10);
  e.downloaded_at = r.Int(11);
  return e;
}

}  // namespace

StatusOr<DownloadAuditPage> SqlTaskStore::ListDownloadAudit(const DownloadAuditQuery& q) {
  std::string where = " WHERE tenant_id = ? AND app_code = ?";
  SqlParams params = {q.tenant_id, task::ToString(q.app_code)};
  if (q.task_id) {
    where += " AND task_id = ?";
    params.emplace_back(*q.task_id);
  }
  if (q.user) {
    where += " AND user_id = ?";
    params.emplace_back(*q.user);
  }
  if (q.from_ms) {
    where += " AND downloaded_at >= ?";
    params.emplace_back(*q.from_ms);
  }
  if (q.to_ms) {
    where += " AND downloaded_at < ?";
    params.emplace_back(*q.to_ms);
  }
  const int64_t size = std::clamp(q.size, 1, 100);
  const int64_t page = std::max(q.page, 1);
  DownloadAuditPage out;
  EC_RETURN_IF_ERROR(Read([&](Connection& c) -> Status {
    out = DownloadAuditPage();
    EC_ASSIGN_OR_RETURN(Rows count,
                        c.Query("SELECT COUNT(*) FROM export_download_audit" + where, params));
    out.total = count.at(0).Int(0);
    SqlParams page_params = params;
    page_params.emplace_back(size);
    page_params.emplace_back((page - 1) * size);
    EC_ASSIGN_OR_RETURN(Rows rows, c.Query(std::string("SELECT ") + kAuditColumns +
                                               " FROM export_download_audit" + where +
                                               " ORDER BY downloaded_at DESC, id DESC"
                                               " LIMIT ? OFFSET ?",
                                           page_params));
    for (const Row& r : rows) {
      EC_ASSIGN_OR_RETURN(DownloadAuditEntry e, AuditFromRow(r));
      out.records.push_back(std::move(e));
    }
    return Status::Ok();
  }));
  return out;
}

// ---- outbox publisher ---------------------------------------------------------

StatusOr<std::vector<int64_t>> SqlTaskStore::SelectDueOutbox(int limit) {
  // Fair order (docs/dispatch.md#tenant-fairness): user_round numbers each
  // user's due rows oldest first; tenant_round numbers a tenant's rows by
  // user_round, so the tenant's users take turns; sorting by tenant_round
  // makes the tenants take turns. A tenant with a huge backlog therefore
  // holds at most one row of each round, and every tenant with a due row
  // gets its first one into any batch that has room for one per tenant.
  // Only the order changes: every due row is still selected in time. Window
  // functions: SQLite 3.25, PostgreSQL, MySQL 8, MariaDB 10.2. The LEFT JOIN
  // keeps a row whose task is gone (it is still sent; the consumer acks it).
  EC_ASSIGN_OR_RETURN(
      Rows rows,
      db_->Query(Sql("SELECT id FROM ("
                     " SELECT id, next_retry_at, ROW_NUMBER() OVER (PARTITION BY tenant_id"
                     " ORDER BY user_round, next_retry_at, id) AS tenant_round FROM ("
                     " SELECT o.id, o.next_retry_at, COALESCE(t.tenant_id, '') AS tenant_id,"
                     " ROW_NUMBER() OVER (PARTITION BY COALESCE(t.tenant_id, ''),"
                     " COALESCE(t.requested_by, '') ORDER BY o.next_retry_at, o.id) AS user_round"
                     " FROM export_outbox o LEFT JOIN export_task t ON t.id = o.task_id"
                     " WHERE o.status = 'PENDING' AND o.next_retry_at <= {NOW}) by_user) by_tenant"
                     " ORDER BY tenant_round, next_retry_at, id LIMIT ?"),
                 {limit}));
  std::vector<int64_t> ids;
  for (const Row& r : rows) ids.push_back(r.Int(0));
  return ids;
}

StatusOr<std::optional<OutboxEntry>> SqlTaskStore::ClaimOutbox(int64_t outbox_id,
                                                               const std::string& instance,
                                                               int lease_seconds) {
  std::optional<OutboxEntry> result;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    result.reset();
    EC_ASSIGN_OR_RETURN(
        int64_t n, c.Exec(Sql("UPDATE export_outbox SET status = 'CLAIMED', lease_owner = ?,"
                              " lease_until = {NOW} + ?, attempt_count = attempt_count + 1,"
                              " updated_at = {NOW}"
                              " WHERE id = ? AND status = 'PENDING' AND next_retry_at <= {NOW}"),
                          {instance, int64_t{lease_seconds} * 1000, outbox_id}));
    if (n == 0) return Status::Ok();  // another instance won, or not due after all
    EC_ASSIGN_OR_RETURN(Rows rows, c.Query(std::string("SELECT ") + kOutboxColumns +
                                               " FROM export_outbox WHERE id = ?",
                                           {outbox_id}));
    if (rows.empty()) return Internal("claimed outbox row vanished");
    EC_ASSIGN_OR_RETURN(OutboxEntry e, OutboxFromRow(rows[0]));
    result = std::move(e);
    return Status::Ok();
  }));
  return result;
}

StatusOr<bool> SqlTaskStore::MarkOutboxSent(int64_t outbox_id, const std::string& instance) {
  EC_ASSIGN_OR_RETURN(int64_t n, db_->Exec(Sql("UPDATE export_outbox SET status = 'SENT',"
                                               " sent_at = {NOW}, lease_owner = NULL,"
                                               " lease_until = NULL, updated_at = {NOW}"
                                               " WHERE id = ? AND status = 'CLAIMED'"
                                               " AND lease_owner = ?"),
                                           {outbox_id, instance}));
  return n == 1;
}

StatusOr<bool> SqlTaskStore::MarkOutboxFailed(int64_t outbox_id, const std::string& instance,
                                              const std::string& error, int64_t backoff_ms) {
  EC_ASSIGN_OR_RETURN(int64_t n, db_->Exec(Sql("UPDATE export_outbox SET status = 'PENDING',"
                                               " next_retry_at = {NOW} + ?, last_error = ?,"
                                               " lease_owner = NULL, lease_until = NULL,"
                                               " updated_at = {NOW}"
                                               " WHERE id = ? AND status = 'CLAIMED'"
                                               " AND lease_owner = ?"),
                                           {backoff_ms, Truncate(error), outbox_id, instance}));
  return n == 1;
}

StatusOr<std::vector<OutboxEntry>> SqlTaskStore::ListOutboxForTask(int64_t task_id) {
  EC_ASSIGN_OR_RETURN(Rows rows, db_->Query(std::string("SELECT ") + kOutboxColumns +
                                                " FROM export_outbox WHERE task_id = ?"
                                                " ORDER BY dispatch_version, id",
                                            {task_id}));
  std::vector<OutboxEntry> out;
  for (const Row& r : rows) {
    EC_ASSIGN_OR_RETURN(OutboxEntry e, OutboxFromRow(r));
    out.push_back(std::move(e));
  }
  return out;
}

// ---- consumer -----------------------------------------------------------------

StatusOr<ClaimMiss> SqlTaskStore::ExplainClaimMiss(Connection& c, const ClaimRequest& r,
                                                   std::optional<Task>* task) {
  // The "now" comparisons of the claim-branch table are made here, by the database.
  EC_ASSIGN_OR_RETURN(
      Rows rows,
      c.Query(Sql(std::string("SELECT ") + kTaskColumns +
                  ", CASE WHEN lease_until IS NOT NULL AND lease_until > {NOW} THEN 1 ELSE 0 END"
                  ", CASE WHEN next_retry_at > {NOW} THEN 1 ELSE 0 END"
                  " FROM export_task WHERE id = ?"),
              {r.task_id}));
  ClaimFacts facts;
  if (!rows.empty()) {
    EC_ASSIGN_OR_RETURN(Task t, TaskFromRow(rows[0]));
    facts.found = true;
    facts.dispatch_version = t.dispatch_version;
    facts.status = t.status;
    facts.lease_live = rows[0].Int(kTaskColumnCount) != 0;
    facts.in_backoff = rows[0].Int(kTaskColumnCount + 1) != 0;
    *task = std::move(t);
  }
  return ClassifyClaimMiss(facts, r.dispatch_version);
}

StatusOr<bool> SqlTaskStore::HandBackIfTenantAtLimit(Connection& c, const ClaimRequest& r) {
  EC_ASSIGN_OR_RETURN(Rows owner,
                      c.Query("SELECT tenant_id FROM export_task WHERE id = ?", {r.task_id}));
  if (owner.empty()) return false;  // the claim below explains the miss
  const std::string tenant = owner[0].Text(0);
  // Serialises the claims of one tenant across every instance: without it two
  // claims could each count limit-1 RUNNING tasks and both start, since a
  // count locks nothing (READ COMMITTED on PostgreSQL and MySQL). Only claims
  // take this lock — they are the only way into RUNNING, and every way out
  // merely lowers the count. The row lives in export_task_guard, keyed by a
  // hash of the tenant (a collision only makes two tenants share a lock).
  const std::string lock_name = TenantClaimLockName(tenant);
  EC_ASSIGN_OR_RETURN(int64_t locked,
                      c.Exec(Sql("UPDATE export_task_guard SET created_at = created_at"
                                 " WHERE name = ?"),
                             {lock_name}));
  if (locked == 0) {
    // First claim of this tenant: create its lock row, then lock it. (The
    // UPDATE comes first because MySQL's INSERT IGNORE of an existing key
    // takes a shared lock, and two of those upgrading would deadlock.)
    EC_RETURN_IF_ERROR(c.Exec(Sql("{INSERT_IGNORE} export_task_guard (name, created_at)"
                                  " VALUES (?, {NOW}){ON_CONFLICT_IGNORE}"),
                              {lock_name})
                           .status());
    EC_RETURN_IF_ERROR(c.Exec(Sql("UPDATE export_task_guard SET created_at = created_at"
                                  " WHERE name = ?"),
                              {lock_name})
                           .status());
  }
  // Read after the lock, so the count includes every claim committed before.
  EC_ASSIGN_OR_RETURN(
      Rows facts,
      c.Query(Sql("SELECT (SELECT COUNT(*) FROM export_task r WHERE r.status = 'RUNNING'"
                  " AND r.tenant_id = ?),"
                  " CASE WHEN status = 'PENDING' AND dispatch_version = ?"
                  " AND next_retry_at <= {NOW} THEN 1 ELSE 0 END"
                  " FROM export_task WHERE id = ?"),
              {tenant, r.dispatch_version, r.task_id}));
  if (facts.empty() || facts[0].Int(1) == 0) return false;  // not claimable anyway
  if (facts[0].Int(0) < r.tenant_running_limit) return false;
  // The command's row (SENT, or still CLAIMED when the consumer was faster
  // than the publisher's MarkOutboxSent) goes back to PENDING, due after the
  // short back-off, so the publisher sends it again; the task is untouched.
  // attempt_count restarts at 0: it counts failed sends for the send back-off
  // and the send alert, and this send did not fail; for the same reason the
  // row is due afresh (due_since) once the back-off is over.
  EC_RETURN_IF_ERROR(
      c.Exec(Sql("UPDATE export_outbox SET status = 'PENDING',"
                 " next_retry_at = {NOW} + ?, due_since = {NOW} + ?,"
                 " attempt_count = 0, lease_owner = NULL, lease_until = NULL,"
                 " updated_at = {NOW}"
                 " WHERE task_id = ? AND dispatch_version = ?"
                 " AND status IN ('SENT', 'CLAIMED')"),
             {r.handback_backoff_ms, r.handback_backoff_ms, r.task_id, r.dispatch_version})
          .status());
  return true;
}

StatusOr<ClaimResult> SqlTaskStore::ClaimTask(const ClaimRequest& r) {
  ClaimResult result;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    result = ClaimResult();
    if (r.tenant_running_limit > 0) {
      EC_ASSIGN_OR_RETURN(bool handed_back, HandBackIfTenantAtLimit(c, r));
      if (handed_back) {
        result.miss = ClaimMiss::kTenantAtLimit;
        EC_ASSIGN_OR_RETURN(Task t, ReadExistingTask(c, r.task_id));
        result.task = std::move(t);
        return Status::Ok();
      }
    }
    // The claim (docs/task-lifecycle.md#claim); the execution deadline is fixed here too.
    EC_ASSIGN_OR_RETURN(
        int64_t n,
        c.Exec(Sql("UPDATE export_task SET status = 'RUNNING',"
                   " attempt_count = attempt_count + 1, started_at = {NOW}, lease_owner = ?,"
                   " lease_until = {NOW} + ?, last_heartbeat_at = {NOW},"
                   " execution_deadline_at = {NOW} + ?, processed_rows = 0, total_rows = NULL,"
                   " failure_message = NULL, failure_code = NULL, updated_at = {NOW}"
                   " WHERE id = ? AND dispatch_version = ? AND status = 'PENDING'"
                   " AND next_retry_at <= {NOW}"),
               {r.instance, int64_t{r.lease_seconds} * 1000, int64_t{r.max_duration_seconds} * 1000,
                r.task_id, r.dispatch_version}));
    if (n == 1) {
      result.claimed = true;
      EC_ASSIGN_OR_RETURN(Task t, ReadExistingTask(c, r.task_id));
      result.task = std::move(t);
      return Status::Ok();
    }
    EC_ASSIGN_OR_RETURN(ClaimMiss miss, ExplainClaimMiss(c, r, &result.task));
    result.miss = miss;
    return Status::Ok();
  }));
  return result;
}

StatusOr<RenewOutcome> SqlTaskStore::RenewLease(const Attempt& a, int lease_seconds) {
  RenewOutcome outcome = RenewOutcome::kLost;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    // The deadline lives in the same statement (docs/task-lifecycle.md#execution-deadline):
    // past it the renewal fails and the worker stops at its next checkpoint.
    EC_ASSIGN_OR_RETURN(
        int64_t n,
        c.Exec(Sql("UPDATE export_task SET lease_until = {NOW} + ?, last_heartbeat_at = {NOW},"
                   " updated_at = {NOW}"
                   " WHERE id = ? AND status = 'RUNNING' AND dispatch_version = ?"
                   " AND lease_owner = ? AND execution_deadline_at > {NOW}"),
               {int64_t{lease_seconds} * 1000, a.task_id, a.dispatch_version, a.instance}));
    if (n == 1) {
      outcome = RenewOutcome::kRenewed;
      return Status::Ok();
    }
    EC_ASSIGN_OR_RETURN(
        Rows rows, c.Query(Sql("SELECT CASE WHEN execution_deadline_at <= {NOW} THEN 1 ELSE 0 END"
                               " FROM export_task WHERE id = ? AND status = 'RUNNING'"
                               " AND dispatch_version = ? AND lease_owner = ?"),
                           {a.task_id, a.dispatch_version, a.instance}));
    outcome = (!rows.empty() && rows[0].Int(0) == 1) ? RenewOutcome::kDeadlinePassed
                                                     : RenewOutcome::kLost;
    return Status::Ok();
  }));
  return outcome;
}

StatusOr<bool> SqlTaskStore::UpdateProgress(const Attempt& a, int64_t processed_rows,
                                            std::optional<int64_t> total_rows) {
  bool cancel = false;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(
        int64_t n, c.Exec(Sql("UPDATE export_task SET processed_rows = ?,"
                              " total_rows = COALESCE(?, total_rows), updated_at = {NOW}"
                              " WHERE id = ? AND status = 'RUNNING' AND dispatch_version = ?"
                              " AND lease_owner = ?"),
                          {processed_rows, total_rows, a.task_id, a.dispatch_version, a.instance}));
    if (n != 1)
      return Conflict("lease lost: task " + std::to_string(a.task_id) + " version " +
                      std::to_string(a.dispatch_version) + " is no longer ours");
    EC_ASSIGN_OR_RETURN(
        Rows rows, c.Query("SELECT cancel_requested FROM export_task WHERE id = ?", {a.task_id}));
    cancel = !rows.empty() && rows[0].Int(0) != 0;
    return Status::Ok();
  }));
  return cancel;
}

StatusOr<bool> SqlTaskStore::CommitSuccess(const Attempt& a, const FileResult& f,
                                           int retention_days) {
  // The deadline and the cancel flag are part of the final statement
  // (docs/task-lifecycle.md#conditional-commit): a check in C++ could pass and
  // then a cancel or the deadline could arrive before the write.
  EC_RETURN_IF_ERROR(EnsureIdNode());
  bool committed = false;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(
        int64_t n,
        c.Exec(Sql("UPDATE export_task SET status = 'SUCCEEDED', file_name = ?, object_key = ?,"
                   " content_type = ?, size_bytes = ?, total_rows = ?, processed_rows = ?,"
                   " completed_at = {NOW}, expires_at = {NOW} + ?, lease_owner = NULL,"
                   " lease_until = NULL, failure_message = NULL, failure_code = NULL,"
                   " updated_at = {NOW}"
                   " WHERE id = ? AND status = 'RUNNING' AND dispatch_version = ?"
                   " AND lease_owner = ? AND execution_deadline_at > {NOW}"
                   " AND cancel_requested = 0"),
               {f.file_name, f.object_key, f.content_type, f.size_bytes, f.total_rows, f.total_rows,
                int64_t{retention_days} * 86'400'000, a.task_id, a.dispatch_version, a.instance}));
    committed = n == 1;
    return committed ? NotifyEnded(c, a.task_id) : Status::Ok();
  }));
  return committed;
}

StatusOr<bool> SqlTaskStore::FinishAttempt(const Attempt& a, TaskState to_state,
                                           const std::string& failure_code,
                                           const std::string& message) {
  if (to_state != TaskState::kFailed && to_state != TaskState::kCancelled &&
      to_state != TaskState::kStale && to_state != TaskState::kInconsistent) {
    return InvalidArgument("FinishAttempt cannot end a task " +
                           std::string(task::ToString(to_state)));
  }
  EC_RETURN_IF_ERROR(EnsureIdNode());
  bool ended = false;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    // Whether this attempt still held the task, read under the same
    // transaction as the update EndAttempt makes (and its notification rows).
    EC_ASSIGN_OR_RETURN(Rows held, c.Query(Sql("SELECT id FROM export_task WHERE id = ?"
                                               " AND status = 'RUNNING' AND dispatch_version = ?"
                                               " AND lease_owner = ?{FOR_UPDATE}"),
                                           {a.task_id, a.dispatch_version, a.instance}));
    ended = !held.empty();
    if (!ended) return Status::Ok();
    return EndAttempt(c, a, to_state, failure_code, message);
  }));
  return ended;
}

StatusOr<std::string> SqlTaskStore::PinContractVersion(const Attempt& a,
                                                       const std::string& version) {
  std::string pinned;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    // Only an unset version is written: once pinned, a later attempt compares
    // against it and a changed contract ends the task STALE.
    EC_RETURN_IF_ERROR(c.Exec(Sql("UPDATE export_task SET contract_version = ?, updated_at = {NOW}"
                                  " WHERE id = ? AND status = 'RUNNING' AND dispatch_version = ?"
                                  " AND lease_owner = ? AND contract_version IS NULL"),
                              {version, a.task_id, a.dispatch_version, a.instance})
                           .status());
    EC_ASSIGN_OR_RETURN(Rows rows, c.Query("SELECT contract_version FROM export_task"
                                           " WHERE id = ? AND status = 'RUNNING'"
                                           " AND dispatch_version = ? AND lease_owner = ?",
                                           {a.task_id, a.dispatch_version, a.instance}));
    if (rows.empty() || !rows[0].OptText(0)) {
      return Conflict("lease lost: task " + std::to_string(a.task_id) + " version " +
                      std::to_string(a.dispatch_version) + " is no longer ours");
    }
    pinned = *rows[0].OptText(0);
    return Status::Ok();
  }));
  return pinned;
}

StatusOr<RetryOutcome> SqlTaskStore::ScheduleRetry(const Attempt& a, const std::string& message,
                                                   int64_t backoff_ms) {
  EC_RETURN_IF_ERROR(EnsureIdNode());
  RetryOutcome outcome = RetryOutcome::kLost;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(Rows rows, c.Query(Sql("SELECT attempt_count, max_attempts, export_type,"
                                               " cancel_requested FROM export_task WHERE id = ?"
                                               " AND status = 'RUNNING' AND dispatch_version = ?"
                                               " AND lease_owner = ?{FOR_UPDATE}"),
                                           {a.task_id, a.dispatch_version, a.instance}));
    if (rows.empty()) {
      outcome = RetryOutcome::kLost;
      return Status::Ok();
    }
    const std::string msg = Truncate(message);
    if (rows[0].Int(3) != 0) {
      // A cancel requested during the attempt wins over a retry
      // (docs/task-lifecycle.md#cancellation): the user asked to stop.
      EC_RETURN_IF_ERROR(
          EndAttempt(c, a, TaskState::kCancelled, kCodeCancelled, kCancelledMessage));
      outcome = RetryOutcome::kCancelled;
      return Status::Ok();
    }
    if (rows[0].Int(0) >= rows[0].Int(1)) {
      EC_RETURN_IF_ERROR(EndAttempt(c, a, TaskState::kFailed, kCodeRetriesExhausted, msg));
      outcome = RetryOutcome::kFailedMaxAttempts;
      return Status::Ok();
    }
    // The message is kept so the download centre can show why it waits.
    EC_ASSIGN_OR_RETURN(
        int64_t n,
        c.Exec(Sql("UPDATE export_task SET status = 'PENDING',"
                   " dispatch_version = dispatch_version + 1, next_retry_at = {NOW} + ?,"
                   " processed_rows = 0, total_rows = NULL, lease_owner = NULL,"
                   " lease_until = NULL, execution_deadline_at = NULL, object_key = NULL,"
                   " failure_message = ?, updated_at = {NOW}"
                   " WHERE id = ? AND status = 'RUNNING' AND dispatch_version = ?"
                   " AND lease_owner = ?"),
               {backoff_ms, msg, a.task_id, a.dispatch_version, a.instance}));
    if (n != 1) return Unavailable("task changed while scheduling a retry; retry");
    Task next;
    next.id = a.task_id;
    next.dispatch_version = a.dispatch_version + 1;
    next.export_type = rows[0].Text(2);
    EC_RETURN_IF_ERROR(InsertCommandOrFail(c, next, ""));
    outcome = RetryOutcome::kRescheduled;
    return Status::Ok();
  }));
  return outcome;
}

// ---- reconciler ---------------------------------------------------------------

StatusOr<int> SqlTaskStore::RedispatchMissingOutbox(int grace_seconds, int limit) {
  EC_RETURN_IF_ERROR(EnsureIdNode());
  int inserted = 0;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    inserted = 0;
    // No status filter in NOT EXISTS: a QUARANTINED row must block it too
    // (docs/task-lifecycle.md#reconciler-duties, case A).
    EC_ASSIGN_OR_RETURN(
        Rows rows,
        c.Query(Sql("SELECT t.id, t.dispatch_version, t.export_type FROM export_task t"
                    " WHERE t.status = 'PENDING' AND t.next_retry_at <= {NOW} - ?"
                    " AND NOT EXISTS (SELECT 1 FROM export_outbox o"
                    " WHERE o.task_id = t.id AND o.dispatch_version = t.dispatch_version)"
                    " ORDER BY t.next_retry_at, t.id LIMIT ?"),
                {int64_t{grace_seconds} * 1000, limit}));
    for (const Row& r : rows) {
      // Same version, new event id; the unique key makes a concurrent
      // reconciler's insert a no-op.
      EC_ASSIGN_OR_RETURN(
          int64_t n, InsertCommand(c, r.Int(0), static_cast<int32_t>(r.Int(1)), r.Text(2), ""));
      inserted += static_cast<int>(n);
    }
    return Status::Ok();
  }));
  return inserted;
}

StatusOr<int> SqlTaskStore::ResendStaleSentOutbox(int sent_stale_seconds, int grace_seconds,
                                                  int limit) {
  // Same row, same version (docs/dispatch.md#re-sending-keeps-the-version): a
  // re-send never changes the version, so a command that merely waited in a long
  // queue is not starved. It was delivered once, so it is due afresh from now.
  EC_ASSIGN_OR_RETURN(
      int64_t n,
      db_->Exec(Sql("UPDATE export_outbox SET status = 'PENDING', next_retry_at = {NOW},"
                    " due_since = {NOW}, lease_owner = NULL, lease_until = NULL, updated_at = {NOW}"
                    " WHERE status = 'SENT' AND id IN (SELECT id FROM ("
                    "SELECT o.id FROM export_outbox o JOIN export_task t"
                    " ON t.id = o.task_id AND t.dispatch_version = o.dispatch_version"
                    " WHERE o.status = 'SENT' AND o.sent_at <= {NOW} - ?"
                    " AND t.status = 'PENDING' AND t.next_retry_at <= {NOW} - ?"
                    " ORDER BY o.id LIMIT ?) picked)"),
                {int64_t{sent_stale_seconds} * 1000, int64_t{grace_seconds} * 1000, limit}));
  return static_cast<int>(n);
}

Status SqlTaskStore::RecoverOne(Connection& c, const Row& row, std::vector<RecoveredLease>* out) {
  RecoveredLease rec;
  rec.task_id = row.Int(0);
  rec.old_version = static_cast<int32_t>(row.Int(1));
  rec.cancelled = row.Int(6) != 0;
  rec.failed = !rec.cancelled && row.Int(2) >= row.Int(3);
  rec.object_key = row.OptText(4);
  rec.export_type = row.Text(5);
  int64_t n = 0;
  if (rec.cancelled) {
    // The user asked to stop: a dead worker is no reason to run it again.
    EC_ASSIGN_OR_RETURN(n,
                        c.Exec(Sql("UPDATE export_task SET status = 'CANCELLED', failure_code = ?,"
                                   " failure_message = ?, completed_at = {NOW}, lease_owner = NULL,"
                                   " lease_until = NULL, object_key = NULL, updated_at = {NOW}"
                                   " WHERE id = ? AND status = 'RUNNING' AND dispatch_version = ?"
                                   " AND lease_until <= {NOW}"),
                               {kCodeCancelled, kCancelledMessage, rec.task_id, rec.old_version}));
  } else if (rec.failed) {
    EC_ASSIGN_OR_RETURN(
        n, c.Exec(Sql("UPDATE export_task SET status = 'FAILED', failure_code = ?,"
                      " failure_message = ?, completed_at = {NOW}, lease_owner = NULL,"
                      " lease_until = NULL, object_key = NULL, updated_at = {NOW}"
                      " WHERE id = ? AND status = 'RUNNING' AND dispatch_version = ?"
                      " AND lease_until <= {NOW}"),
                  {kCodeLeaseLost,
                   "the export worker stopped responding and the maximum number of attempts "
                   "was reached",
                   rec.task_id, rec.old_version}));
  } else {
    // The execution really failed, so this is a new attempt: version+1, and
    // the old worker can no longer commit if it comes back
    // (docs/task-lifecycle.md#lease-recovery).
    EC_ASSIGN_OR_RETURN(
        n,
        c.Exec(Sql("UPDATE export_task SET status = 'PENDING',"
                   " dispatch_version = dispatch_version + 1, next_retry_at = {NOW},"
                   " lease_owner = NULL, lease_until = NULL, execution_deadline_at = NULL,"
                   " processed_rows = 0, total_rows = NULL, object_key = NULL,"
                   " failure_message = ?, updated_at = {NOW}"
                   " WHERE id = ? AND status = 'RUNNING' AND dispatch_version = ?"
                   " AND lease_until <= {NOW}"),
               {"the export worker stopped responding; retrying", rec.task_id, rec.old_version}));
    if (n == 1) {
      Task next;
      next.id = rec.task_id;
      next.dispatch_version = rec.old_version + 1;
      next.export_type = row.Text(5);
      EC_RETURN_IF_ERROR(InsertCommandOrFail(c, next, ""));
    }
  }
  if (n == 1 && (rec.cancelled || rec.failed)) EC_RETURN_IF_ERROR(NotifyEnded(c, rec.task_id));
  if (n == 1) out->push_back(std::move(rec));
  return Status::Ok();
}

StatusOr<std::vector<RecoveredLease>> SqlTaskStore::RecoverExpiredLeases(int limit) {
  EC_RETURN_IF_ERROR(EnsureIdNode());
  std::vector<RecoveredLease> out;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    out.clear();
    EC_ASSIGN_OR_RETURN(
        Rows rows,
        c.Query(Sql("SELECT id, dispatch_version, attempt_count, max_attempts, object_key,"
                    " export_type, cancel_requested FROM export_task"
                    " WHERE status = 'RUNNING' AND lease_until <= {NOW}"
                    " ORDER BY lease_until, id LIMIT ?"),
                {limit}));
    for (const Row& r : rows) EC_RETURN_IF_ERROR(RecoverOne(c, r, &out));
    return Status::Ok();
  }));
  return out;
}

StatusOr<int> SqlTaskStore::ReleaseStaleClaimedOutbox(int limit) {
  // Delivery-side recovery only: the task's version is untouched.
  EC_ASSIGN_OR_RETURN(
      int64_t n, db_->Exec(Sql("UPDATE export_outbox SET status = 'PENDING', next_retry_at = {NOW},"
                               " lease_owner = NULL, lease_until = NULL, updated_at = {NOW}"
                               " WHERE status = 'CLAIMED' AND lease_until <= {NOW} AND id IN ("
                               "SELECT id FROM (SELECT id FROM export_outbox"
                               " WHERE status = 'CLAIMED' AND lease_until <= {NOW}"
                               " ORDER BY id LIMIT ?) picked)"),
                           {limit}));
  return static_cast<int>(n);
}

StatusOr<std::vector<ExpiredArtifact>> SqlTaskStore::ListExpiredArtifacts(int limit) {
  EC_ASSIGN_OR_RETURN(Rows rows, db_->Query(Sql("SELECT id, object_key FROM export_task"
                                                " WHERE status = 'SUCCEEDED'"
                                                " AND expires_at <= {NOW}"
                                                " ORDER BY expires_at, id LIMIT ?"),
                                            {limit}));
  std::vector<ExpiredArtifact> out;
  for (const Row& r : rows) out.push_back({r.Int(0), r.Text(1)});
  return out;
}

StatusOr<bool> SqlTaskStore::MarkExpired(int64_t task_id) {
  EC_RETURN_IF_ERROR(EnsureIdNode());
  bool expired = false;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(int64_t n, c.Exec(Sql("UPDATE export_task SET status = 'EXPIRED',"
                                              " updated_at = {NOW}"
                                              " WHERE id = ? AND status = 'SUCCEEDED'"
                                              " AND expires_at <= {NOW}"),
                                          {task_id}));
    expired = n == 1;
    return expired ? NotifyEnded(c, task_id) : Status::Ok();
  }));
  return expired;
}

StatusOr<int> SqlTaskStore::PurgeSentOutbox(int older_than_seconds, int limit) {
  // Only SENT rows: PENDING and CLAIMED are commands not yet delivered, and
  // QUARANTINED rows are the audit trail of a poison message.
  EC_ASSIGN_OR_RETURN(int64_t n,
                      db_->Exec(Sql("DELETE FROM export_outbox WHERE status = 'SENT' AND id IN ("
                                    "SELECT id FROM (SELECT id FROM export_outbox"
                                    " WHERE status = 'SENT' AND sent_at <= {NOW} - ?"
                                    " ORDER BY id LIMIT ?) picked)"),
                                {int64_t{older_than_seconds} * 1000, limit}));
  return static_cast<int>(n);
}

// ---- dead letters -------------------------------------------------------------

Status SqlTaskStore::QuarantineCommand(int64_t task_id, int32_t dispatch_version,
                                       const std::string& event_id, const std::string& reason) {
  EC_RETURN_IF_ERROR(EnsureIdNode());  // ids of the notification rows
  // Both updates change exactly one row or the transaction rolls back
  // (docs/task-lifecycle.md#dead-letters-and-quarantine): a QUARANTINED row
  // beside a task left PENDING would strand the task, since the reconciler no
  // longer re-sends it.
  return Write([&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(
        int64_t n, c.Exec(Sql("UPDATE export_outbox SET status = 'QUARANTINED', last_error = ?,"
                              " lease_owner = NULL, lease_until = NULL, updated_at = {NOW}"
                              " WHERE event_id = ? AND task_id = ? AND dispatch_version = ?"
                              " AND status IN ('SENT', 'PENDING', 'CLAIMED')"),
                          {Truncate("quarantined by the DLQ handler: " + reason), event_id, task_id,
                           dispatch_version}));
    const std::string what = "event " + event_id + " of task " + std::to_string(task_id) +
                             " version " + std::to_string(dispatch_version);
    if (n == 0) {
      EC_ASSIGN_OR_RETURN(Rows rows, c.Query("SELECT COUNT(*) FROM export_outbox"
                                             " WHERE event_id = ? AND task_id = ?"
                                             " AND dispatch_version = ? AND status = 'QUARANTINED'",
                                             {event_id, task_id, dispatch_version}));
      if (rows.at(0).Int(0) > 0) return Status::Ok();  // a repeat of an earlier quarantine
      // An old or foreign message must never quarantine the current version.
      return Conflict("no outbox row for " + what + "; an old or foreign message");
    }
    // Only a PENDING task of that version: a command that never decoded cannot
    // have started an attempt, and a RUNNING one belongs to someone else.
    EC_ASSIGN_OR_RETURN(
        int64_t failed,
        c.Exec(Sql("UPDATE export_task SET status = 'FAILED', failure_code = ?,"
                   " failure_message = ?, completed_at = {NOW}, lease_owner = NULL,"
                   " lease_until = NULL, updated_at = {NOW}"
                   " WHERE id = ? AND dispatch_version = ? AND status = 'PENDING'"),
               {kCodeQuarantined,
                "the export command message was corrupt; please start the export again", task_id,
                dispatch_version}));
    if (failed != 1) {
      return Conflict("task of " + what +
                      " is no longer PENDING at that version; nothing quarantined");
    }
    return NotifyEnded(c, task_id);
  });
}

// ---- metrics ------------------------------------------------------------------

StatusOr<TaskStore::Gauges> SqlTaskStore::ReadGauges() {
  Gauges g;
  EC_RETURN_IF_ERROR(Read([&](Connection& c) -> Status {
    // The oldest age counts from when a row first became due (due_since),
    // not from created_at — a row re-sent by the reconciler or written for a
    // retry still in its back-off is not late — nor from next_retry_at, which
    // every failed send moves on, so that a broker outage shows
    // (docs/observability.md#metrics). COALESCE: a row written by an older
    // binary during a rolling upgrade has no due_since.
    EC_ASSIGN_OR_RETURN(
        Rows outbox,
        c.Query(Sql("SELECT COUNT(*), COALESCE(MAX(attempt_count), 0),"
                    " COALESCE(({NOW} - MIN(CASE WHEN COALESCE(due_since, next_retry_at) <= {NOW}"
                    " THEN COALESCE(due_since, next_retry_at) END)) / 1000, 0)"
                    " FROM export_outbox WHERE status IN ('PENDING', 'CLAIMED')")));
    g.outbox_pending = outbox.at(0).Int(0);
    g.outbox_max_attempt = outbox.at(0).Int(1);
    g.outbox_oldest_age_seconds = std::max<int64_t>(0, outbox.at(0).Int(2));
    EC_ASSIGN_OR_RETURN(Rows queue,
                        c.Query(Sql("SELECT COALESCE(({NOW} - MIN(next_retry_at)) / 1000, 0)"
                                    " FROM export_task WHERE status = 'PENDING'"
                                    " AND next_retry_at <= {NOW}")));
    g.task_queue_age_seconds = std::max<int64_t>(0, queue.at(0).Int(0));
    EC_ASSIGN_OR_RETURN(Rows tenants,
                        c.Query("SELECT tenant_id,"
                                " SUM(CASE WHEN status = 'PENDING' THEN 1 ELSE 0 END),"
                                " SUM(CASE WHEN status = 'RUNNING' THEN 1 ELSE 0 END)"
                                " FROM export_task WHERE status IN ('PENDING', 'RUNNING')"
                                " GROUP BY tenant_id ORDER BY tenant_id"));
    g.tenants.clear();
    for (const Row& r : tenants) g.tenants.push_back({r.Text(0), r.Int(1), r.Int(2)});
    return Status::Ok();
  }));
  return g;
}

}  // namespace

ClaimMiss ClassifyClaimMiss(const ClaimFacts& f, int32_t command_version) {
  if (!f.found) return ClaimMiss::kTaskMissing;
  if (f.dispatch_version > command_version) return ClaimMiss::kNewerVersion;
  if (f.dispatch_version < command_version) return ClaimMiss::kOlderVersion;
  if (f.status == TaskState::kRunning) {
    return f.lease_live ? ClaimMiss::kRunningLeaseLive : ClaimMiss::kRunningLeaseExpired;
  }
  if (f.status == TaskState::kPending) {
    return f.in_backoff ? ClaimMiss::kPendingBackoff : ClaimMiss::kLostRace;
  }
  return ClaimMiss::kFinished;
}

std::unique_ptr<TaskStore> NewSqlTaskStore(std::shared_ptr<Database> db) {
  return std::make_unique<SqlTaskStore>(std::move(db));
}

}  // namespace export_center::store
