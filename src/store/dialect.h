#pragma once
// Dialect: the few things that truly differ between databases (docs/store.md#dialect-tokens).
//
// Statements in SqlTaskStore are written once, in portable SQL with `?`
// placeholders, and carry tokens that Expand() replaces:
//   {NOW}                 current database time in epoch milliseconds (BIGINT)
//   {FOR_UPDATE}          row-lock suffix of a SELECT (empty where the
//                         transaction already holds the write lock)
//   {INSERT_IGNORE}       "INSERT INTO" or "INSERT IGNORE INTO"
//   {ON_CONFLICT_IGNORE}  " ON CONFLICT DO NOTHING" or empty
// and, in DDL only:
//   {TEXT}                the type of unbounded text ("TEXT"; MySQL's TEXT
//                         holds only 64 KiB, so MEDIUMTEXT there)
//   {TABLE_OPTIONS}       suffix of CREATE TABLE (MySQL: engine, utf8mb4 and
//                         a binary collation; empty elsewhere)
// LIMIT in UPDATE/DELETE is written portably as
//   WHERE id IN (SELECT id FROM (SELECT id ... LIMIT ?) picked)
// and placeholders are translated by the backend, so neither needs a token.
//
// A Dialect is a plain value; copy it freely.

#include <string>
#include <string_view>

namespace export_center::store {

struct Dialect {
  std::string name;                // "sqlite" | "postgres" | "mysql"
  std::string now_ms;              // expression yielding epoch ms
  std::string for_update;          // " FOR UPDATE" or ""
  std::string insert_ignore_into;  // "INSERT INTO" or "INSERT IGNORE INTO"
  std::string on_conflict_ignore;  // " ON CONFLICT DO NOTHING" or ""
  std::string text_type = "TEXT";
  std::string table_options;
  // Statement that serialises concurrent migrations inside a transaction;
  // empty when the write transaction itself already does. A lock statement
  // whose first cell is "0" did not get the lock (MySQL's GET_LOCK timed out).
  std::string migration_lock;
  // Releases migration_lock where the lock outlives the transaction (MySQL's
  // named locks belong to the session); else empty.
  std::string migration_unlock;
  // Empty when the database understands CREATE INDEX IF NOT EXISTS. Else a
  // query with parameters (table, index) whose COUNT says whether the index
  // exists; migrations then create a missing index without IF NOT EXISTS.
  std::string index_exists_query;
  // The same for ALTER TABLE … ADD COLUMN IF NOT EXISTS (SQLite and MySQL 8
  // lack it): parameters (table, column).
  std::string column_exists_query;

  // Replaces the tokens listed above in `sql`.
  std::string Expand(std::string_view sql) const;
};

Dialect SqliteDialect();
Dialect PostgresDialect();

enum class MysqlFlavor { kMysql, kMariaDb };
// MySQL 8 and MariaDB 10.11 differ in what the dialect needs only in the
// binary no-pad collation's name and in CREATE INDEX IF NOT EXISTS, which
// MySQL 8 lacks.
Dialect MysqlDialect(MysqlFlavor flavor);

}  // namespace export_center::store
