#pragma once
// The options of subscriptions (docs/configuration.md#subscriptions), filled
// by config/ from the `subscriptions:` section. Plain data: config/ reads it
// without the scheduler or the use cases.

#include <cstdint>

namespace export_center::subscription {

struct SubscriptionOptions {
  // Off: the routes answer 404 and no instance runs the scheduler.
  bool enabled = true;
  // A schedule whose slots come closer than this is refused.
  int min_interval_minutes = 60;
  // A slot missed by longer is recorded SKIPPED, never run late.
  int catch_up_window_seconds = 3600;
  int max_per_owner = 20;            // subscriptions one owner may have in a tenant
  int max_per_tenant = 1000;         // subscriptions of one tenant
  int history_days = 30;             // finished runs older than this are pruned
  int max_consecutive_failures = 3;  // FAILED runs in a row that pause one
  int poll_interval_ms = 15000;      // the scheduler's round
  // ---- delivery (subdelivery's keys follow here) ----
};

}  // namespace export_center::subscription
