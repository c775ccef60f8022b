#pragma once
// The options of dispatch/: the consumer (and the attempts it runs), the
// outbox publisher, the reconciler and the command channel.
//
// A header of its own so that config/, which fills them, does not pull in the
// threads, store and render declarations of the classes that read them.

#include <string>
#include <vector>

namespace export_center::dispatch {

struct ConsumerOptions {
  bool enabled = true;
  int concurrency = 4;
  int lease_seconds = 300;
  int heartbeat_seconds = 60;
  int max_duration_seconds = 1800;
  std::vector<int> retry_backoff_seconds = {60, 900};  // ±20 % jitter
  int shutdown_grace_seconds = 60;
};

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
  std::string kind = "embedded";  // embedded (the in-process queue) is the one built today
  // Deliveries of a rejected command before it goes to the dead letters.
  int delivery_limit = 3;
};

}  // namespace export_center::dispatch
