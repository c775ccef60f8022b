#include "tests/fakes/fake_task_store.h"

#include <algorithm>
#include <chrono>

#include "common/ids.h"

namespace export_center::fakes {
namespace {

Status NotFaked(const char* method) {
  return Internal(std::string("FakeTaskStore does not implement ") + method);
}

}  // namespace

FakeTaskStore::FakeTaskStore()
    : now_ms_(std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count()) {}

void FakeTaskStore::SetNowMs(int64_t now_ms) {
  std::lock_guard lock(mu_);
  now_ms_ = now_ms;
}

void FakeTaskStore::AdvanceMs(int64_t delta_ms) {
  std::lock_guard lock(mu_);
  now_ms_ += delta_ms;
}

int64_t FakeTaskStore::now_ms() const {
  std::lock_guard lock(mu_);
  return now_ms_;
}

void FakeTaskStore::SetUnavailable(bool unavailable) {
  std::lock_guard lock(mu_);
  unavailable_ = unavailable;
}

void FakeTaskStore::Put(const task::Task& task) {
  std::lock_guard lock(mu_);
  tasks_[task.id] = task;
}

std::optional<task::Task> FakeTaskStore::Peek(int64_t task_id) const {
  std::lock_guard lock(mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return std::nullopt;
  return it->second;
}

size_t FakeTaskStore::outbox_size() const {
  std::lock_guard lock(mu_);
  return outbox_.size();
}

Status FakeTaskStore::CheckUp() const {
  return unavailable_ ? Unavailable("fake database is down") : Status::Ok();
}

void FakeTaskStore::AddOutbox(const task::Task& task) {
  store::OutboxEntry e;
  e.id = NextId();
  e.event_id = NewUuid();
  e.task_id = task.id;
  e.dispatch_version = task.dispatch_version;
  e.next_retry_at = now_ms_;
  e.created_at = now_ms_;
  outbox_.push_back(std::move(e));
}

Status FakeTaskStore::Migrate() { return Status::Ok(); }
Status FakeTaskStore::CheckGuardRow() { return Status::Ok(); }

StatusOr<int64_t> FakeTaskStore::DatabaseNowMs() {
  std::lock_guard lock(mu_);
  EC_RETURN_IF_ERROR(CheckUp());
  return now_ms_;
}

StatusOr<store::CreateResult> FakeTaskStore::CreateTask(const store::NewTask& n,
                                                        const store::CreateLimits& limits) {
  std::lock_guard lock(mu_);  // plays the guard row: one create at a time
  EC_RETURN_IF_ERROR(CheckUp());
  int user_active = 0, type_active = 0;
  for (const auto& [id, t] : tasks_) {
    if (!task::IsActive(t.status)) continue;
    bool same_user = t.tenant_id == n.tenant_id && t.requested_by == n.requested_by;
    if (same_user && t.export_type == n.export_type && t.params_hash == n.params_hash &&
        t.requested_at > now_ms_ - int64_t{limits.dedupe_window_seconds} * 1000) {
      return store::CreateResult{t, true};
    }
    user_active += same_user;
    type_active += t.export_type == n.export_type;
  }
  if (user_active >= limits.max_active_per_user) {
    return LimitExceeded("you already have " + std::to_string(user_active) +
                         " active exports; wait for one to finish");
  }
  if (type_active >= limits.max_active_per_type) {
    return LimitExceeded("too many active exports of " + n.export_type + "; try again later");
  }
  task::Task t;
  t.id = NextId();
  t.tenant_id = n.tenant_id;
  t.app_code = n.app_code;
  t.requested_by = n.requested_by;
  t.export_type = n.export_type;
  t.task_name = n.task_name;
  t.format = n.format;
  t.parameters_json = n.parameters_json;
  t.params_hash = n.params_hash;
  t.max_attempts = n.max_attempts;
  t.contract_version = n.contract_version;
  t.next_retry_at = now_ms_;
  t.requested_at = now_ms_;
  t.updated_at = now_ms_;
  tasks_[t.id] = t;
  AddOutbox(t);
  return store::CreateResult{t, false};
}

StatusOr<task::Task> FakeTaskStore::GetTask(int64_t task_id) {
  std::lock_guard lock(mu_);
  EC_RETURN_IF_ERROR(CheckUp());
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return NotFound("task " + std::to_string(task_id) + " does not exist");
  return it->second;
}

StatusOr<store::TaskStore::ListPage> FakeTaskStore::ListTasks(const ListQuery& q) {
  std::lock_guard lock(mu_);
  EC_RETURN_IF_ERROR(CheckUp());
  std::vector<task::Task> match;
  for (const auto& [id, t] : tasks_) {
    if (t.tenant_id != q.tenant_id || t.app_code != q.app_code) continue;
    if (q.requested_by && t.requested_by != *q.requested_by) continue;
    if (q.status && t.status != *q.status) continue;
    if (q.export_type && t.export_type != *q.export_type) continue;
    match.push_back(t);
  }
  std::sort(match.begin(), match.end(), [](const task::Task& a, const task::Task& b) {
    return a.requested_at != b.requested_at ? a.requested_at > b.requested_at : a.id > b.id;
  });
  ListPage page;
  page.total = static_cast<int64_t>(match.size());
  size_t from = static_cast<size_t>(q.page - 1) * static_cast<size_t>(q.size);
  for (size_t i = from; i < match.size() && i < from + static_cast<size_t>(q.size); ++i) {
    page.records.push_back(match[i]);
  }
  return page;
}

StatusOr<task::TaskState> FakeTaskStore::RequestCancel(int64_t task_id) {
  std::lock_guard lock(mu_);
  EC_RETURN_IF_ERROR(CheckUp());
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return NotFound("task " + std::to_string(task_id) + " does not exist");
  task::Task& t = it->second;
  if (t.status == task::TaskState::kPending) {
    t.status = task::TaskState::kCancelled;
    t.completed_at = now_ms_;
  } else if (t.status == task::TaskState::kRunning) {
    t.cancel_requested = true;
  } else {
    return Conflict("task is " + std::string(task::ToString(t.status)));
  }
  t.updated_at = now_ms_;
  return t.status;
}

StatusOr<task::Task> FakeTaskStore::ManualRetry(int64_t task_id, const std::string&) {
  std::lock_guard lock(mu_);
  EC_RETURN_IF_ERROR(CheckUp());
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return NotFound("task " + std::to_string(task_id) + " does not exist");
  task::Task& t = it->second;
  if (!task::CanManualRetry(t.status)) {
    return Conflict("task is " + std::string(task::ToString(t.status)));
  }
  t.status = task::TaskState::kPending;
  t.dispatch_version += 1;
  t.attempt_count = 0;
  t.next_retry_at = now_ms_;
  t.cancel_requested = false;
  t.file_name.reset();
  t.object_key.reset();
  t.content_type.reset();
  t.size_bytes.reset();
  t.total_rows.reset();
  t.processed_rows = 0;
  t.failure_code.reset();
  t.failure_message.reset();
  t.started_at.reset();
  t.completed_at.reset();
  t.expires_at.reset();
  t.updated_at = now_ms_;
  AddOutbox(t);
  return t;
}

Status FakeTaskStore::RecordDownload(int64_t task_id) {
  std::lock_guard lock(mu_);
  EC_RETURN_IF_ERROR(CheckUp());
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return NotFound("task " + std::to_string(task_id) + " does not exist");
  it->second.download_count += 1;
  it->second.last_downloaded_at = now_ms_;
  return Status::Ok();
}

StatusOr<std::vector<store::OutboxEntry>> FakeTaskStore::ListOutboxForTask(int64_t task_id) {
  std::lock_guard lock(mu_);
  EC_RETURN_IF_ERROR(CheckUp());
  std::vector<store::OutboxEntry> out;
  for (const auto& e : outbox_) {
    if (e.task_id == task_id) out.push_back(e);
  }
  return out;
}

// ---- not faked: the worker, publisher and reconciler side -------------------

StatusOr<std::vector<int64_t>> FakeTaskStore::SelectDueOutbox(int) {
  return NotFaked("SelectDueOutbox");
}
StatusOr<std::optional<store::OutboxEntry>> FakeTaskStore::ClaimOutbox(int64_t,
                                                                       const std::string&, int) {
  return NotFaked("ClaimOutbox");
}
StatusOr<bool> FakeTaskStore::MarkOutboxSent(int64_t, const std::string&) {
  return NotFaked("MarkOutboxSent");
}
StatusOr<bool> FakeTaskStore::MarkOutboxFailed(int64_t, const std::string&, const std::string&,
                                               int64_t) {
  return NotFaked("MarkOutboxFailed");
}
StatusOr<store::ClaimResult> FakeTaskStore::ClaimTask(const store::ClaimRequest&) {
  return NotFaked("ClaimTask");
}
StatusOr<store::RenewOutcome> FakeTaskStore::RenewLease(const store::Attempt&, int) {
  return NotFaked("RenewLease");
}
StatusOr<bool> FakeTaskStore::UpdateProgress(const store::Attempt&, int64_t,
                                             std::optional<int64_t>) {
  return NotFaked("UpdateProgress");
}
StatusOr<bool> FakeTaskStore::CommitSuccess(const store::Attempt&, const store::FileResult&, int) {
  return NotFaked("CommitSuccess");
}
StatusOr<bool> FakeTaskStore::FinishAttempt(const store::Attempt&, task::TaskState,
                                            const std::string&, const std::string&) {
  return NotFaked("FinishAttempt");
}
StatusOr<store::RetryOutcome> FakeTaskStore::ScheduleRetry(const store::Attempt&,
                                                           const std::string&, int64_t) {
  return NotFaked("ScheduleRetry");
}
StatusOr<int> FakeTaskStore::RedispatchMissingOutbox(int, int) {
  return NotFaked("RedispatchMissingOutbox");
}
StatusOr<int> FakeTaskStore::ResendStaleSentOutbox(int, int, int) {
  return NotFaked("ResendStaleSentOutbox");
}
StatusOr<std::vector<store::RecoveredLease>> FakeTaskStore::RecoverExpiredLeases(int) {
  return NotFaked("RecoverExpiredLeases");
}
StatusOr<int> FakeTaskStore::ReleaseStaleClaimedOutbox(int) {
  return NotFaked("ReleaseStaleClaimedOutbox");
}
StatusOr<std::vector<store::ExpiredArtifact>> FakeTaskStore::ListExpiredArtifacts(int) {
  return NotFaked("ListExpiredArtifacts");
}
StatusOr<bool> FakeTaskStore::MarkExpired(int64_t) { return NotFaked("MarkExpired"); }
StatusOr<int> FakeTaskStore::PurgeSentOutbox(int, int) { return NotFaked("PurgeSentOutbox"); }
StatusOr<std::string> FakeTaskStore::PinContractVersion(const store::Attempt&,
                                                        const std::string&) {
  return NotFaked("PinContractVersion");
}

Status FakeTaskStore::QuarantineCommand(int64_t, int32_t, const std::string&,
                                        const std::string&) {
  return NotFaked("QuarantineCommand");
}
StatusOr<store::TaskStore::Gauges> FakeTaskStore::ReadGauges() { return NotFaked("ReadGauges"); }

}  // namespace export_center::fakes
