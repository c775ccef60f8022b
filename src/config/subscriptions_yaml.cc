#include "config/subscriptions_yaml.h"

namespace export_center::config {

void ReadSubscriptions(MapReader& r, subscription::SubscriptionOptions* c) {
  r.Bool("enabled", &c->enabled);
  r.Int("min-interval-minutes", &c->min_interval_minutes, 1, 7 * 24 * 60);
  r.Int("catch-up-window-seconds", &c->catch_up_window_seconds, 0, 7 * 86400);
  r.Int("max-per-owner", &c->max_per_owner, 1, 100000);
  r.Int("max-per-tenant", &c->max_per_tenant, 1, 10000000);
  r.Int("history-days", &c->history_days, 1, 3650);
  r.Int("max-consecutive-failures", &c->max_consecutive_failures, 1, 1000);
  r.Int("poll-interval-ms", &c->poll_interval_ms, 100, 600000);
  // ---- delivery (subdelivery's keys follow here) ----
  r.Finish();
}

}  // namespace export_center::config
