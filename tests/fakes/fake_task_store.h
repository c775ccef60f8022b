#pragma once
// FakeTaskStore: an in-memory TaskStore for fast unit tests.
//
// Implements what the API uses with the real semantics — create with dedupe
// window and active-task limits, get, list (filters, newest first, paging),
// cancel, manual retry (version+1 and a new outbox row), download counting —
// against a settable clock standing in for the database clock. The worker and
// reconciler methods answer Internal. Thread-safe.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "store/task_store.h"

namespace export_center::fakes {

class FakeTaskStore : public store::TaskStore {
 public:
  FakeTaskStore();

  // ---- test controls ----
  void SetNowMs(int64_t now_ms);
  void AdvanceMs(int64_t delta_ms);
  int64_t now_ms() const;
  // When set, every call answers Unavailable (database down).
  void SetUnavailable(bool unavailable);
  // Inserts or replaces a task as is (id must be set).
  void Put(const task::Task& task);
  std::optional<task::Task> Peek(int64_t task_id) const;
  size_t outbox_size() const;

  // ---- TaskStore ----
  Status Migrate() override;
  Status CheckGuardRow() override;
  StatusOr<int64_t> DatabaseNowMs() override;
  StatusOr<store::CreateResult> CreateTask(const store::NewTask& task,
                                           const store::CreateLimits& limits) override;
  StatusOr<task::Task> GetTask(int64_t task_id) override;
  StatusOr<ListPage> ListTasks(const ListQuery& query) override;
  StatusOr<task::TaskState> RequestCancel(int64_t task_id) override;
  StatusOr<task::Task> ManualRetry(int64_t task_id, const std::string& trace_id) override;
  Status RecordDownload(int64_t task_id) override;
  StatusOr<std::vector<store::OutboxEntry>> ListOutboxForTask(int64_t task_id) override;

  StatusOr<std::vector<int64_t>> SelectDueOutbox(int limit) override;
  StatusOr<std::optional<store::OutboxEntry>> ClaimOutbox(int64_t outbox_id,
                                                          const std::string& instance,
                                                          int lease_seconds) override;
  StatusOr<bool> MarkOutboxSent(int64_t outbox_id, const std::string& instance) override;
  StatusOr<bool> MarkOutboxFailed(int64_t outbox_id, const std::string& instance,
                                  const std::string& error, int64_t backoff_ms) override;
  StatusOr<store::ClaimResult> ClaimTask(const store::ClaimRequest& request) override;
  StatusOr<store::RenewOutcome> RenewLease(const store::Attempt& attempt,
                                           int lease_seconds) override;
  StatusOr<bool> UpdateProgress(const store::Attempt& attempt, int64_t processed_rows,
                                std::optional<int64_t> total_rows) override;
  StatusOr<bool> CommitSuccess(const store::Attempt& attempt, const store::FileResult& file,
                               int retention_days) override;
  StatusOr<bool> FinishAttempt(const store::Attempt& attempt, task::TaskState to_state,
                               const std::string& failure_code,
                               const std::string& message) override;
  StatusOr<store::RetryOutcome> ScheduleRetry(const store::Attempt& attempt,
                                              const std::string& message,
                                              int64_t backoff_ms) override;
  StatusOr<int> RedispatchMissingOutbox(int grace_seconds, int limit) override;
  StatusOr<int> ResendStaleSentOutbox(int sent_stale_seconds, int grace_seconds,
                                      int limit) override;
  StatusOr<std::vector<store::RecoveredLease>> RecoverExpiredLeases(int limit) override;
  StatusOr<int> ReleaseStaleClaimedOutbox(int limit) override;
  StatusOr<std::vector<store::ExpiredArtifact>> ListExpiredArtifacts(int limit) override;
  StatusOr<bool> MarkExpired(int64_t task_id) override;
  StatusOr<int> PurgeSentOutbox(int older_than_seconds, int limit) override;
  StatusOr<std::string> PinContractVersion(const store::Attempt& attempt,
                                           const std::string& version) override;
  Status QuarantineCommand(int64_t task_id, int32_t dispatch_version, const std::string& event_id,
                           const std::string& reason) override;
  StatusOr<Gauges> ReadGauges() override;

 private:
  Status CheckUp() const;  // REQUIRES: mu_ held
  void AddOutbox(const task::Task& task);  // REQUIRES: mu_ held

  mutable std::mutex mu_;
  int64_t now_ms_;                       // GUARDED_BY(mu_)
  bool unavailable_ = false;             // GUARDED_BY(mu_)
  std::map<int64_t, task::Task> tasks_;  // GUARDED_BY(mu_)
  std::vector<store::OutboxEntry> outbox_;  // GUARDED_BY(mu_)
};

}  // namespace export_center::fakes
