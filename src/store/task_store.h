#pragma once
// TaskStore: the database as the only source of truth (docs/store.md, docs/guarantees.md).
//
// The store is seen through role interfaces sized to their callers; each
// component takes only the one it uses:
//   TaskCatalog      (task_catalog.h)     api/: create, get, list, changes, cancel, retry, downloads
//   CommandOutbox    (command_outbox.h)   outbox publisher: select, claim, mark
//   AttemptLedger    (attempt_ledger.h)   consumer, export attempt, lease watchdog
//   TaskMaintenance  (task_maintenance.h) reconciler: re-dispatch, recover, expire, purge
//   CommandQuarantine(task_maintenance.h) DLQ handler
//   TaskOperations   (task_operations.h) api/: the operators' console
//   StoreAdmin       (here)               app/: schema, guard row, notification routes, gauges
// TaskStore is their union, for wiring in app/; TaskStoreWrapper
// (task_store_wrapper.h) forwards every method to another store, so a test
// fake overrides only what it breaks.
//
// One implementation (NewSqlTaskStore, sql_task_store.h: one class per role
// over a shared core in store/sql/) runs one set of SQL statements on every database through a
// Database connection seam (database.h) and a small Dialect (dialect.h). Every time comparison —
// lease, back-off, deadline, expiry, dedupe window — happens inside SQL with
// the database's own clock; no method takes a "now" from the process.
//
// Where things go: a new method goes on the role of its caller (above) and
// into that role's class and file in store/sql/ (sql_roles.h); a new role is
// an interface here, in TaskStore's list, and a class in sql_roles.h. Every change of a task's
// state goes through store::sql::TaskTransitions (store/sql/task_transitions.h), which writes its
// timeline event, its command row (PENDING) and its notification rows (end states): a new state or
// edge is a row of task::kTransitions (task/task.h) and of the arrival table beside
// TaskTransitions, a new event a TaskEventKind (task_event.h).
//
// Thread-safety: every method may be called from any thread concurrently.
// Each method is one transaction (or one statement) and is safe to retry after
// an Unavailable error: conditional updates make repeats harmless.
// Codes: Unavailable for connection/lock/serialization trouble, NotFound for a
// missing task, Internal for broken invariants.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/attempt_ledger.h"
#include "store/command_outbox.h"
#include "store/notification_outbox.h"
#include "store/subscription_ledger.h"
#include "store/task_catalog.h"
#include "store/task_maintenance.h"
#include "store/task_operations.h"
#include "task/task.h"

namespace export_center::store {

// The schema version a database holds beside the one this binary migrates to.
struct SchemaVersions {
  int current = 0;  // highest applied migration; 0 for an empty database
  int latest = 0;   // store::LatestSchemaVersion() of this binary
  // Why this binary must not run on the schema (store::SchemaIncompatibility:
  // a newer release applied a migration that needs a release newer than this
  // one, and the message names it), or "" when it may.
  std::string incompatible;
};

// Used by app/ (start-up, `check`, /metrics).
class StoreAdmin {
 public:
  virtual ~StoreAdmin() = default;

  // Creates the schema or migrates it to the newest version; idempotent.
  // Also makes sure the GLOBAL_CREATE guard row exists. Conflict, changing
  // nothing, when the schema needs a newer release than this binary
  // (SchemaVersions::incompatible): `serve` and `migrate` refuse to start.
  virtual Status Migrate() = 0;
  // Fails with Internal when the guard row is missing (start-up check).
  virtual Status CheckGuardRow() = 0;
  // Reads the applied schema version without changing anything (`export-center
  // check`). The error of the read when the version table cannot be read (a
  // database never migrated has none). Idempotent; any thread.
  virtual StatusOr<SchemaVersions> ReadSchemaVersions() = 0;

  // ---- notifications (docs/notifications.md) ----
  // The routes in force: every later change of a task to an end state
  // writes, in its own transaction, one export_notification row per route
  // that matches the task. Empty (the default): no rows. Thread-safe; app/
  // sets them once at start-up.
  virtual void SetNotificationRoutes(std::vector<NotificationRoute> routes) = 0;
  // The notification outbox on the same database, owned by this store.
  virtual NotificationOutbox& notifications() = 0;
  // The subscriptions' ledger on the same database, owned by this store
  // (subscription_ledger.h).
  virtual SubscriptionLedger& subscriptions() = 0;

  // ---- metrics ----
  // Tasks of one tenant that are queued (PENDING) or RUNNING.
  struct TenantLoad {
    std::string tenant_id;
    int64_t queued = 0;
    int64_t running = 0;
  };
  struct Gauges {
    int64_t outbox_pending = 0;
    int64_t outbox_oldest_age_seconds = 0;
    int64_t outbox_max_attempt = 0;
    int64_t task_queue_age_seconds = 0;
    std::vector<TenantLoad> tenants;  // only tenants with a PENDING or RUNNING task
  };
  virtual StatusOr<Gauges> ReadGauges() = 0;
};

// Every role at once: what app/ opens and hands out, one role to each component.
// The roles are virtual bases, so an implementation may take each role's
// methods from a class of its own (store/sql/sql_roles.h) without forwarding.
class TaskStore : public virtual TaskCatalog,
                  public virtual CommandOutbox,
                  public virtual AttemptLedger,
                  public virtual TaskMaintenance,
                  public virtual CommandQuarantine,
                  public virtual TaskOperations,
                  public virtual StoreAdmin {};

}  // namespace export_center::store
