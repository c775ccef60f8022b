#include "metrics/metrics.h"

#include <prometheus/text_serializer.h>

#include "common/build_info.h"

namespace export_center::metrics {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

// Task durations run from seconds to the 30-minute deadline.
const prometheus::Histogram::BucketBoundaries& TaskBuckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {1,   5,   15,  30,   60,   120,
                                                                   300, 600, 900, 1200, 1800, 3600};
  return kBuckets;
}

// One provider batch normally takes 1-3 s; the read timeout is 15 s.
const prometheus::Histogram::BucketBoundaries& ProviderBuckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {0.05, 0.1, 0.25, 0.5, 1, 2,
                                                                   3,    5,   10,   15,  30};
  return kBuckets;
}

// A task's wait runs from milliseconds (idle fleet) to hours (a backlog).
const prometheus::Histogram::BucketBoundaries& WaitBuckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600};
  return kBuckets;
}

}  // namespace

ExportMetrics::ExportMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      task_created_(BuildCounter()
                        .Name("export_task_created_total")
                        .Help("Export tasks created, by export type")
                        .Register(*registry_)),
      task_completed_(BuildCounter()
                          .Name("export_task_completed_total")
                          .Help("Export attempts ended, by export type and resulting status")
                          .Register(*registry_)),
      task_duration_(BuildHistogram()
                         .Name("export_task_duration_seconds")
                         .Help("Execution time of one export attempt")
                         .Register(*registry_)),
      task_queue_age_(BuildGauge()
                          .Name("export_task_queue_age_seconds")
                          .Help("Seconds the oldest PENDING task has waited")
                          .Register(*registry_)
                          .Add({})),
      outbox_{BuildGauge()
                  .Name("export_outbox_pending")
                  .Help("Outbox rows not yet sent")
                  .Register(*registry_)
                  .Add({}),
              BuildGauge()
                  .Name("export_outbox_oldest_age_seconds")
                  .Help("Age of the oldest unsent outbox row")
                  .Register(*registry_)
                  .Add({}),
              BuildGauge()
                  .Name("export_outbox_max_attempt")
                  .Help("Largest attempt_count among unsent outbox rows")
                  .Register(*registry_)
                  .Add({})},
      provider_request_(BuildHistogram()
                            .Name("export_provider_request_seconds")
                            .Help("Duration of provider batch calls")
                            .Register(*registry_)),
      provider_failure_(BuildCounter()
                            .Name("export_provider_failure_total")
                            .Help("Failed provider batch calls")
                            .Register(*registry_)),
      reconciler_action_(BuildCounter()
                             .Name("export_reconciler_action_total")
                             .Help("Rows acted on by the reconciler, by action")
                             .Register(*registry_)),
      dlq_messages_(BuildCounter()
                        .Name("export_dlq_messages_total")
                        .Help("Messages received by the dead-letter handler")
                        .Register(*registry_)
                        .Add({})),
      storage_bytes_(BuildGauge()
                         .Name("export_storage_bytes")
                         .Help("Bytes held by export files in storage")
                         .Register(*registry_)
                         .Add({})),
      notification_deliveries_(BuildCounter()
                                   .Name("export_notification_deliveries_total")
                                   .Help("Webhook delivery attempts, by receiver and result")
                                   .Register(*registry_)),
      tenant_queued_(BuildGauge()
                         .Name("export_tenant_tasks_queued")
                         .Help("PENDING export tasks, by tenant")
                         .Register(*registry_)),
      tenant_running_(BuildGauge()
                          .Name("export_tenant_tasks_running")
                          .Help("RUNNING export tasks, by tenant")
                          .Register(*registry_)),
      task_wait_(BuildHistogram()
                     .Name("export_task_wait_seconds")
                     .Help("Seconds from a task's creation to its first RUNNING, by tenant")
                     .Register(*registry_)),
      thread_failures_(BuildCounter()
                           .Name("export_thread_failures_total")
                           .Help("Exceptions caught by the thread guard, by thread name")
                           .Register(*registry_)),
      rocketmq_undecodable_skipped_(
          BuildCounter()
              .Name("export_rocketmq_undecodable_skipped_total")
              .Help("Stored RocketMQ messages skipped by a consumer because they do not decode")
              .Register(*registry_)
              .Add({})),
      subscriptions_(*registry_) {
  // Alerts such as rate(...{action="lease_recover"}) need the series to exist
  // at zero before the first event.
  for (const char* action : {kActionRedispatch, kActionLeaseRecover, kActionOutboxRelease,
                             kActionExpire, kActionOrphanClean}) {
    reconciler_action_.Add({{"action", action}});
  }
  // The info-metric pattern: one series at 1 whose labels say what runs, so a dashboard
  // joins on it (or counts the versions of a rolling fleet: count by (version)).
  BuildGauge()
      .Name("export_center_build_info")
      .Help("The release and commit this process was built from (always 1)")
      .Register(*registry_)
      .Add({{"version", std::string(build_info::Version())},
            {"commit", std::string(build_info::Commit())}})
      .Set(1);
}

