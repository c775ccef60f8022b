#include "store/dialect.h"

#include <array>
#include <utility>

namespace export_center::store {

std::string Dialect::Expand(std::string_view sql) const {
  const std::array<std::pair<std::string_view, const std::string*>, 6> tokens = {{
      {"{NOW}", &now_ms},
      {"{FOR_UPDATE}", &for_update},
      {"{INSERT_IGNORE}", &insert_ignore_into},
      {"{ON_CONFLICT_IGNORE}", &on_conflict_ignore},
      {"{TEXT}", &text_type},
      {"{TABLE_OPTIONS}", &table_options},
  }};
  std::string out;
  out.reserve(sql.size() + 256);
  size_t i = 0;
  while (i < sql.size()) {
    bool replaced = false;
    if (sql[i] == '{') {
      for (const auto& [token, value] : tokens) {
        if (sql.substr(i, token.size()) == token) {
          out += *value;
          i += token.size();
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += sql[i++];
  }
  return out;
}

Dialect SqliteDialect() {
  Dialect d;
  d.name = "sqlite";
  // Whole seconds plus the millisecond digits of %f ("SS.SSS"): exact integer
  // arithmetic, unlike julianday() doubles. SQLite keeps 'now' fixed within
  // one statement, so every {NOW} of a statement is the same instant.
  d.now_ms =
      "(CAST(strftime('%s','now') AS INTEGER) * 1000 + "
      "CAST(substr(strftime('%f','now'), 4) AS INTEGER))";
  // BEGIN IMMEDIATE already holds the database write lock.
  d.for_update = "";
  d.insert_ignore_into = "INSERT INTO";
  d.on_conflict_ignore = " ON CONFLICT DO NOTHING";
  d.migration_lock = "";
  d.column_exists_query = "SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?";
  return d;
}

Dialect PostgresDialect() {
  Dialect d;
  d.name = "postgres";
  // statement_timestamp(): the real clock at the start of each statement, so
  // it advances inside a transaction (unlike now()) yet is one instant for all
  // {NOW} of a statement (unlike clock_timestamp()), as SQLite's 'now' is.
  d.now_ms = "(FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT)";
  d.for_update = " FOR UPDATE";
  d.insert_ignore_into = "INSERT INTO";
  d.on_conflict_ignore = " ON CONFLICT DO NOTHING";
  d.migration_lock = "SELECT pg_advisory_xact_lock(7403521)";
  return d;
}

Dialect MysqlDialect(MysqlFlavor flavor) {
  Dialect d;
  d.name = "mysql";
  // NOW(3) is fixed at the start of the statement, like the others' {NOW}.
  // UNIX_TIMESTAMP() reads it in the session's time zone, which every
  // connection sets to UTC (store/mysql/mysql_database.cc): no zone with a
  // daylight-saving hour that repeats, so the epoch is exact. DECIMAL(…,3)
  // times 1000 is an exact integer.
  d.now_ms = "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)";
  d.for_update = " FOR UPDATE";
  // INSERT IGNORE skips a duplicate key like ON CONFLICT DO NOTHING. (It
  // would also turn a data error into a warning; the ignored inserts copy
  // values from export_task, which already fit.)
  d.insert_ignore_into = "INSERT IGNORE INTO";
  d.on_conflict_ignore = "";
  d.text_type = "MEDIUMTEXT";
  // utf8mb4 for every character, and a binary no-pad collation so that text
  // compares byte for byte as on SQLite and PostgreSQL: tenant and user ids
  // that differ in case or trailing spaces are different ids.
  d.table_options = std::string(" ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=") +
                    (flavor == MysqlFlavor::kMariaDb ? "utf8mb4_nopad_bin" : "utf8mb4_0900_bin");
  // Named locks belong to the session and survive the implicit commit of DDL.
  d.migration_lock = "SELECT GET_LOCK('export_center.migrate', 60)";
  d.migration_unlock = "SELECT RELEASE_LOCK('export_center.migrate')";
  if (flavor == MysqlFlavor::kMysql) {
    d.index_exists_query =
        "SELECT COUNT(*) FROM information_schema.statistics"
        " WHERE table_schema = DATABASE() AND table_name = ? AND index_name = ?";
    d.column_exists_query =
        "SELECT COUNT(*) FROM information_schema.columns"
        " WHERE table_schema = DATABASE() AND table_name = ? AND column_name = ?";
  }
  return d;
}

}  // namespace export_center::store
