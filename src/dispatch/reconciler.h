#pragma once
// Reconciler: the only re-dispatch path (docs/task-lifecycle.md#reconciler-duties).
//
// Every interval it runs each duty once; each duty is an idempotent
// conditional update, so several instances may run it side by side:
//   redispatch      case A: a PENDING task without an outbox row for its version gets one
//                   case B: a long-SENT row of a still-PENDING task is re-sent
//                   (neither changes dispatch_version: a queued task must not starve)
//   lease_recover   RUNNING past its lease: retry with version+1, or FAILED,
//                   or CANCELLED when a cancel was requested
//   outbox_release  CLAIMED rows past their lease go back to PENDING
//   expire          delete the file first, then SUCCEEDED → EXPIRED
//   orphan_clean    stored files their task does not own (at once once the
//                   task is not RUNNING; after the grace when the task is
//                   unknown), and partial files of crashed writers
//   outbox_purge    SENT rows older than the retention, in bounded batches
//
// Threads: one owned worker thread. RunOnce() may be called from tests.

#include <functional>
#include <map>
#include <string>
#include <thread>

#include "common/mutex.h"
#include "dispatch/options.h"
#include "storage/export_storage.h"
#include "store/task_maintenance.h"

namespace export_center::dispatch {

class Reconciler {
 public:
  // `on_redispatch` wakes the publisher; `on_action(action, count)` feeds
  // export_reconciler_action_total; `on_task_ended(type, status)` is called
  // for each task lease recovery ended (FAILED, CANCELLED) and feeds
  // export_task_completed_total. `on_storage_bytes(bytes)` reports what the
  // stored files hold after each orphan sweep (export_storage_bytes): the
  // sweep lists the storage anyway, so a /metrics scrape never has to.
  // Each may be empty.
  Reconciler(store::TaskMaintenance* store, storage::ExportStorage* storage,
             const ReconcilerOptions& config, std::function<void()> on_redispatch,
             std::function<void(const std::string&, int)> on_action,
             std::function<void(const std::string&, const std::string&)> on_task_ended = {},
             std::function<void(int64_t)> on_storage_bytes = {});
  ~Reconciler();
  Reconciler(const Reconciler&) = delete;
  Reconciler& operator=(const Reconciler&) = delete;

  void Start();
  void Stop() EXCLUDES(mu_);

  // Runs every duty once. Returns the count per action name.
  std::map<std::string, int> RunOnce();

  // Start-up resend for a channel that loses its queue with the process (the
  // embedded one): SENT rows of PENDING tasks go back to PENDING at once, same
  // version, so a restarted node resumes in seconds, not sent-stale-seconds.
  int ResendAfterRestart();

 private:
  void Run() EXCLUDES(mu_);
  int Redispatch();
  int RecoverLeases();
  int ExpireFiles();
  int CleanOrphans();
  int CleanOrphanFiles();
  int CleanPartialFiles();
  bool IsOrphan(const storage::StoredObject& object, int64_t grace_cutoff_ms);

  store::TaskMaintenance* store_;
  storage::ExportStorage* storage_;
  const ReconcilerOptions config_;
  std::function<void()> on_redispatch_;
  std::function<void(const std::string&, int)> on_action_;
  std::function<void(const std::string&, const std::string&)> on_task_ended_;
  std::function<void(int64_t)> on_storage_bytes_;
  Mutex mu_;
  CondVar stop_cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread worker_;
};

}  // namespace export_center::dispatch
