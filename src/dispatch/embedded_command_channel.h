#pragma once
// EmbeddedCommandChannel: the in-process CommandChannel of the embedded
// default (one process, SQLite). A mutex-guarded queue; rejected deliveries go
// back to the tail until the delivery limit, then to the dead-letter queue —
// the same contract RabbitMQ's quorum queues give with x-delivery-limit.
//
// Commands live only in memory: after a crash the reconciler (and the start-up
// resend in app/) re-sends them from the outbox, which is the source of truth.

#include <memory>

#include "dispatch/command_channel.h"

namespace export_center::dispatch {

// delivery_limit: how many times one command may be delivered and rejected
// before it is dead-lettered (>= 1).
std::unique_ptr<CommandChannel> NewEmbeddedCommandChannel(int delivery_limit);

}  // namespace export_center::dispatch
