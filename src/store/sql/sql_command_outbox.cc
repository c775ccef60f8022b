// SqlCommandOutbox (sql_roles.h), the CommandOutbox role (command_outbox.h): export_outbox as a
// leased queue (leased_queue.h).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/sql/sql_roles.h"

namespace export_center::store::sql {

LeasedQueueTable CommandOutboxTable() {
  // Fair order (docs/dispatch.md#tenant-fairness): user_round numbers each
  // user's due rows oldest first; tenant_round numbers a tenant's rows by
  // user_round, so the tenant's users take turns; sorting by tenant_round
  // makes the tenants take turns. A tenant with a huge backlog therefore
  // holds at most one row of each round, and every tenant with a due row
  // gets its first one into any batch that has room for one per tenant.
  // Only the order changes: every due row is still selected in time. Window
  // functions: SQLite 3.25, PostgreSQL, MySQL 8, MariaDB 10.2. The LEFT JOIN
  // keeps a row whose task is gone (it is still sent; the consumer acks it).
  static constexpr char kSelectDue[] =
      "SELECT id FROM ("
      " SELECT id, next_retry_at, ROW_NUMBER() OVER (PARTITION BY tenant_id"
      " ORDER BY user_round, next_retry_at, id) AS tenant_round FROM ("
      " SELECT o.id, o.next_retry_at, COALESCE(t.tenant_id, '') AS tenant_id,"
      " ROW_NUMBER() OVER (PARTITION BY COALESCE(t.tenant_id, ''),"
      " COALESCE(t.requested_by, '') ORDER BY o.next_retry_at, o.id) AS user_round"
      " FROM export_outbox o LEFT JOIN export_task t ON t.id = o.task_id"
      " WHERE o.status = 'PENDING' AND o.next_retry_at <= {NOW}) by_user) by_tenant"
      " ORDER BY tenant_round, next_retry_at, id LIMIT ?";
  // Only PENDING rows: a CLAIMED row whose lease ran out is released by the
  // reconciler (ReleaseStaleClaimedOutbox), never claimed over.
  return {"export_outbox", kOutboxColumns, "status = 'PENDING' AND next_retry_at <= {NOW}",
          kSelectDue};
}

StatusOr<std::vector<int64_t>> SqlCommandOutbox::SelectDueOutbox(int limit) {
  return outbox_.SelectDue(limit);
}

StatusOr<std::optional<OutboxEntry>> SqlCommandOutbox::ClaimOutbox(int64_t outbox_id,
                                                                   const std::string& instance,
                                                                   int lease_seconds) {
  return outbox_.ClaimAs(&OutboxFromRow, outbox_id, instance, lease_seconds);
}

StatusOr<MarkOutcome> SqlCommandOutbox::MarkOutboxSent(int64_t outbox_id,
                                                       const std::string& instance) {
  EC_RETURN_IF_ERROR(EnsureIdNode());
  // The timeline's COMMAND_SENT, in the mark's transaction: how many sends it
  // took, and why the one before failed (a failed send writes no event of
  // its own, so a broker outage does not fill the timeline).
  return outbox_.Mark(
      outbox_id, instance, "status = 'SENT', sent_at = {NOW}", {}, [&](Connection& c) -> Status {
        EC_ASSIGN_OR_RETURN(Rows rows, c.Query("SELECT o.task_id, o.dispatch_version, o.event_id,"
                                               " o.attempt_count, o.last_error"
                                               " FROM export_outbox o JOIN export_task t"
                                               " ON t.id = o.task_id WHERE o.id = ?",
                                               {outbox_id}));
        if (rows.empty()) return Status::Ok();  // the task is gone
        const Row& r = rows[0];
        nlohmann::json details = {{"eventId", r.Text(2)}, {"sends", r.Int(3)}};
        if (r.Int(3) > 1 && r.OptText(4)) details["lastError"] = ShortText(*r.OptText(4));
        return RecordEvent(c, r.Int(0), static_cast<int32_t>(r.Int(1)), TaskEventKind::kCommandSent,
                           details);
      });
}

StatusOr<MarkOutcome> SqlCommandOutbox::MarkOutboxFailed(int64_t outbox_id,
                                                         const std::string& instance,
                                                         const std::string& error,
                                                         int64_t backoff_ms) {
  return outbox_.Mark(outbox_id, instance,
                      "status = 'PENDING', next_retry_at = {NOW} + ?, last_error = ?",
                      {backoff_ms, Truncate(error)});
}

StatusOr<std::vector<OutboxEntry>> SqlCommandOutbox::ListOutboxForTask(int64_t task_id) {
  return outbox_.ListAs(&OutboxFromRow, "task_id = ?", "dispatch_version, id", {task_id});
}

}  // namespace export_center::store::sql
