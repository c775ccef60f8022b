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

#include "common/periodic_worker.h"
#include "dispatch/command_channel.h"
#include "store/task_maintenance.h"

namespace export_center::dispatch {

// What the DLQ handler reports to metrics; on its thread (or Handle's
// caller); must not block. Does nothing unless overridden.
class DlqObserver {
 public:
  virtual ~DlqObserver() = default;
  // A dead letter arrived, whether or not it can be located
  // (export_dlq_messages_total).
  virtual void DeadLetterReceived() {}
};

class DlqHandler {
 public:
  // `observer` may be null; it must outlive the handler.
  DlqHandler(store::CommandQuarantine* store, CommandChannel* channel,
             DlqObserver* observer = nullptr);
  ~DlqHandler();
  DlqHandler(const DlqHandler&) = delete;
  DlqHandler& operator=(const DlqHandler&) = delete;

  void Start();
  void Stop();
  // Handles one dead letter: kAck when it is done with it, kReject when the
  // quarantine failed and the dead letter must come back. Public for tests.
  DeliveryOutcome Handle(const Delivery& delivery);

 private:
  // Takes one dead letter (waiting up to 200 ms for it); after a failed
  // quarantine the next round waits a second.
  PeriodicWorker::Next Round();

  store::CommandQuarantine* store_;
  CommandChannel* channel_;
  DlqObserver no_observer_;
  DlqObserver* const observer_;  // never null
  PeriodicWorker worker_;
};

}  // namespace export_center::dispatch
