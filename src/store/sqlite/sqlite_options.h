#pragma once
// The options of the SQLite task store (sqlite_task_store.h), beside it so
// that config/, which fills them, needs no store code. Plain data: standard
// headers only (scripts/check-deps.py).

#include <string>

namespace export_center::store {

// database.kind: sqlite.
struct SqliteStoreOptions {
  std::string path = "var/export-center.db";  // database.sqlite-path
};

}  // namespace export_center::store
