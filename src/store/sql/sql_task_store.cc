// SqlTaskStore's StoreAdmin role (schema, guard row, notification routes,
// gauges) and the factory NewSqlTaskStore: one class per role over one
// SqlStoreCore (sql_roles.h).

#include "store/sql_task_store.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "store/migrations.h"
#include "store/sql/sql_roles.h"

namespace export_center::store {
namespace sql {

// ---- schema -----------------------------------------------------------------

Status SqlStoreAdmin::Migrate() { return store::Migrate(*db_); }

void SqlStoreAdmin::SetNotificationRoutes(std::vector<NotificationRoute> routes) {
  core_.SetNotificationRoutes(std::move(routes));
}

Status SqlStoreAdmin::CheckGuardRow() {
  auto rows = db_->Query("SELECT COUNT(*) FROM export_task_guard WHERE name = 'GLOBAL_CREATE'");
  if (!rows.ok() || rows->at(0).Int(0) != 1) {
    std::string why = rows.ok() ? "row is missing" : rows.status().ToString();
    return Internal("guard row GLOBAL_CREATE of export_task_guard: " + why +
                    "; run `export-center migrate`");
  }
  return Status::Ok();
}

StatusOr<SchemaVersions> SqlStoreAdmin::ReadSchemaVersions() {
  EC_ASSIGN_OR_RETURN(int current, CurrentSchemaVersion(*db_));
  EC_ASSIGN_OR_RETURN(std::string incompatible, SchemaIncompatibility(*db_));
  return SchemaVersions{current, LatestSchemaVersion(), std::move(incompatible)};
}

// ---- metrics ------------------------------------------------------------------

StatusOr<TaskStore::Gauges> SqlStoreAdmin::ReadGauges() {
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
    // The index (state, next_slot_at, id) leads with the state.
    EC_ASSIGN_OR_RETURN(Rows paused, c.Query("SELECT COALESCE(pause_reason, ''), COUNT(*)"
                                             " FROM export_subscription WHERE state = 'PAUSED'"
                                             " GROUP BY pause_reason"));
    g.subscriptions_paused.clear();
    for (const Row& r : paused) g.subscriptions_paused.emplace_back(r.Text(0), r.Int(1));
    return Status::Ok();
  }));
  return g;
}

}  // namespace sql

std::unique_ptr<TaskStore> NewSqlTaskStore(std::shared_ptr<Database> db) {
  return std::make_unique<sql::SqlTaskStore>(std::move(db));
}

}  // namespace export_center::store
