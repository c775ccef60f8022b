#pragma once
// OutboxPublisher: moves committed commands from export_outbox to the channel
// (docs/dispatch.md#the-outbox-row).
//
// Two-step claim (select due ids, then a conditional PENDING → CLAIMED with a
// lease per row), send, then SENT; a failed send goes back to PENDING with
// back-off 5 s / 15 s / 1 m / 5 m / 15 m and 15 m forever — there is no
// terminal failure state. It polls every poll interval (other instances'
// rows) and wakes at once when this process commits a task (Wake()), so the
// embedded path has millisecond latency. A pass stops early when sends keep
// failing (the channel is down: one probe costs a whole send timeout).
//
// Threads: one owned worker thread; Wake() and Stop() from any thread.

#include <string>

#include "common/periodic_worker.h"
#include "dispatch/command_channel.h"
#include "dispatch/options.h"
#include "store/command_outbox.h"

namespace export_center::dispatch {

class OutboxPublisher {
 public:
  OutboxPublisher(store::CommandOutbox* store, CommandChannel* channel,
                  const PublisherOptions& config, std::string instance);
  ~OutboxPublisher();
  OutboxPublisher(const OutboxPublisher&) = delete;
  OutboxPublisher& operator=(const OutboxPublisher&) = delete;

  void Start();
  void Stop();
  // Asks for a publishing round now (after a local commit).
  void Wake();

  // One round: claims and sends up to batch-size due rows, fewer when the
  // channel looks down (kFailuresThatEndAPass failed sends in a row) or
  // Stop() was called. Returns how many rows were claimed. Public for tests.
  int PublishDueOnce();
  static constexpr int kFailuresThatEndAPass = 3;

 private:
  bool Stopping();
  // True when sent (and marked SENT, or left for the lease to re-send).
  bool SendOne(const store::OutboxEntry& entry);

  store::CommandOutbox* store_;
  CommandChannel* channel_;
  const PublisherOptions config_;
  const std::string instance_;

  // A round every poll interval, at once after a full batch or a Wake().
  PeriodicWorker worker_;
};

}  // namespace export_center::dispatch
