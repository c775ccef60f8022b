// SqlStoreCore: what every role class of the SQL store shares (ids, the
// notification routes, the command row, the end-of-task notification rows),
// and the effects TaskTransitions asks of it. The timeline is task_events.cc.

#include "store/sql/sql_store_core.h"

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/time_format.h"
#include "store/id_node.h"
#include "store/sql_notification_outbox.h"
#include "store/sql_subscription_ledger.h"
#include "task/command.h"

namespace export_center::store::sql {
namespace {

// Informational only (the command's occurredAt): never compared.
std::string NowIso8601() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  return FormatIsoMillis(ms);
}

}  // namespace

SqlStoreCore::SqlStoreCore(std::shared_ptr<Database> db)
    : db_(std::move(db)),
      d_(db_->dialect()),
      outbox_(db_, CommandOutboxTable()),
      notifications_(NewSqlNotificationOutbox(db_)),
      subscriptions_(NewSqlSubscriptionLedger(db_)),
      transitions_(d_, *this) {}

void SqlStoreCore::SetNotificationRoutes(std::vector<NotificationRoute> routes) {
  auto snapshot = std::make_shared<const std::vector<NotificationRoute>>(std::move(routes));
  MutexLock lock(&routes_mu_);
  routes_ = std::move(snapshot);
}

std::shared_ptr<const std::vector<NotificationRoute>> SqlStoreCore::Routes() const {
  MutexLock lock(&routes_mu_);
  return routes_;
}

// Called by transitions_ inside the transaction that moved the task to an end state.
Status SqlStoreCore::NotifyEnded(Connection& c, int64_t task_id) {
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

StatusOr<std::optional<Task>> SqlStoreCore::ReadTask(Connection& c, int64_t task_id,
                                                     bool for_update) {
  std::string sql = std::string("SELECT ") + kTaskColumns + " FROM export_task WHERE id = ?";
  if (for_update) sql += "{FOR_UPDATE}";
  EC_ASSIGN_OR_RETURN(Rows rows, c.Query(Sql(sql), {task_id}));
  if (rows.empty()) return std::optional<Task>();
  EC_ASSIGN_OR_RETURN(Task t, TaskFromRow(rows[0]));
  return std::optional<Task>(std::move(t));
}

StatusOr<Task> SqlStoreCore::ReadExistingTask(Connection& c, int64_t task_id) {
  EC_ASSIGN_OR_RETURN(std::optional<Task> t, ReadTask(c, task_id, false));
  if (!t) return NotFound("export task " + std::to_string(task_id) + " does not exist");
  return std::move(*t);
}

StatusOr<int64_t> SqlStoreCore::InsertCommand(Connection& c, int64_t task_id, int32_t version,
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

Status SqlStoreCore::InsertCommandOrFail(Connection& c, const Task& t,
                                         const std::string& trace_id) {
  EC_ASSIGN_OR_RETURN(int64_t n,
                      InsertCommand(c, t.id, t.dispatch_version, t.export_type, trace_id));
  if (n != 1) {
    return Internal("outbox row for task " + std::to_string(t.id) + " version " +
                    std::to_string(t.dispatch_version) + " already exists");
  }
  return Status::Ok();
}

// A counter, not random bits: two stores on one database get different nodes
// until 1024 more stores have started, so their ids cannot collide.
Status SqlStoreCore::EnsureIdNode() {
  if (ids_.load(std::memory_order_acquire) != nullptr) return Status::Ok();
  MutexLock lock(&ids_mu_);
  if (ids_owner_ != nullptr) return Status::Ok();
  EC_ASSIGN_OR_RETURN(int node, ClaimIdNode(*db_));
  ids_owner_ = std::make_unique<IdGenerator>(node);
  ids_.store(ids_owner_.get(), std::memory_order_release);
  return Status::Ok();
}

}  // namespace export_center::store::sql
