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

#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "dispatch/notification_options.h"
#include "http/http_client.h"
#include "store/notification_outbox.h"

namespace export_center::dispatch {

enum class DeliveryResult { kDelivered, kFailed, kDead };
std::string_view ToString(DeliveryResult result);

// The store's routes for these receivers (one per receiver; unknown event
// names cannot get past config validation and are skipped).
std::vector<store::NotificationRoute> RoutesOf(const NotificationOptions& options);

class NotificationPublisher {
 public:
  // Called once per delivery attempt with its receiver and result (metrics).
  using ResultCallback = std::function<void(const std::string& receiver, DeliveryResult)>;

  // Deliveries go through clients `http` opens (not owned; REQUIRES: outlives
  // the publisher).
  NotificationPublisher(store::NotificationOutbox* outbox, NotificationOptions options,
                        std::string instance, http::HttpClientFactory* http,
                        ResultCallback on_result = nullptr);
  ~NotificationPublisher();
  NotificationPublisher(const NotificationPublisher&) = delete;
  NotificationPublisher& operator=(const NotificationPublisher&) = delete;

  void Start();
  void Stop() EXCLUDES(mu_);

  // One round: claims and delivers up to batch-size due rows, one after the
  // other. Returns how many rows were claimed. Public for tests.
  int DeliverDueOnce();

 private:
  void Run() EXCLUDES(mu_);
  void DeliverOne(const store::NotificationEntry& entry);
  void Record(const store::NotificationEntry& entry, const std::string& error);
  void Report(const std::string& receiver, DeliveryResult result);

  store::NotificationOutbox* outbox_;
  const NotificationOptions options_;
  const std::map<std::string, WebhookReceiver> receivers_;
  const std::string instance_;
  http::HttpClientFactory* const http_;
  const ResultCallback on_result_;

  Mutex mu_;
  CondVar wake_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread worker_;
};

}  // namespace export_center::dispatch
