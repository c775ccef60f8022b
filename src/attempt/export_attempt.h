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

#include "attempt/abort_signal.h"
#include "attempt/options.h"
#include "common/byte_sink.h"
#include "common/file_key_ring.h"
#include "registry/registry.h"
#include "render/writer.h"
#include "source/row_source.h"
#include "storage/export_storage.h"
#include "store/attempt_ledger.h"
#include "task/limits.h"

namespace export_center::attempt {

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

// What attempts report to metrics; on the consumer's threads, so it must be
// thread-safe and must not block. Does nothing unless overridden.
class AttemptObserver {
 public:
  virtual ~AttemptObserver() = default;
  // A task was claimed for its first attempt (dispatch_version 1, attempt 1),
  // `wait_seconds` after its creation, both from the database clock.
  virtual void FirstStarted(const task::Task& task, double wait_seconds) {}
  // An attempt ended as `end` after `seconds`.
  virtual void AttemptEnded(const task::Task& task, AttemptEnd end, double seconds) {}
};

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
  // May be null; must outlive the attempts.
  AttemptObserver* observer = nullptr;
  // Unwraps the file key material of password-protected tasks
  // (docs/configuration.md#password-protected-files-file-password). Null: every encrypted task
  // fails FILE_KEY_UNAVAILABLE.
  std::shared_ptr<const FileKeyRing> file_keys{};
};

// failure_code of an encrypted task whose file key cannot be unwrapped (its
// key-encryption key rotated away, or the wrapped key erased): permanent,
// never a plain file instead.
inline constexpr char kFileKeyUnavailable[] = "FILE_KEY_UNAVAILABLE";

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

// The source of `task`'s rows made by `make_source`, its rows labelled
// (source::WithLabels: the columns' value labels and the definition's, in the
// task's language) and then passed through the task's column policy
// (source::WithColumnPolicy): what
// every writer and the preview read, so governed columns are omitted, masked
// or hashed in one place (docs/configuration.md#column-governance-columns).
// The factory's errors.
StatusOr<std::unique_ptr<source::RowSource>> OpenGovernedSource(
    const RowSourceFactory& make_source, const task::Task& task,
    const registry::ExportDefinition& def, const registry::RegistrySnapshot& snapshot);

// The download file name: the definition's file-name-pattern expanded
// (registry::ExpandFileName) without path separators, control and bidi
// characters or invalid UTF-8 (utf8::DropUnsafeFileNameChars), "export" when
// nothing is left, plus "." and the extension ("xlsx", "csv.gz", ...).
std::string MakeFileName(const registry::ExportDefinition& def, const task::Task& task,
                         const std::string& extension);

// Envelope failure code for a permanent failure status ("LIMIT_EXCEEDED", ...).
std::string FailureCode(const Status& status);

}  // namespace export_center::attempt
