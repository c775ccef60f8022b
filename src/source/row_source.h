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
// What a source knows beside its rows is one value, SourceFacts: delivered
// with the first page (Page::facts), and readable as facts() after a
// NextPage failed — a failure's facts (terminal_state, failure_code) cannot
// ride on a page, and Status (common/) cannot carry a task state, so the
// failed source answers them. A new fact is a member of SourceFacts with a
// neutral default, set where the source learns it: nothing else changes —
// decorators (RowSourceWrapper, row_source_wrapper.h) pass pages on and
// forward facts() as a whole, and the attempt and the preview read the one
// value.

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

// The source's facts about this export, beside its rows.
struct SourceFacts {
  // An .xlsx template the data source supplies for this export (the SQL
  // contract's excelTemplate); it takes precedence over the definition's
  // template-file. nullptr: none.
  std::shared_ptr<const std::string> excel_template{};

  // What the data source's plans say costs far more than a page needs
  // (docs/sql-template-route.md#plan-advice), found before the first page
  // (and, for enrich statements, with its keys, also before the first page
  // is delivered). Empty: none.
  std::vector<task::PlanAdvice> plan_advice{};

  // Facts about a failure — set only in facts() after NextPage failed,
  // never on a page:
  // the state the task must end in when it is not a plain FAILED/retry —
  // STALE (the SQL contract version changed since creation) or INCONSISTENT
  // (row counts disagree in strict mode). nullopt: classify the error as
  // usual (transient → retry, else FAILED).
  std::optional<task::TaskState> terminal_state{};
  // A failure code more precise than the one the Status code maps to —
  // UNSAFE_TEMPLATE when the SQL contract's template would put a user-typed
  // value into the SQL. The task then ends FAILED with this code. nullopt:
  // the code follows the Status.
  std::optional<std::string> failure_code{};

  // A failure's facts are set: the source, not the attempt, decided how it ends.
  bool DecidesFailure() const { return terminal_state.has_value() || failure_code.has_value(); }
};

struct Page {
  std::vector<task::Row> rows;  // typed, one value per column, in column order
  bool has_more = false;
  std::optional<int64_t> total_rows;  // the source's estimate, for progress only
  // On the first page (every source sets it there, an empty value when it
  // knows nothing beside its rows); nullopt on every later page.
  std::optional<SourceFacts> facts{};
};

class RowSource {
 public:
  virtual ~RowSource() = default;
  // The columns of the export; valid after the first NextPage succeeded.
  virtual const std::vector<task::Column>& columns() const = 0;
  // Fetches the next page. Must not be called after a page with has_more=false.
  virtual StatusOr<Page> NextPage() = 0;

  // The facts as known now: after the first page the first page's (and any
  // found since); after NextPage failed also the failure's (terminal_state,
  // failure_code). Before the first NextPage: empty. A consumer reads the
  // first page's Page::facts on success and this after a failure.
  virtual SourceFacts facts() const { return {}; }

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
