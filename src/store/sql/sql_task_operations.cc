// SqlTaskOperations (sql_roles.h), the TaskOperations role (task_operations.h): the operators'
// console — search, bulk-action audit, per-type figures, queue health, dead
// webhook deliveries. Portable SQL on every backend: the percentiles are
// nearest-rank values read with ORDER BY … LIMIT 1 OFFSET k, so no
// database's own percentile function is needed and nothing but one value
// per percentile leaves the database.

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/utf8.h"
#include "store/sql/sql_roles.h"
#include "store/sql_notification_rows.h"

namespace export_center::store::sql {
namespace {

constexpr size_t kMaxTopFailureCodes = 5;

// " AND …" for the scope, on the export_task columns named with `prefix` ("" or "t.").
void AddScope(const OperatorScope& scope, const std::string& prefix, std::string* where,
              SqlParams* params) {
  if (!scope.tenant_id) return;
  *where += " AND " + prefix + "tenant_id = ?";
  params->emplace_back(*scope.tenant_id);
  if (scope.app_code) {
    *where += " AND " + prefix + "app_code = ?";
    params->emplace_back(task::ToString(*scope.app_code));
  }
}

constexpr char kBulkColumns[] =
    "id, actor, actor_tenant, scope_tenant, action, filter_json, matched, succeeded, skipped,"
    " failed, outcome, first_error, started_at, finished_at, scope_app";

BulkActionRecord BulkFromRow(const Row& r) {
  BulkActionRecord b;
  b.id = r.Int(0);
  b.actor = r.Text(1);
  b.actor_tenant = r.Text(2);
  b.scope_tenant = r.OptText(3);
  b.action = r.Text(4);
  b.filter_json = r.Text(5);
  b.matched = r.Int(6);
  b.succeeded = r.Int(7);
  b.skipped = r.Int(8);
  b.failed = r.Int(9);
  b.outcome = r.Text(10);
  b.first_error = r.OptText(11);
  b.started_at = r.Int(12);
  b.finished_at = r.OptInt(13);
  if (auto app = r.OptText(14)) b.scope_app = task::ParseAppCode(*app);
  return b;
}

// The 0-based offset of the nearest-rank `percent` percentile of n values.
int64_t NearestRankOffset(int64_t n, int percent) {
  const int64_t rank = (n * percent + 99) / 100;  // ceil(n * p / 100)
  return std::max<int64_t>(rank, 1) - 1;
}

constexpr char kWaitExpr[] = "started_at - requested_at";
constexpr char kWaitCondition[] = "started_at IS NOT NULL";
constexpr char kDurationExpr[] = "completed_at - started_at";
constexpr char kDurationCondition[] = "started_at IS NOT NULL AND completed_at IS NOT NULL";

// The type's wait and run p50 and p95 in one statement: `waited` tasks
// started, `ran` tasks ended, of the window.
Status ReadPercentiles(Connection& c, const OperatorScope& scope, int64_t since_ms, int64_t waited,
                       int64_t ran, TypeStats* s) {
  std::vector<PercentileQuery> parts;
  std::vector<std::optional<int64_t>*> into;
  auto ask = [&](const char* expression, const char* condition, int64_t n, int percent,
                 std::optional<int64_t>* value) {
    if (n <= 0) return;
    parts.push_back({expression, condition, NearestRankOffset(n, percent)});
    into.push_back(value);
  };
  ask(kWaitExpr, kWaitCondition, waited, 50, &s->wait_p50_ms);
  ask(kWaitExpr, kWaitCondition, waited, 95, &s->wait_p95_ms);
  ask(kDurationExpr, kDurationCondition, ran, 50, &s->duration_p50_ms);
  ask(kDurationExpr, kDurationCondition, ran, 95, &s->duration_p95_ms);
  if (parts.empty()) return Status::Ok();
  const Statement q = PercentilesStatement(scope, since_ms, s->export_type, parts);
  EC_ASSIGN_OR_RETURN(Rows rows, c.Query(q.sql, q.params));
  for (const Row& r : rows) {
    const int64_t k = r.Int(0);
    if (k >= 0 && k < static_cast<int64_t>(into.size())) *into[k] = r.OptInt(1);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<TaskCatalog::ListPage> SqlTaskOperations::SearchTasks(
    const OperatorFilter& filter, int page, int size, const std::optional<PageKey>& after) {
  const PageStatements statements = OperatorSearchStatements(filter, page, size, after);
  TaskCatalog::ListPage out;
  EC_RETURN_IF_ERROR(Read([&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(out, ReadNewestTasks(c, d_, statements, size));
    return Status::Ok();
  }));
  return out;
}

StatusOr<int64_t> SqlTaskOperations::CountTasks(const OperatorFilter& filter) {
  const Statement count = OperatorCountStatement(filter);
  EC_ASSIGN_OR_RETURN(Rows rows, db_->Query(count.sql, count.params));
  return rows.at(0).Int(0);
}

StatusOr<std::vector<int64_t>> SqlTaskOperations::ListTaskIds(const OperatorFilter& filter,
                                                              int64_t after_id, int limit) {
  const Statement ids_sql = OperatorIdsStatement(filter, after_id, limit);
  EC_ASSIGN_OR_RETURN(Rows rows, db_->Query(ids_sql.sql, ids_sql.params));
  std::vector<int64_t> ids;
  ids.reserve(rows.size());
  for (const Row& r : rows) ids.push_back(r.Int(0));
  return ids;
}

StatusOr<TaskDispatch> SqlTaskOperations::ReadTaskDispatch(int64_t task_id) {
  TaskDispatch out;
  EC_ASSIGN_OR_RETURN(out.commands,
                      core_.command_queue().ListAs(&OutboxFromRow, "task_id = ?",
                                                   "dispatch_version, id", {task_id}));
  EC_ASSIGN_OR_RETURN(out.notifications, core_.notifications().ListNotificationsForTask(task_id));
  return out;
}

// ---- bulk-action audit ------------------------------------------------------------

StatusOr<int64_t> SqlTaskOperations::BeginBulkAction(const BulkActionRecord& b) {
  EC_RETURN_IF_ERROR(EnsureIdNode());
  const int64_t id = NewId();
  EC_RETURN_IF_ERROR(
      db_->Exec(Sql("INSERT INTO export_bulk_action (id, actor, actor_tenant, scope_tenant,"
                    " scope_app, action, filter_json, matched, succeeded, skipped, failed,"
                    " outcome, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 'RUNNING',"
                    " {NOW})"),
                {id, std::string(utf8::TruncateBytes(b.actor, 128)),
                 std::string(utf8::TruncateBytes(b.actor_tenant, 64)), b.scope_tenant,
                 b.scope_app ? std::optional<std::string>(task::ToString(*b.scope_app))
                             : std::optional<std::string>(),
                 b.action, b.filter_json, b.matched})
          .status());
  return id;
}

Status SqlTaskOperations::FinishBulkAction(const BulkActionRecord& b) {
  std::optional<std::string> error;
  if (b.first_error) error = Truncate(*b.first_error);
  EC_ASSIGN_OR_RETURN(
      int64_t n,
      db_->Exec(Sql("UPDATE export_bulk_action SET succeeded = ?, skipped = ?, failed = ?,"
                    " outcome = ?, first_error = ?, finished_at = {NOW} WHERE id = ?"),
                {b.succeeded, b.skipped, b.failed, b.outcome, error, b.id}));
  if (n != 1) return NotFound("bulk action " + std::to_string(b.id) + " does not exist");
  return Status::Ok();
}

StatusOr<std::vector<BulkActionRecord>> SqlTaskOperations::ListBulkActions(
    const OperatorScope& scope, int limit) {
  std::string where = " WHERE 1 = 1";
  SqlParams params;
  if (scope.tenant_id) {
    where += " AND scope_tenant = ?";
    params.emplace_back(*scope.tenant_id);
    // A NULL scope_app never equals: rows over every app, or older than the
    // column, stay with the operators who see every app.
    if (scope.app_code) {
      where += " AND scope_app = ?";
      params.emplace_back(task::ToString(*scope.app_code));
    }
  }
  params.emplace_back(int64_t{std::clamp(limit, 1, 100)});
  EC_ASSIGN_OR_RETURN(
      Rows rows, db_->Query(std::string("SELECT ") + kBulkColumns + " FROM export_bulk_action" +
                                where + " ORDER BY started_at DESC, id DESC LIMIT ?",
                            params));
  std::vector<BulkActionRecord> out;
  for (const Row& r : rows) out.push_back(BulkFromRow(r));
  return out;
}

// ---- figures ------------------------------------------------------------------------

StatusOr<std::vector<TypeStats>> SqlTaskOperations::ReadTypeStats(const OperatorScope& scope,
                                                                  int64_t window_ms) {
  std::vector<TypeStats> out;
  EC_RETURN_IF_ERROR(Read([&](Connection& c) -> Status {
    out.clear();
    // One instant for every statement, so the counts and the offsets agree.
    EC_ASSIGN_OR_RETURN(Rows now, c.Query(Sql("SELECT {NOW}")));
    const int64_t since = now.at(0).Int(0) - window_ms;
    const Statement per_type = TypeStatsStatement(scope, since);
    EC_ASSIGN_OR_RETURN(Rows types, c.Query(per_type.sql, per_type.params));
    std::map<std::string, size_t> index;
    for (const Row& r : types) {
      TypeStats s;
      s.export_type = r.Text(0);
      s.count = r.Int(1);
      s.ended = r.Int(2);
      s.succeeded = r.Int(3);
      s.bytes = r.Int(4);
      const int64_t rows = r.Int(5), timed_ms = r.Int(6);
      if (timed_ms > 0) s.rows_per_second = static_cast<double>(rows) * 1000.0 / timed_ms;
      EC_RETURN_IF_ERROR(ReadPercentiles(c, scope, since, r.Int(7), r.Int(8), &s));
      index[s.export_type] = out.size();
      out.push_back(std::move(s));
    }
    const Statement failures = FailureCodesStatement(scope, since);
    EC_ASSIGN_OR_RETURN(Rows codes, c.Query(failures.sql, failures.params));
    for (const Row& r : codes) {
      auto it = index.find(r.Text(0));
      if (it == index.end()) continue;
      auto& top = out[it->second].top_failure_codes;
      if (top.size() < kMaxTopFailureCodes) top.push_back({r.Text(1), r.Int(2)});
    }
    return Status::Ok();
  }));
  return out;
}

StatusOr<QueueHealth> SqlTaskOperations::ReadQueueHealth(const OperatorScope& scope) {
  QueueHealth h;
  std::string task_scope;
  SqlParams scope_params;
  AddScope(scope, "t.", &task_scope, &scope_params);
  // A tenant's operator sees the rows of the tenant's tasks; the platform's
  // see every row, also one whose task is gone (LEFT JOIN).
  const std::string join = scope.tenant_id ? " JOIN export_task t ON t.id = o.task_id"
                                           : " LEFT JOIN export_task t ON t.id = o.task_id";
  EC_RETURN_IF_ERROR(Read([&](Connection& c) -> Status {
    h = QueueHealth();
    // Due as the publisher selects them; aged from due_since as the gauge is
    // (docs/observability.md#metrics).
    EC_ASSIGN_OR_RETURN(
        Rows due,
        c.Query(Sql("SELECT COUNT(*), {NOW} - MIN(COALESCE(o.due_since,"
                    " o.next_retry_at)) FROM export_outbox o" +
                    join + " WHERE o.status = 'PENDING' AND o.next_retry_at <= {NOW}" + task_scope),
                scope_params));
    h.due_commands = due.at(0).Int(0);
    if (h.due_commands > 0) h.oldest_due_age_ms = std::max<int64_t>(0, due.at(0).Int(1));
    EC_ASSIGN_OR_RETURN(
        Rows running,
        c.Query("SELECT COALESCE(t.lease_owner, ''), COUNT(*) FROM export_task t"
                " WHERE t.status = 'RUNNING'" +
                    task_scope + " GROUP BY t.lease_owner ORDER BY COUNT(*) DESC, 1 LIMIT 1000",
                scope_params));
    for (const Row& r : running) h.running_per_instance.push_back({r.Text(0), r.Int(1)});
    EC_ASSIGN_OR_RETURN(Rows dead, c.Query("SELECT COUNT(*) FROM export_notification o" + join +
                                               " WHERE o.status = 'DEAD'" + task_scope,
                                           scope_params));
    h.dead_notifications = dead.at(0).Int(0);
    return Status::Ok();
  }));
  return h;
}

// ---- dead webhook deliveries --------------------------------------------------------

StatusOr<std::vector<NotificationEntry>> SqlTaskOperations::ListDeadNotifications(
    const OperatorScope& scope, int limit) {
  std::string where = " WHERE o.status = 'DEAD'";
  SqlParams params;
  AddScope(scope, "t.", &where, &params);
  params.emplace_back(int64_t{std::clamp(limit, 1, 100)});
  const std::string join = scope.tenant_id ? " JOIN export_task t ON t.id = o.task_id"
                                           : " LEFT JOIN export_task t ON t.id = o.task_id";
  EC_ASSIGN_OR_RETURN(
      Rows rows, db_->Query("SELECT " + NotificationColumns("o.") + " FROM export_notification o" +
                                join + where + " ORDER BY o.updated_at DESC, o.id DESC LIMIT ?",
                            params));
  std::vector<NotificationEntry> out;
  for (const Row& r : rows) {
    EC_ASSIGN_OR_RETURN(NotificationEntry e, NotificationFromRow(r));
    out.push_back(std::move(e));
  }
  return out;
}

Status SqlTaskOperations::RedeliverNotification(const OperatorScope& scope, int64_t id) {
  const std::string missing = "notification " + std::to_string(id) + " not found";
  return Write([&](Connection& c) -> Status {
    // The row alone is locked (PostgreSQL refuses FOR UPDATE across an outer
    // join); its task is read after it, for the scope.
    EC_ASSIGN_OR_RETURN(Rows found, c.Query(Sql("SELECT status, task_id FROM export_notification"
                                                " WHERE id = ?{FOR_UPDATE}"),
                                            {id}));
    if (found.empty()) return NotFound(missing);
    if (scope.tenant_id) {
      std::string where = " WHERE t.id = ?";
      SqlParams params = {found[0].Int(1)};
      AddScope(scope, "t.", &where, &params);
      EC_ASSIGN_OR_RETURN(Rows task, c.Query("SELECT t.id FROM export_task t" + where, params));
      if (task.empty()) return NotFound(missing);  // another tenant's looks like none
    }
    if (found[0].Text(0) != "DEAD") {
      return Conflict("notification " + std::to_string(id) + " is " + found[0].Text(0) +
                      "; only a DEAD delivery can be re-delivered");
    }
    EC_ASSIGN_OR_RETURN(int64_t n, RequeueDeadNotification(c, d_, id));
    if (n != 1) return Unavailable("notification changed while re-delivering; retry");
    return Status::Ok();
  });
}

}  // namespace export_center::store::sql
