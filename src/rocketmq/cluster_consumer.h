#pragma once
// ClusterConsumer: a clustering-mode consumer of one topic for one consumer
// group, shaped as a pull-by-the-caller engine: the caller's threads Take()
// messages and end each with Ack() or SendBack().
//
// Inside (docs/rocketmq.md#consumer): HEART_BEAT to every broker of the
// topic's route with the group's subscriptions (the topic and, unless
// disabled, %RETRY%<group>); rebalance = RocketMQ's average allocation of the
// sorted queues over the sorted client ids of the group
// (GET_CONSUMER_LIST_BY_GROUP), per topic, re-run every rebalance_interval
// and when a broker sends NOTIFY_CONSUMER_IDS_CHANGED; one long-poll
// PULL_MESSAGE at a time per assigned queue; reconnect with back-off when a
// broker or the NameServer is down; route refresh.
//
// Offsets and acknowledgement: a queue's consume offset is the lowest offset
// not yet acknowledged (or sent back) — everything below it is done. It is
// committed to the broker (UPDATE_CONSUMER_OFFSET, and on pulls) every
// offset_commit_interval, when a queue is given away and on Shutdown; never
// past a message that is not done. So after a crash or a rebalance only
// messages that were not done are delivered again (at-least-once: a message
// acknowledged after the last commit is delivered again too). A fresh group
// with no committed offset starts at the queue's minimum offset: messages
// published before the group first consumed are not skipped. The one
// exception: a stored record that does not decode is skipped after
// undecodable_max_pulls single-message pulls (docs/rocketmq.md#undecodable-messages).
//
// Thread-safety: every method may be called from any thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "rocketmq/client_options.h"
#include "rocketmq/message.h"

namespace export_center::rocketmq {

// A record skipped because it could not be decoded.
struct UndecodableSkip {
  MessageQueue queue;
  int64_t queue_offset = 0;  // the offset pulled; the record is at or after it
  int pulls = 0;             // single-message pulls that failed on it
  std::string error;         // the decoder's error, made valid UTF-8 and cut
};

struct ConsumerOptions {
  ClientOptions client;
  std::string group;
  std::string topic;
  // "*" (everything) or "TagA || TagB".
  std::string tag_expression = "*";
  // Also consume %RETRY%<group>, where the broker redelivers sent-back
  // messages. Without it a sent-back message is never seen again.
  bool subscribe_retry_topic = true;
  // Messages per PULL_MESSAGE.
  int pull_batch_size = 16;
  // How long the broker may hold a pull open when there is nothing new.
  std::chrono::milliseconds long_poll_timeout{15000};
  // A queue is not pulled while this many of its messages are buffered or
  // taken and not done.
  int max_buffered_per_queue = 64;
  // RocketMQ delay level of a sent-back message's redelivery: 1 = 1 s,
  // 2 = 5 s, 3 = 10 s ... (the broker's messageDelayLevel). 0 would let the
  // broker pick 3 + reconsume times (10 s, 30 s, 1 min ...). The default, 1,
  // makes a poison message reach %DLQ% after maxReconsumeTimes = 2 within a
  // few seconds (two 1 s delays) instead of 40 s — delays are not this
  // product's retry mechanism (docs/rocketmq.md#send-back), so a short fixed
  // one only paces redelivery.
  int send_back_delay_level = 1;
  // Redeliveries before %DLQ%<group>. Unset: the subscription group's
  // retryMaxTimes on the broker decides (what `rocketmq init` sets).
  std::optional<int> max_reconsume_times;
  std::chrono::milliseconds rebalance_interval{20000};
  std::chrono::milliseconds offset_commit_interval{1000};
  // A message whose SendBack failed is offered again after this long.
  std::chrono::milliseconds local_redelivery_delay{1000};
  // A pulled record the decoder refuses (DecodeMessages: a corrupt store
  // record) is pulled again, alone, this many times in all and then skipped:
  // logged, reported to on_undecodable_skipped and counted as done, so the
  // queue's offset moves past it (docs/rocketmq.md#undecodable-messages).
  // A batch that fails to decode is first pulled again one message at a
  // time, so the good messages around the bad one are delivered.
  int undecodable_max_pulls = 3;
  // Called once per skipped record, on the I/O thread, without the
  // consumer's lock; must not block. May be empty.
  std::function<void(const UndecodableSkip&)> on_undecodable_skipped;
};

// One taken message and the handle to end it.
struct Received {
  MessageExt message;
  // The queue it came from (stored topic, broker, queue id).
  MessageQueue queue;
  // Which assignment of that queue to this consumer delivered it; Ack and
  // SendBack of a message from an earlier assignment do nothing.
  uint64_t assignment = 0;

  // 1 on the first delivery, 2 on the first redelivery, ...
  int delivery_count() const { return message.reconsume_times + 1; }
};

class ClusterConsumer {
 public:
  // Validates the options and starts the background work; does not wait for
  // the cluster (messages flow once it is reachable). InvalidArgument on bad
  // options.
  static StatusOr<std::unique_ptr<ClusterConsumer>> Start(const ConsumerOptions& options);
  // Shutdown() if not yet done.
  ~ClusterConsumer();
  ClusterConsumer(const ClusterConsumer&) = delete;
  ClusterConsumer& operator=(const ClusterConsumer&) = delete;

  // Blocks up to `wait` for a message from an assigned queue. nullopt when
  // none arrived in time or after Shutdown(). Each message is handed to one
  // Take() only (until it is redelivered).
  std::optional<Received> Take(std::chrono::milliseconds wait);

  // The message is processed: it counts as done and the queue's offset may
  // move past it. Idempotent.
  void Ack(const Received& received);

  // The message could not be processed: CONSUMER_SEND_MSG_BACK asks the
  // broker to redeliver it (via %RETRY%<group>, after send_back_delay_level)
  // or, past the group's max reconsume times, to move it to %DLQ%<group>.
  // On success the message counts as done here. Unavailable when the broker
  // could not be asked: the message is then offered again locally after
  // local_redelivery_delay — never lost, not yet counted by the broker.
  // Ok and nothing else for a message of a queue no longer assigned here (its
  // new owner delivers it again).
  Status SendBack(const Received& received);

  // Stops pulling, commits the offsets, unregisters from the brokers
  // (UNREGISTER_CLIENT) and wakes blocked Take() calls. Messages taken and not
  // done are delivered again later (here or to another member). Idempotent.
  void Shutdown();

  // The queues assigned to this consumer now (both topics), sorted.
  std::vector<MessageQueue> AssignedQueues() const;
  const std::string& client_id() const;

 private:
  class Impl;
  explicit ClusterConsumer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace export_center::rocketmq
