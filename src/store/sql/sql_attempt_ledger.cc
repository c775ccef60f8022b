// SqlAttemptLedger (sql_roles.h), the AttemptLedger role (attempt_ledger.h):
// the claim, the lease, progress and every end of a running attempt.

#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "common/time_format.h"
#include "store/sql/sql_roles.h"
#include "store/sql_task_store.h"

namespace export_center::store {
namespace sql {
namespace {

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

}  // namespace

// ---- consumer -----------------------------------------------------------------

StatusOr<ClaimMiss> SqlAttemptLedger::ExplainClaimMiss(Connection& c, const ClaimRequest& r,
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

StatusOr<bool> SqlAttemptLedger::AnotherTenantWaits(Connection& c, const std::string& tenant) {
  EC_ASSIGN_OR_RETURN(
      Rows waiting,
      c.Query(Sql("SELECT 1 FROM export_task WHERE status = 'PENDING' AND tenant_id <> ?"
                  " AND next_retry_at <= {NOW} LIMIT 1"),
              {tenant}));
  return !waiting.empty();
}

StatusOr<bool> SqlAttemptLedger::HandBackIfTenantAtLimit(Connection& c, const ClaimRequest& r) {
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
  // Work-conserving: the limit keeps slots free for the other tenants, so it
  // binds only while one of them has a task waiting (PENDING and due). A
  // tenant alone uses every slot. The probe stops at the first row
  // (idx_export_task_lease leads with status); a task that turns PENDING
  // just after it is seen by the tenant's next claim.
  EC_ASSIGN_OR_RETURN(bool others_wait, AnotherTenantWaits(c, tenant));
  if (!others_wait) return false;
  // The command's row (SENT, or still CLAIMED when the consumer was faster
  // than the publisher's MarkOutboxSent) goes back to PENDING, due after the
  // short back-off, so the publisher sends it again; the task is untouched.
  // attempt_count restarts at 0: it counts failed sends for the send back-off
  // and the send alert, and this send did not fail; for the same reason the
  // row is due afresh (due_since) once the back-off is over.
  EC_ASSIGN_OR_RETURN(
      int64_t n,
      c.Exec(Sql("UPDATE export_outbox SET status = 'PENDING',"
                 " next_retry_at = {NOW} + ?, due_since = {NOW} + ?,"
                 " attempt_count = 0, lease_owner = NULL, lease_until = NULL,"
                 " updated_at = {NOW}"
                 " WHERE task_id = ? AND dispatch_version = ?"
                 " AND status IN ('SENT', 'CLAIMED')"),
             {r.handback_backoff_ms, r.handback_backoff_ms, r.task_id, r.dispatch_version}));
  if (n > 0) {
    EC_RETURN_IF_ERROR(RecordEvent(c, r.task_id, r.dispatch_version, TaskEventKind::kCommandResent,
                                   {{"cause", "TENANT_AT_LIMIT"},
                                    {"instance", r.instance},
                                    {"delayMs", r.handback_backoff_ms}}));
  }
  return true;
}

Status SqlAttemptLedger::EndAttempt(Connection& c, const Attempt& a, TaskState to_state,
                                    const std::string& code, const FailureText& failure) {
  TransitionChange end;
  end.task_id = a.task_id;
  end.from = {TaskState::kRunning};
  end.to = to_state;
  end.version = a.dispatch_version;
  end.set =
      "failure_code = ?, failure_message = ?, failure_detail = ?, completed_at = {NOW},"
      " lease_owner = NULL, lease_until = NULL, object_key = NULL";
  end.set_params = {code, Truncate(failure.message), DetailText(failure)};
  end.where = "AND lease_owner = ?";
  end.where_params = {a.instance};
  return transitions_.Apply(c, end).status();
}

StatusOr<ClaimResult> SqlAttemptLedger::ClaimTask(const ClaimRequest& r) {
  EC_RETURN_IF_ERROR(EnsureIdNode());  // ids of the timeline's events
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
    TransitionChange claim;
    claim.task_id = r.task_id;
    claim.from = {TaskState::kPending};
    claim.to = TaskState::kRunning;
    claim.version = r.dispatch_version;
    claim.set =
        "attempt_count = attempt_count + 1, started_at = {NOW}, lease_owner = ?,"
        " lease_until = {NOW} + ?, last_heartbeat_at = {NOW},"
        " execution_deadline_at = {NOW} + ?, processed_rows = 0, total_rows = NULL,"
        " failure_message = NULL, failure_detail = NULL, failure_code = NULL";
    claim.set_params = {r.instance, int64_t{r.lease_seconds} * 1000,
                        int64_t{r.max_duration_seconds} * 1000};
    claim.where = "AND next_retry_at <= {NOW}";
    claim.event = TaskEventKind::kClaimed;
    claim.details = {{"instance", r.instance}};
    claim.details_after = [](const Task& t, nlohmann::json* details) {
      (*details)["attempt"] = t.attempt_count;
    };
    EC_ASSIGN_OR_RETURN(std::optional<Task> claimed, transitions_.Apply(c, claim));
    if (claimed) {
      result.claimed = true;
      result.task = std::move(*claimed);
      return Status::Ok();
    }
    EC_ASSIGN_OR_RETURN(ClaimMiss miss, ExplainClaimMiss(c, r, &result.task));
    result.miss = miss;
    return Status::Ok();
  }));
  return result;
}

