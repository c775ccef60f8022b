#include "metrics/delivery_metrics.h"

#include <prometheus/text_serializer.h>

namespace export_center::metrics {
namespace {

// The reasons a subscription pauses for (store/subscription_ledger.h).
constexpr const char* kPauseReasons[] = {"OWNER", "PERMISSION_LOST", "TYPE_GONE", "FAILURES"};

}  // namespace

DeliveryMetrics::DeliveryMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      subscription_deliveries_(prometheus::BuildCounter()
                                   .Name("export_center_subscription_deliveries_total")
                                   .Help("What finished subscription runs delivered, by outcome")
                                   .Register(*registry_)),
      mails_(prometheus::BuildCounter()
                 .Name("export_center_mails_total")
                 .Help("Mail sends of the mail outbox, by outcome")
                 .Register(*registry_)),
      subscriptions_paused_(prometheus::BuildGauge()
                                .Name("export_center_subscriptions_paused")
                                .Help("PAUSED subscriptions, by pause reason")
                                .Register(*registry_)) {
  for (const char* outcome : {"mailed", "skipped_empty", "failed"}) {
    subscription_deliveries_.Add({{"outcome", outcome}});
  }
  for (const char* outcome : {"delivered", "retried", "dead"}) mails_.Add({{"outcome", outcome}});
  for (const char* reason : kPauseReasons) subscriptions_paused_.Add({{"reason", reason}});
}

void DeliveryMetrics::SubscriptionDeliveries(const std::string& outcome, int64_t n) {
  if (n > 0) subscription_deliveries_.Add({{"outcome", outcome}}).Increment(static_cast<double>(n));
}

void DeliveryMetrics::MailSent(const std::string& outcome) {
  mails_.Add({{"outcome", outcome}}).Increment();
}

void DeliveryMetrics::SetSubscriptionsPaused(
    const std::vector<std::pair<std::string, int64_t>>& per_reason) {
  for (const char* reason : kPauseReasons) {
    int64_t n = 0;
    for (const auto& [r, count] : per_reason) {
      if (r == reason) n = count;
    }
    subscriptions_paused_.Add({{"reason", reason}}).Set(static_cast<double>(n));
  }
}

std::string DeliveryMetrics::Text() const {
  prometheus::TextSerializer serializer;
  return serializer.Serialize(registry_->Collect());
}

}  // namespace export_center::metrics
