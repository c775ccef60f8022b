#pragma once
// AbortSignal: tells a running export attempt to stop at its next safe point
// (a page boundary or every N rows inside the write loop). Set by the lease
// watchdog (lease lost, deadline passed, renewal failing) and by shutdown.
// Thread-safe; the first reason wins.

#include <atomic>

#include "common/mutex.h"
#include "common/status.h"

namespace export_center::dispatch {

class AbortSignal {
 public:
  void Set(Status reason) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (set_.load()) return;
    reason_ = std::move(reason);
    set_.store(true);
  }
  bool IsSet() const { return set_.load(std::memory_order_relaxed); }
  // OK while not set.
  Status Check() const EXCLUDES(mu_) {
    if (!IsSet()) return Status::Ok();
    MutexLock lock(&mu_);
    return reason_;
  }

 private:
  std::atomic<bool> set_{false};
  mutable Mutex mu_;
  Status reason_ GUARDED_BY(mu_);
};

}  // namespace export_center::dispatch
