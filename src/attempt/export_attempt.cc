#include "attempt/export_attempt.h"

#include <openssl/crypto.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <random>

#include "attempt/failure_message.h"
#include "attempt/lease_watchdog.h"
#include "common/backoff.h"
#include "common/json_dump.h"
#include "common/thread_guard.h"
#include "common/utf8.h"
#include "source/column_policy_source.h"
#include "source/labelling_source.h"
#include "source/prefetching_row_source.h"

namespace export_center::attempt {
namespace {

// How often the write loop looks at the abort signal: the deadline is checked
// inside the write loop too, via the watchdog's signal
// (docs/task-lifecycle.md#execution-deadline).
constexpr size_t kRowsBetweenAbortChecks = 1000;

// The two statements between pages — the lease renewal before one, the
// progress write (which also reads the cancel flag) after one — run at most
// this often. A fast route turns a hundred 1 000-row pages a second, and two
// writes per page would cost more than the pages; the watchdog renews the
// lease in the background regardless, and the abort signal is still checked
// before every page (docs/task-lifecycle.md#running-an-attempt).
constexpr auto kPageCheckpointInterval = std::chrono::milliseconds(500);

// Every member has a default, so `{.status = s}` names only what differs
// (-Wmissing-field-initializers stays quiet on members with one).
struct AttemptResult {
  Status status;
  store::FileResult file{};
  std::optional<task::TaskState> terminal_state{};  // set by the source: STALE, INCONSISTENT
  std::optional<std::string> failure_code{};        // set by the source: UNSAFE_TEMPLATE
  FailureOrigin origin = FailureOrigin::kCenter;    // where a failure came from
};

double UnitRandom() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

class AttemptRunner {
 public:
  AttemptRunner(const AttemptDeps& deps, const task::Task& task, const AbortSignal& shutdown)
      : deps_(deps),
        task_(task),
        shutdown_(shutdown),
        attempt_{task.id, task.dispatch_version, deps.instance} {}

