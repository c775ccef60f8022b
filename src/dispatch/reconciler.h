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
//   history_delete  with retention.task-history-days: ended tasks without a
//                   file older than that, with their timeline and audit rows,
//                   in small batches (never an active or SUCCEEDED task)
//
// Threads: one owned worker thread. RunOnce() may be called from tests.

#include <cstdint>
#include <map>
#include <string>

#include "common/periodic_worker.h"
#include "dispatch/options.h"
#include "storage/export_storage.h"
#include "store/task_maintenance.h"

namespace export_center::dispatch {

// What the reconciler reports: to the publisher (wake) and to metrics. Called
// on the reconciler's thread (ResendAfterRestart: on its caller's); must not
// block. Every method does nothing unless overridden.
class ReconcilerObserver {
 public:
  virtual ~ReconcilerObserver() = default;
  // Rows went back to PENDING: the publisher should run now.
  virtual void Redispatched() {}
  // A duty changed `count` rows this round (export_reconciler_action_total).
  virtual void ActionTaken(const std::string& action, int count) {}
  // Lease recovery ended a task of `type` as `status`, FAILED or CANCELLED
  // (export_task_completed_total).
  virtual void TaskEnded(const std::string& type, const std::string& status) {}
  // What the stored files hold after an orphan sweep (export_storage_bytes):
  // the sweep lists the storage anyway, so a /metrics scrape never has to.
  virtual void StorageBytes(int64_t bytes) {}
};

class Reconciler {
 public:
  // `observer` may be null; it must outlive the reconciler.
  Reconciler(store::TaskMaintenance* store, storage::ExportStorage* storage,
             const ReconcilerOptions& config, ReconcilerObserver* observer = nullptr);
  ~Reconciler();
  Reconciler(const Reconciler&) = delete;
  Reconciler& operator=(const Reconciler&) = delete;

  void Start();
  void Stop();

  // Runs every duty once. Returns the count per action name.
  std::map<std::string, int> RunOnce();

  // Start-up resend for a channel that loses its queue with the process (the
  // embedded one): SENT rows of PENDING tasks go back to PENDING at once, same
  // version, so a restarted node resumes in seconds, not sent-stale-seconds.
  int ResendAfterRestart();

 private:
  int Redispatch();
  int RecoverLeases();
  int ExpireFiles();
  int CleanOrphans();
  int CleanOrphanFiles();
  int CleanPartialFiles();
  int DeleteOldHistory();
  bool IsOrphan(const storage::StoredObject& object, int64_t grace_cutoff_ms);

  store::TaskMaintenance* store_;
  storage::ExportStorage* storage_;
  const ReconcilerOptions config_;
  ReconcilerObserver no_observer_;
  ReconcilerObserver* const observer_;  // never null
  PeriodicWorker worker_;               // RunOnce every interval_seconds
};

}  // namespace export_center::dispatch
