#pragma once
// The embedded TaskStore: SqlTaskStore over SqliteDatabase.

#include <memory>
#include <string>

#include "common/status.h"
#include "store/task_store.h"

namespace export_center::store {

// Opens the SQLite database file at `path` (created if missing). Does not
// migrate: call Migrate() and CheckGuardRow() at start-up.
StatusOr<std::unique_ptr<TaskStore>> OpenSqliteTaskStore(const std::string& path);

}  // namespace export_center::store
