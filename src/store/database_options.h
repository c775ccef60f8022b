#pragma once
// Which database holds the tasks, and each backend's options (beside its
// backend: sqlite/sqlite_options.h, postgres/postgres_options.h,
// mysql/mysql_options.h). config/ fills it, app/ opens the matching
// TaskStore. Plain data: standard and other options headers only
// (scripts/check-deps.py).

#include <string>

#include "store/mysql/mysql_options.h"
#include "store/postgres/postgres_options.h"
#include "store/sqlite/sqlite_options.h"

namespace export_center::store {

struct DatabaseOptions {
  std::string kind = "sqlite";  // sqlite | postgres | mysql
  SqliteStoreOptions sqlite;
  PostgresStoreOptions postgres;
  MysqlStoreOptions mysql;
  // What every server backend shares (postgres, mysql).
  int pool_size = 8;
  // database.connect-timeout-ms / statement-timeout-ms: as
  // store::SessionTimeouts (database.h).
  int connect_timeout_ms = 5000;
  int statement_timeout_ms = 60000;
};

}  // namespace export_center::store
