#pragma once
// CommandChannel: carries commands from the outbox publisher to consumers.
//
// At-least-once, no delaying, no re-ordering guarantees
// (docs/guarantees.md#the-channel-does-no-delaying). Two backends implement
// it: EmbeddedCommandChannel (an in-process queue, embedded_command_channel.h)
// and RocketMqCommandChannel (a RocketMQ cluster, in its own folder
// rocketmq/, docs/deploy.md#rocketmq); app/ picks one by channel.kind
// (backends.cc).
//
// A delivery ends in exactly one of Ack (processed, whatever the outcome) or
// Reject (could not even decode it: poison). A rejected delivery is redelivered
// until the channel's delivery limit, then handed to the dead-letter handler.
// A dead letter is removed only when the handler acknowledges it; a rejected
// dead letter is delivered to the handler again, without limit (its own
// database failure must never drop one).

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "task/command.h"

namespace export_center::dispatch {

struct Delivery {
  std::string payload;                 // possibly corrupt
  task::CommandProperties properties;  // set by the publisher beside the payload
  // A command: 1 on first delivery. A dead letter: how many times it was
  // delivered as a command before it was dead-lettered (a broker may add the
  // dead letter's own earlier handovers).
  int delivery_count = 1;
  // The channel's own id, for audit logs; the same for every delivery of one
  // command, its dead letter included.
  std::string message_id;
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
  // to `wait`. kAck removes the dead letter; kReject keeps it to be handed
  // over again (the handler could not record it).
  virtual bool ConsumeDeadLetter(
      std::chrono::milliseconds wait,
      const std::function<DeliveryOutcome(const Delivery&)>& handler) = 0;

  // Wakes every blocked ConsumeOne/ConsumeDeadLetter and makes them return false.
  virtual void Close() = 0;
};

}  // namespace export_center::dispatch
