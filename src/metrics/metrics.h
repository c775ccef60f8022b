#pragma once
// ExportMetrics: every metric of export-center in one place
// (docs/observability.md), exposed as Prometheus text at /metrics.
//
// One instance per process, owned by app/ (export_center_app.cc); only app/
// includes this header. api/ and source/ get plain callbacks from app/
// (ExportApi::Deps::on_created, ProviderBatchOptions::on_batch); attempt/,
// dispatch/ and notify/ report through the observer interface beside each
// component (AttemptObserver, ReconcilerObserver, DlqObserver,
// NotificationObserver), which app/ implements on the counters below; app/ sets
// the gauges from TaskStore::ReadGauges each time /metrics is scraped; the
// reconciler's sweep sets the storage gauge. Every method is thread-safe (prometheus-cpp families
// lock on first use of a label set; counters and gauges are atomic), cheap,
// and never fails. Label values are export types, attempt outcomes, provider
// service names, reconciler actions and tenant ids (from the verified token,
// a set the platform bounds): never task ids or user input.

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"

namespace export_center::metrics {

// Reconciler actions (export_reconciler_action_total{action}) whose series
// exist at 0 from start-up. The Reconciler passes its own action names;
// besides these it reports "outbox_purge", whose series appears on the first
// purge.
inline constexpr const char* kActionRedispatch = "redispatch";
inline constexpr const char* kActionLeaseRecover = "lease_recover";
inline constexpr const char* kActionOutboxRelease = "outbox_release";
inline constexpr const char* kActionExpire = "expire";
inline constexpr const char* kActionOrphanClean = "orphan_clean";

// The subscriptions' series (docs/subscriptions.md, docs/observability.md),
// registered on ExportMetrics's registry: ExportMetrics::subscriptions().
// Thread-safe.
class SubscriptionMetrics {
 public:
  explicit SubscriptionMetrics(prometheus::Registry& registry);
  // export_center_subscription_runs_total{outcome}: the scheduler's rounds
  // (docs/subscriptions.md#the-scheduler): fired (handed to the runner),
  // created, deferred, skipped or failed. `n` <= 0 records nothing; every
  // outcome's series exists at 0 from the start.
  void Runs(const std::string& outcome, int64_t n);

 private:
  prometheus::Family<prometheus::Counter>& runs_;
};

class ExportMetrics {
 public:
  ExportMetrics();
  ExportMetrics(const ExportMetrics&) = delete;
  ExportMetrics& operator=(const ExportMetrics&) = delete;

  // export_task_created_total{type}: a create transaction committed a new
  // task (a deduplicated submission is not counted).
  void TaskCreated(const std::string& type);
  // export_task_completed_total{type,status}: a task reached its final
  // status — SUCCEEDED, FAILED, CANCELLED, STALE or INCONSISTENT — whoever
  // ended it (an attempt, or the reconciler's lease recovery).
  void TaskCompleted(const std::string& type, const std::string& status);
  // export_task_duration_seconds{type}: execution time of one attempt,
  // however it ended (also when handed back for a retry).
  void AttemptDuration(const std::string& type, double seconds);
  // export_task_queue_age_seconds: wait of the oldest PENDING task (0 if none).
  // Set at each scrape, like the other gauges.
  void SetTaskQueueAge(double seconds);
  // export_outbox_pending, export_outbox_oldest_age_seconds, export_outbox_max_attempt.
  void SetOutboxGauges(int64_t pending, double oldest_age_seconds, int64_t max_attempt);
  // export_provider_request_seconds{service,type}: one batch call of the
  // provider route, success or not. The sql-template route's contract calls
  // are not timed here.
  void ProviderRequest(const std::string& service, const std::string& type, double seconds);
  // export_provider_failure_total{service,type}: a batch call that failed.
  void ProviderFailure(const std::string& service, const std::string& type);
  // export_reconciler_action_total{action}: `n` rows acted on in one pass;
  // n <= 0 records nothing. The start-up resend is not counted.
  void ReconcilerAction(const std::string& action, int64_t n = 1);
  // export_dlq_messages_total: every message the DLQ handler receives, whether
  // or not it names a task it can quarantine.
  void DlqMessage();
  // export_storage_bytes: bytes held by export files (summed by each
  // reconciler orphan sweep, never by a scrape).
  void SetStorageBytes(int64_t bytes);
  // export_notification_deliveries_total{receiver,result}: one webhook
  // delivery attempt (docs/notifications.md): result "delivered" (2xx),
  // "failed" (to be retried) or "dead" (given up). Receivers are the
  // configured ids, a small set.
  void NotificationDelivery(const std::string& receiver, const std::string& result);
  // Creates a receiver's three series at 0, so alerts see them before the
  // first delivery.
  void DeclareNotificationReceiver(const std::string& receiver);