StatusOr<RenewOutcome> SqlAttemptLedger::RenewLease(const Attempt& a, int lease_seconds) {
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

StatusOr<ProgressOutcome> SqlAttemptLedger::UpdateProgress(const Attempt& a, int64_t processed_rows,
                                                           std::optional<int64_t> total_rows) {
  EC_RETURN_IF_ERROR(EnsureIdNode());  // ids of the timeline's events
  ProgressOutcome outcome = ProgressOutcome::kContinue;
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
        Rows rows,
        c.Query("SELECT cancel_requested, total_rows FROM export_task WHERE id = ?", {a.task_id}));
    EC_RETURN_IF_ERROR(core_.RecordProgress(c, a, processed_rows,
                                            rows.empty() ? std::nullopt : rows[0].OptInt(1)));
    const bool cancel = !rows.empty() && rows[0].Int(0) != 0;
    outcome = cancel ? ProgressOutcome::kCancelRequested : ProgressOutcome::kContinue;
    return Status::Ok();
  }));
  return outcome;
}

StatusOr<CommitOutcome> SqlAttemptLedger::CommitSuccess(const Attempt& a, const FileResult& f,
                                                        int retention_days) {
  // The deadline and the cancel flag are part of the final statement
  // (docs/task-lifecycle.md#conditional-commit): a check in C++ could pass and
  // then a cancel or the deadline could arrive before the write.
  EC_RETURN_IF_ERROR(EnsureIdNode());
  bool committed = false;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    TransitionChange commit;
    commit.task_id = a.task_id;
    commit.from = {TaskState::kRunning};
    commit.to = TaskState::kSucceeded;
    commit.version = a.dispatch_version;
    commit.set =
        "file_name = ?, object_key = ?, content_type = ?, size_bytes = ?, total_rows = ?,"
        " processed_rows = ?, file_sha256 = ?, part_rows = ?, completed_at = {NOW},"
        " expires_at = {NOW} + ?, lease_owner = NULL, lease_until = NULL,"
        " failure_message = NULL, failure_detail = NULL, failure_code = NULL";
    commit.set_params = {f.file_name,
                         f.object_key,
                         f.content_type,
                         f.size_bytes,
                         f.total_rows,
                         f.total_rows,
                         f.sha256_hex,
                         PartRowsText(f.part_rows),
                         int64_t{retention_days} * 86'400'000};
    commit.where = "AND lease_owner = ? AND execution_deadline_at > {NOW} AND cancel_requested = 0";
    commit.where_params = {a.instance};
    EC_ASSIGN_OR_RETURN(std::optional<Task> done, transitions_.Apply(c, commit));
    committed = done.has_value();
    return Status::Ok();
  }));
  return committed ? CommitOutcome::kCommitted : CommitOutcome::kNotCommitted;
}

