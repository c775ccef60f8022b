#include "rocketmq/admin.h"

#include <nlohmann/json.hpp>

#include "common/nesting.h"
#include "rocketmq/client_instance.h"
#include "rocketmq/remoting/codes.h"

namespace export_center::rocketmq {

using remoting::RemotingCommand;
namespace code = remoting::request_code;

class Admin::Impl {
 public:
  explicit Impl(const ClientOptions& options) : client_(options) {}

  StatusOr<std::vector<BrokerInfo>> ListBrokers(const std::string& cluster) {
    StatusOr<RemotingCommand> response =
        client_.InvokeNamesrv(RemotingCommand::Request(code::kGetBrokerClusterInfo));
    EC_RETURN_IF_ERROR(ResponseStatus(response, "cluster info"));
    EC_ASSIGN_OR_RETURN(std::vector<BrokerInfo> all, ParseClusterInfo(response->body));
    if (cluster.empty()) return all;
    std::vector<BrokerInfo> of_cluster;
    for (BrokerInfo& b : all) {
      if (b.cluster == cluster) of_cluster.push_back(std::move(b));
    }
    if (of_cluster.empty()) return NotFound("the NameServer knows no cluster '" + cluster + "'");
    return of_cluster;
  }

  Status CreateOrUpdateTopic(const std::string& broker_addr, const TopicSpec& spec) {
    if (spec.topic.empty() || spec.read_queues <= 0 || spec.write_queues <= 0) {
      return InvalidArgument("topic needs a name and at least one read and one write queue");
    }
    RemotingCommand request = RemotingCommand::Request(code::kUpdateAndCreateTopic);
    request.Set("topic", spec.topic)
        .Set("defaultTopic", "TBW102")  // RocketMQ's auto-create template topic
        .Set("readQueueNums", spec.read_queues)
        .Set("writeQueueNums", spec.write_queues)
        .Set("perm", spec.perm)
        .Set("topicFilterType", "SINGLE_TAG")
        .Set("topicSysFlag", 0)
        .Set("order", false);
    return ResponseStatus(Invoke(broker_addr, std::move(request)),
                          "create topic " + spec.topic + " on " + broker_addr);
  }

  Status CreateOrUpdateSubscriptionGroup(const std::string& broker_addr,
                                         const SubscriptionGroupSpec& spec) {
    if (spec.group.empty()) return InvalidArgument("subscription group needs a name");
    if (spec.retry_max_times < 0 || spec.retry_queues < 0) {
      return InvalidArgument("retry limits must not be negative");
    }
    nlohmann::json config = {
        {"groupName", spec.group},
        {"consumeEnable", spec.consume_enable},
        {"consumeFromMinEnable", true},
        {"consumeBroadcastEnable", false},
        {"consumeMessageOrderly", false},
        {"retryQueueNums", spec.retry_queues},
        {"retryMaxTimes", spec.retry_max_times},
        {"brokerId", 0},
        {"whichBrokerWhenConsumeSlowly", 1},
        {"notifyConsumerIdsChangedEnable", spec.notify_consumer_ids_changed},
    };
    RemotingCommand request = RemotingCommand::Request(code::kUpdateAndCreateSubscriptionGroup);
    request.body = config.dump();
    return ResponseStatus(Invoke(broker_addr, std::move(request)),
                          "create subscription group " + spec.group + " on " + broker_addr);
  }

  StatusOr<std::vector<std::string>> ListSubscriptionGroups(const std::string& broker_addr) {
    StatusOr<RemotingCommand> response =
        Invoke(broker_addr, RemotingCommand::Request(code::kGetAllSubscriptionGroupConfig));
    EC_RETURN_IF_ERROR(ResponseStatus(response, "subscription groups of " + broker_addr));
    // {"subscriptionGroupTable": {"<group>": {...}, ...}, "dataVersion": {...}}
    auto parsed = ParseJsonWithin<nlohmann::json>(response->body);  // common/nesting.h
    if (!parsed.ok()) {
      return Internal("subscription groups of " + broker_addr + ": " + parsed.status().message());
    }
    nlohmann::json body = std::move(parsed).value();
    if (!body.is_object() || !body.contains("subscriptionGroupTable") ||
        !body["subscriptionGroupTable"].is_object()) {
      return Internal("subscription groups of " + broker_addr +
                      ": the answer has no subscriptionGroupTable object");
    }
    std::vector<std::string> groups;
    for (const auto& entry : body["subscriptionGroupTable"].items()) groups.push_back(entry.key());
    return groups;  // nlohmann's object keeps its keys sorted
  }

