#pragma once
// The RocketMQ names of the command channel (docs/deploy.md#rocketmq): one
// function of the topic prefix, so the channel and `export-center rocketmq
// init` can never disagree on a name.
//
//   command topic        <prefix>export-center-command-v1   (tag EXPORT_TASK, 4 queues)
//   producer group       <prefix>export-center-publisher-v1
//   worker group         <prefix>export-center-worker-v1
//   DLQ-handler group    <prefix>export-center-dlq-handler-v1, reading
//   dead-letter topic    %DLQ%<prefix>export-center-worker-v1
//
// Message key = the task id. No delay levels: every delay lives in the
// outbox's next_retry_at (docs/dispatch.md#the-outbox-row).

#include <string>
#include <string_view>

namespace export_center::dispatch {

inline constexpr std::string_view kRocketMqCommandTag = "EXPORT_TASK";
inline constexpr int kRocketMqCommandQueues = 4;
// Read/write permission of a topic (PermName: 4 read + 2 write). The broker
// creates a %DLQ% topic write-only (2) on 4.x, which nobody could consume.
inline constexpr int kRocketMqPermReadWrite = 6;
// The DLQ handler's own retry limit: "effectively unlimited", so that its
// database failures never push a dead letter into a second-level DLQ
// (docs/task-lifecycle.md#dead-letters-and-quarantine). The broker stores it
// as an int; INT_MAX as the design's Java client would send it.
inline constexpr int kRocketMqUnlimitedRetries = 2147483647;

struct RocketMqNames {
  std::string command_topic;
  std::string producer_group;
  std::string worker_group;
  std::string dlq_handler_group;
  std::string dead_letter_topic;  // %DLQ%<worker_group>
};

// `prefix` as configured (channel.rocketmq.topic-prefix, checked by config/).
RocketMqNames RocketMqNamesFor(std::string_view prefix);

// A delivery's count from the broker's reconsume times: 1 on first delivery.
int DeliveryCountOf(int reconsume_times);

// The worker group's retry limit for a channel.delivery-limit: a rejected
// command is delivered `delivery_limit` times, then dead-lettered.
int WorkerRetryMaxTimes(int delivery_limit);

}  // namespace export_center::dispatch
