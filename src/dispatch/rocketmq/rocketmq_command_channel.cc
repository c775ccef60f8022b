#include "dispatch/rocketmq/rocketmq_command_channel.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <thread>

#include "common/mutex.h"
#include "dispatch/rocketmq/rocketmq_client_mapping.h"
#include "dispatch/rocketmq/rocketmq_names.h"
#include "rocketmq/cluster_consumer.h"
#include "rocketmq/producer.h"
#include "task/command.h"

namespace export_center::dispatch {
namespace {

// The command properties (task/command.h) — the only user properties the
// channel carries, so a broker's own additions never reach the handlers.
constexpr std::array<std::string_view, 4> kCommandProperties = {
    task::kPropEventId, task::kPropTaskId, task::kPropDispatchVersion, task::kPropSchemaVersion};

// The one place a send's Status becomes the channel's: every failure is
// Unavailable, so the outbox row stays PENDING and is retried with back-off
// (there is no terminal send failure, docs/dispatch.md#the-outbox-row).
Status SendError(const Status& s, const std::string& topic) {
  if (s.code() == StatusCode::kNotFound) {
    // No route: either no broker serving the topic is up, or the topic was
    // never created. Both heal without losing the row.
    return Unavailable(
        "no RocketMQ broker serves topic " + topic +
        " (a broker is down, or `export-center rocketmq init` was not run): " + s.message());
  }
  if (s.code() == StatusCode::kUnavailable) return s;
  return Unavailable("RocketMQ send to " + topic + " failed: " + s.ToString());
}

// `dead_letter`: the broker moved it to %DLQ% with reconsume times raised once
// more, so there reconsume times = the deliveries it had as a command.
Delivery DeliveryOf(const rocketmq::Received& r, bool dead_letter) {
  Delivery d;
  d.payload = r.message.body;
  for (std::string_view name : kCommandProperties) {
    if (const std::string* value = r.message.Property(std::string(name))) {
      d.properties[std::string(name)] = *value;
    }
  }
  d.delivery_count = dead_letter ? std::max(r.message.reconsume_times, 1)
                                 : DeliveryCountOf(r.message.reconsume_times);
  d.message_id = r.message.msg_id;
  return d;
}

class RocketMqCommandChannel final : public CommandChannel {
 public:
  RocketMqCommandChannel(ChannelOptions options, RocketMqNames names)
      : options_(std::move(options)), names_(std::move(names)) {}
  ~RocketMqCommandChannel() override { Close(); }

  Status Publish(const std::string& payload, const task::CommandProperties& properties) override {
    EC_ASSIGN_OR_RETURN(std::shared_ptr<rocketmq::Producer> producer, ProducerForSend());
    rocketmq::Message m;
    m.topic = names_.command_topic;
    m.tags = std::string(kRocketMqCommandTag);
    if (auto id = properties.find(std::string(task::kPropTaskId)); id != properties.end()) {
      m.keys = id->second;  // find a task's commands in the console by its id
    }
    m.body = payload;
    m.user_properties = properties;
    auto sent = producer->Send(m, std::chrono::milliseconds(options_.rocketmq.send_timeout_ms));
    if (!sent.ok()) return SendError(sent.status(), names_.command_topic);
    return Status::Ok();
  }

  bool ConsumeOne(std::chrono::milliseconds wait,
                  const std::function<DeliveryOutcome(const Delivery&)>& handler) override {
    return Consume(Which::kWorker, wait, handler);
  }

  bool ConsumeDeadLetter(std::chrono::milliseconds wait,
                         const std::function<DeliveryOutcome(const Delivery&)>& handler) override {
    return Consume(Which::kDeadLetters, wait, handler);
  }

  void Close() override {
    std::shared_ptr<rocketmq::Producer> producer;
    std::shared_ptr<rocketmq::ClusterConsumer> worker, dead_letters;
    {
      MutexLock lock(&mu_);
      if (closed_) return;
      closed_ = true;
      producer = producer_;
      worker = worker_;
      dead_letters = dead_letters_;
    }
    // Wakes blocked Takes; untaken and unacknowledged messages stay in the
    // broker for the group's other members (offsets are committed only past
    // acknowledged ones).
    if (worker) worker->Shutdown();
    if (dead_letters) dead_letters->Shutdown();
    if (producer) producer->Shutdown();
  }

 private:
  enum class Which { kWorker, kDeadLetters };

