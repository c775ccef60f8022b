#pragma once
// Message (what a producer sends), MessageExt (what a consumer receives,
// decoded from the broker's binary store format) and MessageQueue.
// The wire format is in docs/rocketmq.md#messages.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace export_center::rocketmq {

// One queue of a topic on one broker.
struct MessageQueue {
  std::string topic;
  std::string broker_name;
  int queue_id = 0;

  // The order RocketMQ's allocation sorts queues in: topic, broker, queue id.
  friend bool operator<(const MessageQueue& a, const MessageQueue& b) {
    if (a.topic != b.topic) return a.topic < b.topic;
    if (a.broker_name != b.broker_name) return a.broker_name < b.broker_name;
    return a.queue_id < b.queue_id;
  }
  friend bool operator==(const MessageQueue& a, const MessageQueue& b) {
    return a.queue_id == b.queue_id && a.topic == b.topic && a.broker_name == b.broker_name;
  }
  std::string ToString() const;  // "topic@broker#3"
};

struct Message {
  std::string topic;
  std::string tags;  // one tag, e.g. "EXPORT_TASK"; empty: none
  std::string keys;  // space-separated keys (indexed by the broker), e.g. a task id
  std::string body;
  // Application properties. Names must not be RocketMQ's own property names
  // (IsReservedPropertyName) and neither names nor values may contain the
  // characters \x01 and \x02 of the property encoding: Send refuses them.
  std::map<std::string, std::string> user_properties;
};

struct MessageExt {
  // The topic the message was sent to: for a message redelivered from
  // %RETRY%<group>, the original topic (property RETRY_TOPIC), as RocketMQ's
  // own clients do. stored_topic is where the broker actually stored it.
  std::string topic;
  std::string stored_topic;
  std::string tags;
  std::string keys;
  std::string body;  // inflated when the producer compressed it with zlib
  // Every property: RocketMQ's own (TAGS, KEYS, UNIQ_KEY, RETRY_TOPIC,
  // REAL_TOPIC, ORIGIN_MESSAGE_ID, ...) and the application's.
  std::map<std::string, std::string> properties;

  // UNIQ_KEY when the producer set one (all RocketMQ producers do, this one
  // too), else offset_msg_id. Stays the same across retries and %DLQ%.
  std::string msg_id;
  // Broker store host + commit log offset, 32 hex digits: unique per stored copy.
  std::string offset_msg_id;
  std::string broker_name;  // filled by the consumer, not part of the encoding
  int queue_id = 0;
  int64_t queue_offset = 0;
  int64_t commit_log_offset = 0;
  int reconsume_times = 0;  // 0 on first delivery
  int64_t born_timestamp_ms = 0;
  int64_t store_timestamp_ms = 0;
  std::string born_host;   // "ip:port"
  std::string store_host;  // "ip:port"
  int32_t sys_flag = 0;
  int32_t body_crc = 0;
  // True when the body is still compressed: the producer used a compression
  // this decoder does not inflate (lz4, zstd) or the zlib data is corrupt.
  bool body_compressed = false;

  // The property `name`, or nullptr.
  const std::string* Property(const std::string& name) const;
  // The properties that are not RocketMQ's own.
  std::map<std::string, std::string> UserProperties() const;
};

// Whether `name` is a property RocketMQ itself sets or reads (TAGS, KEYS,
// DELAY, RETRY_TOPIC, ...), which applications must not use.
bool IsReservedPropertyName(std::string_view name);

// Decodes the messages of a PULL_MESSAGE response body (the broker's store
// format, one after another). InvalidArgument, never a crash, on anything
// malformed: truncated records, bad lengths, bad magic codes. Thread-safe.
StatusOr<std::vector<MessageExt>> DecodeMessages(std::string_view body);

// RocketMQ's property encoding: name \x01 value \x02 ... (the trailing \x02
// is optional on decoding). Decoding skips pairs without a \x01.
std::string EncodeProperties(const std::map<std::string, std::string>& properties);
std::map<std::string, std::string> DecodeProperties(std::string_view text);

}  // namespace export_center::rocketmq
