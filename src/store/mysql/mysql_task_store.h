#pragma once
// The MySQL/MariaDB TaskStore: SqlTaskStore over MysqlDatabase.

#include <memory>
#include <string>

#include "common/client_tls_options.h"
#include "common/status.h"
#include "store/database.h"
#include "store/task_store.h"

namespace export_center::store {

// Connects to `url` (mysql://user:password@host:port/database) with a pool of
// `pool_size` connections, each using TLS as `tls` says. Does not migrate:
// call Migrate() and CheckGuardRow() at start-up.
StatusOr<std::unique_ptr<TaskStore>> OpenMysqlTaskStore(const std::string& url, int pool_size,
                                                        const SessionTimeouts& timeouts = {},
                                                        const ClientTlsOptions& tls = {});

// The same store together with the Database under it, for tests and tools
// that read or rewrite rows directly (tests move clocks that way).
struct MysqlStoreWithDatabase {
  std::unique_ptr<TaskStore> store;
  std::shared_ptr<Database> db;
};
StatusOr<MysqlStoreWithDatabase> OpenMysqlTaskStoreWithDatabase(const std::string& url,
                                                                int pool_size);

}  // namespace export_center::store
