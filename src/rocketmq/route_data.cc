#include "rocketmq/route_data.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/nesting.h"
#include "rocketmq/remoting/remoting_command.h"

namespace export_center::rocketmq {
namespace {

const nlohmann::json* Field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

template <typename T>
T Get(const nlohmann::json& j, const char* key, T fallback) {
  const nlohmann::json* v = Field(j, key);
  if (v == nullptr || v->is_null()) return fallback;
  try {
    return v->get<T>();
  } catch (const nlohmann::json::exception&) {
    return fallback;
  }
}

StatusOr<nlohmann::json> ParseServerJson(std::string_view body, const char* what) {
  const std::string text = remoting::QuoteBareJsonKeys(body);
  auto parsed = ParseJsonWithin<nlohmann::json>(text);  // common/nesting.h
  if (!parsed.ok())
    return Internal(std::string(what) + " from the NameServer: " + parsed.status().message());
  nlohmann::json j = std::move(parsed).value();
  if (j.is_discarded() || !j.is_object()) {
    return Internal(std::string("unreadable ") + what + " from the NameServer");
  }
  return j;
}

// brokerAddrs: {"0": "ip:port", "1": ...}
std::map<int64_t, std::string> BrokerAddrs(const nlohmann::json& broker) {
  std::map<int64_t, std::string> addrs;
  const nlohmann::json* table = Field(broker, "brokerAddrs");
  if (table == nullptr || !table->is_object()) return addrs;
  for (const auto& [id, addr] : table->items()) {
    if (!addr.is_string()) continue;
    try {
      addrs[std::stoll(id)] = addr.get<std::string>();
    } catch (const std::exception&) {
    }
  }
  return addrs;
}

}  // namespace

const std::string* TopicRoute::MasterAddr(const std::string& broker_name) const {
  for (const Broker& b : brokers) {
    if (b.broker_name == broker_name && !b.master_addr.empty()) return &b.master_addr;
  }
  return nullptr;
}

StatusOr<TopicRoute> ParseTopicRoute(std::string_view body) {
  EC_ASSIGN_OR_RETURN(nlohmann::json j, ParseServerJson(body, "topic route"));
  TopicRoute route;
  if (const nlohmann::json* queues = Field(j, "queueDatas"); queues && queues->is_array()) {
    for (const nlohmann::json& q : *queues) {
      if (!q.is_object()) continue;
      TopicRoute::Queues entry;
      entry.broker_name = Get<std::string>(q, "brokerName", "");
      entry.read_queues = Get<int>(q, "readQueueNums", 0);
      entry.write_queues = Get<int>(q, "writeQueueNums", 0);
      entry.perm = Get<int>(q, "perm", 0);
      if (!entry.broker_name.empty()) route.queues.push_back(std::move(entry));
    }
  }
  if (const nlohmann::json* brokers = Field(j, "brokerDatas"); brokers && brokers->is_array()) {
    for (const nlohmann::json& b : *brokers) {
      if (!b.is_object()) continue;
      TopicRoute::Broker entry;
      entry.cluster = Get<std::string>(b, "cluster", "");
      entry.broker_name = Get<std::string>(b, "brokerName", "");
      auto addrs = BrokerAddrs(b);
      if (auto master = addrs.find(0); master != addrs.end()) entry.master_addr = master->second;
      if (!entry.broker_name.empty()) route.brokers.push_back(std::move(entry));
    }
  }
  std::sort(route.queues.begin(), route.queues.end(),
            [](const auto& a, const auto& b) { return a.broker_name < b.broker_name; });
  std::sort(route.brokers.begin(), route.brokers.end(),
            [](const auto& a, const auto& b) { return a.broker_name < b.broker_name; });
  return route;
}

StatusOr<std::vector<BrokerInfo>> ParseClusterInfo(std::string_view body) {
  EC_ASSIGN_OR_RETURN(nlohmann::json j, ParseServerJson(body, "cluster info"));
  std::vector<BrokerInfo> brokers;
  const nlohmann::json* table = Field(j, "brokerAddrTable");
  if (table == nullptr || !table->is_object()) return brokers;
  for (const auto& [name, broker] : table->items()) {
    if (!broker.is_object()) continue;
    for (const auto& [id, addr] : BrokerAddrs(broker)) {
      BrokerInfo info;
      info.cluster = Get<std::string>(broker, "cluster", "");
      info.broker_name = Get<std::string>(broker, "brokerName", name);
      info.broker_id = id;
      info.addr = addr;
      brokers.push_back(std::move(info));
    }
  }
  std::sort(brokers.begin(), brokers.end(), [](const BrokerInfo& a, const BrokerInfo& b) {
    return std::tie(a.cluster, a.broker_name, a.broker_id) <
           std::tie(b.cluster, b.broker_name, b.broker_id);
  });
  return brokers;
}

}  // namespace export_center::rocketmq
