#include "attempt/export_preview.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

#include "attempt/failure_message.h"
#include "common/thread_guard.h"
#include "render/cell_preview.h"

namespace export_center::attempt {
namespace {

// How a failed source reads to the person previewing: the text the task's
// failure_message would hold (UserFailureMessage, the attempt's one rule:
// a datasource's or service's own text — hosts, SQL, driver errors — stays
// in the log), with the failure code or state the attempt would record in
// front of it, so a refused template looks the same in both. `source` is
// null when it could not be opened.
Status PreviewError(const task::Task& task, const Status& failed, const source::RowSource* source) {
  std::optional<std::string> shown_code;
  const source::SourceFacts facts = source != nullptr ? source->facts() : source::SourceFacts{};
  if (facts.failure_code) {
    shown_code = *facts.failure_code;
  } else if (facts.terminal_state) {
    shown_code = std::string(task::ToString(*facts.terminal_state));
  }
  const std::string code = shown_code.value_or(FailureCode(failed));
  spdlog::warn("preview taskId={} (never stored) failed failure_code={}: {}", task.id, code,
               failed.ToString());
  const std::string text = UserFailureMessage(code, failed, FailureOrigin::kSource);
  if (shown_code) return InvalidArgument(*shown_code + ": " + text);
  if (failed.IsTransient()) return Status(failed.code(), text);
  if (failed.code() == StatusCode::kInvalidArgument) return InvalidArgument(text);
  // The service refused the center (token, unknown type, another tenant):
  // nothing the person can fix; the log keeps the detail.
  return Internal("the data service refused the preview: " + failed.ToString());
}

// The provider's totalRows is an estimate (docs/provider-contract.md), so it
// is never shown as exact; the sql-template route's is the pre-flight
// COUNT(*) of the rendered SQL, which the export checks its rows against.
void CountRows(const registry::ExportDefinition& def, const source::Page& page,
               task::PreviewTable* table) {
  const auto first = static_cast<int64_t>(page.rows.size());
  if (!page.has_more) {
    table->row_count = first, table->row_count_exact = true;
  } else if (def.source == registry::SourceKind::kSqlTemplate && page.total_rows) {
    table->row_count = std::max(*page.total_rows, first), table->row_count_exact = true;
  } else {
    table->row_count = first, table->row_count_exact = false;
  }
}

}  // namespace

StatusOr<task::PreviewTable> ReadPreview(const RowSourceFactory& make_source,
                                         const task::Task& task,
                                         const registry::RegistrySnapshot& snapshot, int rows,
                                         const AbortSignal* abort) {
  EC_ASSIGN_OR_RETURN(const registry::ExportDefinition* def, DefinitionFor(snapshot, task));
  registry::ExportDefinition uncapped = *def;
  uncapped.max_rows = std::numeric_limits<int64_t>::max();
  auto opened = OpenGovernedSource(make_source, task, uncapped, snapshot);
  if (!opened.ok()) return PreviewError(task, opened.status(), nullptr);
  std::unique_ptr<source::RowSource> source = std::move(opened).value();
  // A preview given up (past its limit, or the center stopping) cancels the
  // statement it waits for, so its thread ends now rather than at the
  // statement's timeout.
  AbortSignal::Subscription on_abort;
  if (abort != nullptr) {
    on_abort = abort->OnSet([src = source.get()](const Status& why) { src->Interrupt(why); });
  }
  // No prefetch (unlike the attempt): a second page would be read for nothing.
  auto page = source->NextPage();
  if (!page.ok() && abort != nullptr && abort->IsSet()) return abort->Check();
  if (!page.ok()) return PreviewError(task, page.status(), source.get());
  EC_ASSIGN_OR_RETURN(render::CellPreview cells,
                      render::CellPreview::Create(def->timezone, task.format));
  task::PreviewTable table;
  table.columns = source->columns();
  const size_t shown = std::min(page->rows.size(), static_cast<size_t>(std::max(rows, 0)));
  for (size_t r = 0; r < shown; ++r) {
    std::vector<std::string> texts;
    for (size_t c = 0; c < page->rows[r].size(); ++c) {
      auto text = cells.Text(page->rows[r][c]);
      if (!text.ok()) {
        return text.status().WithContext("row " + std::to_string(r + 1) + " column " +
                                         table.columns[c].key);
      }
      texts.push_back(std::move(text).value());
    }
    table.rows.push_back(std::move(texts));
  }
  CountRows(*def, *page, &table);
  if (page->facts) table.plan_advice = std::move(page->facts->plan_advice);
  return table;
}

struct ExportPreviewer::Job {
  Mutex mu;
  CondVar finished;
  bool done GUARDED_BY(mu) = false;
  StatusOr<task::PreviewTable> result GUARDED_BY(mu) = Internal("preview not run");
  // Set when nobody waits for the answer any more: cancels its statement.
  AbortSignal abort;
};

ExportPreviewer::ExportPreviewer(RowSourceFactory make_source, task::PreviewOptions options)
    : make_source_(std::move(make_source)), options_(options) {}

ExportPreviewer::~ExportPreviewer() {
  std::list<std::pair<std::thread, std::shared_ptr<Job>>> running;
  {
    MutexLock lock(&mu_);
    running.swap(running_);
  }
  // Shutdown does not wait for a replica that hangs: each statement is cancelled.
  for (auto& [thread, job] : running) job->abort.Set(Unavailable("the center is stopping"));
  for (auto& [thread, job] : running) thread.join();
}

void ExportPreviewer::JoinFinished() {
  for (auto it = running_.begin(); it != running_.end();) {
    bool done;
    {
      MutexLock lock(&it->second->mu);
      done = it->second->done;
    }
    if (!done) {
      ++it;
      continue;
    }
    it->first.join();  // has returned already: no wait
    it = running_.erase(it);
  }
}

StatusOr<task::PreviewTable> ExportPreviewer::Preview(
    const task::Task& task, std::shared_ptr<const registry::RegistrySnapshot> snapshot) {
  auto job = std::make_shared<Job>();
  {
    MutexLock lock(&mu_);
    JoinFinished();
    // A preview that answered at its limit frees its slot at once; its
    // thread, cancelling its statement, still counts toward a cap of twice
    // the slots, so a replica that ignores cancels cannot pile threads up.
    if (waiting_ >= options_.max_running ||
        static_cast<int>(running_.size()) >= 2 * options_.max_running) {
      return LimitExceeded("too many previews are running; please retry in a few seconds");
    }
    ++waiting_;
    // The thread owns copies of what it reads: it may outlive this call.
    auto read = [this, job, task, snapshot = std::move(snapshot)] {
      auto result = RunGuardedOnce("preview", [&] {
        return ReadPreview(make_source_, task, *snapshot, options_.rows, &job->abort);
      });
      MutexLock done(&job->mu);
      job->result = std::move(result);
      job->done = true;
      job->finished.SignalAll();
    };
    running_.emplace_back(StartWorkerThread("preview", std::move(read)), job);
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(options_.timeout_seconds);
  std::optional<StatusOr<task::PreviewTable>> answer;
  {
    MutexLock lock(&job->mu);
    while (!job->done && job->finished.WaitUntil(&job->mu, deadline)) {
    }
    if (job->done) answer.emplace(std::move(job->result));
  }
  {
    MutexLock lock(&mu_);
    --waiting_;
  }
  if (answer) return std::move(*answer);
  spdlog::warn("preview taskId={} exportType={} tenantId={} timed out after {} s", task.id,
               task.export_type, task.tenant_id, options_.timeout_seconds);
  Status late = DeadlineExceeded("the preview did not finish within " +
                                 std::to_string(options_.timeout_seconds) +
                                 " s: the data service is slow; narrow the filter or export "
                                 "without a preview");
  job->abort.Set(late);  // cancels its statement: the thread ends soon
  return late;
}

}  // namespace export_center::attempt
