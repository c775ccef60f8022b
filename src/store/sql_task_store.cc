// SqlTaskStore: the helpers every role's file shares (ids, the command row,
// end-of-task notifications), the StoreAdmin role (schema, routes, gauges)
// and the factory. The roles live in sql_task_catalog.cc,
// sql_command_outbox.cc, sql_attempt_ledger.cc and sql_task_maintenance.cc.

#include "store/sql_task_store.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/time_format.h"
#include "store/id_node.h"
#include "store/migrations.h"
#include "store/sql_notification_outbox.h"
#include "store/sql_task_store_impl.h"
#include "task/command.h"

namespace export_center::store {
namespace sql {
namespace {

// Informational only (the command's occurredAt): never compared.
std::string NowIso8601() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  return FormatIsoMillis(ms);
}

}  // namespace

// ---- helpers ----------------------------------------------------------------

Status SqlTaskStore::EndAttempt(Connection& c, const Attempt& a, TaskState to_state,
                                const std::string& code, const FailureText& failure) {
  EC_ASSIGN_OR_RETURN(
      int64_t n,
      c.Exec(Sql("UPDATE export_task SET status = ?, failure_code = ?, failure_message = ?,"
                 " failure_detail = ?, completed_at = {NOW}, lease_owner = NULL,"
                 " lease_until = NULL, object_key = NULL, updated_at = {NOW}"
                 " WHERE id = ? AND status = 'RUNNING' AND dispatch_version = ?"
                 " AND lease_owner = ?"),
             {task::ToString(to_state), code, Truncate(failure.message), DetailText(failure),
              a.task_id, a.dispatch_version, a.instance}));
  if (n != 1) return Status::Ok();
  EC_RETURN_IF_ERROR(RecordFinished(c, a.task_id));
  return NotifyEnded(c, a.task_id);
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
  // No attempt follows an end state (a manual retry of an encrypted task is
  // refused): the wrapped file key goes in the transaction that ended it
  // (docs/configuration.md#password-protected-files-file-password).
  EC_RETURN_IF_ERROR(c.Exec("UPDATE export_task SET file_key_id = NULL, file_key_wrapped = NULL"
                            " WHERE id = ? AND file_key_wrapped IS NOT NULL",
                            {task_id})
                         .status());
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
  MutexLock lock(&ids_mu_);
  if (ids_owner_ != nullptr) return Status::Ok();
  EC_ASSIGN_OR_RETURN(int node, ClaimIdNode(*db_));
  ids_owner_ = std::make_unique<IdGenerator>(node);
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
  EC_ASSIGN_OR_RETURN(std::string incompatible, SchemaIncompatibility(*db_));
  return SchemaVersions{current, LatestSchemaVersion(), std::move(incompatible)};
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

}  // namespace sql

std::unique_ptr<TaskStore> NewSqlTaskStore(std::shared_ptr<Database> db) {
  return std::make_unique<sql::SqlTaskStore>(std::move(db));
}

}  // namespace export_center::store
