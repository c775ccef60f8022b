#pragma once
// TaskOperations: what the operators' console reads and does
// (docs/http-api.md#operators-console, docs/store.md#operators-console):
// search across users, bulk actions by filter and their audit, per-type
// figures over a window, queue health and dead webhook deliveries. Every
// figure is computed by the database from its rows, so every instance of the
// center shows the same numbers.
//
// Scope: each call names the tenant (and app) it may see; a scope without a
// tenant is every tenant (the platform's own operators). The API decides
// the scope from the caller's permission; the store only applies it.
//
// Thread-safety: every method may be called from any thread concurrently.
// Reads are read-only and safe to retry; the writes say so below.
// Codes: Unavailable for connection/lock trouble, NotFound for a row missing
// from the scope, Conflict for a row in the wrong state, Internal for broken
// invariants.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/command_outbox.h"
#include "store/notification_outbox.h"
#include "store/task_catalog.h"
#include "task/task.h"

namespace export_center::store {

// Which tenant an operator sees: one tenant and app, or (tenant_id nullopt)
// every tenant and app.
struct OperatorScope {
  std::optional<std::string> tenant_id;
  std::optional<task::AppCode> app_code;  // with tenant_id; nullopt: any app
};

// The search of the console; every field narrows, unset fields do not.
struct OperatorFilter {
  OperatorScope scope;
  std::optional<std::string> requested_by;
  std::optional<std::string> export_type;
  std::vector<task::TaskState> any_status;  // empty: any state
  std::optional<std::string> failure_code;
  std::optional<int64_t> from_ms;  // requested_at >= from_ms
  std::optional<int64_t> to_ms;    // requested_at < to_ms
};

// One row of export_bulk_action: who asked for which action on which filter,
// how many tasks it matched and what became of them.
struct BulkActionRecord {
  int64_t id = 0;
  std::string actor;                        // the operator's user
  std::string actor_tenant;                 // the operator's own tenant
  std::optional<std::string> scope_tenant;  // nullopt: every tenant
  // The app of a tenant scope; nullopt: every app of it (and rows written
  // before the column existed).
  std::optional<task::AppCode> scope_app;
  std::string action;       // RETRY | CANCEL | REDELIVER
  std::string filter_json;  // the filter as the API received it
  int64_t matched = 0;
  int64_t succeeded = 0;
  int64_t skipped = 0;  // no longer in a state the action applies to
  int64_t failed = 0;
  std::string outcome = "RUNNING";  // RUNNING | COMPLETED | FAILED
  std::optional<std::string> first_error;
  int64_t started_at = 0;  // epoch ms, database clock
  std::optional<int64_t> finished_at;
};

// The figures of one export type over one window of requested_at.
struct TypeStats {
  std::string export_type;
  int64_t count = 0;      // tasks requested in the window
  int64_t ended = 0;      // of them, in an end state
  int64_t succeeded = 0;  // SUCCEEDED or EXPIRED (a file was made)
  // Nearest-rank percentiles in ms; nullopt when no task of the window has the times.
  std::optional<int64_t> wait_p50_ms, wait_p95_ms;          // started_at - requested_at
  std::optional<int64_t> duration_p50_ms, duration_p95_ms;  // completed_at - started_at
  std::optional<double> rows_per_second;                    // succeeded tasks' rows / time
  int64_t bytes = 0;                                        // sum of succeeded files' sizes
  struct FailureCount {
    std::string code;
    int64_t count = 0;
  };
  std::vector<FailureCount> top_failure_codes;  // most frequent first, at most 5
};

struct QueueHealth {
  int64_t due_commands = 0;                  // commands waiting to be sent now
  std::optional<int64_t> oldest_due_age_ms;  // since the oldest first became due
  struct InstanceLoad {
    std::string instance;
    int64_t running = 0;
  };
  std::vector<InstanceLoad> running_per_instance;  // most loaded first
  int64_t dead_notifications = 0;
};

// What the console shows of one task's dispatch besides the task row itself.
struct TaskDispatch {
  std::vector<OutboxEntry> commands;             // every version's command, oldest first
  std::vector<NotificationEntry> notifications;  // oldest first
};

// Used by api/ (the operators' console).
class TaskOperations : public virtual TaskReader {
 public:
  // Matching tasks, newest first (requested_at, id), `size` 1..100: page
  // `page` (from 1), or with `after` the tasks older than that key. The
  // total is bounded as TaskCatalog::ListPage says.
  virtual StatusOr<TaskCatalog::ListPage> SearchTasks(const OperatorFilter& filter, int page,
                                                      int size,
                                                      const std::optional<PageKey>& after) = 0;
  // Exact (it gates a bulk action), counted through an index of the filter.
  virtual StatusOr<int64_t> CountTasks(const OperatorFilter& filter) = 0;
  // Ids of matching tasks above `after_id`, ascending, at most `limit`
  // (1..1000): a bulk action pages through its tasks with it.
  virtual StatusOr<std::vector<int64_t>> ListTaskIds(const OperatorFilter& filter, int64_t after_id,
                                                     int limit) = 0;

  // The task's commands and notifications (the console's task detail).
  virtual StatusOr<TaskDispatch> ReadTaskDispatch(int64_t task_id) = 0;

  // ---- the bulk-action audit (export_bulk_action) ----
  // Writes the row (outcome RUNNING, started_at now) before the action acts,
  // so an action cut short by a crash is still on record. Returns its id.
  virtual StatusOr<int64_t> BeginBulkAction(const BulkActionRecord& record) = 0;
  // Sets the counts, outcome, first_error and finished_at of row `record.id`.
  // Idempotent.
  virtual Status FinishBulkAction(const BulkActionRecord& record) = 0;
  // The newest `limit` (1..100) rows of the scope, newest first: the rows
  // whose own scope lies within it. A tenant scope sees the actions scoped
  // to that tenant only, and with an app only those scoped to that app too
  // (never a row without an app: an action over every app, or one written
  // before the app was recorded).
  virtual StatusOr<std::vector<BulkActionRecord>> ListBulkActions(const OperatorScope& scope,
                                                                  int limit) = 0;

  // ---- figures ----
  // Per export type (at most 100 types, busiest first) over the tasks
  // requested in the last `window_ms` (database clock).
  virtual StatusOr<std::vector<TypeStats>> ReadTypeStats(const OperatorScope& scope,
                                                         int64_t window_ms) = 0;
  virtual StatusOr<QueueHealth> ReadQueueHealth(const OperatorScope& scope) = 0;

  // ---- dead webhook deliveries ----
  // DEAD notification rows of the scope's tasks, newest first, at most `limit` (1..100).
  virtual StatusOr<std::vector<NotificationEntry>> ListDeadNotifications(const OperatorScope& scope,
                                                                         int limit) = 0;
  // DEAD → PENDING, due now, attempt_count 0 (a full set of tries again).
  // NotFound when the row is missing or outside the scope; Conflict when it is
  // not DEAD (a repeat after success answers Conflict, nothing changes).
  virtual Status RedeliverNotification(const OperatorScope& scope, int64_t notification_id) = 0;
};

}  // namespace export_center::store
