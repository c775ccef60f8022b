#pragma once
// AbortSignal: tells a running export attempt to stop at its next safe point
// (a page boundary or every N rows inside the write loop). Set by the lease
// watchdog (lease lost, deadline passed, renewal failing), by shutdown and
// by a preview past its time limit. Thread-safe; the first reason wins.
//
// What the attempt is waiting for between safe points — a datasource
// statement — does not look at the flag, so the attempt subscribes a hook
// (OnSet) that cancels it (RowSource::Interrupt,
// docs/sql-template-route.md#deadlines).

#include <atomic>
#include <functional>
#include <list>
#include <utility>

#include "common/mutex.h"
#include "common/status.h"

namespace export_center::attempt {

class AbortSignal {
 public:
  using Hook = std::function<void(const Status& reason)>;

  // A hook subscribed by OnSet; unsubscribes when destroyed, waiting for the
  // hook if it is running.
  class Subscription {
   public:
    Subscription() = default;
    Subscription(Subscription&& other) noexcept
        : signal_(std::exchange(other.signal_, nullptr)), it_(other.it_) {}
    Subscription& operator=(Subscription&& other) noexcept {
      if (this != &other) {
        Reset();
        signal_ = std::exchange(other.signal_, nullptr);
        it_ = other.it_;
      }
      return *this;
    }
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;
    ~Subscription() { Reset(); }

   private:
    friend class AbortSignal;
    Subscription(const AbortSignal* signal, std::list<Hook>::iterator it)
        : signal_(signal), it_(it) {}
    void Reset() {
      if (signal_ == nullptr) return;
      MutexLock lock(&signal_->hooks_mu_);
      signal_->hooks_.erase(it_);
      signal_ = nullptr;
    }
    const AbortSignal* signal_ = nullptr;
    std::list<Hook>::iterator it_;
  };

  void Set(Status reason) EXCLUDES(mu_, hooks_mu_) {
    MutexLock hooks(&hooks_mu_);
    {
      MutexLock lock(&mu_);
      if (set_.load()) return;
      reason_ = std::move(reason);
      set_.store(true);
    }
    for (const Hook& hook : hooks_) hook(reason_unlocked());
  }
  bool IsSet() const { return set_.load(std::memory_order_relaxed); }
  // OK while not set.
  Status Check() const EXCLUDES(mu_) {
    if (!IsSet()) return Status::Ok();
    MutexLock lock(&mu_);
    return reason_;
  }

  // Calls `hook` once with the reason when the signal is set: on the thread
  // that sets it, or at once on this thread when it is set already. Until
  // the Subscription ends; the signal must outlive it. A hook must not
  // subscribe to or unsubscribe from this signal. const: an attempt
  // subscribes to the shutdown signal it only reads.
  [[nodiscard]] Subscription OnSet(Hook hook) const EXCLUDES(mu_, hooks_mu_) {
    MutexLock hooks(&hooks_mu_);
    if (IsSet()) {
      hook(reason_unlocked());
      return Subscription();
    }
    hooks_.push_back(std::move(hook));
    return Subscription(this, std::prev(hooks_.end()));
  }

 private:
  // reason_ once set_ is true: it never changes again.
  const Status& reason_unlocked() const NO_THREAD_SAFETY_ANALYSIS { return reason_; }

  std::atomic<bool> set_{false};
  mutable Mutex mu_;
  Status reason_ GUARDED_BY(mu_);
  // Taken before mu_; held while hooks run, so a Subscription never ends
  // while its hook runs.
  mutable Mutex hooks_mu_;
  mutable std::list<Hook> hooks_ GUARDED_BY(hooks_mu_);
};

}  // namespace export_center::attempt
