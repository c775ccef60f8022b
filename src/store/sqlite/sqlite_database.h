#pragma once
// SqliteDatabase: the embedded Database backend (docs/store.md), on libsqlite3.
//
// WAL journal, busy_timeout, foreign keys off. A small pool hands each
// thread its own connection; write transactions use BEGIN IMMEDIATE, which
// is SQLite's equivalent of locking the guard row: writers are serialised
// up front and readers keep reading the last committed snapshot.

#include <memory>
#include <string>

#include "common/status.h"
#include "store/database.h"

namespace export_center::store {

struct SqliteOptions {
  int max_connections = 8;      // ":memory:" always uses exactly one
  int busy_timeout_ms = 10000;  // how long a writer waits for the lock
};

// Opens (creating if needed) the database file at `path`. Fails with
// Unavailable/Internal when the file cannot be opened.
StatusOr<std::unique_ptr<Database>> OpenSqliteDatabase(const std::string& path,
                                                       const SqliteOptions& options = {});

}  // namespace export_center::store
