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
// LIMIT in UPDATE/DELETE is written portably as
//   WHERE id IN (SELECT id FROM (SELECT id ... LIMIT ?) picked)
// and placeholders are translated by the backend, so neither needs a token.
//
// A Dialect is a plain value; copy it freely.

#include <string>
#include <string_view>

namespace export_center::store {

struct Dialect {
  std::string name;                // "sqlite" | "postgres"
  std::string now_ms;              // expression yielding epoch ms
  std::string for_update;          // " FOR UPDATE" or ""
  std::string insert_ignore_into;  // "INSERT INTO" or "INSERT IGNORE INTO"
  std::string on_conflict_ignore;  // " ON CONFLICT DO NOTHING" or ""
  // Statement that serialises concurrent migrations inside a transaction;
  // empty when the write transaction itself already does.
  std::string migration_lock;

  // Replaces the tokens listed above in `sql`.
  std::string Expand(std::string_view sql) const;
};

Dialect SqliteDialect();
Dialect PostgresDialect();

}  // namespace export_center::store
