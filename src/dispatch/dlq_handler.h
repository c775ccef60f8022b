#pragma once
// DlqHandler: quarantines poison commands (docs/task-lifecycle.md#dead-letters-and-quarantine).
//
// A dead letter is a command that could not even be decoded. Its body is not
// trusted; the task and version come from the properties the publisher put
// beside it. In one transaction the outbox row becomes QUARANTINED — so the
// reconciler never re-sends the same broken payload — and the task FAILED.
// A dead letter is acknowledged only once that is done, or when it is known
// to be old or foreign, or cannot be located at all (logged CRITICAL); when
// the quarantine itself fails it is kept and handed over again.
// Threads: one owned worker thread.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "dispatch/command_channel.h"
#include "store/task_maintenance.h"

namespace export_center::dispatch {

class DlqHandler {
 public:
  // `on_dead_letter` counts export_dlq_messages_total; may be empty.
  DlqHandler(store::CommandQuarantine* store, CommandChannel* channel,
             std::function<void()> on_dead_letter);
  ~DlqHandler();
  DlqHandler(const DlqHandler&) = delete;
  DlqHandler& operator=(const DlqHandler&) = delete;

  void Start();
  void Stop();
  // Handles one dead letter: kAck when it is done with it, kReject when the
  // quarantine failed and the dead letter must come back. Public for tests.
  DeliveryOutcome Handle(const Delivery& delivery);

 private:
  void WaitBeforeRetry();

  store::CommandQuarantine* store_;
  CommandChannel* channel_;
  std::function<void()> on_dead_letter_;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  std::atomic<bool> stopping_{false};
  std::thread worker_;
};

}  // namespace export_center::dispatch
