#pragma once
// The options of the webhook notifier (docs/notifications.md), filled by
// config/ from the `notifications:` section. A header of its own, like
// options.h, so config/ does not pull in the notifier's threads.

#include <string>
#include <vector>

namespace export_center::notify {

// One webhook receiver. Empty filter lists match everything.
struct WebhookReceiver {
  std::string id;      // the map key: [a-z][a-z0-9-]{0,63}
  std::string url;     // http(s)://host[:port]/path; host:port must be allow-listed
  std::string secret;  // HMAC-SHA256 key; env EXPORT_CENTER_WEBHOOK_SECRET_<ID> wins
  std::vector<std::string> export_types;
  std::vector<std::string> users;    // requested_by
  std::vector<std::string> tenants;  // tenant_id
  std::vector<std::string>
      events;  // end states: SUCCEEDED FAILED CANCELLED EXPIRED STALE INCONSISTENT
};

struct NotificationOptions {
  // The notifier runs when enabled and at least one receiver is configured.
  // Rows are written whenever receivers are configured, so a process with
  // the notifier off still records what others will deliver.
  bool enabled = true;
  // "host:port" targets a receiver URL may name (the anti-SSRF allow-list).
  std::vector<std::string> allowed_targets;
  std::vector<WebhookReceiver> receivers;
  int connect_timeout_ms = 2000;
  int timeout_ms = 5000;  // each read/write of one delivery
  int max_attempts = 10;  // then DEAD
  std::vector<int> backoff_seconds = {5, 15, 60, 300, 900};
  int lease_seconds = 60;  // a claim; far above connect + timeout
  int poll_interval_ms = 1000;
  int batch_size = 20;
  int delivered_retention_seconds = 7 * 86400;
};

}  // namespace export_center::notify
