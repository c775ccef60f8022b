#pragma once
// Versioned, idempotent schema migrations (docs/store.md).
//
// export_schema_version holds one row per applied migration. Migrate() applies
// the missing ones in order, each in its own write transaction together with
// its version row, so a crash leaves either all or none of a migration —
// except on MySQL/MariaDB, where every DDL statement commits by itself; there
// each statement is idempotent (IF NOT EXISTS, or an existence check where
// MySQL 8 has no IF NOT EXISTS) and the next run finishes the migration. The
// same DDL text serves every database (BIGINT, VARCHAR, INTEGER, and the
// dialect's {TEXT} and {TABLE_OPTIONS}). Concurrent Migrate() calls from
// several processes are serialised by the write transaction (SQLite), an
// advisory lock (PostgreSQL) or a named lock (MySQL).

#include <string>
#include <vector>

#include "common/status.h"
#include "store/database.h"

namespace export_center::store {

struct Migration {
  int version = 0;
  std::string description;
  std::vector<std::string> statements;  // may use Dialect tokens such as {NOW}
};

// All migrations, oldest first.
const std::vector<Migration>& AllMigrations();

// The highest version AllMigrations() knows.
int LatestSchemaVersion();

// Applies every migration newer than the database's version, then makes sure
// the GLOBAL_CREATE guard row exists. Idempotent.
Status Migrate(Database& db);

// The highest applied version, 0 for an empty database.
StatusOr<int> CurrentSchemaVersion(Database& db);

}  // namespace export_center::store
