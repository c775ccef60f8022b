#pragma once
// RowSource: pulls the rows of one export attempt, page by page.
//
// Backends: ProviderBatchSource (HTTP cursor batches, provider_batch_source.h)
// and SqlTemplateSource (the sql-template route, sql_template_source.h: pages
// of a rendered SQL template run on a read-only datasource, with the engine in
// sql_template/). app/ picks one per export type. The consumer calls
// NextPage until has_more is false, checking its abort flag, the deadline and
// cancellation before and after each page.
//
// Error classes (docs/task-lifecycle.md#failure-classes): Unavailable and
// DeadlineExceeded are transient (retry the attempt later); InvalidArgument,
// LimitExceeded, PermissionDenied and NotFound are permanent (the task fails).
// Not thread-safe: one attempt, one thread — except Interrupt, which another
// thread calls to stop the call a NextPage is waiting for.
//
// A decorator (prefetch, column policy) derives from RowSourceWrapper
// (row_source_wrapper.h). A new fact a source reports beside its pages is a
// virtual here with a neutral default plus one forwarding line there.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "task/plan_advice.h"
#include "task/table.h"
#include "task/task.h"

namespace export_center::source {

struct Page {
  std::vector<task::Row> rows;  // typed, one value per column, in column order
  bool has_more = false;
  std::optional<int64_t> total_rows;  // the source's estimate, for progress only
};

class RowSource {
 public:
  virtual ~RowSource() = default;
  // The columns of the export; valid after the first NextPage succeeded.
  virtual const std::vector<task::Column>& columns() const = 0;
  // Fetches the next page. Must not be called after a page with has_more=false.
  virtual StatusOr<Page> NextPage() = 0;

  // After NextPage failed: the state the task must end in when it is not a
  // plain FAILED/retry — STALE (the SQL contract version changed since
  // creation) or INCONSISTENT (row counts disagree in strict mode). nullopt:
  // classify the error as usual (transient → retry, else FAILED).
  virtual std::optional<task::TaskState> terminal_state() const { return std::nullopt; }

  // After NextPage failed permanently: a failure code more precise than the
  // one the Status code maps to — UNSAFE_TEMPLATE when the SQL contract's
  // template would put a user-typed value into the SQL. The task then ends
  // FAILED with this code. nullopt: the code follows the Status.
  virtual std::optional<std::string> failure_code() const { return std::nullopt; }

  // An .xlsx template the data source supplies for this export (the SQL
  // contract's excelTemplate), valid after the first NextPage; it takes
  // precedence over the definition's template-file. nullptr: none.
  virtual std::shared_ptr<const std::string> excel_template() const { return nullptr; }

  // What the data source's plans say costs far more than a page needs
  // (docs/sql-template-route.md#plan-advice), found before the first page
  // (and, for enrich statements, with its keys): valid after the first
  // NextPage, also when that failed later. The default: none.
  virtual std::vector<task::PlanAdvice> plan_advice() const { return {}; }

  // Cancels what NextPage is waiting for now (a datasource statement,
  // docs/sql-template-route.md#deadlines) and fails it, and every NextPage
  // after, with `reason` (not OK): for an attempt that was aborted or a
  // preview past its limit. Thread-safe, idempotent. The default does
  // nothing: the call ends at its own timeout.
  virtual void Interrupt(const Status& reason) { (void)reason; }
};

// What a source needs to know about the attempt it serves.
struct SourceRequest {
  const task::Task* task = nullptr;  // not owned
  int batch_size = 500;
  int64_t max_rows = 200000;
};

}  // namespace export_center::source
