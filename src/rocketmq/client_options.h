#pragma once
// ClientOptions: what every RocketMQ client object (Producer, Admin,
// ClusterConsumer) needs to reach the cluster — the NameServer addresses and
// the timings of its background work. See docs/rocketmq.md.

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "rocketmq/remoting/acl_signer.h"

namespace export_center::rocketmq {

struct ClientOptions {
  // "host:port" of each NameServer; tried in turn.
  std::vector<std::string> namesrv_addrs;
  // Deadline of one request to a NameServer or broker (a long-poll pull gets
  // its suspend time on top).
  std::chrono::milliseconds request_timeout{3000};
  // How often topic routes are fetched again from the NameServer.
  std::chrono::milliseconds route_refresh_interval{30000};
  // How often a client sends HEART_BEAT to every broker it knows.
  std::chrono::milliseconds heartbeat_interval{10000};
  // Part of the client id ("<ip>@<instance_name>#<n>"); empty: the pid.
  std::string instance_name;
  // Reconnect back-off to an address that failed: doubles from min to max.
  std::chrono::milliseconds reconnect_backoff_min{100};
  std::chrono::milliseconds reconnect_backoff_max{5000};
  // A producer avoids a broker that did not answer a send (connection lost,
  // timeout) for broker_isolation_min, doubling while it keeps failing, up to
  // broker_isolation_max, as long as another broker can take the message
  // (docs/rocketmq.md#producer).
  std::chrono::milliseconds broker_isolation_min{30000};
  std::chrono::milliseconds broker_isolation_max{300000};
  // Signs every request for a cluster with ACL enabled (docs/rocketmq.md#acl);
  // empty: requests go unsigned, as before.
  remoting::AclCredentials credentials;
};

// "h:p;h:p" (also ',' or whitespace separated) -> {"h:p", "h:p"}.
// InvalidArgument when empty or an entry has no valid host:port.
StatusOr<std::vector<std::string>> ParseNamesrvAddr(std::string_view text);

}  // namespace export_center::rocketmq
