#pragma once
// Historical tasks in the shape of issue 46, written straight into a migrated
// store's tables: one big tenant ("t1", 80% of the tasks, many users) and
// smaller ones, requested over `span_days` up to now, nearly all ended
// (SUCCEEDED for the last week, EXPIRED before, a few FAILED, CANCELLED,
// STALE, INCONSISTENT; the newest few PENDING or RUNNING), with timeline
// events and download-audit rows. Ends with the database's ANALYZE so its
// planner sees the rows. Used by the plan and retention tests and by
// bench/history_bench.
//
// Ids are 1..tasks in requested_at order; the store's own ids are far larger.

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"
#include "store/database.h"

namespace export_center::testing {

struct HistoryShape {
  int64_t tasks = 20000;
  int tenant_one_users = 1000;  // users of "t1", which holds 80% of the tasks
  int other_tenants = 19;       // "t2".."t20"; every fifth is a MERCHANT app
  int users_per_other_tenant = 50;
  int types = 10;               // "type0".."type9"
  int events_per_task = 0;      // timeline rows of each task
  int downloads_every = 4;      // one audit row for every n-th t1 task with a file; 0: none
  int64_t span_days = 3 * 365;  // how far back the oldest task was requested
};

// The failure codes seeded (FAILED tasks carry one of them).
inline constexpr const char* kSeedFailureCodes[] = {"PROVIDER_TIMEOUT", "PROVIDER_ERROR",
                                                    "ROW_LIMIT", "LEASE_LOST", "RENDER_FAILED"};

// Inserts the tasks (and their events and audit rows), requested up to
// `now_ms` (the database clock), in transactions of a few thousand rows.
// `progress` (optional) is told the tasks written so far.
Status SeedHistory(store::Database& db, const HistoryShape& shape, int64_t now_ms,
                   const std::function<void(int64_t)>& progress = {});

// ANALYZE (SQLite, PostgreSQL) or ANALYZE TABLE (MariaDB) of the seeded tables.
Status AnalyzeHistory(store::Database& db);

}  // namespace export_center::testing