  bool Consume(Which which, std::chrono::milliseconds wait,
               const std::function<DeliveryOutcome(const Delivery&)>& handler) {
    auto consumer = ConsumerFor(which);
    if (!consumer.ok()) {
      spdlog::error("rocketmq: cannot start the {} consumer: {}",
                    which == Which::kWorker ? "worker" : "DLQ-handler",
                    consumer.status().ToString());
      std::this_thread::sleep_for(wait);  // the callers loop: no busy spin
      return false;
    }
    if (*consumer == nullptr) return false;  // closed
    std::optional<rocketmq::Received> received = (*consumer)->Take(wait);
    if (!received) return false;
    if (handler(DeliveryOf(*received, which == Which::kDeadLetters)) == DeliveryOutcome::kAck) {
      (*consumer)->Ack(*received);
      return true;
    }
    // Rejected: the broker counts the reconsume and redelivers it, or moves
    // it to %DLQ% past the limit; a dead letter comes back to the handler
    // without limit. If the broker cannot be asked, the consumer offers the
    // message again itself: it is never dropped.
    Status back = (*consumer)->SendBack(*received);
    if (!back.ok()) {
      spdlog::warn("rocketmq: send-back of message {} failed, redelivering it locally: {}",
                   received->message.msg_id, back.ToString());
    }
    return true;
  }

  // The producer, started on the first send.
  StatusOr<std::shared_ptr<rocketmq::Producer>> ProducerForSend() EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (closed_) return Unavailable("RocketMQ channel is closed");
    if (!producer_) {
      EC_ASSIGN_OR_RETURN(rocketmq::ClientOptions client,
                          RocketMqClientOptions(options_, "publisher"));
      EC_ASSIGN_OR_RETURN(auto producer, rocketmq::Producer::Start(client, names_.producer_group));
      producer_ = std::move(producer);
    }
    return producer_;
  }

  // The consumer of `which`, joining its group on the first call: a process
  // that never consumes (consumer.enabled: false) must not hold queues.
  // nullptr once closed.
  StatusOr<std::shared_ptr<rocketmq::ClusterConsumer>> ConsumerFor(Which which) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (closed_) return std::shared_ptr<rocketmq::ClusterConsumer>();
    std::shared_ptr<rocketmq::ClusterConsumer>& slot =
        which == Which::kWorker ? worker_ : dead_letters_;
    if (!slot) {
      rocketmq::ConsumerOptions c;
      if (which == Which::kWorker) {
        EC_ASSIGN_OR_RETURN(c.client, RocketMqClientOptions(options_, "worker"));
        c.group = names_.worker_group;
        c.topic = names_.command_topic;
        c.tag_expression = std::string(kRocketMqCommandTag);
        c.max_reconsume_times = WorkerRetryMaxTimes(options_.delivery_limit);
      } else {
        EC_ASSIGN_OR_RETURN(c.client, RocketMqClientOptions(options_, "dlq-handler"));
        c.group = names_.dlq_handler_group;
        c.topic = names_.dead_letter_topic;
        c.max_reconsume_times = kRocketMqUnlimitedRetries;
      }
      c.undecodable_max_pulls = options_.rocketmq.undecodable_max_pulls;
      // The skip is logged by the consumer; a skipped command is sent again
      // by the reconciler while its task stays PENDING (sent-stale-seconds).
      if (options_.rocketmq.on_undecodable_skipped) {
        c.on_undecodable_skipped = [count = options_.rocketmq.on_undecodable_skipped](
                                       const rocketmq::UndecodableSkip&) { count(); };
      }
      EC_ASSIGN_OR_RETURN(auto consumer, rocketmq::ClusterConsumer::Start(c));
      slot = std::move(consumer);
      spdlog::info("rocketmq: joined group {} on {} as {}", c.group, c.topic, slot->client_id());
    }
    return slot;
  }

  const ChannelOptions options_;
  const RocketMqNames names_;
  Mutex mu_;
  bool closed_ GUARDED_BY(mu_) = false;
  // shared_ptr: a thread blocked in Take keeps its consumer alive through Close.
  std::shared_ptr<rocketmq::Producer> producer_ GUARDED_BY(mu_);
  std::shared_ptr<rocketmq::ClusterConsumer> worker_ GUARDED_BY(mu_);
  std::shared_ptr<rocketmq::ClusterConsumer> dead_letters_ GUARDED_BY(mu_);
};

}  // namespace

StatusOr<std::unique_ptr<CommandChannel>> NewRocketMqCommandChannel(const ChannelOptions& options) {
  // Checked here too, so a bad option fails at start-up, not at the first send.
  EC_RETURN_IF_ERROR(RocketMqClientOptions(options, "check").status());
  RocketMqNames names = RocketMqNamesFor(*options.rocketmq.topic_prefix);
  spdlog::info(
      "rocketmq channel: NameServer {}, topic {} (tag {}), producer group {}, worker group {}, "
      "dead letters {} read by {}",
      options.rocketmq.namesrv_addr, names.command_topic, kRocketMqCommandTag, names.producer_group,
      names.worker_group, names.dead_letter_topic, names.dlq_handler_group);
  return std::unique_ptr<CommandChannel>(
      std::make_unique<RocketMqCommandChannel>(options, std::move(names)));
}

}  // namespace export_center::dispatch
