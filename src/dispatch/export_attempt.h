#pragma once
// RunExportAttempt: runs one claimed attempt of one task from first page to the
// conditional commit (docs/task-lifecycle.md#running-an-attempt).
//
// Under a lease watchdog it pulls pages from a RowSource, writes them through
// a Writer into an ExportStorage object capped at max-file-bytes, checks the
// abort signal, lease/deadline and cancellation before and after each page,
// and ends the attempt in exactly one way: SUCCEEDED (conditional commit),
// auto retry (transient), FAILED (permanent), CANCELLED, or nothing at all
// when the lease was lost. Every path but success deletes the file.

#include <functional>
#include <memory>
#include <string>

#include "common/byte_sink.h"
#include "dispatch/abort_signal.h"
#include "dispatch/options.h"
#include "registry/registry.h"
#include "render/writer.h"
#include "source/row_source.h"
#include "storage/export_storage.h"
#include "store/attempt_ledger.h"
#include "task/limits.h"

namespace export_center::dispatch {

using RowSourceFactory = std::function<StatusOr<std::unique_ptr<source::RowSource>>(
    const task::Task&, const registry::ExportDefinition&, const registry::RegistrySnapshot&)>;
using WriterFactory = std::function<StatusOr<std::unique_ptr<render::Writer>>(
    task::FileFormat, ByteSink*, const render::WriterOptions&)>;

// How an attempt ended, for metrics and logs. kSucceeded, kFailed,
// kCancelled, kStale and kInconsistent are the task's final state (ToString
// is its name); kRetried (handed back for an automatic retry) and kLost
// (superseded, wrote nothing) leave the task to a later attempt.
enum class AttemptEnd { kSucceeded, kRetried, kFailed, kCancelled, kStale, kInconsistent, kLost };
std::string_view ToString(AttemptEnd end);
// Whether the attempt ended the task (export_task_completed_total counts these).
bool IsFinal(AttemptEnd end);

struct AttemptDeps {
  store::AttemptLedger* store = nullptr;
  storage::ExportStorage* storage = nullptr;
  registry::Registry* registry = nullptr;
  RowSourceFactory make_source;
  WriterFactory make_writer;
  ConsumerOptions consumer;
  task::LimitsOptions limits;
  int deflate_level = 1;  // XLSX/zip deflate level (render.deflate-level)
  std::string instance;
  // Called when a task is claimed for its first attempt (dispatch_version 1,
  // attempt 1), with the seconds from its creation to RUNNING, both taken
  // from the database clock (metrics); may be empty.
  std::function<void(const task::Task&, double wait_seconds)> on_first_start;
  // Called once per attempt with its end and duration (metrics); may be empty.
  std::function<void(const task::Task&, AttemptEnd, double seconds)> on_end;
};

// Runs the attempt for `task`, which this instance has just claimed.
// `shutdown` is set when the process is stopping: the attempt stops at its
// next safe point and is handed back for a retry. Returns how it ended.
AttemptEnd RunExportAttempt(const AttemptDeps& deps, const task::Task& task,
                            const AbortSignal& shutdown);

// The definition an attempt of `task` runs with: the one registered now
// under its type. InvalidArgument when the type is no longer registered.
// Shared with the preview (export_preview.h), so both read the same rows.
StatusOr<const registry::ExportDefinition*> DefinitionFor(
    const registry::RegistrySnapshot& snapshot, const task::Task& task);

// The download file name: the definition's file-name-pattern expanded
// (registry::ExpandFileName) without path separators, control and bidi
// characters or invalid UTF-8 (utf8::DropUnsafeFileNameChars), "export" when
// nothing is left, plus "." and the extension ("xlsx", "csv.gz", ...).
std::string MakeFileName(const registry::ExportDefinition& def, const task::Task& task,
                         const std::string& extension);

// Envelope failure code for a permanent failure status ("LIMIT_EXCEEDED", ...).
std::string FailureCode(const Status& status);

}  // namespace export_center::dispatch
