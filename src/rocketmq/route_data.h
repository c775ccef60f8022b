#pragma once
// Parsing of the NameServer's JSON bodies (internal to rocketmq/):
// TopicRouteData (GET_ROUTEINFO_BY_TOPIC) and ClusterInfo
// (GET_BROKER_CLUSTER_INFO). Both tolerate fastjson's unquoted integer map
// keys and ignore fields they do not know. Pure functions: thread-safe.

#include <string_view>
#include <vector>

#include "common/status.h"
#include "rocketmq/admin.h"

namespace export_center::rocketmq {

// Internal on a body that is not a JSON object; missing fields are empty.
StatusOr<TopicRoute> ParseTopicRoute(std::string_view body);
StatusOr<std::vector<BrokerInfo>> ParseClusterInfo(std::string_view body);

}  // namespace export_center::rocketmq
