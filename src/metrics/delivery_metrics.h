#pragma once
// DeliveryMetrics: the subscriptions' delivery (docs/subscriptions.md#delivery,
// docs/observability.md), on a registry of its own beside ExportMetrics;
// app/ appends its Text() to the process's /metrics. Thread-safe, as
// prometheus-cpp's families are.
//
// export_center_subscription_deliveries_total{outcome}: what finished runs
// delivered — "mailed", "skipped_empty", "failed" (a failed run: its notice
// sent or held back by the grace period); export_center_mails_total{outcome}:
// the mailer's sends — "delivered", "retried", "dead";
// export_center_subscriptions_paused{reason}: PAUSED subscriptions per reason
// (OWNER, PERMISSION_LOST, TYPE_GONE, FAILURES), set at each scrape from the
// database. Every series exists at 0 from the start, so alerts see them.

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace export_center::metrics {

class DeliveryMetrics {
 public:
  DeliveryMetrics();

  void SubscriptionDeliveries(const std::string& outcome, int64_t n);
  void MailSent(const std::string& outcome);
  // Every known reason is set, to 0 when `per_reason` lacks it.
  void SetSubscriptionsPaused(const std::vector<std::pair<std::string, int64_t>>& per_reason);

  // The Prometheus text exposition format of these metrics.
  std::string Text() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& subscription_deliveries_;
  prometheus::Family<prometheus::Counter>& mails_;
  prometheus::Family<prometheus::Gauge>& subscriptions_paused_;
};

}  // namespace export_center::metrics
