#pragma once
// SqlTaskStore: the one TaskStore implementation, one set of SQL statements
// run through a Database (database.h) and its Dialect (dialect.h); its code is
// in store/sql/: one class per role over a shared core (sql/sql_roles.h), and
// every change of a task's state through sql/task_transitions.h.
//
// Every time is the dialect's now-expression inside SQL (docs/store.md#time);
// the process clock only fills the informational occurredAt of a command.
// Each method is one transaction; write transactions are BEGIN IMMEDIATE on
// SQLite and READ COMMITTED with conditional updates (and the guard row
// locked FOR UPDATE for creation) on PostgreSQL.

#include <cstdint>
#include <memory>

#include "store/database.h"
#include "store/task_store.h"

namespace export_center::store {

// Wraps `db`; the store shares ownership so tests can keep using the
// Database (for instance to move clocks by rewriting timestamps).
std::unique_ptr<TaskStore> NewSqlTaskStore(std::shared_ptr<Database> db);

// What a claim that changed no row found when it re-read the task; every
// comparison with "now" was made by the database.
struct ClaimFacts {
  bool found = false;
  int32_t dispatch_version = 0;
  task::TaskState status = task::TaskState::kPending;
  bool lease_live = false;  // lease_until > now
  bool in_backoff = false;  // next_retry_at > now
};

// The exhaustive table of docs/task-lifecycle.md#claim-branches, as a pure function.
ClaimMiss ClassifyClaimMiss(const ClaimFacts& facts, int32_t command_version);

}  // namespace export_center::store
