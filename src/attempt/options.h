#pragma once
// The consumer section (docs/configuration.md): the lease, heartbeat,
// execution deadline and retry back-off of each attempt, and the pool of
// consumer threads that runs attempts (concurrency, shutdown grace, tenant
// fairness). It sits beside the attempt because AttemptDeps carries it to
// every attempt; dispatch/options.h names it for config/ and the consumer.
//
// Standard library only, so that config/, which fills it, pulls in nothing else.

#include <vector>

namespace export_center::attempt {

struct ConsumerOptions {
  bool enabled = true;
  int concurrency = 4;
  int lease_seconds = 300;
  int heartbeat_seconds = 60;
  int max_duration_seconds = 1800;
  std::vector<int> retry_backoff_seconds = {60, 900};  // ±20 % jitter
  int shutdown_grace_seconds = 60;
  // Tenant fairness (docs/dispatch.md#tenant-fairness): how many tasks of
  // one tenant may be RUNNING at once across the fleet while another tenant
  // has a task waiting; a tenant alone uses every slot (work-conserving).
  // 0: half of fleet_consumer_slots, at least 1 (TenantRunningLimit()).
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

}  // namespace export_center::attempt
