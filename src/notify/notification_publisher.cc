#include "notify/notification_publisher.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "common/backoff.h"
#include "notify/webhook_sender.h"
#include "notify/webhook_signature.h"

namespace export_center::notify {
namespace {

std::map<std::string, WebhookReceiver> ById(const std::vector<WebhookReceiver>& receivers) {
  std::map<std::string, WebhookReceiver> out;
  for (const WebhookReceiver& r : receivers) out[r.id] = r;
  return out;
}

// The signing time is the process clock: it is not a lease or a back-off but
// a credential's age, checked by the receiver against its own clock.
std::string UnixSecondsNow() {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count());
}

bool Is2xx(int status) { return status >= 200 && status < 300; }

}  // namespace

std::string_view ToString(DeliveryResult result) {
  switch (result) {
    case DeliveryResult::kDelivered:
      return "delivered";
    case DeliveryResult::kFailed:
      return "failed";
    case DeliveryResult::kDead:
      return "dead";
  }
  return "failed";
}

std::vector<store::NotificationRoute> RoutesOf(const NotificationOptions& options) {
  std::vector<store::NotificationRoute> routes;
  for (const WebhookReceiver& r : options.receivers) {
    store::NotificationRoute route{r.id, r.export_types, r.users, r.tenants, {}};
    for (const std::string& event : r.events) {
      if (auto state = task::ParseTaskState(event)) route.events.push_back(*state);
    }
    routes.push_back(std::move(route));
  }
  return routes;
}

NotificationPublisher::NotificationPublisher(store::NotificationOutbox* outbox,
                                             NotificationOptions options, std::string instance,
                                             http::HttpClientFactory* http,
                                             NotificationObserver* observer)
    : outbox_(outbox),
      options_(std::move(options)),
      receivers_(ById(options_.receivers)),
      instance_(std::move(instance)),
      http_(http),
      observer_(observer != nullptr ? observer : &no_observer_),
      next_purge_(std::chrono::steady_clock::now()),
      worker_({"notifier", std::chrono::milliseconds(options_.poll_interval_ms)},
              [this] { return Round(); }) {}

NotificationPublisher::~NotificationPublisher() { Stop(); }

void NotificationPublisher::Start() { worker_.Start(); }

void NotificationPublisher::Stop() { worker_.Stop(); }

PeriodicWorker::Next NotificationPublisher::Round() {
  const int claimed = DeliverDueOnce();
  if (std::chrono::steady_clock::now() >= next_purge_) {
    // Delivered rows are kept a while for operators, then dropped; DEAD
    // rows stay until someone looks at them.
    auto purged = outbox_->PurgeDeliveredNotifications(options_.delivered_retention_seconds, 500);
    if (!purged.ok()) spdlog::warn("notifier: purge failed: {}", purged.status().ToString());
    next_purge_ = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  }
  // A full batch: more may be due.
  return claimed >= options_.batch_size ? PeriodicWorker::Next::Now()
                                        : PeriodicWorker::Next::Interval();
}

int NotificationPublisher::DeliverDueOnce() {
  store::ClaimRound<store::NotificationEntry> round;
  round.batch_size = options_.batch_size;
  round.select_due = [this](int limit) { return outbox_->SelectDueNotifications(limit); };
  round.claim = [this](int64_t id) {
    return outbox_->ClaimNotification(id, instance_, options_.lease_seconds);
  };
  round.handle = [this](const store::NotificationEntry& entry) {
    DeliverOne(entry);
    return true;  // a failed delivery is recorded on its row; the round goes on
  };
  // Stop() called: a round ends its pass early.
  round.stopping = [this] { return worker_.Stopping(); };
  round.on_claim_error = [](int64_t id, const Status& error) {
    spdlog::warn("notifier: claim of notification {} failed: {}", id, error.ToString());
  };
  auto done = store::RunClaimRound(round);
  if (!done.ok()) {
    spdlog::warn("notifier: cannot read due notifications: {}", done.status().ToString());
    return 0;
  }
  return done->claimed;
}

void NotificationPublisher::DeliverOne(const store::NotificationEntry& entry) {
  auto receiver = receivers_.find(entry.receiver_id);
  if (receiver == receivers_.end()) {
    Record(entry, "receiver '" + entry.receiver_id + "' is no longer configured");
    return;
  }
  const WebhookReceiver& r = receiver->second;
  const std::string timestamp = UnixSecondsNow();
  const HeaderList headers = {
      {kWebhookEventIdHeader, entry.event_id},
      {kWebhookTimestampHeader, timestamp},
      {kWebhookSignatureHeader,
       kWebhookSignaturePrefix + WebhookSignature(r.secret, timestamp, entry.payload_json)},
      {kWebhookAttemptHeader, std::to_string(entry.attempt_count)},
      {"User-Agent", "export-center-webhook/1"},
  };
  WebhookAnswer answer = PostWebhook(http_, r.url, headers, entry.payload_json,
                                     options_.connect_timeout_ms, options_.timeout_ms);
  if (answer.answered && Is2xx(answer.status)) {
    auto marked = outbox_->MarkNotificationDelivered(entry.id, instance_);
    if (!marked.ok() || *marked == store::MarkOutcome::kClaimLost) {
      // Delivered but not recorded: after the lease the row is sent again,
      // with the same event id, which the receiver deduplicates.
      spdlog::warn("notification {} delivered but not recorded: {}", entry.id,
                   marked.ok() ? "claim lost" : marked.status().ToString());
    }
    Report(r.id, DeliveryResult::kDelivered);
    return;
  }
  Record(entry, answer.answered ? "HTTP " + std::to_string(answer.status) : answer.error);
}

// A failed delivery: back to PENDING with the outbox back-off, or DEAD.
void NotificationPublisher::Record(const store::NotificationEntry& entry,
                                   const std::string& error) {
  const bool receiver_gone = receivers_.count(entry.receiver_id) == 0;
  if (receiver_gone || entry.attempt_count >= options_.max_attempts) {
    spdlog::error("notification {} (event {}, task {} {}) to '{}' is dead after {} attempt(s): {}",
                  entry.id, entry.event_id, entry.task_id, entry.task_status, entry.receiver_id,
                  entry.attempt_count, error);
    auto marked = outbox_->MarkNotificationDead(entry.id, instance_, error);
    if (!marked.ok()) {
      spdlog::warn("notification {} not marked dead: {}", entry.id, marked.status().ToString());
    }
    Report(entry.receiver_id, DeliveryResult::kDead);
    return;
  }
  const int64_t backoff = OutboxBackoffMs(options_.backoff_seconds, entry.attempt_count);
  spdlog::warn("notification {} (event {}) to '{}' failed (attempt {}), retry in {} ms: {}",
               entry.id, entry.event_id, entry.receiver_id, entry.attempt_count, backoff, error);
  auto marked = outbox_->MarkNotificationRetry(entry.id, instance_, error, backoff);
  if (!marked.ok()) {
    spdlog::warn("notification {} failure not recorded: {}", entry.id, marked.status().ToString());
  }
  Report(entry.receiver_id, DeliveryResult::kFailed);
}

void NotificationPublisher::Report(const std::string& receiver, DeliveryResult result) {
  observer_->DeliveryAttempted(receiver, result);
}

}  // namespace export_center::notify
