#pragma once
// FaultyTaskStore: forwards every call to a real TaskStore, except the ones a
// test makes fail (a database error on one statement, which a real database
// cannot be told to produce on cue).

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "store/task_store.h"

namespace export_center::dispatch {

class FaultyTaskStore : public store::TaskStore {
 public:
  explicit FaultyTaskStore(store::TaskStore* inner) : inner_(inner) {}

  // The next `n` calls of the method fail with Unavailable; -1: every call.
  std::atomic<int> failing_renewals{0};
  std::atomic<int> failing_quarantines{0};
  std::atomic<int> renew_calls{0};
  std::atomic<int> progress_calls{0};

  Status Migrate() override { return inner_->Migrate(); }
  Status CheckGuardRow() override { return inner_->CheckGuardRow(); }
  StatusOr<store::SchemaVersions> ReadSchemaVersions() override {
    return inner_->ReadSchemaVersions();
  }
  StatusOr<int64_t> DatabaseNowMs() override { return inner_->DatabaseNowMs(); }
  StatusOr<store::CreateResult> CreateTask(const store::NewTask& t,
                                           const store::CreateLimits& l) override {
    return inner_->CreateTask(t, l);
  }
  StatusOr<task::Task> GetTask(int64_t id) override { return inner_->GetTask(id); }
  StatusOr<ListPage> ListTasks(const ListQuery& q) override { return inner_->ListTasks(q); }
  StatusOr<std::vector<task::Task>> ListChangedTasks(const ChangeQuery& q) override {
    return inner_->ListChangedTasks(q);
  }
  StatusOr<std::vector<ChangeKey>> ListChangeKeys(const ChangeQuery& q) override {
    return inner_->ListChangeKeys(q);
  }
  StatusOr<task::TaskState> RequestCancel(int64_t id) override { return inner_->RequestCancel(id); }
  StatusOr<task::Task> ManualRetry(int64_t id, const std::string& trace) override {
    return inner_->ManualRetry(id, trace);
  }
  StatusOr<bool> RecordDownload(const store::DownloadRecord& d, int window_seconds) override {
    return inner_->RecordDownload(d, window_seconds);
  }
  StatusOr<store::DownloadAuditPage> ListDownloadAudit(
      const store::DownloadAuditQuery& q) override {
    return inner_->ListDownloadAudit(q);
  }
  void SetNotificationRoutes(std::vector<store::NotificationRoute> routes) override {
    inner_->SetNotificationRoutes(std::move(routes));
  }
  store::NotificationOutbox& notifications() override { return inner_->notifications(); }
  StatusOr<std::vector<int64_t>> SelectDueOutbox(int limit) override {
    return inner_->SelectDueOutbox(limit);
  }
  StatusOr<std::optional<store::OutboxEntry>> ClaimOutbox(int64_t id, const std::string& instance,
                                                          int lease_seconds) override {
    return inner_->ClaimOutbox(id, instance, lease_seconds);
  }
  StatusOr<bool> MarkOutboxSent(int64_t id, const std::string& instance) override {
    return inner_->MarkOutboxSent(id, instance);
  }
  StatusOr<bool> MarkOutboxFailed(int64_t id, const std::string& instance, const std::string& error,
                                  int64_t backoff_ms) override {
    return inner_->MarkOutboxFailed(id, instance, error, backoff_ms);
  }
  StatusOr<std::vector<store::OutboxEntry>> ListOutboxForTask(int64_t id) override {
    return inner_->ListOutboxForTask(id);
  }
  StatusOr<store::ClaimResult> ClaimTask(const store::ClaimRequest& r) override {
    return inner_->ClaimTask(r);
  }
  StatusOr<store::RenewOutcome> RenewLease(const store::Attempt& a, int lease_seconds) override {
    ++renew_calls;
    if (Fail(failing_renewals)) return Unavailable("database is restarting");
    return inner_->RenewLease(a, lease_seconds);
  }
  StatusOr<bool> UpdateProgress(const store::Attempt& a, int64_t processed,
                                std::optional<int64_t> total) override {
    ++progress_calls;
    return inner_->UpdateProgress(a, processed, total);
  }
  StatusOr<bool> CommitSuccess(const store::Attempt& a, const store::FileResult& f,
                               int retention_days) override {
    return inner_->CommitSuccess(a, f, retention_days);
  }
  StatusOr<bool> FinishAttempt(const store::Attempt& a, task::TaskState to, const std::string& code,
                               const std::string& message) override {
    return inner_->FinishAttempt(a, to, code, message);
  }
  StatusOr<store::RetryOutcome> ScheduleRetry(const store::Attempt& a, const std::string& message,
                                              int64_t backoff_ms) override {
    return inner_->ScheduleRetry(a, message, backoff_ms);
  }
  StatusOr<std::string> PinContractVersion(const store::Attempt& a,
                                           const std::string& version) override {
    return inner_->PinContractVersion(a, version);
  }
  StatusOr<int> RedispatchMissingOutbox(int grace, int limit) override {
    return inner_->RedispatchMissingOutbox(grace, limit);
  }
  StatusOr<int> ResendStaleSentOutbox(int stale, int grace, int limit) override {
    return inner_->ResendStaleSentOutbox(stale, grace, limit);
  }
  StatusOr<std::vector<store::RecoveredLease>> RecoverExpiredLeases(int limit) override {
    return inner_->RecoverExpiredLeases(limit);
  }
  StatusOr<int> ReleaseStaleClaimedOutbox(int limit) override {
    return inner_->ReleaseStaleClaimedOutbox(limit);
  }
  StatusOr<std::vector<store::ExpiredArtifact>> ListExpiredArtifacts(int limit) override {
    return inner_->ListExpiredArtifacts(limit);
  }
  StatusOr<bool> MarkExpired(int64_t id) override { return inner_->MarkExpired(id); }
  StatusOr<int> PurgeSentOutbox(int older_than, int limit) override {
    return inner_->PurgeSentOutbox(older_than, limit);
  }
  Status QuarantineCommand(int64_t id, int32_t version, const std::string& event_id,
                           const std::string& reason) override {
    if (Fail(failing_quarantines)) return Unavailable("database is restarting");
    return inner_->QuarantineCommand(id, version, event_id, reason);
  }
  StatusOr<Gauges> ReadGauges() override { return inner_->ReadGauges(); }

 private:
  static bool Fail(std::atomic<int>& budget) {
    int left = budget.load();
    while (left != 0) {
      if (left < 0) return true;
      if (budget.compare_exchange_weak(left, left - 1)) return true;
    }
    return false;
  }

  store::TaskStore* inner_;
};

}  // namespace export_center::dispatch
