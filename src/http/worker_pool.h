#pragma once
// WorkerPool: a fixed set of threads running posted tasks in FIFO order.
//
// The HTTP server runs handlers and stream reads here so that blocking work
// never stalls an I/O thread. Post is thread-safe. Stop runs no task that has
// not started, waits for running ones, and drops later posts.

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "common/mutex.h"

namespace export_center::http {

class WorkerPool {
 public:
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Post(std::function<void()> task);
  void Stop();

 private:
  void Run();

  Mutex mu_;
  CondVar cv_;
  std::deque<std::function<void()>> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace export_center::http
