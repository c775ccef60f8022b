#pragma once
// The options of dispatch/: the consumer (attempt/options.h), the outbox
// publisher, the reconciler and the command channel.
//
// A header of its own so that config/, which fills them, does not pull in the
// threads, store and render declarations of the classes that read them. A
// channel backend's options sit beside it (rocketmq/rocketmq_options.h).
// Plain data: standard and other options headers only (scripts/check-deps.py).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attempt/options.h"
#include "dispatch/rocketmq/rocketmq_options.h"

namespace export_center::dispatch {

// The consumer section lives beside the attempts it configures
// (attempt/options.h); config/ and the consumer name it from here.
using attempt::ConsumerOptions;
using attempt::TenantRunningLimit;

struct PublisherOptions {
  bool enabled = true;
  int poll_interval_ms = 5000;
  int batch_size = 50;
  int lease_seconds = 60;
  std::vector<int> backoff_seconds = {5, 15, 60, 300, 900};
};

struct ReconcilerOptions {
  bool enabled = true;
  int interval_seconds = 30;
  int redispatch_grace_seconds = 60;
  int sent_stale_seconds = 600;
  int orphan_grace_seconds = 86400;
  int sent_retention_seconds = 7 * 86400;
  // retention.task-history-days: ended tasks without a file whose last
  // change is older than this are deleted with their timeline and audit
  // rows (docs/configuration.md#retention). 0: history is kept forever.
  int task_history_days = 0;
};

struct ChannelOptions {
  std::string kind = "embedded";  // embedded (in-process queue) | rocketmq
  // Deliveries of a rejected command before it goes to the dead letters. On
  // RocketMQ the worker group's retry limit (maxReconsumeTimes) is one less.
  int delivery_limit = 3;
  RocketMqChannelOptions rocketmq;
};

}  // namespace export_center::dispatch
