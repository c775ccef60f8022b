#pragma once
// TaskStoreWrapper: a TaskStore that forwards every call to a target store
// (leveldb's EnvWrapper). A test fake derives from it and overrides only the
// methods it breaks, so adding a store method touches this file alone.
//
// It is composed of one forwarding wrapper per role (TaskStore's roles are
// virtual bases, so each role's methods come from its wrapper unforwarded); a
// new store method goes to its role's wrapper, a new role gets a wrapper here
// and becomes a base of TaskStoreWrapper. TaskCatalogWrapper and
// AttemptLedgerWrapper leave GetTask to TaskReaderWrapper, their shared reader.
//
// Thread-safety: that of the target. The target is not owned and must
// outlive the wrapper.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/task_store.h"

namespace export_center::store {

// Forwards every TaskReader call to the target.
class TaskReaderWrapper : public virtual TaskReader {
 public:
  explicit TaskReaderWrapper(TaskReader* target) : target_(target) {}

  StatusOr<task::Task> GetTask(int64_t task_id) override { return target_->GetTask(task_id); }

 private:
  TaskReader* const target_;
};

// Forwards every TaskCatalog call to the target.
class TaskCatalogWrapper : public virtual TaskCatalog {
 public:
  explicit TaskCatalogWrapper(TaskCatalog* target) : target_(target) {}

  StatusOr<int64_t> DatabaseNowMs() override { return target_->DatabaseNowMs(); }
  StatusOr<CreateResult> CreateTask(const NewTask& task, const CreateLimits& limits) override {
    return target_->CreateTask(task, limits);
  }
  StatusOr<ListPage> ListTasks(const ListQuery& query) override {
    return target_->ListTasks(query);
  }
  StatusOr<std::vector<task::Task>> ListChangedTasks(const ChangeQuery& query) override {
    return target_->ListChangedTasks(query);
  }
  StatusOr<std::vector<ChangeKey>> ListChangeKeys(const ChangeQuery& query) override {
    return target_->ListChangeKeys(query);
  }
  StatusOr<task::TaskState> RequestCancel(int64_t task_id) override {
    return target_->RequestCancel(task_id);
  }
  StatusOr<task::Task> ManualRetry(int64_t task_id, const std::string& trace_id) override {
    return target_->ManualRetry(task_id, trace_id);
  }
  StatusOr<DownloadCount> RecordDownload(const DownloadRecord& download,
                                         int window_seconds) override {
    return target_->RecordDownload(download, window_seconds);
  }
  StatusOr<DownloadAuditPage> ListDownloadAudit(const DownloadAuditQuery& query) override {
    return target_->ListDownloadAudit(query);
  }
  StatusOr<std::vector<TaskEvent>> ListTaskEvents(int64_t task_id) override {
    return target_->ListTaskEvents(task_id);
  }

 private:
  TaskCatalog* const target_;
};

// Forwards every CommandOutbox call to the target.
class CommandOutboxWrapper : public virtual CommandOutbox {
 public:
  explicit CommandOutboxWrapper(CommandOutbox* target) : target_(target) {}

  StatusOr<std::vector<int64_t>> SelectDueOutbox(int limit) override {
    return target_->SelectDueOutbox(limit);
  }
  StatusOr<std::optional<OutboxEntry>> ClaimOutbox(int64_t outbox_id, const std::string& instance,
                                                   int lease_seconds) override {
    return target_->ClaimOutbox(outbox_id, instance, lease_seconds);
  }
  StatusOr<MarkOutcome> MarkOutboxSent(int64_t outbox_id, const std::string& instance) override {
    return target_->MarkOutboxSent(outbox_id, instance);
  }
  StatusOr<MarkOutcome> MarkOutboxFailed(int64_t outbox_id, const std::string& instance,
                                         const std::string& error, int64_t backoff_ms) override {
    return target_->MarkOutboxFailed(outbox_id, instance, error, backoff_ms);
  }
  StatusOr<std::vector<OutboxEntry>> ListOutboxForTask(int64_t task_id) override {
    return target_->ListOutboxForTask(task_id);
  }

