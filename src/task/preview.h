#pragma once
// PreviewTable: what a preview of an export shows before anything is queued
// (docs/http-api.md#post-export-previews--preview) — the columns, the first rows as the
// text a reader of the finished file sees, and the row count.
//
// PreviewOptions: the `preview:` section. Both live with task/ because
// dispatch/ builds the preview and api/ answers and rate-limits it, and both
// depend on task/ and not on each other (as with LimitsOptions).

#include <cstdint>
#include <string>
#include <vector>

#include "task/plan_advice.h"
#include "task/table.h"

namespace export_center::task {

struct PreviewTable {
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;  // one text per column, in column order
  // The number of rows the export would hold: exact, or a lower bound ("at
  // least") when the data source only told how many rows came first.
  int64_t row_count = 0;
  bool row_count_exact = false;
  // What the data source's plans say costs far more than a page needs
  // (docs/sql-template-route.md#plan-advice): the advice the export's task
  // log would show.
  std::vector<PlanAdvice> plan_advice;
};

struct PreviewOptions {
  // The whole preview, every data-source call included; past it the caller
  // gets a clear error, a datasource statement is cancelled, and other
  // data-source calls stop at their own timeouts, which the preview caps at
  // this value + 1 s.
  int timeout_seconds = 10;
  int rows = 20;  // rows shown; the data source is still asked for a whole first page
  // Previews one user (tenant + user) may ask for per minute; 429 beyond.
  int per_user_per_minute = 10;
  // Previews running at once in one process; 429 beyond. A preview that
  // timed out frees its slot when it answers (its statement is cancelled).
  int max_running = 8;
};

}  // namespace export_center::task