void ExportMetrics::TaskCreated(const std::string& type) {
  task_created_.Add({{"type", type}}).Increment();
}

void ExportMetrics::TaskCompleted(const std::string& type, const std::string& status) {
  task_completed_.Add({{"type", type}, {"status", status}}).Increment();
}

void ExportMetrics::AttemptDuration(const std::string& type, double seconds) {
  task_duration_.Add({{"type", type}}, TaskBuckets()).Observe(seconds);
}

void ExportMetrics::SetTaskQueueAge(double seconds) { task_queue_age_.Set(seconds); }

void ExportMetrics::SetOutboxGauges(int64_t pending, double oldest_age_seconds,
                                    int64_t max_attempt) {
  outbox_.pending.Set(static_cast<double>(pending));
  outbox_.oldest_age.Set(oldest_age_seconds);
  outbox_.max_attempt.Set(static_cast<double>(max_attempt));
}

void ExportMetrics::ProviderRequest(const std::string& service, const std::string& type,
                                    double seconds) {
  provider_request_.Add({{"service", service}, {"type", type}}, ProviderBuckets()).Observe(seconds);
}

void ExportMetrics::ProviderFailure(const std::string& service, const std::string& type) {
  provider_failure_.Add({{"service", service}, {"type", type}}).Increment();
}

void ExportMetrics::ReconcilerAction(const std::string& action, int64_t n) {
  if (n <= 0) return;  // Counter::Increment rejects negatives; zero is a no-op
  reconciler_action_.Add({{"action", action}}).Increment(static_cast<double>(n));
}

SubscriptionMetrics::SubscriptionMetrics(prometheus::Registry& registry)
    : runs_(prometheus::BuildCounter()
                .Name("export_center_subscription_runs_total")
                .Help("Subscription slots by what they came to: fired, created, deferred, "
                      "skipped, failed")
                .Register(registry)) {
  for (const char* outcome : {"fired", "created", "deferred", "skipped", "failed"}) {
    runs_.Add({{"outcome", outcome}});
  }
}

void SubscriptionMetrics::Runs(const std::string& outcome, int64_t n) {
  if (n <= 0) return;
  runs_.Add({{"outcome", outcome}}).Increment(static_cast<double>(n));
}

void ExportMetrics::DlqMessage() { dlq_messages_.Increment(); }

void ExportMetrics::SetStorageBytes(int64_t bytes) {
  storage_bytes_.Set(static_cast<double>(bytes));
}

void ExportMetrics::NotificationDelivery(const std::string& receiver, const std::string& result) {
  notification_deliveries_.Add({{"receiver", receiver}, {"result", result}}).Increment();
}

void ExportMetrics::DeclareNotificationReceiver(const std::string& receiver) {
  for (const char* result : {"delivered", "failed", "dead"}) {
    notification_deliveries_.Add({{"receiver", receiver}, {"result", result}});
  }
}

void ExportMetrics::SetTenantLoad(const std::vector<TenantLoad>& tenants) {
  MutexLock lock(&tenants_with_load_.mu);
  std::set<std::string> now;
  for (const TenantLoad& t : tenants) {
    tenant_queued_.Add({{"tenant", t.tenant}}).Set(static_cast<double>(t.queued));
    tenant_running_.Add({{"tenant", t.tenant}}).Set(static_cast<double>(t.running));
    now.insert(t.tenant);
  }
  for (const std::string& gone : tenants_with_load_.names) {
    if (now.count(gone) != 0) continue;
    tenant_queued_.Remove(&tenant_queued_.Add({{"tenant", gone}}));
    tenant_running_.Remove(&tenant_running_.Add({{"tenant", gone}}));
  }
  tenants_with_load_.names = std::move(now);
}

void ExportMetrics::TaskWait(const std::string& tenant, double seconds) {
  task_wait_.Add({{"tenant", tenant}}, WaitBuckets()).Observe(seconds < 0 ? 0 : seconds);
}

void ExportMetrics::SetThreadFailures(const std::vector<std::pair<std::string, int64_t>>& totals) {
  MutexLock lock(&thread_failures_mu_);
  for (const auto& [thread, total] : totals) {
    prometheus::Counter& counter = thread_failures_.Add({{"thread", thread}});
    const double missing = static_cast<double>(total) - counter.Value();
    if (missing > 0) counter.Increment(missing);
  }
}

std::string ExportMetrics::Text() const {
  prometheus::TextSerializer serializer;
  return serializer.Serialize(registry_->Collect());
}

void ExportMetrics::RocketMqUndecodableSkipped() { rocketmq_undecodable_skipped_.Increment(); }

}  // namespace export_center::metrics
