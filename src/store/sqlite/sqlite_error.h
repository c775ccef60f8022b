#pragma once
// The one place where SQLite result codes become a Status (docs/conventions.md#errors).

#include <string_view>

#include "common/status.h"

struct sqlite3;

namespace export_center::store {

// BUSY/LOCKED (another writer holds the lock past busy_timeout) and FULL →
// Unavailable; UNIQUE/PRIMARY KEY constraint → Conflict; anything else →
// Internal. `db` may be null; when set, its error message is appended.
Status SqliteError(int rc, sqlite3* db, std::string_view what);

}  // namespace export_center::store
