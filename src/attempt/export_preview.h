#pragma once
// ExportPreviewer: the preview of an export before anything is queued
// (docs/http-api.md#post-export-previews--preview).
//
// Reads the first page the export's first attempt would read — through the
// RowSourceFactory the consumer uses (app/ builds both from the same config;
// the preview's with its client timeouts capped at the preview's) and the
// definition lookup the attempt uses (DefinitionFor) — and turns its first
// rows into the cell texts of the file (render::CellPreview: types and
// formula guard applied). It creates no task, writes no file and touches no
// store: a preview counts toward no limit but its own.
//
// The row cap is the preview's answer, not a failure: the source runs with
// max-rows lifted, and the caller compares the count with the definition's.
//
// Each preview runs on a thread of its own and Preview waits for it at most
// options.timeout_seconds. A preview that times out answers at once and
// frees its slot of options.max_running; its data-source statement is
// cancelled (RowSource::Interrupt, docs/sql-template-route.md#deadlines) and
// its thread ends soon after — at the latest at the capped client and
// statement timeouts — counting until then toward a cap of twice the slots.
// The destructor cancels the previews still reading and joins them.
// Thread-safe: the API's worker threads call Preview at once.

#include <list>
#include <memory>
#include <thread>

#include "attempt/abort_signal.h"
#include "attempt/export_attempt.h"
#include "common/mutex.h"
#include "registry/registry.h"
#include "task/preview.h"
#include "task/task.h"

namespace export_center::attempt {

class ExportPreviewer {
 public:
  ExportPreviewer(RowSourceFactory make_source, task::PreviewOptions options);
  // Cancels the previews still reading and waits for their threads.
  ~ExportPreviewer();
  ExportPreviewer(const ExportPreviewer&) = delete;
  ExportPreviewer& operator=(const ExportPreviewer&) = delete;

  // Previews `task`, a task that is never stored (a fresh id): tenant, app and user
  // from the caller's token, type, format and canonical parameters from the
  // request, checked as create checks them. Returns the columns, the first
  // options.rows rows and the row count. Errors:
  //   InvalidArgument   the export would fail the same way, with the message
  //                     its task would show (UserFailureMessage); a message
  //                     starts with UNSAFE_TEMPLATE: or INCONSISTENT: when the
  //                     attempt would end with that code or state;
  //   DeadlineExceeded  not done within options.timeout_seconds, or the data
  //                     source did not answer in time (the task's text);
  //   LimitExceeded     options.max_running previews are running already;
  //   Unavailable       the data source failed transiently (retry; the task's text);
  //   Internal          anything else (the data source refused the center).
  StatusOr<task::PreviewTable> Preview(const task::Task& task,
                                       std::shared_ptr<const registry::RegistrySnapshot> snapshot);

 private:
  struct Job;
  void JoinFinished() REQUIRES(mu_);

  const RowSourceFactory make_source_;
  const task::PreviewOptions options_;
  Mutex mu_;
  std::list<std::pair<std::thread, std::shared_ptr<Job>>> running_ GUARDED_BY(mu_);
  int waiting_ GUARDED_BY(mu_) = 0;  // previews whose caller still waits: the slots taken
};

// Reads the preview of `task` on the calling thread, without a time limit:
// the work Preview runs on its own thread. `rows` rows are shown. When
// `abort` (may be null) is set meanwhile, the source's statement is
// cancelled and the preview fails with the abort's reason.
StatusOr<task::PreviewTable> ReadPreview(const RowSourceFactory& make_source,
                                         const task::Task& task,
                                         const registry::RegistrySnapshot& snapshot, int rows,
                                         const AbortSignal* abort = nullptr);

}  // namespace export_center::attempt
