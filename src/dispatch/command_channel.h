#pragma once
// CommandChannel: carries commands from the outbox publisher to consumers.
//
// At-least-once, no delaying, no re-ordering guarantees (SPEC §1.4). The one
// backend today is EmbeddedCommandChannel (an in-process queue,
// embedded_command_channel.h). A broker-backed channel would be another
// implementation of this seam, in its own folder beside it, chosen in app/
// (backends.cc), which refuses any channel.kind but "embedded" for now.
//
// A delivery ends in exactly one of Ack (processed, whatever the outcome) or
// Reject (could not even decode it: poison). A rejected delivery is redelivered
// until the channel's delivery limit, then handed to the dead-letter handler.

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "task/command.h"

namespace export_center::dispatch {

struct Delivery {
  std::string payload;                  // possibly corrupt
  task::CommandProperties properties;   // set by the publisher beside the payload
  int delivery_count = 1;               // 1 on first delivery
};

enum class DeliveryOutcome { kAck, kReject };

class CommandChannel {
 public:
  virtual ~CommandChannel() = default;

  // Sends one command. Thread-safe. Returns Unavailable when the channel
  // cannot accept it now (the outbox row stays and is retried with back-off).
  virtual Status Publish(const std::string& payload, const task::CommandProperties& properties) = 0;

  // Blocks up to `wait` for one delivery and runs `handler` on the calling
  // thread. Returns false when nothing arrived in time or the channel closed.
  // Thread-safe: each consumer thread calls it in a loop.
  virtual bool ConsumeOne(std::chrono::milliseconds wait,
                          const std::function<DeliveryOutcome(const Delivery&)>& handler) = 0;

  // Dead letters: deliveries rejected more than the delivery limit. Blocks up
  // to `wait`; the handler's return is ignored (dead letters are always acked).
  virtual bool ConsumeDeadLetter(std::chrono::milliseconds wait,
                                 const std::function<void(const Delivery&)>& handler) = 0;

  // Wakes every blocked ConsumeOne/ConsumeDeadLetter and makes them return false.
  virtual void Close() = 0;
};

}  // namespace export_center::dispatch
