// SqlTaskMaintenance (the reconciler's duties) and SqlCommandQuarantine (the
// DLQ handler's), sql_roles.h: the roles of task_maintenance.h.

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "store/sql/sql_roles.h"

namespace export_center::store::sql {

// ---- reconciler ---------------------------------------------------------------

StatusOr<int> SqlTaskMaintenance::RedispatchMissingOutbox(int grace_seconds, int limit) {
  EC_RETURN_IF_ERROR(EnsureIdNode());
  int inserted = 0;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    inserted = 0;
    const Statement missing = MissingOutboxStatement(grace_seconds, limit);
    EC_ASSIGN_OR_RETURN(Rows rows, c.Query(Sql(missing.sql), missing.params));
    for (const Row& r : rows) {
      // Same version, new event id; the unique key makes a concurrent
      // reconciler's insert a no-op.
      const auto version = static_cast<int32_t>(r.Int(1));
      EC_ASSIGN_OR_RETURN(int64_t n, core_.InsertCommand(c, r.Int(0), version, r.Text(2), ""));
      if (n == 1) {
        EC_RETURN_IF_ERROR(RecordEvent(c, r.Int(0), version, TaskEventKind::kCommandResent,
                                       {{"cause", "OUTBOX_MISSING"}}));
      }
      inserted += static_cast<int>(n);
    }
    return Status::Ok();
  }));
  return inserted;
}

Status SqlTaskMaintenance::RequeueOutboxRows(Connection& c, const Rows& picked,
                                             std::string_view from, std::string_view set,
                                             const char* cause, int* requeued) {
  for (const Row& r : picked) {
    EC_ASSIGN_OR_RETURN(
        int64_t n, c.Exec(Sql("UPDATE export_outbox SET status = 'PENDING', " + std::string(set) +
                              ", lease_owner = NULL, lease_until = NULL,"
                              " updated_at = {NOW} WHERE id = ? AND " +
                              std::string(from)),
                          {r.Int(0)}));
    if (n != 1) continue;  // another reconciler or the publisher got there first
    ++*requeued;
    EC_RETURN_IF_ERROR(RecordEvent(c, r.Int(1), static_cast<int32_t>(r.Int(2)),
                                   TaskEventKind::kCommandResent, {{"cause", cause}}));
  }
  return Status::Ok();
}

StatusOr<int> SqlTaskMaintenance::ResendStaleSentOutbox(int sent_stale_seconds, int grace_seconds,
                                                        int limit) {
  EC_RETURN_IF_ERROR(EnsureIdNode());  // ids of the timeline's events
  // Same row, same version (docs/dispatch.md#re-sending-keeps-the-version): a
  // re-send never changes the version, so a command that merely waited in a long
  // queue is not starved. It was delivered once, so it is due afresh from now.
  int requeued = 0;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    requeued = 0;
    EC_ASSIGN_OR_RETURN(
        Rows picked,
        c.Query(Sql("SELECT o.id, o.task_id, o.dispatch_version FROM export_outbox o"
                    " JOIN export_task t"
                    " ON t.id = o.task_id AND t.dispatch_version = o.dispatch_version"
                    " WHERE o.status = 'SENT' AND o.sent_at <= {NOW} - ?"
                    " AND t.status = 'PENDING' AND t.next_retry_at <= {NOW} - ?"
                    " ORDER BY o.id LIMIT ?"),
                {int64_t{sent_stale_seconds} * 1000, int64_t{grace_seconds} * 1000, limit}));
    return RequeueOutboxRows(c, picked, "status = 'SENT'",
                             "next_retry_at = {NOW}, due_since = {NOW}", "SENT_STALE", &requeued);
  }));
  return requeued;
}

