#pragma once
// RocketMqCommandChannel: the CommandChannel on a RocketMQ cluster, over the
// Remoting protocol of src/rocketmq/ (docs/deploy.md#rocketmq).
//
// Publish sends one message to the command topic (tag EXPORT_TASK, key = the
// task id, the command properties as user properties); a broker that cannot
// take it within send-timeout-ms gives Unavailable, so the outbox row stays
// PENDING and is retried with back-off. ConsumeOne takes from the worker
// group (command topic + its %RETRY% topic): kAck acknowledges (the offset is
// committed after that), kReject sends the message back, so the broker counts
// the reconsume and, after channel.delivery-limit deliveries, moves it to
// %DLQ%<worker group>. ConsumeDeadLetter takes from that topic as the
// DLQ-handler group: kAck acknowledges, kReject sends it back to be handed
// over again, without limit. Properties come from the message's user
// properties, never from the body, so a poison body can still be located.
//
// The consumers join their groups on the first ConsumeOne / ConsumeDeadLetter
// call, not before: a process that only publishes (consumer.enabled: false)
// must never hold queues it does not read.
//
// Threads: every method may be called from any thread.

#include <memory>

#include "common/status.h"
#include "dispatch/command_channel.h"
#include "dispatch/options.h"

namespace export_center::dispatch {

// `options.rocketmq` must be checked (config/): a name-server list and an
// explicit topic prefix. The topics and groups must exist
// (`export-center rocketmq init`). Fails with InvalidArgument on bad options;
// never waits for the broker (the first Publish or ConsumeOne does).
StatusOr<std::unique_ptr<CommandChannel>> NewRocketMqCommandChannel(const ChannelOptions& options);

}  // namespace export_center::dispatch
