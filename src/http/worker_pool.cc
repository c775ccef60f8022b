#include "http/worker_pool.h"

#include <utility>

#include "common/thread_guard.h"

namespace export_center::http {

WorkerPool::WorkerPool(int threads) {
  for (int i = 0; i < threads; ++i) {
    threads_.push_back(StartGuardedThread("http_worker", [this] { Run(); }));
  }
}

WorkerPool::~WorkerPool() { Stop(); }

void WorkerPool::Post(std::function<void()> task) {
  {
    MutexLock lock(&mu_);
    if (stopping_) return;
    queue_.push_back(std::move(task));
  }
  cv_.Signal();
}

void WorkerPool::Stop() {
  std::deque<std::function<void()>> dropped;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    dropped.swap(queue_);
  }
  cv_.SignalAll();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  // Dropped tasks may own connections; they go here, outside the lock.
  dropped.clear();
}

void WorkerPool::Run() {
  while (true) {
    std::function<void()> task;
    {
      MutexLock lock(&mu_);
      while (!stopping_ && queue_.empty()) cv_.Wait(&mu_);
      if (stopping_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace export_center::http