StatusOr<FinishOutcome> SqlAttemptLedger::FinishAttempt(const Attempt& a, TaskState to_state,
                                                        const std::string& failure_code,
                                                        const FailureText& failure) {
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
    return EndAttempt(c, a, to_state, failure_code, failure);
  }));
  return ended ? FinishOutcome::kFinished : FinishOutcome::kLost;
}

StatusOr<std::string> SqlAttemptLedger::PinContractVersion(const Attempt& a,
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

StatusOr<RetryOutcome> SqlAttemptLedger::ScheduleRetry(const Attempt& a, const FailureText& failure,
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
    const std::string msg = Truncate(failure.message);
    const std::optional<std::string> detail = DetailText(failure);
    if (rows[0].Int(3) != 0) {
      // A cancel requested during the attempt wins over a retry
      // (docs/task-lifecycle.md#cancellation): the user asked to stop.
      EC_RETURN_IF_ERROR(
          EndAttempt(c, a, TaskState::kCancelled, kCodeCancelled, kCancelledMessage));
      outcome = RetryOutcome::kCancelled;
      return Status::Ok();
    }
    if (rows[0].Int(0) >= rows[0].Int(1)) {
      EC_RETURN_IF_ERROR(EndAttempt(c, a, TaskState::kFailed, kCodeRetriesExhausted, failure));
      outcome = RetryOutcome::kFailedMaxAttempts;
      return Status::Ok();
    }
    // The message is kept so the download centre can show why it waits.
    TransitionChange retry;
    retry.task_id = a.task_id;
    retry.from = {TaskState::kRunning};
    retry.to = TaskState::kPending;
    retry.version = a.dispatch_version;
    retry.set =
        "next_retry_at = {NOW} + ?, processed_rows = 0, total_rows = NULL, lease_owner = NULL,"
        " lease_until = NULL, execution_deadline_at = NULL, object_key = NULL,"
        " failure_message = ?, failure_detail = ?";
    retry.set_params = {backoff_ms, msg, detail};
    retry.where = "AND lease_owner = ?";
    retry.where_params = {a.instance};
    retry.event = TaskEventKind::kRetryScheduled;
    retry.details = {{"cause", ShortText(msg)}};
    // The operators' text (TaskEvent::kOperatorOnlyDetail), never the user's.
    if (detail) retry.details[kOperatorOnlyDetail] = *detail;
    retry.details_after = [](const Task& next, nlohmann::json* details) {
      (*details)["nextAt"] = FormatIsoMillis(next.next_retry_at);
      (*details)["nextVersion"] = next.dispatch_version;
    };
    EC_ASSIGN_OR_RETURN(std::optional<Task> next, transitions_.Apply(c, retry));
    if (!next) return Unavailable("task changed while scheduling a retry; retry");
    outcome = RetryOutcome::kRescheduled;
    return Status::Ok();
  }));
  return outcome;
}

}  // namespace sql

ClaimMiss ClassifyClaimMiss(const ClaimFacts& f, int32_t command_version) {
  if (!f.found) return ClaimMiss::kTaskMissing;
  if (f.dispatch_version > command_version) return ClaimMiss::kNewerVersion;
  if (f.dispatch_version < command_version) return ClaimMiss::kOlderVersion;
  if (f.status == task::TaskState::kRunning) {
    return f.lease_live ? ClaimMiss::kRunningLeaseLive : ClaimMiss::kRunningLeaseExpired;
  }
  if (f.status == task::TaskState::kPending) {
    return f.in_backoff ? ClaimMiss::kPendingBackoff : ClaimMiss::kLostRace;
  }
  return ClaimMiss::kFinished;
}

}  // namespace export_center::store