Status SqlTaskMaintenance::RecoverOne(Connection& c, const Row& row,
                                      std::vector<RecoveredLease>* out) {
  RecoveredLease rec;
  rec.task_id = row.Int(0);
  rec.old_version = static_cast<int32_t>(row.Int(1));
  rec.outcome = row.Int(6) != 0            ? LeaseRecovery::kCancelled
                : row.Int(2) >= row.Int(3) ? LeaseRecovery::kFailed
                                           : LeaseRecovery::kRequeued;
  rec.object_key = row.OptText(4);
  rec.export_type = row.Text(5);
  const std::optional<std::string> owner = row.OptText(7);
  TransitionChange recover;
  recover.task_id = rec.task_id;
  recover.from = {TaskState::kRunning};
  recover.version = rec.old_version;
  recover.where = "AND lease_until <= {NOW}";
  recover.event = TaskEventKind::kLeaseRecovered;
  recover.details = {{"instance", owner.value_or("")},
                     {"outcome", rec.outcome == LeaseRecovery::kRequeued ? "REQUEUED"
                                 : rec.outcome == LeaseRecovery::kFailed ? "FAILED"
                                                                         : "CANCELLED"}};
  if (rec.outcome == LeaseRecovery::kRequeued) {
    // The execution really failed, so this is a new attempt: version+1, and
    // the old worker can no longer commit if it comes back
    // (docs/task-lifecycle.md#lease-recovery).
    recover.to = TaskState::kPending;
    recover.set =
        "next_retry_at = {NOW}, lease_owner = NULL, lease_until = NULL,"
        " execution_deadline_at = NULL, processed_rows = 0, total_rows = NULL,"
        " object_key = NULL, failure_message = ?, failure_detail = NULL";
    recover.set_params = {"the export worker stopped responding; retrying"};
  } else {
    // kCancelled: the user asked to stop; a dead worker is no reason to run it again.
    const bool cancelled = rec.outcome == LeaseRecovery::kCancelled;
    recover.to = cancelled ? TaskState::kCancelled : TaskState::kFailed;
    recover.set =
        "failure_code = ?, failure_message = ?, failure_detail = NULL, completed_at = {NOW},"
        " lease_owner = NULL, lease_until = NULL, object_key = NULL";
    recover.set_params = {
        cancelled ? kCodeCancelled : kCodeLeaseLost,
        cancelled ? kCancelledMessage
                  : "the export worker stopped responding and the maximum number of attempts "
                    "was reached"};
  }
  EC_ASSIGN_OR_RETURN(std::optional<Task> recovered, transitions_.Apply(c, recover));
  if (recovered) out->push_back(std::move(rec));
  return Status::Ok();
}

StatusOr<std::vector<RecoveredLease>> SqlTaskMaintenance::RecoverExpiredLeases(int limit) {
  EC_RETURN_IF_ERROR(EnsureIdNode());
  std::vector<RecoveredLease> out;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    out.clear();
    const Statement expired = ExpiredLeasesStatement(limit);
    EC_ASSIGN_OR_RETURN(Rows rows, c.Query(Sql(expired.sql), expired.params));
    for (const Row& r : rows) EC_RETURN_IF_ERROR(RecoverOne(c, r, &out));
    return Status::Ok();
  }));
  return out;
}

StatusOr<int> SqlTaskMaintenance::ReleaseStaleClaimedOutbox(int limit) {
  EC_RETURN_IF_ERROR(EnsureIdNode());  // ids of the timeline's events
  // Delivery-side recovery only: the task's version is untouched.
  int released = 0;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    released = 0;
    EC_ASSIGN_OR_RETURN(Rows picked,
                        c.Query(Sql("SELECT id, task_id, dispatch_version FROM export_outbox"
                                    " WHERE status = 'CLAIMED' AND lease_until <= {NOW}"
                                    " ORDER BY id LIMIT ?"),
                                {limit}));
    return RequeueOutboxRows(c, picked, "status = 'CLAIMED' AND lease_until <= {NOW}",
                             "next_retry_at = {NOW}", "CLAIM_EXPIRED", &released);
  }));
  return released;
}

