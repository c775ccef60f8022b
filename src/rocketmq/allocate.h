#pragma once
// RocketMQ's AllocateMessageQueueAveragely (internal to rocketmq/): how the
// members of a consumer group split a topic's queues. Every member computes
// it alone from the same inputs, so each queue gets exactly one owner.

#include <string>
#include <vector>

#include "rocketmq/message.h"

namespace export_center::rocketmq {

// The queues `client_id` owns. `queues` and `client_ids` must be sorted
// (MessageQueue's operator<, string order); empty when client_id is not in
// client_ids. The first (queues % clients) members get one queue more, in
// contiguous blocks, exactly as the Java client allocates, so C++ and Java
// members of one group agree.
std::vector<MessageQueue> AllocateAveragely(const std::vector<MessageQueue>& queues,
                                            const std::vector<std::string>& client_ids,
                                            const std::string& client_id);

}  // namespace export_center::rocketmq
