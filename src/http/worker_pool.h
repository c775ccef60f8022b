#pragma once
// WorkerPool: a fixed set of threads running posted tasks in FIFO order.
//
// The HTTP server runs handlers and stream reads here so that blocking work
// never stalls an I/O thread. Post is thread-safe. Stop runs no task that has
// not started, waits for running ones, and drops later posts.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

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

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace export_center::http
