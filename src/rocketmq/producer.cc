#include "rocketmq/producer.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <optional>

#include "rocketmq/broker_fault_tracker.h"
#include "rocketmq/client_instance.h"
#include "rocketmq/remoting/codes.h"

namespace export_center::rocketmq {
namespace {

using remoting::RemotingCommand;
namespace rc = remoting::response_code;
using Clock = std::chrono::steady_clock;

constexpr size_t kMaxBodySize = 4 * 1024 * 1024;  // the broker's default maxMessageSize
constexpr int kMaxAttempts = 3;                   // one send and up to 2 retries

bool ValidTopicName(const std::string& topic) {
  if (topic.empty() || topic.size() > 127) return false;
  for (char c : topic) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '%' || c == '|' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool HasSeparator(const std::string& s) {
  return s.find('\x01') != std::string::npos || s.find('\x02') != std::string::npos;
}

Status ValidateMessage(const Message& m) {
  if (!ValidTopicName(m.topic)) {
    return InvalidArgument("topic '" + m.topic + "' is not 1-127 of [a-zA-Z0-9_%|-]");
  }
  if (m.body.empty()) return InvalidArgument("message body is empty");
  if (m.body.size() > kMaxBodySize) return InvalidArgument("message body is over 4 MiB");
  if (HasSeparator(m.tags) || HasSeparator(m.keys)) {
    return InvalidArgument("tags and keys must not contain \\x01 or \\x02");
  }
  for (const auto& [name, value] : m.user_properties) {
    if (name.empty() || HasSeparator(name) || HasSeparator(value)) {
      return InvalidArgument("user property '" + name +
                             "': empty name, or \\x01/\\x02 in its name or value");
    }
    if (IsReservedPropertyName(name)) {
      return InvalidArgument("user property '" + name + "' is a RocketMQ property name");
    }
  }
  return Status::Ok();
}

// Whether the broker stored the message: flush and slave problems still mean
// it is in the commit log (RocketMQ's clients treat them as sent).
bool Stored(int code) {
  return code == rc::kSuccess || code == rc::kFlushDiskTimeout || code == rc::kFlushSlaveTimeout ||
         code == rc::kSlaveNotAvailable;
}

}  // namespace

class Producer::Impl {
 public:
  Impl(const ClientOptions& options, std::string group)
      : client_(options),
        faults_({options.broker_isolation_min, options.broker_isolation_max}),
        group_(std::move(group)) {}

