#pragma once
// NotificationPublisher: delivers the rows of the notification outbox to the
// webhook receivers (docs/notifications.md).
//
// Every instance runs one. A round selects due rows, claims each with a lease
// (so two instances never deliver one row at once; a row held by a dead
// instance is taken again after its lease), POSTs the row's payload signed
// with the receiver's secret, and records the outcome: 2xx → DELIVERED and
// never sent again; a refused connection, a timeout or any other status →
// PENDING again after the outbox's back-off (OutboxBackoffMs over
// `backoff_seconds`), or DEAD once `max_attempts` deliveries failed (logged
// and counted). A row whose receiver is no longer configured is DEAD at once.
//
// Threads: one owned worker thread; Stop() from any thread.

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/periodic_worker.h"
#include "http/http_client.h"
#include "notify/notification_options.h"
#include "store/notification_outbox.h"

namespace export_center::notify {

enum class DeliveryResult { kDelivered, kFailed, kDead };
std::string_view ToString(DeliveryResult result);

// The store's routes for these receivers (one per receiver; unknown event
// names cannot get past config validation and are skipped).
std::vector<store::NotificationRoute> RoutesOf(const NotificationOptions& options);

// What the notifier reports to metrics; on the notifier's thread (or
// DeliverDueOnce's caller); must not block. Does nothing unless overridden.
class NotificationObserver {
 public:
  virtual ~NotificationObserver() = default;
  // One delivery attempt to `receiver` ended with `result`
  // (export_notification_deliveries_total).
  virtual void DeliveryAttempted(const std::string& receiver, DeliveryResult result) {}
};

class NotificationPublisher {
 public:
  // Deliveries go through clients `http` opens (not owned; REQUIRES: outlives
  // the publisher). `observer` may be null; it must outlive the publisher.
  NotificationPublisher(store::NotificationOutbox* outbox, NotificationOptions options,
                        std::string instance, http::HttpClientFactory* http,
                        NotificationObserver* observer = nullptr);
  ~NotificationPublisher();
  NotificationPublisher(const NotificationPublisher&) = delete;
  NotificationPublisher& operator=(const NotificationPublisher&) = delete;

  void Start();
  void Stop();

  // One round: claims and delivers up to batch-size due rows, one after the
  // other. Returns how many rows were claimed. Public for tests.
  int DeliverDueOnce();

 private:
  // DeliverDueOnce, and the purge of delivered rows every ten minutes.
  PeriodicWorker::Next Round();
  void DeliverOne(const store::NotificationEntry& entry);
  void Record(const store::NotificationEntry& entry, const std::string& error);
  void Report(const std::string& receiver, DeliveryResult result);

  store::NotificationOutbox* outbox_;
  const NotificationOptions options_;
  const std::map<std::string, WebhookReceiver> receivers_;
  const std::string instance_;
  http::HttpClientFactory* const http_;
  NotificationObserver no_observer_;
  NotificationObserver* const observer_;  // never null

  std::chrono::steady_clock::time_point next_purge_;  // worker thread only
  // A round every poll interval, at once after a full batch.
  PeriodicWorker worker_;
};

}  // namespace export_center::notify