 private:
  CommandOutbox* const target_;
};

// Forwards every AttemptLedger call to the target.
class AttemptLedgerWrapper : public virtual AttemptLedger {
 public:
  explicit AttemptLedgerWrapper(AttemptLedger* target) : target_(target) {}

  StatusOr<ClaimResult> ClaimTask(const ClaimRequest& request) override {
    return target_->ClaimTask(request);
  }
  StatusOr<RenewOutcome> RenewLease(const Attempt& attempt, int lease_seconds) override {
    return target_->RenewLease(attempt, lease_seconds);
  }
  StatusOr<ProgressOutcome> UpdateProgress(const Attempt& attempt, int64_t processed_rows,
                                           std::optional<int64_t> total_rows) override {
    return target_->UpdateProgress(attempt, processed_rows, total_rows);
  }
  StatusOr<CommitOutcome> CommitSuccess(const Attempt& attempt, const FileResult& file,
                                        int retention_days) override {
    return target_->CommitSuccess(attempt, file, retention_days);
  }
  StatusOr<FinishOutcome> FinishAttempt(const Attempt& attempt, task::TaskState to_state,
                                        const std::string& failure_code,
                                        const FailureText& failure) override {
    return target_->FinishAttempt(attempt, to_state, failure_code, failure);
  }
  StatusOr<RetryOutcome> ScheduleRetry(const Attempt& attempt, const FailureText& failure,
                                       int64_t backoff_ms) override {
    return target_->ScheduleRetry(attempt, failure, backoff_ms);
  }
  StatusOr<std::string> PinContractVersion(const Attempt& attempt,
                                           const std::string& version) override {
    return target_->PinContractVersion(attempt, version);
  }

 private:
  AttemptLedger* const target_;
};

// Forwards every TaskMaintenance call to the target.
class TaskMaintenanceWrapper : public virtual TaskMaintenance {
 public:
  explicit TaskMaintenanceWrapper(TaskMaintenance* target) : target_(target) {}

  StatusOr<int> RedispatchMissingOutbox(int grace_seconds, int limit) override {
    return target_->RedispatchMissingOutbox(grace_seconds, limit);
  }
  StatusOr<int> ResendStaleSentOutbox(int sent_stale_seconds, int grace_seconds,
                                      int limit) override {
    return target_->ResendStaleSentOutbox(sent_stale_seconds, grace_seconds, limit);
  }
  StatusOr<std::vector<RecoveredLease>> RecoverExpiredLeases(int limit) override {
    return target_->RecoverExpiredLeases(limit);
  }
  StatusOr<int> ReleaseStaleClaimedOutbox(int limit) override {
    return target_->ReleaseStaleClaimedOutbox(limit);
  }
  StatusOr<std::vector<ExpiredArtifact>> ListExpiredArtifacts(int limit) override {
    return target_->ListExpiredArtifacts(limit);
  }
  StatusOr<ExpireOutcome> MarkExpired(int64_t task_id) override {
    return target_->MarkExpired(task_id);
  }
  StatusOr<int> PurgeSentOutbox(int older_than_seconds, int limit) override {
    return target_->PurgeSentOutbox(older_than_seconds, limit);
  }
  StatusOr<int> DeleteOldHistory(int older_than_days, int limit) override {
    return target_->DeleteOldHistory(older_than_days, limit);
  }

 private:
  TaskMaintenance* const target_;
};

// Forwards every CommandQuarantine call to the target.
class CommandQuarantineWrapper : public virtual CommandQuarantine {
 public:
  explicit CommandQuarantineWrapper(CommandQuarantine* target) : target_(target) {}

  Status QuarantineCommand(int64_t task_id, int32_t dispatch_version, const std::string& event_id,
                           const std::string& reason) override {
    return target_->QuarantineCommand(task_id, dispatch_version, event_id, reason);
  }