  StatusOr<SendResult> Send(const Message& message, std::chrono::milliseconds timeout) {
    if (shut_down_.load()) return Unavailable("producer is shut down");
    EC_RETURN_IF_ERROR(ValidateMessage(message));
    const Clock::time_point deadline = Clock::now() + timeout;
    const std::string msg_id = client_.NewMessageId();
    std::map<std::string, std::string> properties = message.user_properties;
    if (!message.tags.empty()) properties["TAGS"] = message.tags;
    if (!message.keys.empty()) properties["KEYS"] = message.keys;
    properties["UNIQ_KEY"] = msg_id;
    properties["WAIT"] = "true";
    const std::string encoded_properties = EncodeProperties(properties);

    StatusOr<TopicRoute> route = client_.TopicRouteOf(message.topic);
    if (!route.ok()) {
      if (route.status().code() == StatusCode::kNotFound) return route.status();
      return Unavailable(route.status().message());
    }
    Status last = Unavailable("topic " + message.topic + " has no writable queue");
    std::string failed_broker;
    bool refreshed = false;
    const uint64_t start = next_queue_.fetch_add(1);
    for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
      const auto remaining =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (remaining.count() <= 0) break;
      const std::vector<MessageQueue> queues = WritableQueues(*route, message.topic);
      std::optional<MessageQueue> queue = faults_.Pick(queues, start + attempt, failed_broker);
      if (!queue) break;
      const std::string* addr = route->MasterAddr(queue->broker_name);
      if (addr == nullptr) {
        failed_broker = queue->broker_name;
        continue;
      }
      // The last attempt gets all that is left; before it, a share, so that
      // a broker that never answers leaves time for a retry elsewhere.
      const auto attempt_timeout =
          attempt + 1 < kMaxAttempts ? faults_.AttemptTimeout(queues, queue->broker_name, remaining)
                                     : remaining;
      RemotingCommand request = RemotingCommand::Request(remoting::request_code::kSendMessageV2);
      request.Set("a", group_)
          .Set("b", message.topic)
          .Set("c", "TBW102")  // defaultTopic: only used when the broker auto-creates topics
          .Set("d", 4)
          .Set("e", queue->queue_id)
          .Set("f", 0)  // sysFlag: not compressed
          .Set("g", static_cast<int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                             std::chrono::system_clock::now().time_since_epoch())
                                             .count()))
          .Set("h", 0)
          .Set("i", encoded_properties)
          .Set("j", 0)
          .Set("k", false)
          .Set("m", false)
          .Set("n", queue->broker_name);
      request.body = message.body;
      StatusOr<RemotingCommand> response =
          client_.remoting().Invoke(*addr, std::move(request), attempt_timeout);
      if (!response.ok()) {
        faults_.Failed(queue->broker_name);  // no answer: connection or timeout
      } else if (Stored(response->code)) {
        faults_.Succeeded(queue->broker_name);
        SendResult result;
        result.msg_id = msg_id;
        result.queue = *queue;
        if (const std::string* id = response->Ext("msgId")) result.offset_msg_id = *id;
        if (auto offset = response->ExtInt("queueOffset"); offset.ok())
          result.queue_offset = *offset;
        return result;
      }
      last = ResponseStatus(response, "send to " + queue->ToString() + " at " + *addr);
      if (last.code() == StatusCode::kInvalidArgument)
        return last;  // the broker refuses this message
      if (last.code() == StatusCode::kUnauthenticated)
        return last;  // every broker of the cluster checks the same credentials
      spdlog::debug("rocketmq producer: {}", last.ToString());
      failed_broker = queue->broker_name;
      // The route may be stale (broker gone, topic moved): look again once.
      if (!refreshed) {
        refreshed = true;
        if (StatusOr<TopicRoute> fresh = client_.FetchTopicRoute(message.topic); fresh.ok()) {
          route = std::move(fresh);
        }
      }
    }
    if (last.code() == StatusCode::kNotFound) return last;
    return Unavailable("no broker took the message: " + last.message());
  }

  void Shutdown() {
    if (shut_down_.exchange(true)) return;
    for (const std::string& addr : client_.KnownBrokerAddrs()) {
      RemotingCommand request = RemotingCommand::Request(remoting::request_code::kUnregisterClient);
      request.Set("clientID", client_.client_id()).Set("producerGroup", group_);
      (void)client_.remoting().Invoke(addr, std::move(request), client_.options().request_timeout);
    }
    client_.Shutdown();
  }

  const std::string& client_id() const { return client_.client_id(); }

 private:
  // The writable queues of the route, in route order.
  static std::vector<MessageQueue> WritableQueues(const TopicRoute& route,
                                                  const std::string& topic) {
    std::vector<MessageQueue> all;
    for (const TopicRoute::Queues& q : route.queues) {
      if ((q.perm & kPermWrite) == 0) continue;
      for (int id = 0; id < q.write_queues; ++id) all.push_back({topic, q.broker_name, id});
    }
    return all;
  }

  ClientInstance client_;
  BrokerFaultTracker faults_;
  const std::string group_;
  std::atomic<uint64_t> next_queue_{0};
  std::atomic<bool> shut_down_{false};
};

StatusOr<std::unique_ptr<Producer>> Producer::Start(const ClientOptions& options,
                                                    const std::string& group) {
  if (options.namesrv_addrs.empty()) return InvalidArgument("no NameServer address configured");
  if (group.empty()) return InvalidArgument("producer group is empty");
  return std::unique_ptr<Producer>(new Producer(std::make_unique<Impl>(options, group)));
}

Producer::Producer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Producer::~Producer() { impl_->Shutdown(); }

StatusOr<SendResult> Producer::Send(const Message& message, std::chrono::milliseconds timeout) {
  return impl_->Send(message, timeout);
}
void Producer::Shutdown() { impl_->Shutdown(); }
const std::string& Producer::client_id() const { return impl_->client_id(); }

}  // namespace export_center::rocketmq
