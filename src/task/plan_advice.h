#pragma once
// PlanAdvice: what the database's plan of one statement of an export says
// costs far more than a page needs (docs/sql-template-route.md#plan-advice):
// a table scanned for a predicate no index serves, or an index range
// narrower than the predicate's equalities. Written to the task log before
// the first page, shown by the preview and listed by `export-center check`.
// Lives with task/ because source/ finds it and api/ shows it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace export_center::task {

struct PlanAdvice {
  std::string statement;  // which statement: "page", or "enrich group <name>"
  std::string table;      // the table as the database names it
  std::string plan;       // what the plan does there, e.g. "SCAN customer"
  std::string predicate;  // the conditions on that table, e.g. "tenant_id = ? AND code IN (…)"
  std::vector<std::string> index_columns;  // an index that would serve the predicate
  std::string suggested_index;             // the same as DDL: CREATE INDEX … ON table (a, b)
  // The rows the database expects to read from the table (MariaDB/MySQL
  // give it; SQLite and PostgreSQL's plans do not).
  std::optional<int64_t> estimated_rows;
};

}  // namespace export_center::task
