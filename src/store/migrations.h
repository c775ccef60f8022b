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
//
// Compatibility (docs/store.md#compatibility-rule): a migration only adds, so a
// release older than the schema keeps working on it while a fleet rolls or
// after a rollback. Each version row also records `compatible_from`, the oldest
// release that works on a schema with that migration applied; a binary refuses
// a database holding a migration whose compatible_from is newer than itself.

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/database.h"

namespace export_center::store {

// The first release named in RELEASES. Every migration that only adds works with
// every release, older ones included: its compatible_from is this one.
inline constexpr std::string_view kOldestRelease = "0.9.0";

struct Migration {
  int version = 0;
  std::string description;
  std::vector<std::string> statements;  // may use Dialect tokens such as {NOW}
  // The oldest release that works on a schema with this migration applied: a
  // later one only when the migration drops or changes something an older
  // release reads, as the second step of a two-release plan
  // (docs/store.md#compatibility-rule). "MAJOR.MINOR.PATCH".
  std::string compatible_from = std::string(kOldestRelease);
};

// All migrations, oldest first.
const std::vector<Migration>& AllMigrations();

// The highest version AllMigrations() knows.
int LatestSchemaVersion();

// The release this binary was built as (CMakeLists.txt's project VERSION).
std::string_view ThisRelease();

// -1, 0 or 1 as release `a` is older than, the same as or newer than `b`
// ("MAJOR.MINOR.PATCH", compared by number; a missing part counts as 0).
int CompareReleases(std::string_view a, std::string_view b);

// Applies every migration newer than the database's version, then makes sure
// the GLOBAL_CREATE guard row exists. Idempotent. Fails with Conflict, changing
// nothing, when the schema is incompatible with `release` (SchemaIncompatibility).
Status Migrate(Database& db, std::string_view release = ThisRelease());

// Why a binary of `release` must not run on this database, or "" when it may:
// the database holds a migration whose compatible_from is newer than `release`
// (a migration this binary does not know, applied by a newer release that
// dropped or changed something `release` reads). The message names the
// migration and the release to run. A migration the binary does not know but
// that only adds is no reason. Reads only; fails when the version table cannot
// be read. Any thread.
StatusOr<std::string> SchemaIncompatibility(Database& db, std::string_view release = ThisRelease());

// The highest applied version, 0 for an empty database.
StatusOr<int> CurrentSchemaVersion(Database& db);

}  // namespace export_center::store
