#pragma once
// The options of what finished subscription runs deliver
// (docs/configuration.md#subscriptions, the delivery block), filled by
// config/ from the `subscriptions:` section. Plain data.

#include <cstdint>

namespace export_center::subscription {

struct DeliveryOptions {
  // subscriptions.failure-grace-period-minutes: at most one failure notice
  // per subscription in this long.
  int64_t failure_grace_period_ms = 24LL * 3600 * 1000;
  // subscriptions.link-ttl-minutes: how long the mail's download link works.
  int64_t link_ttl_ms = 72LL * 3600 * 1000;
  // subscriptions.attach: whether a subscription's `attach` is honoured at
  // all (false: every mail carries the link only, and says so).
  bool attachments = true;
  // mail.attachment-max-bytes, copied by app/: a larger file is not attached.
  int64_t attachment_max_bytes = 10LL * 1024 * 1024;
  int batch = 50;               // runs per round
  int poll_interval_ms = 5000;  // between rounds
};

}  // namespace export_center::subscription
