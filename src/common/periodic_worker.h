#pragma once
// PeriodicWorker: one owned thread that runs a round, waits, and runs it
// again — the loop of every background duty of the center (reconciler,
// publishers, DLQ handler, lease watchdog, config watcher, SSE poller).
//
// The thread runs under the thread guard (StartGuardedThread,
// common/thread_guard.h): a round that throws is logged and counted under the
// worker's name, and the loop starts again after the guard's back-off; the
// failpoint "thread.<name>" fires at each (re)start. Each round says what
// comes next: the configured interval, a wait of its own, another round at
// once (a full batch: more may be due), or the end of the thread (the lease
// watchdog after it aborted its attempt). A wait ends early on Wake() (the
// round runs at once) and on Stop() (the thread ends without another round).
// A Wake() that arrives while a round runs ends the next wait at once, so no
// wake is lost.
//
// Threads: Start(), Stop() and Running() from the owner's thread; Wake() and Stopping()
// from any thread (a round polls Stopping() to end a long pass early).

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "common/mutex.h"

namespace export_center {

class PeriodicWorker {
 public:
  // What a round asks for next.
  class Next {
   public:
    static Next Interval() { return Next(Kind::kInterval, {}); }
    static Next After(std::chrono::milliseconds wait) { return Next(Kind::kAfter, wait); }
    static Next Now() { return Next(Kind::kNow, {}); }
    static Next Finish() { return Next(Kind::kFinish, {}); }

   private:
    friend class PeriodicWorker;
    enum class Kind { kInterval, kAfter, kNow, kFinish };
    Next(Kind kind, std::chrono::milliseconds wait) : kind_(kind), wait_(wait) {}
    Kind kind_;
    std::chrono::milliseconds wait_;
  };

  enum class FirstRound {
    kAtOnce,     // the round runs as soon as the thread starts
    kAfterWait,  // the thread waits one interval before its first round
  };

  struct Options {
    std::string name;  // the thread's name, at most 15 bytes
    std::chrono::milliseconds interval{1000};
    FirstRound first_round = FirstRound::kAtOnce;
  };

  PeriodicWorker(Options options, std::function<Next()> round);
  ~PeriodicWorker();  // Stop()
  PeriodicWorker(const PeriodicWorker&) = delete;
  PeriodicWorker& operator=(const PeriodicWorker&) = delete;

  // Starts the thread; no-op while it runs. After Stop() it starts afresh.
  void Start() EXCLUDES(mu_);
  // Ends the current wait and joins the thread (a round in progress finishes
  // first). Idempotent.
  void Stop() EXCLUDES(mu_);
  // Ends the current (or next) wait, so a round runs now.
  void Wake() EXCLUDES(mu_);
  // True between Start() and Stop() (the owner's thread only).
  bool Running() const { return thread_.joinable(); }
  // True once Stop() was called (until the next Start()).
  bool Stopping() const EXCLUDES(mu_);

 private:
  void Loop() EXCLUDES(mu_);
  // Waits `wait` or until woken; false when stopping.
  bool WaitForRound(std::optional<std::chrono::milliseconds> wait) EXCLUDES(mu_);

  const Options options_;
  const std::function<Next()> round_;
  mutable Mutex mu_;
  CondVar cv_;
  bool woken_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace export_center
