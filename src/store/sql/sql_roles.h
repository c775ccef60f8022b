#pragma once
// The SQL store, one small class per role (store/task_store.h) over the
// shared SqlStoreCore (sql_store_core.h), and SqlTaskStore, their union. Each
// role's methods live in its own file; a new method goes to its role's class
// and file, a new role is a class here and a base of SqlTaskStore. A method
// that changes a task's state does it with transitions_.Apply
// (task_transitions.h), never its own UPDATE of export_task.status.
// Internal to store/: other components use sql_task_store.h.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/sql/sql_store_core.h"

namespace export_center::store::sql {

// api/ (sql_task_catalog.cc; ListTaskEvents in task_events.cc). GetTask, the
// read every role shares (TaskReader), is implemented here once.
class SqlTaskCatalog : public virtual TaskCatalog, protected SqlRole {
 public:
  explicit SqlTaskCatalog(SqlStoreCore& core) : SqlRole(core) {}
  StatusOr<Task> GetTask(int64_t task_id) override;
  StatusOr<int64_t> DatabaseNowMs() override;
  StatusOr<CreateResult> CreateTask(const NewTask& task, const CreateLimits& limits) override;
  StatusOr<ListPage> ListTasks(const ListQuery& query) override;
  StatusOr<std::vector<Task>> ListChangedTasks(const ChangeQuery& query) override;
  StatusOr<std::vector<ChangeKey>> ListChangeKeys(const ChangeQuery& query) override;
  StatusOr<TaskState> RequestCancel(int64_t task_id) override;
  StatusOr<Task> ManualRetry(int64_t task_id, const std::string& trace_id) override;
  StatusOr<DownloadCount> RecordDownload(const DownloadRecord& download,
                                         int window_seconds) override;
  StatusOr<DownloadAuditPage> ListDownloadAudit(const DownloadAuditQuery& query) override;
  StatusOr<std::vector<TaskEvent>> ListTaskEvents(int64_t task_id) override;

 private:
  StatusOr<std::optional<Task>> FindDuplicate(Connection& c, const NewTask& t, int window_seconds);
  Status CheckActiveLimits(Connection& c, const NewTask& t, const CreateLimits& limits);
};

// The outbox publisher (sql_command_outbox.cc).
class SqlCommandOutbox : public virtual CommandOutbox, protected SqlRole {
 public:
  explicit SqlCommandOutbox(SqlStoreCore& core) : SqlRole(core), outbox_(core.command_queue()) {}
  StatusOr<std::vector<int64_t>> SelectDueOutbox(int limit) override;
  StatusOr<std::optional<OutboxEntry>> ClaimOutbox(int64_t outbox_id, const std::string& instance,
                                                   int lease_seconds) override;
  StatusOr<MarkOutcome> MarkOutboxSent(int64_t outbox_id, const std::string& instance) override;
  StatusOr<MarkOutcome> MarkOutboxFailed(int64_t outbox_id, const std::string& instance,
                                         const std::string& error, int64_t backoff_ms) override;
  StatusOr<std::vector<OutboxEntry>> ListOutboxForTask(int64_t task_id) override;

 private:
  const LeasedQueue& outbox_;
};

// The consumer, the attempt, the lease watchdog (sql_attempt_ledger.cc).
class SqlAttemptLedger : public virtual AttemptLedger, protected SqlRole {
 public:
  explicit SqlAttemptLedger(SqlStoreCore& core) : SqlRole(core) {}
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

