#pragma once
// The statements of SqlTaskStore that read history — the lists, the
// console's search and counts, the change feed, the reconciler's and the
// expiry's scans, the stats' windows, the download audit and the retention
// sweep — built here and nowhere else, so the store runs exactly what
// PlannedStatements() hands the plan test (tests/store/history_plan_test.cc):
// every shape is served by an index in its order on every backend, and a
// filter added to a builder is planned by the test with the rest
// (docs/store.md#indexes-of-history). Internal to store/.
//
// Newest-first pages are written as a range on the order's leading column
// plus a tie-break on id — "requested_at <= ? AND (requested_at < ? OR id <
// ?)" — never as a row-value comparison, which MariaDB does not serve from
// an index; the leading range is what every planner seeks on.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"
#include "store/task_catalog.h"
#include "store/task_operations.h"

namespace export_center::store::sql {

// One statement with its parameters; dialect tokens ({NOW}) not yet expanded.
struct Statement {
  std::string sql;
  SqlParams params;
};

// A newest-first page: its rows — one more than the page, so the store knows
// whether another follows — and its total, counted through the same index
// over at most kExactTotalBound + 1 rows.
struct PageStatements {
  Statement rows;
  Statement count;
};

PageStatements TaskListStatements(const TaskCatalog::ListQuery& q);
PageStatements OperatorSearchStatements(const OperatorFilter& f, int page, int size,
                                        const std::optional<PageKey>& after);
// The exact count a bulk action is gated on.
Statement OperatorCountStatement(const OperatorFilter& f);
Statement OperatorIdsStatement(const OperatorFilter& f, int64_t after_id, int limit);
PageStatements AuditStatements(const DownloadAuditQuery& q);
Statement ChangeStatement(const TaskCatalog::ChangeQuery& q, bool keys_only);

// ReadTypeStats over requested_at >= since_ms: per type, its failure codes,
// and its percentiles.
Statement TypeStatsStatement(const OperatorScope& scope, int64_t since_ms);
Statement FailureCodesStatement(const OperatorScope& scope, int64_t since_ms);

// The value at `offset` of `expression` over one type's rows of the window
// meeting `condition`, ascending (a nearest-rank percentile).
struct PercentileQuery {
  std::string expression;
  std::string condition;
  int64_t offset = 0;
};
// Every one of `parts` in one statement (one round trip for a type's four
// percentiles): rows (k, v), k the part's index, none for a part with no value.
Statement PercentilesStatement(const OperatorScope& scope, int64_t since_ms,
                               const std::string& type, const std::vector<PercentileQuery>& parts);

// The reconciler's scans.
Statement MissingOutboxStatement(int grace_seconds, int limit);
Statement ExpiredLeasesStatement(int limit);
Statement ExpiredArtifactsStatement(int limit);
Statement OldHistoryStatement(int older_than_days, int limit);

// ---- the plan test's list --------------------------------------------------------

// Values the planned statements are bound with: the seeded data's, so the
// planners choose as they would for real rows.
struct PlanSample {
  std::string tenant_id;
  task::AppCode app_code = task::AppCode::kPlatform;
  std::string user;
  std::string export_type;
  std::string failure_code;
  int64_t now_ms = 0;
  PageKey after;        // a key in the middle of the tenant's history
  int64_t task_id = 0;  // a task with downloads
};

struct PlannedStatement {
  std::string name;
  Statement statement;
  // The plan may sort, but only a bounded set: one window's rows (the
  // percentiles' ORDER BY an expression, a GROUP BY of the window) or the
  // ids of a bulk action (at most 5 000 by the API): never the table.
  bool sorts_window = false;
  // No filter at all (the console's search of everything): reading the
  // table in the index's order up to the LIMIT, or counting it all for an
  // exact bulk count, is the plan; a sort still is not.
  bool unfiltered = false;
  // Read from indexes alone, never a row of the table (migration 18): the
  // stats' windows and an exact count of a type's states, which read many
  // rows of a big history each.
  bool index_only = false;
};

// Every history statement the store runs, one for each list shape and each
// filter of it, bound with `sample`.
std::vector<PlannedStatement> PlannedStatements(const PlanSample& sample);

}  // namespace export_center::store::sql
