#include "dispatch/rocketmq/rocketmq_client_mapping.h"

#include <unistd.h>

#include <atomic>

namespace export_center::dispatch {

StatusOr<rocketmq::ClientOptions> RocketMqClientOptions(const ChannelOptions& options,
                                                        const std::string& role) {
  if (options.kind != "rocketmq") return InvalidArgument("channel.kind is not rocketmq");
  if (!options.rocketmq.topic_prefix) {
    return InvalidArgument("channel.rocketmq.topic-prefix is required (it may be \"\")");
  }
  rocketmq::ClientOptions client;
  EC_ASSIGN_OR_RETURN(client.namesrv_addrs,
                      rocketmq::ParseNamesrvAddr(options.rocketmq.namesrv_addr));
  if (options.rocketmq.access_key.empty() != options.rocketmq.secret_key.empty()) {
    return InvalidArgument(
        "channel.rocketmq.access-key and channel.rocketmq.secret-key go together");
  }
  client.credentials = {options.rocketmq.access_key, options.rocketmq.secret_key};
  client.request_timeout = std::chrono::milliseconds(options.rocketmq.consume_timeout_ms);
  // A client id of its own for every client object: the allocation of queues
  // is by sorted client ids, so two channels in one process (tests, the
  // bench) must not look like one member of the group.
  static std::atomic<int> serial{0};
  client.instance_name = std::to_string(getpid()) + "-" + role + "-" + std::to_string(++serial);
  return client;
}

}  // namespace export_center::dispatch
