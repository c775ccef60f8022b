#include "dispatch/rocketmq/rocketmq_setup.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "dispatch/rocketmq/rocketmq_client_mapping.h"
#include "dispatch/rocketmq/rocketmq_names.h"
#include "rocketmq/admin.h"

namespace export_center::dispatch {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::seconds(2);

// The masters of every cluster the NameServers know, waiting until there is
// one: on a first deploy the NameServer answers before the broker registered.
StatusOr<std::vector<rocketmq::BrokerInfo>> WaitForMasters(rocketmq::Admin& admin,
                                                           const std::string& namesrv,
                                                           Clock::time_point deadline) {
  Status last = Unavailable("no broker is registered with the NameServer " + namesrv);
  while (true) {
    auto brokers = admin.ListBrokers();
    if (brokers.ok()) {
      std::vector<rocketmq::BrokerInfo> masters;
      for (const auto& b : *brokers) {
        if (b.broker_id == 0 && !b.addr.empty()) masters.push_back(b);
      }
      if (!masters.empty()) return masters;
    } else {
      last = brokers.status();
    }
    if (Clock::now() + kPoll > deadline) {
      return Unavailable("no broker registered in time: " + last.message());
    }
    spdlog::info("rocketmq init: waiting for a broker to register ({})", last.message());
    std::this_thread::sleep_for(kPoll);
  }
}

// Runs one create-or-update, retrying while the broker is not ready yet (a
// broker that has just registered may still refuse or time out).
Status Retrying(const std::function<Status()>& step, Clock::time_point deadline) {
  while (true) {
    Status s = step();
    if (s.ok() || s.code() != StatusCode::kUnavailable || Clock::now() + kPoll > deadline) {
      return s;
    }
    std::this_thread::sleep_for(kPoll);
  }
}

// Waits until the NameServer routes `topic` with read/write permission on
// every master, so the first send after init does not find the topic missing
// (brokers register their topics with the NameServer asynchronously).
Status WaitForRoute(rocketmq::Admin& admin, const std::string& topic, size_t masters,
                    Clock::time_point deadline) {
  while (true) {
    auto route = admin.GetTopicRoute(topic);
    size_t ready = 0;
    if (route.ok()) {
      for (const auto& q : route->queues) {
        if ((q.perm & rocketmq::kPermReadWrite) == rocketmq::kPermReadWrite) ++ready;
      }
      if (ready >= masters) return Status::Ok();
    }
    if (Clock::now() + kPoll > deadline) {
      return Unavailable("topic " + topic + " is not routed by the NameServer on " +
                         std::to_string(masters) + " broker(s) yet (" + std::to_string(ready) +
                         " ready)" + (route.ok() ? "" : ": " + route.status().message()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace

Status InitRocketMq(const ChannelOptions& options,
                    const std::function<void(const std::string&)>& report,
                    std::chrono::seconds wait_for_broker) {
  EC_ASSIGN_OR_RETURN(rocketmq::ClientOptions client, RocketMqClientOptions(options, "init"));
  const RocketMqNames names = RocketMqNamesFor(*options.rocketmq.topic_prefix);
  const auto deadline = Clock::now() + wait_for_broker;
  EC_ASSIGN_OR_RETURN(auto admin, rocketmq::Admin::Start(client));
  EC_ASSIGN_OR_RETURN(auto masters,
                      WaitForMasters(*admin, options.rocketmq.namesrv_addr, deadline));

  const rocketmq::TopicSpec command_topic{names.command_topic, kRocketMqCommandQueues,
                                          kRocketMqCommandQueues, kRocketMqPermReadWrite};
  // Created by us, read/write: a 4.x broker would make it write-only on the
  // first dead letter, and the DLQ handler could not consume it.
  const rocketmq::TopicSpec dead_letter_topic{names.dead_letter_topic, 1, 1,
                                              kRocketMqPermReadWrite};
  rocketmq::SubscriptionGroupSpec worker;
  worker.group = names.worker_group;
  worker.retry_max_times = WorkerRetryMaxTimes(options.delivery_limit);
  rocketmq::SubscriptionGroupSpec dlq_handler;
  dlq_handler.group = names.dlq_handler_group;
  dlq_handler.retry_max_times = kRocketMqUnlimitedRetries;

  for (const rocketmq::BrokerInfo& b : masters) {
    const std::string where =
        " on broker " + b.broker_name + " (" + b.addr + ", cluster " + b.cluster + ")";
    for (const rocketmq::TopicSpec* t : {&command_topic, &dead_letter_topic}) {
      Status s = Retrying([&] { return admin->CreateOrUpdateTopic(b.addr, *t); }, deadline);
      if (!s.ok()) return s.WithContext("topic " + t->topic + where);
      report("topic " + t->topic + where + ": " + std::to_string(t->read_queues) + " read / " +
             std::to_string(t->write_queues) + " write queues, perm " + std::to_string(t->perm));
    }
    for (const rocketmq::SubscriptionGroupSpec* g : {&worker, &dlq_handler}) {
      Status s =
          Retrying([&] { return admin->CreateOrUpdateSubscriptionGroup(b.addr, *g); }, deadline);
      if (!s.ok()) return s.WithContext("subscription group " + g->group + where);
      report("subscription group " + g->group + where + ": retry max times " +
             std::to_string(g->retry_max_times));
    }
  }
  EC_RETURN_IF_ERROR(WaitForRoute(*admin, names.command_topic, masters.size(), deadline));
  EC_RETURN_IF_ERROR(WaitForRoute(*admin, names.dead_letter_topic, masters.size(), deadline));
  report("producer group " + names.producer_group + " (needs no set-up); tag " +
         std::string(kRocketMqCommandTag));
  return Status::Ok();
}

StatusOr<std::string> CheckRocketMq(const ChannelOptions& options) {
  EC_ASSIGN_OR_RETURN(rocketmq::ClientOptions client, RocketMqClientOptions(options, "check"));
  const RocketMqNames names = RocketMqNamesFor(*options.rocketmq.topic_prefix);
  const std::string& namesrv = options.rocketmq.namesrv_addr;
  EC_ASSIGN_OR_RETURN(auto admin, rocketmq::Admin::Start(client));
  auto brokers = admin->ListBrokers();
  if (!brokers.ok()) return brokers.status().WithContext("NameServer " + namesrv);
  std::vector<rocketmq::BrokerInfo> masters;
  for (const auto& b : *brokers) {
    if (b.broker_id == 0 && !b.addr.empty()) masters.push_back(b);
  }
  if (masters.empty()) return Unavailable("no broker is registered with the NameServer " + namesrv);

  std::vector<std::string> missing;
  for (const std::string& topic : {names.command_topic, names.dead_letter_topic}) {
    auto route = admin->GetTopicRoute(topic);
    if (route.status().code() == StatusCode::kNotFound) {
      missing.push_back("topic " + topic);
    } else if (!route.ok()) {
      return route.status().WithContext("route of topic " + topic);
    }
  }
  for (const rocketmq::BrokerInfo& b : masters) {
    EC_ASSIGN_OR_RETURN(std::vector<std::string> groups, admin->ListSubscriptionGroups(b.addr));
    for (const std::string& group : {names.worker_group, names.dlq_handler_group}) {
      if (std::find(groups.begin(), groups.end(), group) == groups.end()) {
        missing.push_back("group " + group + " on broker " + b.broker_name);
      }
    }
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
    return NotFound("missing on the cluster of NameServer " + namesrv + ": " + list +
                    "; run `export-center rocketmq init`");
  }
  return "NameServer " + namesrv + ", " + std::to_string(masters.size()) +
         " master broker(s): topics " + names.command_topic + " and " + names.dead_letter_topic +
         ", groups " + names.worker_group + " and " + names.dlq_handler_group + " exist";
}

}  // namespace export_center::dispatch
