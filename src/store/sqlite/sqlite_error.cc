#include "store/sqlite/sqlite_error.h"

#include <sqlite3.h>

#include <string>

namespace export_center::store {

Status SqliteError(int rc, sqlite3* db, std::string_view what) {
  std::string message = "sqlite " + std::string(what) + ": " + sqlite3_errstr(rc);
  if (db != nullptr) message += " (" + std::string(sqlite3_errmsg(db)) + ")";
  switch (rc & 0xFF) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_FULL:
      return Unavailable(std::move(message));
    case SQLITE_CONSTRAINT:
      if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
        return Conflict(std::move(message));
      }
      return Internal(std::move(message));
    default:
      return Internal(std::move(message));
  }
}

}  // namespace export_center::store