  AttemptEnd Run() {
    const auto started = std::chrono::steady_clock::now();
    AttemptEnd end;
    {
      LeaseWatchdog watchdog(deps_.store, attempt_, deps_.consumer.lease_seconds,
                             deps_.consumer.heartbeat_seconds, deps_.consumer.max_duration_seconds,
                             &abort_);
      AttemptResult result = ExecuteGuarded();
      // The watchdog keeps renewing until the final write below is done.
      end = Conclude(result);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    spdlog::info("task {} v{} type {} tenant {}: attempt ended {} in {:.2f}s", task_.id,
                 task_.dispatch_version, task_.export_type, task_.tenant_id, ToString(end),
                 seconds);
    if (deps_.observer != nullptr) deps_.observer->AttemptEnded(task_, end, seconds);
    return end;
  }

 private:
  // Stop reasons from the watchdog or shutdown, checked at every safe point.
  Status CheckAbort() const {
    EC_RETURN_IF_ERROR(abort_.Check());
    if (shutdown_.IsSet()) return ShutdownReason();
    return Status::Ok();
  }
  static Status ShutdownReason() { return Unavailable("interrupted by shutdown; will resume"); }

  // Before each page: abort flags, then — before the first page and at most
  // every kPageCheckpointInterval — a lease renewal, whose statement also
  // checks the deadline with the database clock.
  Status CheckpointBeforePage() {
    EC_RETURN_IF_ERROR(CheckAbort());
    const auto now = std::chrono::steady_clock::now();
    if (renewed_before_page_ && now - last_renewal_ < kPageCheckpointInterval) {
      return Status::Ok();
    }
    renewed_before_page_ = true;
    last_renewal_ = now;
    auto renewed = deps_.store->RenewLease(attempt_, deps_.consumer.lease_seconds);
    if (!renewed.ok()) {
      // One failed renewal does not end the export: the watchdog retries
      // until its safety margin and sets the abort signal if they all fail
      // (docs/task-lifecycle.md#lease-and-heartbeat).
      spdlog::warn("task {} v{}: lease renewal before a page failed: {}", task_.id,
                   task_.dispatch_version, renewed.status().ToString());
      return Status::Ok();
    }
    return RenewalVerdict(renewed, deps_.consumer.max_duration_seconds);
  }

  // An exception out of the attempt's own code (a writer, a source) ends it
  // as Internal, FAILED by the usual rules, instead of leaving the task
  // RUNNING until lease recovery (docs/conventions.md#threads).
  AttemptResult ExecuteGuarded() {
    StatusOr<AttemptResult> result =
        RunGuardedOnce("attempt", [this]() -> StatusOr<AttemptResult> { return Execute(); });
    if (!result.ok()) return {.status = result.status()};
    return std::move(result).value();
  }

  // A writer's failure is the storage's when it is transient (the sink's
  // upload), else the center's own (a template, a size cap).
  static FailureOrigin WriterOrigin(const Status& s) {
    return s.IsTransient() ? FailureOrigin::kStorage : FailureOrigin::kCenter;
  }
  Status Written(Status s) {
    if (!s.ok()) pump_origin_ = WriterOrigin(s);
    return s;
  }

  AttemptResult Execute() {
    auto snapshot = deps_.registry->Current();
    auto found = DefinitionFor(*snapshot, task_);
    if (!found.ok()) return {.status = found.status()};
    const registry::ExportDefinition* def = *found;
    // Before any row is read: an encrypted task never gets a plain file.
    auto key_material = FileKeyMaterial();
    if (!key_material.ok()) {
      return {.status = key_material.status(), .failure_code = std::string(kFileKeyUnavailable)};
    }
    auto made = OpenGovernedSource(deps_.make_source, task_, *def, *snapshot);
    if (!made.ok()) return {.status = made.status(), .origin = FailureOrigin::kSource};
    // The next page is fetched (and its governed columns masked) while this
    // one is written.
    std::unique_ptr<source::RowSource> source = source::WithPrefetch(std::move(made).value());
    // An abort does not wait for the next safe point to reach the source:
    // the statement the source is waiting for now is cancelled at once
    // (docs/sql-template-route.md#deadlines). Unsubscribed before the source goes.
    source::RowSource* interruptible = source.get();
    const AbortSignal::Subscription on_abort =
        abort_.OnSet([interruptible](const Status& why) { interruptible->Interrupt(why); });
    const AbortSignal::Subscription on_shutdown = shutdown_.OnSet(
        [interruptible](const Status&) { interruptible->Interrupt(ShutdownReason()); });

    render::WriterOptions options = WriterOptionsFor(*def);
    options.file_key_material = std::move(key_material).value();
    const render::OutputKind kind = render::OutputKindFor(task_.format, options);
    const std::string extension(render::FileExtension(kind));
    const std::string key = storage::MakeObjectKey(task_.id, extension);
    auto object = deps_.storage->Create(key);
    if (!object.ok()) return {.status = object.status(), .origin = FailureOrigin::kStorage};
    // The digest covers exactly the bytes the object accepted, in order.
    Sha256Sink digesting(object->get());
    CountingSink sink(&digesting, static_cast<uint64_t>(deps_.limits.max_file_bytes));

    std::unique_ptr<render::Writer> writer;
    auto rows = Pump(*source, &sink, options, def->max_rows, &writer);
    if (!rows.ok()) {  // `object` aborts: the partial file is deleted
      // A statement cancelled by an abort ends with the abort's reason.
      if (Status stop = CheckAbort(); !stop.ok()) return {.status = stop};
      source::SourceFacts facts = source->facts();
      const FailureOrigin origin = facts.DecidesFailure() ? FailureOrigin::kSource : pump_origin_;
      return {rows.status(), {}, facts.terminal_state, std::move(facts.failure_code), origin};
    }
    auto summary = writer->Finish();
    if (!summary.ok()) {
      return {.status = summary.status(), .origin = WriterOrigin(summary.status())};
    }
    if (summary->truncated_cells > 0) {
      spdlog::warn("task {}: {} cells were truncated at 32767 characters", task_.id,
                   summary->truncated_cells);
    }
    if (Status stop = CheckAbort(); !stop.ok()) return {.status = stop};
    Status committed = (*object)->Commit();
    if (!committed.ok()) return {.status = committed, .origin = FailureOrigin::kStorage};
    store::FileResult file{MakeFileName(*def, task_, extension),
                           key,
                           std::string(render::ContentType(kind)),
                           static_cast<int64_t>(sink.bytes_written()),
                           *rows,
                           HexOf(digesting.digest()),
                           std::move(summary->part_rows)};
    return {.status = Status::Ok(), .file = file};
  }

  // The key material of an encrypted task's file, unwrapped for this
  // attempt and wiped when the writer lets go of it; nullptr for a plain task.
  StatusOr<std::shared_ptr<const std::string>> FileKeyMaterial() const {
    if (!task_.encrypted) return std::shared_ptr<const std::string>();
    if (!task_.file_key) {
      return NotFound("task " + std::to_string(task_.id) +
                      " is password-protected but its wrapped file key is gone");
    }
    if (deps_.file_keys == nullptr) return NotFound("no file key-encryption key is configured");
    EC_ASSIGN_OR_RETURN(std::string material, deps_.file_keys->Unwrap(*task_.file_key));
    return std::shared_ptr<const std::string>(new std::string(std::move(material)),
                                              [](const std::string* bytes) {
                                                auto* wipe = const_cast<std::string*>(bytes);
                                                OPENSSL_cleanse(wipe->data(), wipe->size());
                                                delete bytes;
                                              });
  }

  // What the definition asks of the file: zone, gzip, split, template.
  render::WriterOptions WriterOptionsFor(const registry::ExportDefinition& def) const {
    render::WriterOptions options;
    options.timezone = def.timezone;
    options.csv_gzip = def.csv_gzip;
    options.rows_per_file = def.rows_per_file;
    options.deflate_level = deps_.deflate_level;
    const task::Languages languages = registry::LanguagesFor(def, task_);
    if (!def.sheet_name.empty()) options.sheet_name = def.sheet_name.In(languages);
    if (!def.totals_label.empty()) options.totals_label = def.totals_label.In(languages);
    UseTemplate(def.template_bytes, &options);
    return options;
  }

  // Single values of a template: the task's parameters plus the task name.
  void UseTemplate(std::shared_ptr<const std::string> bytes, render::WriterOptions* options) const {
    if (bytes == nullptr) return;
    options->xlsx_template = std::move(bytes);
    nlohmann::json values = nlohmann::json::parse(task_.parameters_json, nullptr, false);
    if (!values.is_object()) values = nlohmann::json::object();
    values["taskName"] = task_.task_name;
    options->template_values_json = DumpTolerant(values);
  }

  // The writer is made with the first page: only then are the columns — and
  // a template the source may supply (the page's SourceFacts) — known.
  Status OpenWriter(const source::RowSource& source, const source::Page& first, ByteSink* sink,
                    render::WriterOptions options, std::unique_ptr<render::Writer>* writer) {
    if (task_.format == task::FileFormat::kXlsx && first.facts) {
      UseTemplate(first.facts->excel_template, &options);
    }
    EC_ASSIGN_OR_RETURN(*writer, deps_.make_writer(task_.format, sink, options));
    return (*writer)->Begin(source.columns());
  }

  // Pulls every page into the writer. Returns the number of rows written.
  StatusOr<int64_t> Pump(source::RowSource& source, ByteSink* sink,
                         const render::WriterOptions& options, int64_t max_rows,
                         std::unique_ptr<render::Writer>* writer_out) {
    int64_t processed = 0;
    pump_origin_ = FailureOrigin::kCenter;
    std::unique_ptr<render::Writer>& writer = *writer_out;
    // A cancel requested while the command waited in the queue stops us here.
    EC_ASSIGN_OR_RETURN(store::ProgressOutcome early,
                        deps_.store->UpdateProgress(attempt_, 0, std::nullopt));
    if (early == store::ProgressOutcome::kCancelRequested) {
      return Cancelled("cancelled by the user");
    }
    auto last_progress = std::chrono::steady_clock::now();
    while (true) {
      EC_RETURN_IF_ERROR(CheckpointBeforePage());
      StatusOr<source::Page> next = source.NextPage();
      if (!next.ok()) {
        pump_origin_ = FailureOrigin::kSource;
        return next.status();
      }
      source::Page page = std::move(next).value();
      if (writer == nullptr)
        EC_RETURN_IF_ERROR(Written(OpenWriter(source, page, sink, options, &writer)));
      if (processed + static_cast<int64_t>(page.rows.size()) > max_rows) {
        return LimitExceeded("the export has more than the maximum of " + std::to_string(max_rows) +
                             " rows");
      }
      for (size_t i = 0; i < page.rows.size(); ++i) {
        if (i % kRowsBetweenAbortChecks == 0) EC_RETURN_IF_ERROR(CheckAbort());
        EC_RETURN_IF_ERROR(Written(writer->WriteRow(page.rows[i])));
      }
      processed += static_cast<int64_t>(page.rows.size());
      // Progress (and the cancel flag) after the last page, and otherwise
      // at most every kPageCheckpointInterval.
      const auto now = std::chrono::steady_clock::now();
      if (!page.has_more || now - last_progress >= kPageCheckpointInterval) {
        last_progress = now;
        EC_ASSIGN_OR_RETURN(store::ProgressOutcome progress,
                            deps_.store->UpdateProgress(attempt_, processed, page.total_rows));
        if (progress == store::ProgressOutcome::kCancelRequested) {
          return Cancelled("cancelled by the user");
        }
      }
      if (!page.has_more) return processed;
    }
  }

  AttemptEnd Conclude(const AttemptResult& result) {
    if (result.status.ok()) return CommitResult(result.file);
    const Status& s = result.status;
    if (s.code() == StatusCode::kConflict) {
      spdlog::warn("task {} v{}: {}", task_.id, task_.dispatch_version, s.message());
      return AttemptEnd::kLost;  // someone else owns the task now: write nothing
    }
    if (s.code() == StatusCode::kCancelled) {
      return Finish(task::TaskState::kCancelled, "CANCELLED", s, result.origin,
                    AttemptEnd::kCancelled);
    }
    if (result.terminal_state) {
      const std::string code(task::ToString(*result.terminal_state));
      const AttemptEnd end = *result.terminal_state == task::TaskState::kStale
                                 ? AttemptEnd::kStale
                                 : AttemptEnd::kInconsistent;
      return Finish(*result.terminal_state, code, s, result.origin, end);
    }
    if (result.failure_code) {
      return Finish(task::TaskState::kFailed, *result.failure_code, s, result.origin,
                    AttemptEnd::kFailed);
    }
    if (s.IsTransient()) return Retry(s, result.origin);
    return Finish(task::TaskState::kFailed, FailureCode(s), s, result.origin, AttemptEnd::kFailed);
  }

  AttemptEnd CommitResult(const store::FileResult& file) {
    auto committed = deps_.store->CommitSuccess(attempt_, file, deps_.limits.retention_days);
    if (committed.ok() && *committed == store::CommitOutcome::kCommitted) {
      return AttemptEnd::kSucceeded;
    }
    // Not committed: the file must not outlive the attempt
    // (docs/task-lifecycle.md#conditional-commit).
    Status deleted = deps_.storage->Delete(file.object_key);
    if (!deleted.ok())
      spdlog::error("task {}: cannot delete {}: {}", task_.id, file.object_key, deleted.ToString());
    if (!committed.ok()) return Retry(committed.status(), FailureOrigin::kCenter);
    auto now = deps_.store->GetTask(task_.id);
    const bool still_ours = now.ok() && now->status == task::TaskState::kRunning &&
                            now->dispatch_version == attempt_.dispatch_version &&
                            now->lease.owner == attempt_.instance;
    if (still_ours && now->cancel_requested) {
      // The commit refuses a cancelled task (docs/task-lifecycle.md#cancellation).
      return Finish(task::TaskState::kCancelled, "CANCELLED", Cancelled("cancelled by the user"),
                    FailureOrigin::kCenter, AttemptEnd::kCancelled);
    }
    if (still_ours) {
      return Retry(DeadlineExceeded("execution exceeded the maximum duration of " +
                                    std::to_string(deps_.consumer.max_duration_seconds) + " s"),
                   FailureOrigin::kCenter);
    }
    spdlog::warn("task {} v{}: result not committed, the attempt was superseded", task_.id,
                 task_.dispatch_version);
    return AttemptEnd::kLost;
  }

  // The one place an attempt's failure becomes the task's failure_message:
  // the detail is logged under the task id and stored as the task's
  // failure_detail for the operators' console, the user gets the classified
  // text (attempt/failure_message.h). A governed column's value is in neither:
  // the column-policy source took it out of the Status.
  store::FailureText ShownToUser(const std::string& failure_code, const Status& cause,
                                 FailureOrigin origin) const {
    constexpr const char* kOrigins[] = {"center", "source", "storage"};
    const auto level =
        cause.code() == StatusCode::kCancelled ? spdlog::level::info : spdlog::level::warn;
    spdlog::log(level, "task {} v{}: attempt failed failure_code={} origin={}: {}", task_.id,
                task_.dispatch_version, failure_code, kOrigins[static_cast<int>(origin)],
                cause.ToString());
    return {UserFailureMessage(failure_code, cause, origin), cause.ToString()};
  }

  AttemptEnd Retry(const Status& cause, FailureOrigin origin) {
    const bool interrupted = shutdown_.IsSet();
    const int64_t backoff = interrupted ? 0
                                        : RetryBackoffMs(deps_.consumer.retry_backoff_seconds,
                                                         task_.attempt_count, UnitRandom());
    auto outcome = deps_.store->ScheduleRetry(
        attempt_, ShownToUser(FailureCode(cause), cause, origin), backoff);
    if (!outcome.ok()) {
      spdlog::error("task {}: cannot schedule retry ({}); lease recovery will", task_.id,
                    outcome.status().ToString());
      return AttemptEnd::kLost;
    }
    switch (*outcome) {
      case store::RetryOutcome::kRescheduled:
        return AttemptEnd::kRetried;
      case store::RetryOutcome::kFailedMaxAttempts:
        return AttemptEnd::kFailed;
      case store::RetryOutcome::kCancelled:
        return AttemptEnd::kCancelled;
      case store::RetryOutcome::kLost:
        return AttemptEnd::kLost;
    }
    return AttemptEnd::kLost;
  }

  AttemptEnd Finish(task::TaskState state, const std::string& code, const Status& cause,
                    FailureOrigin origin, AttemptEnd end) {
    auto done = deps_.store->FinishAttempt(attempt_, state, code, ShownToUser(code, cause, origin));
    if (!done.ok() || *done == store::FinishOutcome::kLost) return AttemptEnd::kLost;
    return end;
  }

  const AttemptDeps& deps_;
  const task::Task& task_;
  const AbortSignal& shutdown_;
  const store::Attempt attempt_;
  AbortSignal abort_;
  FailureOrigin pump_origin_ = FailureOrigin::kCenter;  // of Pump's failure
  bool renewed_before_page_ = false;
  std::chrono::steady_clock::time_point last_renewal_;
};

}  // namespace

std::string_view ToString(AttemptEnd end) {
  switch (end) {
    case AttemptEnd::kSucceeded:
      return "SUCCEEDED";
    case AttemptEnd::kRetried:
      return "RETRIED";
    case AttemptEnd::kFailed:
      return "FAILED";
    case AttemptEnd::kCancelled:
      return "CANCELLED";
    case AttemptEnd::kStale:
      return "STALE";
    case AttemptEnd::kInconsistent:
      return "INCONSISTENT";
    case AttemptEnd::kLost:
      return "LOST";
  }
  return "UNKNOWN";
}

bool IsFinal(AttemptEnd end) { return end != AttemptEnd::kRetried && end != AttemptEnd::kLost; }

AttemptEnd RunExportAttempt(const AttemptDeps& deps, const task::Task& task,
                            const AbortSignal& shutdown) {
  return AttemptRunner(deps, task, shutdown).Run();
}

StatusOr<const registry::ExportDefinition*> DefinitionFor(
    const registry::RegistrySnapshot& snapshot, const task::Task& task) {
  const registry::ExportDefinition* def = snapshot.Find(task.export_type);
  if (def == nullptr) {
    return InvalidArgument("export type " + task.export_type + " is no longer registered");
  }
  return def;
}

StatusOr<std::unique_ptr<source::RowSource>> OpenGovernedSource(
    const RowSourceFactory& make_source, const task::Task& task,
    const registry::ExportDefinition& def, const registry::RegistrySnapshot& snapshot) {
  EC_ASSIGN_OR_RETURN(std::unique_ptr<source::RowSource> made, make_source(task, def, snapshot));
  // Labels first, then governance: a masked label stays masked, and a FAIL
  // label message about a governed column loses its value.
  std::unique_ptr<source::RowSource> labelled = source::WithLabels(
      std::move(made), registry::LabelOverridesFor(def, registry::LanguagesFor(def, task)));
  return source::WithColumnPolicy(std::move(labelled), task.column_policy);
}

std::string MakeFileName(const registry::ExportDefinition& def, const task::Task& task,
                         const std::string& extension) {
  const std::string name =
      registry::ExpandFileName(def, {task.task_name, task.export_type, task.id, task.requested_at});
  // Only what is unsafe goes here; the download route trims leading dots and
  // spaces (utf8::SanitizeFileName) when it builds the header.
  std::string base = utf8::DropUnsafeFileNameChars(name);
  if (base.empty()) base = "export";
  return base + "." + extension;
}

std::string FailureCode(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      return "INVALID_DATA";
    case StatusCode::kPermissionDenied:
      return "PROVIDER_REJECTED";
    case StatusCode::kUnauthenticated:
      return "PROVIDER_REJECTED";
    case StatusCode::kNotFound:
      return "NOT_FOUND";
    case StatusCode::kLimitExceeded:
      return "LIMIT_EXCEEDED";
    case StatusCode::kDeadlineExceeded:
      return "TIMEOUT";
    case StatusCode::kUnavailable:
      return "UNAVAILABLE";
    default:
      return "INTERNAL";
  }
}

}  // namespace export_center::attempt
