#include "store/dialect.h"

#include <array>
#include <utility>

namespace export_center::store {

std::string Dialect::Expand(std::string_view sql) const {
  const std::array<std::pair<std::string_view, const std::string*>, 4> tokens = {{
      {"{NOW}", &now_ms},
      {"{FOR_UPDATE}", &for_update},
      {"{INSERT_IGNORE}", &insert_ignore_into},
      {"{ON_CONFLICT_IGNORE}", &on_conflict_ignore},
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

}  // namespace export_center::store
