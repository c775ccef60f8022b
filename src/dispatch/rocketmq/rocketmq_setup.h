#pragma once
// InitRocketMq: what `export-center rocketmq init` does
// (docs/deploy.md#export-center-rocketmq-init).
//
// On every master broker of the cluster the NameServers know: the command
// topic (4 read + 4 write queues, perm 6), the worker subscription group
// (retry limit channel.delivery-limit - 1), the DLQ-handler group (retry limit
// effectively unlimited), and the dead-letter topic %DLQ%<worker group> with
// perm 6 (a 4.x broker would create it write-only). Idempotent: each request
// creates or updates in place. Waits up to `wait_for_broker` for a broker to
// be registered (on a first deploy the NameServer is up before the broker).
//
// Threads: any; blocking. Unavailable when no broker registered in time or a
// broker refused; InvalidArgument on bad options.

#include <chrono>
#include <functional>
#include <string>

#include "common/status.h"
#include "dispatch/options.h"

namespace export_center::dispatch {

// `report` receives one line per thing created or updated ("topic X on broker
// B (127.0.0.1:10911): 4/4 queues, perm 6").
Status InitRocketMq(const ChannelOptions& options,
                    const std::function<void(const std::string&)>& report,
                    std::chrono::seconds wait_for_broker = std::chrono::seconds(120));

// `export-center check`: read-only. The NameServer answers and knows at least
// one master broker, it routes the command topic and the dead-letter topic,
// and every master holds the worker and DLQ-handler subscription groups.
// Returns a line saying what was found. Unavailable when no NameServer or
// broker answers (or none is registered); NotFound listing every topic and
// group missing, ending "run `export-center rocketmq init`".
StatusOr<std::string> CheckRocketMq(const ChannelOptions& options);

}  // namespace export_center::dispatch
