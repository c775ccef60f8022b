#include "dispatch/rocketmq/rocketmq_names.h"

#include <algorithm>

namespace export_center::dispatch {

RocketMqNames RocketMqNamesFor(std::string_view prefix) {
  const std::string p(prefix);
  RocketMqNames names;
  names.command_topic = p + "export-center-command-v1";
  names.producer_group = p + "export-center-publisher-v1";
  names.worker_group = p + "export-center-worker-v1";
  names.dlq_handler_group = p + "export-center-dlq-handler-v1";
  names.dead_letter_topic = "%DLQ%" + names.worker_group;
  return names;
}

int DeliveryCountOf(int reconsume_times) { return std::max(reconsume_times, 0) + 1; }

// The broker dead-letters a sent-back message whose reconsume times already
// reached the limit: with limit L it is delivered L + 1 times.
int WorkerRetryMaxTimes(int delivery_limit) { return std::max(delivery_limit, 1) - 1; }

}  // namespace export_center::dispatch
