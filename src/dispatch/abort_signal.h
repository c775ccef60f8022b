#pragma once
// AbortSignal: tells a running export attempt to stop at its next safe point
// (a page boundary or every N rows inside the write loop). Set by the lease
// watchdog (lease lost, deadline passed, renewal failing) and by shutdown.
// Thread-safe; the first reason wins.

#include <atomic>
#include <mutex>

#include "common/status.h"

namespace export_center::dispatch {

class AbortSignal {
 public:
  void Set(Status reason) {
    std::lock_guard lock(mu_);
    if (set_.load()) return;
    reason_ = std::move(reason);
    set_.store(true);
  }
  bool IsSet() const { return set_.load(std::memory_order_relaxed); }
  // OK while not set.
  Status Check() const {
    if (!IsSet()) return Status::Ok();
    std::lock_guard lock(mu_);
    return reason_;
  }

 private:
  std::atomic<bool> set_{false};
  mutable std::mutex mu_;
  Status reason_;  // GUARDED_BY(mu_)
};

}  // namespace export_center::dispatch