 private:
  CommandQuarantine* const target_;
};

// Forwards every TaskOperations call to the target.
class TaskOperationsWrapper : public virtual TaskOperations {
 public:
  explicit TaskOperationsWrapper(TaskOperations* target) : target_(target) {}

  StatusOr<TaskCatalog::ListPage> SearchTasks(const OperatorFilter& filter, int page, int size,
                                              const std::optional<PageKey>& after) override {
    return target_->SearchTasks(filter, page, size, after);
  }
  StatusOr<int64_t> CountTasks(const OperatorFilter& filter) override {
    return target_->CountTasks(filter);
  }
  StatusOr<std::vector<int64_t>> ListTaskIds(const OperatorFilter& filter, int64_t after_id,
                                             int limit) override {
    return target_->ListTaskIds(filter, after_id, limit);
  }
  StatusOr<TaskDispatch> ReadTaskDispatch(int64_t task_id) override {
    return target_->ReadTaskDispatch(task_id);
  }
  StatusOr<int64_t> BeginBulkAction(const BulkActionRecord& record) override {
    return target_->BeginBulkAction(record);
  }
  Status FinishBulkAction(const BulkActionRecord& record) override {
    return target_->FinishBulkAction(record);
  }
  StatusOr<std::vector<BulkActionRecord>> ListBulkActions(const OperatorScope& scope,
                                                          int limit) override {
    return target_->ListBulkActions(scope, limit);
  }
  StatusOr<std::vector<TypeStats>> ReadTypeStats(const OperatorScope& scope,
                                                 int64_t window_ms) override {
    return target_->ReadTypeStats(scope, window_ms);
  }
  StatusOr<QueueHealth> ReadQueueHealth(const OperatorScope& scope) override {
    return target_->ReadQueueHealth(scope);
  }
  StatusOr<std::vector<NotificationEntry>> ListDeadNotifications(const OperatorScope& scope,
                                                                 int limit) override {
    return target_->ListDeadNotifications(scope, limit);
  }
  Status RedeliverNotification(const OperatorScope& scope, int64_t notification_id) override {
    return target_->RedeliverNotification(scope, notification_id);
  }

 private:
  TaskOperations* const target_;
};

// Forwards every StoreAdmin call to the target.
class StoreAdminWrapper : public virtual StoreAdmin {
 public:
  explicit StoreAdminWrapper(StoreAdmin* target) : target_(target) {}

  Status Migrate() override { return target_->Migrate(); }
  Status CheckGuardRow() override { return target_->CheckGuardRow(); }
  StatusOr<SchemaVersions> ReadSchemaVersions() override { return target_->ReadSchemaVersions(); }
  void SetNotificationRoutes(std::vector<NotificationRoute> routes) override {
    target_->SetNotificationRoutes(std::move(routes));
  }
  NotificationOutbox& notifications() override { return target_->notifications(); }
  SubscriptionLedger& subscriptions() override { return target_->subscriptions(); }
  StatusOr<Gauges> ReadGauges() override { return target_->ReadGauges(); }

 private:
  StoreAdmin* const target_;
};

class TaskStoreWrapper : public TaskStore,
                         public TaskReaderWrapper,
                         public TaskCatalogWrapper,
                         public CommandOutboxWrapper,
                         public AttemptLedgerWrapper,
                         public TaskMaintenanceWrapper,
                         public CommandQuarantineWrapper,
                         public TaskOperationsWrapper,
                         public StoreAdminWrapper {
 public:
  explicit TaskStoreWrapper(TaskStore* target)
      : TaskReaderWrapper(target),
        TaskCatalogWrapper(target),
        CommandOutboxWrapper(target),
        AttemptLedgerWrapper(target),
        TaskMaintenanceWrapper(target),
        CommandQuarantineWrapper(target),
        TaskOperationsWrapper(target),
        StoreAdminWrapper(target),
        target_(target) {}

  TaskStore* target() const { return target_; }

 private:
  TaskStore* const target_;
};

}  // namespace export_center::store
