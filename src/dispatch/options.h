#pragma once
// The options of dispatch/: the consumer (and the attempts it runs), the
// outbox publisher, the reconciler and the command channel.
//
// A header of its own so that config/, which fills them, does not pull in the
// threads, store and render declarations of the classes that read them. A
// channel backend's options sit beside it (rocketmq/rocketmq_options.h).
// Plain data: standard and other options headers only (scripts/check-deps.py).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dispatch/rocketmq/rocketmq_options.h"

namespace export_center::dispatch {

struct ConsumerOptions {
  bool enabled = true;
  int concurrency = 4;
  int lease_seconds = 300;
  int heartbeat_seconds = 60;
  int max_duration_seconds = 1800;
  std::vector<int> retry_backoff_seconds = {60, 900};  // ±20 % jitter
  int shutdown_grace_seconds = 60;
  // Tenant fairness (docs/dispatch.md#tenant-fairness): how many tasks of
  // one tenant may be RUNNING at once across the fleet. 0: half of
  // fleet_consumer_slots, at least 1 (TenantRunningLimit()).
  int tenant_running_limit = 0;
  // The consumer slots of every instance together (the sum of their
  // `concurrency`). 0: this instance's concurrency, i.e. a fleet of one.
  int fleet_consumer_slots = 0;
  // The back-off of a command handed back because its tenant was at its limit.
  int tenant_handback_ms = 1000;
};

// The per-tenant running limit in force: tenant_running_limit, or by default
// half the fleet's consumer slots, at least 1.
inline int TenantRunningLimit(const ConsumerOptions& c) {
  if (c.tenant_running_limit > 0) return c.tenant_running_limit;
  const int fleet = c.fleet_consumer_slots > 0 ? c.fleet_consumer_slots : c.concurrency;
  return fleet / 2 > 1 ? fleet / 2 : 1;
}

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
};

struct ChannelOptions {
  std::string kind = "embedded";  // embedded (in-process queue) | rocketmq
  // Deliveries of a rejected command before it goes to the dead letters. On
  // RocketMQ the worker group's retry limit (maxReconsumeTimes) is one less.
  int delivery_limit = 3;
  RocketMqChannelOptions rocketmq;
};

}  // namespace export_center::dispatch
