#pragma once
// ReadAhead<T>: runs one fetch function on a worker thread of its own, at
// most one call ahead of the caller, so that the next fetch (a page
// statement on the replica, the next page of any RowSource) runs while the
// caller works on the result of the last one (converting and enriching that
// page, writing it). The one read-ahead of the export pipeline: the SQL
// route's pager and enrich lookups and source::PrefetchingRowSource are
// built on it (docs/conventions.md#threads).
//
//   ReadAhead<Rows> ahead([&] { return ReadPage(); });
//   ahead.Start();                       // the first fetch
//   StatusOr<Rows> rows = ahead.Take();  // waits for it
//   if (rows.ok() && more) ahead.Start();  // the next one, while we work
//
// Start() asks for one call; Take() waits for the call started last and
// returns its result. Calls run one at a time, in order, on the worker, so
// whatever state the fetch function keeps (a paging boundary) needs no lock
// as long as only the worker touches it. The caller decides when to start
// the next call — never after an error or the last page — so nothing runs
// that nobody will take, beyond the one call in flight when the caller
// stops. Destroying a ReadAhead waits for that call (bounded by the fetch's
// own timeouts) and starts nothing more. One caller thread.

#include <functional>
#include <optional>
#include <thread>
#include <utility>

#include "common/mutex.h"
#include "common/status.h"
#include "common/thread_guard.h"

namespace export_center {

template <typename T>
class ReadAhead {
 public:
  // `thread_name` names the worker (for logs and profiles): a literal.
  explicit ReadAhead(std::function<StatusOr<T>()> fetch, const char* thread_name = "read_ahead")
      : fetch_(std::move(fetch)), thread_name_(thread_name) {}
  ~ReadAhead() {
    {
      MutexLock lock(&mu_);
      stopping_ = true;
      cv_.SignalAll();
    }
    if (worker_.joinable()) worker_.join();
  }
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // Asks the worker for one more call. Call it again only after Take().
  void Start() {
    if (!worker_.joinable()) worker_ = StartWorkerThread(thread_name_, [this] { Work(); });
    MutexLock lock(&mu_);
    requested_ = true;
    cv_.SignalAll();
  }

  // Waits for the call started last and returns its result.
  StatusOr<T> Take() {
    MutexLock lock(&mu_);
    while (!result_) cv_.Wait(&mu_);
    StatusOr<T> result = std::move(*result_);
    result_.reset();
    return result;
  }

 private:
  void Work() {
    while (true) {
      {
        MutexLock lock(&mu_);
        while (!requested_ && !stopping_) cv_.Wait(&mu_);
        if (stopping_) return;
        requested_ = false;
      }
      StatusOr<T> result = RunGuardedOnce(thread_name_, fetch_);
      MutexLock lock(&mu_);
      result_.emplace(std::move(result));
      cv_.SignalAll();
    }
  }

  const std::function<StatusOr<T>()> fetch_;  // on worker_ only
  const char* const thread_name_;

  Mutex mu_;
  CondVar cv_;
  bool requested_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::optional<StatusOr<T>> result_ GUARDED_BY(mu_);
  std::thread worker_;
};

}  // namespace export_center