 private:
  // RUNNING → an end state, conditional on the attempt, inside a transaction.
  Status EndAttempt(Connection& c, const Attempt& a, TaskState to_state, const std::string& code,
                    const FailureText& failure);
  StatusOr<ClaimMiss> ExplainClaimMiss(Connection& c, const ClaimRequest& r,
                                       std::optional<Task>* task);
  // Inside the claim transaction: true when the task's tenant is at
  // r.tenant_running_limit while another tenant has a task waiting, and the
  // command was handed back.
  StatusOr<bool> HandBackIfTenantAtLimit(Connection& c, const ClaimRequest& r);
  // True when a task of a tenant other than `tenant` is PENDING and due.
  StatusOr<bool> AnotherTenantWaits(Connection& c, const std::string& tenant);
};

// The reconciler (sql_task_maintenance.cc).
class SqlTaskMaintenance : public virtual TaskMaintenance, protected SqlRole {
 public:
  explicit SqlTaskMaintenance(SqlStoreCore& core) : SqlRole(core) {}
  StatusOr<int> RedispatchMissingOutbox(int grace_seconds, int limit) override;
  StatusOr<int> ResendStaleSentOutbox(int sent_stale_seconds, int grace_seconds,
                                      int limit) override;
  StatusOr<std::vector<RecoveredLease>> RecoverExpiredLeases(int limit) override;
  StatusOr<int> ReleaseStaleClaimedOutbox(int limit) override;
  StatusOr<std::vector<ExpiredArtifact>> ListExpiredArtifacts(int limit) override;
  StatusOr<ExpireOutcome> MarkExpired(int64_t task_id) override;
  StatusOr<int> PurgeSentOutbox(int older_than_seconds, int limit) override;
  StatusOr<int> DeleteOldHistory(int older_than_days, int limit) override;

 private:
  Status RecoverOne(Connection& c, const Row& row, std::vector<RecoveredLease>* out);
  // Puts each picked outbox row (id, task_id, dispatch_version) still
  // matching `from` back to PENDING with `set`, and records why (`cause`).
  Status RequeueOutboxRows(Connection& c, const Rows& picked, std::string_view from,
                           std::string_view set, const char* cause, int* requeued);
};

// The DLQ handler (sql_task_maintenance.cc).
class SqlCommandQuarantine : public virtual CommandQuarantine, protected SqlRole {
 public:
  explicit SqlCommandQuarantine(SqlStoreCore& core) : SqlRole(core) {}
  Status QuarantineCommand(int64_t task_id, int32_t dispatch_version, const std::string& event_id,
                           const std::string& reason) override;
};

// api/'s operators' console (sql_task_operations.cc).
class SqlTaskOperations : public virtual TaskOperations, protected SqlRole {
 public:
  explicit SqlTaskOperations(SqlStoreCore& core) : SqlRole(core) {}
  StatusOr<TaskCatalog::ListPage> SearchTasks(const OperatorFilter& filter, int page, int size,
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
};

// app/: schema, guard row, notification routes, gauges (sql_task_store.cc).
class SqlStoreAdmin : public virtual StoreAdmin, protected SqlRole {
 public:
  explicit SqlStoreAdmin(SqlStoreCore& core) : SqlRole(core) {}
  Status Migrate() override;
  Status CheckGuardRow() override;
  StatusOr<SchemaVersions> ReadSchemaVersions() override;
  void SetNotificationRoutes(std::vector<NotificationRoute> routes) override;
  NotificationOutbox& notifications() override { return core_.notifications(); }
  SubscriptionLedger& subscriptions() override { return core_.subscriptions(); }
  StatusOr<Gauges> ReadGauges() override;
};

// The one TaskStore: every role class over one core (TaskStore's roles are
// virtual bases, so each role's methods come from its class, unforwarded).
class SqlTaskStore final : public TaskStore,
                           private SqlTaskCatalog,
                           private SqlCommandOutbox,
                           private SqlAttemptLedger,
                           private SqlTaskMaintenance,
                           private SqlCommandQuarantine,
                           private SqlTaskOperations,
                           private SqlStoreAdmin {
 public:
  explicit SqlTaskStore(std::shared_ptr<Database> db)
      : SqlTaskStore(std::make_unique<SqlStoreCore>(std::move(db))) {}

 private:
  explicit SqlTaskStore(std::unique_ptr<SqlStoreCore> core)
      : SqlTaskCatalog(*core),
        SqlCommandOutbox(*core),
        SqlAttemptLedger(*core),
        SqlTaskMaintenance(*core),
        SqlCommandQuarantine(*core),
        SqlTaskOperations(*core),
        SqlStoreAdmin(*core),
        owned_core_(std::move(core)) {}

  const std::unique_ptr<SqlStoreCore> owned_core_;
};

}  // namespace export_center::store::sql
