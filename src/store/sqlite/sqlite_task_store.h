#pragma once
// The embedded TaskStore: SqlTaskStore over SqliteDatabase.

#include <memory>
#include <string>

#include "common/status.h"
#include "store/database.h"
#include "store/task_store.h"

namespace export_center::store {

// Opens the SQLite database file at `path` (created if missing). Does not
// migrate: call Migrate() and CheckGuardRow() at start-up.
StatusOr<std::unique_ptr<TaskStore>> OpenSqliteTaskStore(const std::string& path);

// The same store together with the Database under it, for tests and tools
// that read or rewrite rows directly (tests move clocks that way).
struct SqliteStoreWithDatabase {
  std::unique_ptr<TaskStore> store;
  std::shared_ptr<Database> db;
};
StatusOr<SqliteStoreWithDatabase> OpenSqliteTaskStoreWithDatabase(const std::string& path);

}  // namespace export_center::store
