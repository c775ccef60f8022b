#pragma once
// Plan advice (docs/sql-template-route.md#plan-advice): reads the plan a
// datasource gave for one statement (ReadOnlyDatasource::Explain) and says
// where it reads far more than a page needs — a table scanned for a
// predicate no index serves, or an index range narrower than the
// predicate's equalities — naming the table, the predicate and an index
// that would serve it.
//
// The plan is bytes from the database (fuzzed:
// tests/source/sql/fuzz/plan_advice_fuzzer.cc): a plan this cannot read
// gives no advice, never an error. Bounded: at most kMaxPlanBytes of a plan
// are read and at most kMaxAdvice pieces of advice come back.
// Thread-safety: pure functions.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "source/sql/datasource/read_only_datasource.h"
#include "task/plan_advice.h"

namespace export_center::source {

inline constexpr size_t kMaxPlanBytes = 1 << 20;
inline constexpr size_t kMaxAdvice = 16;

// The advice for `plan`, the plan of `sql` (the statement as sent, with `?`
// placeholders: SQLite's plan names a table's alias but not the predicate,
// which is read from the SQL). `page_rows`: the rows a page asks for; a
// MariaDB/MySQL estimate at or below it is no cliff. `statement` is copied
// into each advice.
std::vector<task::PlanAdvice> ReadPlanAdvice(const QueryPlan& plan, std::string_view sql,
                                             int64_t page_rows, std::string_view statement);

// One line for the task log and `export-center check`: the statement, the
// table, what the plan does, the predicate and the suggested index.
std::string FormatPlanAdvice(const task::PlanAdvice& advice);

}  // namespace export_center::source
