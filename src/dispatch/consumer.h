#pragma once
// Consumer: a pool of threads that take commands from the channel and run
// them (docs/dispatch.md#components, docs/task-lifecycle.md#claim-branches).
//
// Each thread executes the export it claimed synchronously, so the pool size
// is the export concurrency and queued commands wait in the channel — that is
// the back-pressure. A delivery is acknowledged in every case but one: a
// payload that does not decode is rejected (poison), so that the channel
// redelivers it up to its limit and then dead-letters it. Every branch of the
// claim-miss table acknowledges without any remedy: the reconciler is the
// only re-dispatch path. The one exception is a task whose tenant is at its
// running limit (consumer.tenant-running-limit): the claim transaction itself
// hands its command back to the outbox with a short back-off
// (docs/dispatch.md#tenant-fairness).
//
// Stop(): stop taking commands; running attempts get shutdown_grace_seconds
// to finish, then stop at their next safe point and are handed back for retry.

#include <atomic>
#include <thread>
#include <vector>

#include "attempt/abort_signal.h"
#include "attempt/export_attempt.h"
#include "dispatch/command_channel.h"

namespace export_center::dispatch {

class Consumer {
 public:
  Consumer(CommandChannel* channel, attempt::AttemptDeps deps);
  ~Consumer();
  Consumer(const Consumer&) = delete;
  Consumer& operator=(const Consumer&) = delete;

  void Start();  // starts consumer.concurrency threads
  void Stop();

  // Handles one delivery on the calling thread. Public for tests.
  DeliveryOutcome Handle(const Delivery& delivery);

  // True once Stop() has told running attempts to stop (after the grace).
  bool ShutdownSignalled() const { return shutdown_.IsSet(); }

 private:
  void Loop();

  CommandChannel* channel_;
  const attempt::AttemptDeps deps_;
  std::atomic<bool> stopping_{false};
  attempt::AbortSignal shutdown_;
  std::vector<std::thread> threads_;
  std::atomic<int> running_attempts_{0};
};

}  // namespace export_center::dispatch