StatusOr<std::vector<ExpiredArtifact>> SqlTaskMaintenance::ListExpiredArtifacts(int limit) {
  const Statement due = ExpiredArtifactsStatement(limit);
  EC_ASSIGN_OR_RETURN(Rows rows, db_->Query(Sql(due.sql), due.params));
  std::vector<ExpiredArtifact> out;
  for (const Row& r : rows) out.push_back({r.Int(0), r.Text(1)});
  return out;
}

StatusOr<ExpireOutcome> SqlTaskMaintenance::MarkExpired(int64_t task_id) {
  EC_RETURN_IF_ERROR(EnsureIdNode());
  bool expired = false;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    TransitionChange expire;
    expire.task_id = task_id;
    expire.from = {TaskState::kSucceeded};
    expire.to = TaskState::kExpired;
    expire.where = "AND expires_at <= {NOW}";
    expire.event = TaskEventKind::kExpired;
    EC_ASSIGN_OR_RETURN(std::optional<Task> gone, transitions_.Apply(c, expire));
    expired = gone.has_value();
    return Status::Ok();
  }));
  return expired ? ExpireOutcome::kExpired : ExpireOutcome::kNotDue;
}

StatusOr<int> SqlTaskMaintenance::PurgeSentOutbox(int older_than_seconds, int limit) {
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

StatusOr<int> SqlTaskMaintenance::DeleteOldHistory(int older_than_days, int limit) {
  int deleted = 0;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    deleted = 0;
    const Statement old = OldHistoryStatement(older_than_days, limit);
    EC_ASSIGN_OR_RETURN(Rows picked, c.Query(Sql(old.sql), old.params));
    if (picked.empty()) return Status::Ok();
    std::string marks;
    SqlParams ids;
    for (const Row& r : picked) {
      marks += marks.empty() ? "?" : ", ?";
      ids.emplace_back(r.Int(0));
    }
    // The task row last and still conditional on its state: a row that
    // changed since it was picked (a manual retry) stays, with its timeline.
    EC_RETURN_IF_ERROR(
        c.Exec("DELETE FROM export_task_event WHERE task_id IN (" + marks + ")", ids).status());
    EC_RETURN_IF_ERROR(
        c.Exec("DELETE FROM export_download_audit WHERE task_id IN (" + marks + ")", ids).status());
    SqlParams conditional = ids;
    conditional.emplace_back(int64_t{older_than_days} * 24 * 3600 * 1000);
    EC_ASSIGN_OR_RETURN(int64_t n,
                        c.Exec(Sql("DELETE FROM export_task WHERE id IN (" + marks +
                                   ") AND updated_at < {NOW} - ? AND status IN"
                                   " ('FAILED', 'CANCELLED', 'EXPIRED', 'STALE', 'INCONSISTENT')"),
                               conditional));
    deleted = static_cast<int>(n);
    return Status::Ok();
  }));
  return deleted;
}

// ---- dead letters -------------------------------------------------------------

Status SqlCommandQuarantine::QuarantineCommand(int64_t task_id, int32_t dispatch_version,
                                               const std::string& event_id,
                                               const std::string& reason) {
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
    TransitionChange fail;
    fail.task_id = task_id;
    fail.from = {TaskState::kPending};
    fail.to = TaskState::kFailed;
    fail.version = dispatch_version;
    fail.set =
        "failure_code = ?, failure_message = ?, failure_detail = NULL, completed_at = {NOW},"
        " lease_owner = NULL, lease_until = NULL";
    fail.set_params = {kCodeQuarantined,
                       "the export command message was corrupt; please start the export again"};
    fail.event = TaskEventKind::kQuarantined;
    fail.details = {{"eventId", event_id}, {"reason", ShortText(reason)}};
    EC_ASSIGN_OR_RETURN(std::optional<Task> failed, transitions_.Apply(c, fail));
    if (!failed) {
      return Conflict("task of " + what +
                      " is no longer PENDING at that version; nothing quarantined");
    }
    return Status::Ok();
  });
}

}  // namespace export_center::store::sql