  StatusOr<TopicRoute> GetTopicRoute(const std::string& topic) {
    return client_.FetchTopicRoute(topic);
  }

  StatusOr<int64_t> QueryConsumerOffset(const std::string& group, const MessageQueue& queue) {
    EC_ASSIGN_OR_RETURN(std::string addr, BrokerOf(queue));
    RemotingCommand request = RemotingCommand::Request(code::kQueryConsumerOffset);
    request.Set("consumerGroup", group)
        .Set("topic", queue.topic)
        .Set("queueId", queue.queue_id)
        .Set("setZeroIfNotFound", false);
    StatusOr<RemotingCommand> response = Invoke(addr, std::move(request));
    EC_RETURN_IF_ERROR(ResponseStatus(response, "offset of " + group + " on " + queue.ToString()));
    return response->ExtInt("offset");
  }

  StatusOr<int64_t> GetMaxOffset(const MessageQueue& queue) {
    EC_ASSIGN_OR_RETURN(std::string addr, BrokerOf(queue));
    RemotingCommand request = RemotingCommand::Request(code::kGetMaxOffset);
    request.Set("topic", queue.topic).Set("queueId", queue.queue_id);
    StatusOr<RemotingCommand> response = Invoke(addr, std::move(request));
    EC_RETURN_IF_ERROR(ResponseStatus(response, "max offset of " + queue.ToString()));
    return response->ExtInt("offset");
  }

 private:
  StatusOr<RemotingCommand> Invoke(const std::string& addr, RemotingCommand request) {
    return client_.remoting().Invoke(addr, std::move(request), client_.options().request_timeout);
  }

  StatusOr<std::string> BrokerOf(const MessageQueue& queue) {
    EC_ASSIGN_OR_RETURN(TopicRoute route, client_.TopicRouteOf(queue.topic));
    const std::string* addr = route.MasterAddr(queue.broker_name);
    if (addr == nullptr) return Unavailable("broker " + queue.broker_name + " has no master now");
    return *addr;
  }

  ClientInstance client_;
};

StatusOr<std::unique_ptr<Admin>> Admin::Start(const ClientOptions& options) {
  if (options.namesrv_addrs.empty()) return InvalidArgument("no NameServer address configured");
  return std::unique_ptr<Admin>(new Admin(std::make_unique<Impl>(options)));
}

Admin::Admin(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Admin::~Admin() = default;

StatusOr<std::vector<BrokerInfo>> Admin::ListBrokers(const std::string& cluster) {
  return impl_->ListBrokers(cluster);
}
Status Admin::CreateOrUpdateTopic(const std::string& broker_addr, const TopicSpec& spec) {
  return impl_->CreateOrUpdateTopic(broker_addr, spec);
}
Status Admin::CreateOrUpdateSubscriptionGroup(const std::string& broker_addr,
                                              const SubscriptionGroupSpec& spec) {
  return impl_->CreateOrUpdateSubscriptionGroup(broker_addr, spec);
}
StatusOr<std::vector<std::string>> Admin::ListSubscriptionGroups(const std::string& broker_addr) {
  return impl_->ListSubscriptionGroups(broker_addr);
}
StatusOr<TopicRoute> Admin::GetTopicRoute(const std::string& topic) {
  return impl_->GetTopicRoute(topic);
}
StatusOr<int64_t> Admin::QueryConsumerOffset(const std::string& group, const MessageQueue& queue) {
  return impl_->QueryConsumerOffset(group, queue);
}
StatusOr<int64_t> Admin::GetMaxOffset(const MessageQueue& queue) {
  return impl_->GetMaxOffset(queue);
}

}  // namespace export_center::rocketmq
