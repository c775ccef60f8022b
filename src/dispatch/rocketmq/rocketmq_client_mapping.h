#pragma once
// Maps channel.rocketmq onto the client library's options; shared by the
// channel and `rocketmq init`.

#include <string>

#include "common/status.h"
#include "dispatch/options.h"
#include "rocketmq/client_options.h"

namespace export_center::dispatch {

// `role` names the client in its instance name ("publisher", "worker", ...),
// so a broker's client list says which part of which process it is.
// InvalidArgument when the kind is not rocketmq, the name-server list is bad
// or the topic prefix is missing, or only one of access key and secret key
// is set (config/ checks all first). The credentials sign every request.
StatusOr<rocketmq::ClientOptions> RocketMqClientOptions(const ChannelOptions& options,
                                                        const std::string& role);

}  // namespace export_center::dispatch
