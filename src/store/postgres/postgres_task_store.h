#pragma once
// The scale-out TaskStore: SqlTaskStore over PostgresDatabase.

#include <memory>
#include <string>

#include "common/status.h"
#include "store/database.h"
#include "store/task_store.h"

namespace export_center::store {

// Connects to `url` with a pool of `pool_size` connections. Does not
// migrate: call Migrate() and CheckGuardRow() at start-up.
StatusOr<std::unique_ptr<TaskStore>> OpenPostgresTaskStore(const std::string& url, int pool_size,
                                                           const SessionTimeouts& timeouts = {});

// The same store together with the Database under it, for tests and tools
// that read or rewrite rows directly (tests move clocks that way).
struct PostgresStoreWithDatabase {
  std::unique_ptr<TaskStore> store;
  std::shared_ptr<Database> db;
};
StatusOr<PostgresStoreWithDatabase> OpenPostgresTaskStoreWithDatabase(const std::string& url,
                                                                      int pool_size);

}  // namespace export_center::store