  // export_tenant_tasks_queued{tenant} and export_tenant_tasks_running{tenant}:
  // PENDING and RUNNING tasks per tenant, set at each scrape from the
  // database. A tenant missing from `tenants` has neither any more: its
  // series are removed, so idle tenants do not pile up.
  struct TenantLoad {
    std::string tenant;
    int64_t queued = 0;
    int64_t running = 0;
  };
  void SetTenantLoad(const std::vector<TenantLoad>& tenants);
  // export_task_wait_seconds{tenant}: creation to first RUNNING of a task
  // (docs/dispatch.md#tenant-fairness).
  void TaskWait(const std::string& tenant, double seconds);

  // export_thread_failures_total{thread}: exceptions the thread guard caught
  // (common/thread_guard.h, docs/conventions.md#threads), per thread name.
  // `totals` is the guard's process-wide table, read at each scrape: each
  // counter is raised to its total (a total never goes down). Thread names
  // are the code's own, a fixed set of about twenty.
  void SetThreadFailures(const std::vector<std::pair<std::string, int64_t>>& totals);

  // export_rocketmq_undecodable_skipped_total: stored RocketMQ messages the
  // channel's consumers skipped because they did not decode
  // (docs/rocketmq.md#undecodable-messages). Exists at 0 on every channel.
  void RocketMqUndecodableSkipped();

  // The subscriptions' series.
  SubscriptionMetrics& subscriptions() { return subscriptions_; }

  // The Prometheus text exposition format (version 0.0.4) of every metric.
  std::string Text() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  // The whole metric set, one line each (docs/conventions.md#wrappers-and-metrics).
  prometheus::Family<prometheus::Counter>& task_created_;
  prometheus::Family<prometheus::Counter>& task_completed_;
  prometheus::Family<prometheus::Histogram>& task_duration_;
  prometheus::Gauge& task_queue_age_;
  struct OutboxGauges {
    prometheus::Gauge& pending;
    prometheus::Gauge& oldest_age;
    prometheus::Gauge& max_attempt;
  } outbox_;
  prometheus::Family<prometheus::Histogram>& provider_request_;
  prometheus::Family<prometheus::Counter>& provider_failure_;
  prometheus::Family<prometheus::Counter>& reconciler_action_;
  prometheus::Counter& dlq_messages_;
  prometheus::Gauge& storage_bytes_;
  prometheus::Family<prometheus::Counter>& notification_deliveries_;
  prometheus::Family<prometheus::Gauge>& tenant_queued_;
  prometheus::Family<prometheus::Gauge>& tenant_running_;
  prometheus::Family<prometheus::Histogram>& task_wait_;
  // Two scrapes at once must not both raise a counter to its total.
  prometheus::Family<prometheus::Counter>& thread_failures_ GUARDED_BY(thread_failures_mu_);
  prometheus::Counter& rocketmq_undecodable_skipped_;
  SubscriptionMetrics subscriptions_;

  // The tenants whose load series exist.
  struct TenantsWithLoad {
    Mutex mu;
    std::set<std::string> names GUARDED_BY(mu);
  };
  TenantsWithLoad tenants_with_load_;
  Mutex thread_failures_mu_;
};

}  // namespace export_center::metrics
