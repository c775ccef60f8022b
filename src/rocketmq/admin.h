#pragma once
// Admin: the administrative requests an init command needs — list the
// brokers of the cluster(s), create or update topics and subscription groups
// on a broker, read a topic's route. Every mutation is a create-or-update and
// therefore idempotent: running it twice leaves the same state.
// Thread-safe. See docs/rocketmq.md#admin.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "rocketmq/client_options.h"
#include "rocketmq/message.h"

namespace export_center::rocketmq {

// Topic and broker permission bits (RocketMQ's PermName).
inline constexpr int kPermInherit = 1;
inline constexpr int kPermWrite = 2;
inline constexpr int kPermRead = 4;
inline constexpr int kPermReadWrite = kPermRead | kPermWrite;  // 6

struct BrokerInfo {
  std::string cluster;
  std::string broker_name;
  int64_t broker_id = 0;  // 0: the master
  std::string addr;       // "ip:port"
};

struct TopicSpec {
  std::string topic;
  int read_queues = 4;
  int write_queues = 4;
  int perm = kPermReadWrite;
};

struct SubscriptionGroupSpec {
  std::string group;
  // How often the broker redelivers a message the consumer sent back before
  // it moves it to %DLQ%<group>.
  int retry_max_times = 16;
  int retry_queues = 1;
  bool consume_enable = true;
  // Tell consumers when the group's members change (the rebalance trigger).
  bool notify_consumer_ids_changed = true;
};

// A topic's route: which brokers hold how many queues, with what permission.
struct TopicRoute {
  struct Queues {
    std::string broker_name;
    int read_queues = 0;
    int write_queues = 0;
    int perm = 0;
  };
  struct Broker {
    std::string cluster;
    std::string broker_name;
    std::string master_addr;  // empty when the broker has no master now
  };
  std::vector<Queues> queues;
  std::vector<Broker> brokers;

  // The master address of `broker_name`, or nullptr.
  const std::string* MasterAddr(const std::string& broker_name) const;
};

class Admin {
 public:
  // InvalidArgument on bad options. Does not contact the cluster.
  static StatusOr<std::unique_ptr<Admin>> Start(const ClientOptions& options);
  ~Admin();
  Admin(const Admin&) = delete;
  Admin& operator=(const Admin&) = delete;

  // The brokers the NameServer knows (GET_BROKER_CLUSTER_INFO), masters and
  // slaves, of `cluster` or of every cluster when it is empty; sorted by
  // cluster, broker name, id. NotFound when the cluster is unknown,
  // Unavailable when no NameServer answers.
  StatusOr<std::vector<BrokerInfo>> ListBrokers(const std::string& cluster = "");

  // UPDATE_AND_CREATE_TOPIC on the broker at `broker_addr`. Idempotent.
  // Unavailable when the broker does not answer, PermissionDenied/Internal
  // when it refuses (the broker's remark is in the message).
  Status CreateOrUpdateTopic(const std::string& broker_addr, const TopicSpec& spec);

  // UPDATE_AND_CREATE_SUBSCRIPTIONGROUP on the broker at `broker_addr`.
  // Idempotent. Codes as CreateOrUpdateTopic.
  Status CreateOrUpdateSubscriptionGroup(const std::string& broker_addr,
                                         const SubscriptionGroupSpec& spec);

  // The names of the subscription groups the broker at `broker_addr` holds
  // (GET_ALL_SUBSCRIPTIONGROUP_CONFIG), sorted; read-only. Codes as
  // CreateOrUpdateTopic, Internal for a body that is not the broker's JSON.
  StatusOr<std::vector<std::string>> ListSubscriptionGroups(const std::string& broker_addr);

  // The route the NameServer has for `topic` (GET_ROUTEINFO_BY_TOPIC).
  // NotFound when the topic does not exist, Unavailable when no NameServer
  // answers.
  StatusOr<TopicRoute> GetTopicRoute(const std::string& topic);

  // The committed offset of `group` on `queue` (QUERY_CONSUMER_OFFSET);
  // NotFound when the group has none there. For checks and tests.
  StatusOr<int64_t> QueryConsumerOffset(const std::string& group, const MessageQueue& queue);
  // The queue's max offset (one past the last message; GET_MAX_OFFSET).
  StatusOr<int64_t> GetMaxOffset(const MessageQueue& queue);

 private:
  class Impl;
  explicit Admin(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace export_center::rocketmq
