#pragma once
// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable with
// the thread-safety annotations of common/thread_annotations.h, so that clang
// checks every GUARDED_BY member is touched only with its lock held.
//
//   Mutex mu_;
//   CondVar ready_cv_;
//   bool ready_ GUARDED_BY(mu_) = false;
//
//   MutexLock lock(&mu_);
//   while (!ready_) ready_cv_.Wait(&mu_);
//
// CondVar has no predicate overloads on purpose: a predicate lambda is a
// function of its own to the analysis, which cannot see that its caller holds
// the lock, so callers loop on the condition themselves as above.

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "common/thread_annotations.h"

namespace export_center {

class CondVar;

// A non-recursive exclusive lock.
class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for the lifetime of the scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// A condition variable used with a Mutex the caller holds.
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases `mu`, blocks until notified (or woken spuriously) and takes `mu`
  // again before returning.
  void Wait(Mutex* mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // the caller still holds `mu`
  }

  // As Wait, but gives up at `deadline`: returns false once it has passed.
  bool WaitUntil(Mutex* mu, std::chrono::steady_clock::time_point deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool notified = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();  // the caller still holds `mu`
    return notified;
  }

  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace export_center
