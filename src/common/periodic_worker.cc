#include "common/periodic_worker.h"

#include "common/thread_guard.h"

namespace export_center {

PeriodicWorker::PeriodicWorker(Options options, std::function<Next()> round)
    : options_(std::move(options)), round_(std::move(round)) {}

PeriodicWorker::~PeriodicWorker() { Stop(); }

void PeriodicWorker::Start() {
  if (thread_.joinable()) return;
  {
    MutexLock lock(&mu_);
    stopping_ = false;
  }
  thread_ = StartGuardedThread(options_.name, [this] { Loop(); });
}

void PeriodicWorker::Stop() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

void PeriodicWorker::Wake() {
  {
    MutexLock lock(&mu_);
    woken_ = true;
  }
  cv_.SignalAll();
}

bool PeriodicWorker::Stopping() const {
  MutexLock lock(&mu_);
  return stopping_;
}

// The guard runs this again after a round threw, from the top: a worker that
// waits before its first round waits again before the next.
void PeriodicWorker::Loop() {
  std::optional<std::chrono::milliseconds> wait;
  if (options_.first_round == FirstRound::kAfterWait) wait = options_.interval;
  while (WaitForRound(wait)) {
    const Next next = round_();
    switch (next.kind_) {
      case Next::Kind::kInterval:
        wait = options_.interval;
        break;
      case Next::Kind::kAfter:
        wait = next.wait_;
        break;
      case Next::Kind::kNow:
        wait.reset();
        break;
      case Next::Kind::kFinish:
        return;
    }
  }
}

bool PeriodicWorker::WaitForRound(std::optional<std::chrono::milliseconds> wait) {
  MutexLock lock(&mu_);
  if (wait) {
    const auto deadline = std::chrono::steady_clock::now() + *wait;
    while (!woken_ && !stopping_ && cv_.WaitUntil(&mu_, deadline)) {
    }
    woken_ = false;
  }
  return !stopping_;
}

}  // namespace export_center
