#include "dispatch/reconciler.h"

#include <spdlog/spdlog.h>

#include <chrono>

namespace export_center::dispatch {
namespace {

constexpr int kBatch = 50;
constexpr int kPurgeBatch = 5000;
// History deletes lock a few hundred rows at a time, at most ten batches a
// round, so a first sweep of years of history never holds a lock for long.
constexpr int kHistoryBatch = 200;
constexpr int kHistoryBatchesPerRound = 10;

int64_t NowMs() {
  // Only for the orphan grace on file-system times, which the database
  // cannot see; no task or lease decision uses this.
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

template <typename T>
int CountOrLog(const char* duty, const StatusOr<T>& result) {
  if (!result.ok()) {
    spdlog::warn("reconciler {}: {}", duty, result.status().ToString());
    return 0;
  }
  if constexpr (std::is_same_v<T, int>) {
    return *result;
  } else {
    return static_cast<int>(result->size());
  }
}

}  // namespace

Reconciler::Reconciler(store::TaskMaintenance* store, storage::ExportStorage* storage,
                       const ReconcilerOptions& config, ReconcilerObserver* observer)
    : store_(store),
      storage_(storage),
      config_(config),
      observer_(observer != nullptr ? observer : &no_observer_),
      worker_({"reconciler", std::chrono::seconds(config_.interval_seconds)}, [this] {
        RunOnce();
        return PeriodicWorker::Next::Interval();
      }) {}

Reconciler::~Reconciler() { Stop(); }

void Reconciler::Start() { worker_.Start(); }

void Reconciler::Stop() { worker_.Stop(); }

std::map<std::string, int> Reconciler::RunOnce() {
  std::map<std::string, int> counts;
  counts["redispatch"] = Redispatch();
  counts["lease_recover"] = RecoverLeases();
  counts["outbox_release"] =
      CountOrLog("outbox_release", store_->ReleaseStaleClaimedOutbox(kBatch));
  counts["expire"] = ExpireFiles();
  counts["orphan_clean"] = CleanOrphans();
  counts["outbox_purge"] = CountOrLog(
      "outbox_purge", store_->PurgeSentOutbox(config_.sent_retention_seconds, kPurgeBatch));
  counts["history_delete"] = DeleteOldHistory();
  bool wake =
      counts["redispatch"] > 0 || counts["lease_recover"] > 0 || counts["outbox_release"] > 0;
  for (const auto& [action, n] : counts) {
    if (n == 0) continue;
    spdlog::info("reconciler {}: {}", action, n);
    observer_->ActionTaken(action, n);
  }
  if (wake) observer_->Redispatched();
  return counts;
}

int Reconciler::ResendAfterRestart() {
  int n = CountOrLog("resend_after_restart", store_->ResendStaleSentOutbox(0, 0, 10000));
  if (n > 0) {
    spdlog::info("reconciler: re-sending {} commands lost with the previous process", n);
    observer_->Redispatched();
  }
  return n;
}

int Reconciler::Redispatch() {
  int missing = CountOrLog(
      "redispatch", store_->RedispatchMissingOutbox(config_.redispatch_grace_seconds, kBatch));
  int stale =
      CountOrLog("redispatch", store_->ResendStaleSentOutbox(config_.sent_stale_seconds,
                                                             config_.redispatch_grace_seconds, 20));
  return missing + stale;
}

int Reconciler::RecoverLeases() {
  auto recovered = store_->RecoverExpiredLeases(20);
  if (!recovered.ok()) return CountOrLog("lease_recover", recovered);
  for (const auto& r : *recovered) {
    const bool cancelled = r.outcome == store::LeaseRecovery::kCancelled;
    const bool failed = r.outcome == store::LeaseRecovery::kFailed;
    const char* outcome = cancelled ? "cancelled as the user asked"
                          : failed  ? "failed after max attempts"
                                    : "retrying with a new version";
    spdlog::warn("task {} v{}: lease expired, {}", r.task_id, r.old_version, outcome);
    if (r.object_key) (void)storage_->Delete(*r.object_key);
    if (failed || cancelled) {
      observer_->TaskEnded(r.export_type, cancelled ? "CANCELLED" : "FAILED");
    }
  }
  return static_cast<int>(recovered->size());
}

int Reconciler::DeleteOldHistory() {
  if (config_.task_history_days <= 0) return 0;
  int deleted = 0;
  for (int batch = 0; batch < kHistoryBatchesPerRound; ++batch) {
    const int n = CountOrLog("history_delete",
                             store_->DeleteOldHistory(config_.task_history_days, kHistoryBatch));
    deleted += n;
    if (n < kHistoryBatch) break;
  }
  return deleted;
}

int Reconciler::ExpireFiles() {
  auto expired = store_->ListExpiredArtifacts(kBatch);
  if (!expired.ok()) return CountOrLog("expire", expired);
  int done = 0;
  for (const auto& a : *expired) {
    // The file goes first; only a confirmed delete lets the task say EXPIRED.
    Status deleted = storage_->Delete(a.object_key);
    if (!deleted.ok()) {
      spdlog::error("task {}: cannot delete expired file: {}", a.task_id, deleted.ToString());
      continue;
    }
    auto marked = store_->MarkExpired(a.task_id);
    if (marked.ok() && *marked == store::ExpireOutcome::kExpired) ++done;
  }
  return done;
}

int Reconciler::CleanOrphans() { return CleanOrphanFiles() + CleanPartialFiles(); }

// A partial file (or an incomplete multipart upload) belongs to an attempt
// that is writing it. Only a RUNNING attempt writes, so once its task is
// anything else the writer is dead (a crash skipped its clean-up) and the
// partial can go at once — which is how a `kill -9` mid-export leaves nothing
// behind after recovery. A partial of a task this database does not know
// waits out orphan_grace_seconds, like a stored file (another installation
// may share the bucket or volume by mistake).
int Reconciler::CleanPartialFiles() {
  auto partials = storage_->ListPartials();
  if (!partials.ok()) return CountOrLog("orphan_clean", partials);
  const int64_t cutoff = NowMs() - static_cast<int64_t>(config_.orphan_grace_seconds) * 1000;
  int cleaned = 0;
  for (const auto& partial : *partials) {
    auto task = store_->GetTask(partial.task_id);
    bool writer_may_live = true;  // unsure (the database failed): keep it
    if (task.ok()) {
      writer_may_live = task->status == task::TaskState::kRunning;
    } else if (task.status().code() == StatusCode::kNotFound) {
      writer_may_live = partial.modified_at_ms > cutoff;
    }
    if (writer_may_live) continue;
    if (storage_->DeletePartial(partial).ok()) ++cleaned;
  }
  return cleaned;
}

// A stored file whose task has moved on without recording it — a crash
// between the rename and the commit, or a commit that lost its race — is
// deleted as soon as its task is neither RUNNING (that attempt may still
// commit it) nor SUCCEEDED with this very key. Files of tasks this database
// does not know wait out orphan_grace_seconds (another installation may share
// the volume by mistake).
int Reconciler::CleanOrphanFiles() {
  auto objects = storage_->List();
  if (!objects.ok()) return CountOrLog("orphan_clean", objects);
  const int64_t cutoff = NowMs() - static_cast<int64_t>(config_.orphan_grace_seconds) * 1000;
  int cleaned = 0;
  int64_t kept_bytes = 0;
  for (const auto& object : *objects) {
    if (IsOrphan(object, cutoff) && storage_->Delete(object.key).ok()) {
      ++cleaned;
    } else {
      kept_bytes += static_cast<int64_t>(object.size);
    }
  }
  observer_->StorageBytes(kept_bytes);
  return cleaned;
}

bool Reconciler::IsOrphan(const storage::StoredObject& object, int64_t grace_cutoff_ms) {
  auto task_id = storage::TaskIdOfObjectKey(object.key);
  auto task = task_id ? store_->GetTask(*task_id) : StatusOr<task::Task>(NotFound("no task id"));
  if (!task.ok()) {
    return task.status().code() == StatusCode::kNotFound &&
           object.modified_at_ms <= grace_cutoff_ms;
  }
  if (task->status == task::TaskState::kRunning) return false;
  return !(task->status == task::TaskState::kSucceeded && task->object_key == object.key);
}

}  // namespace export_center::dispatch
