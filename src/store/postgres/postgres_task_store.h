#pragma once
// The scale-out TaskStore: SqlTaskStore over PostgresDatabase.

#include <memory>
#include <string>

#include "common/status.h"
#include "store/task_store.h"

namespace export_center::store {

// Connects to `url` with a pool of `pool_size` connections. Does not
// migrate: call Migrate() and CheckGuardRow() at start-up.
StatusOr<std::unique_ptr<TaskStore>> OpenPostgresTaskStore(const std::string& url, int pool_size);

}  // namespace export_center::store
