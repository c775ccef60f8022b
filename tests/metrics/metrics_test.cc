#include "metrics/metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace export_center::metrics {
namespace {

bool Has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(ExportMetrics, UnlabelledMetricsExistAtZero) {
  ExportMetrics m;
  std::string text = m.Text();
  for (const char* name : {"export_task_queue_age_seconds 0", "export_outbox_pending 0",
                           "export_outbox_oldest_age_seconds 0", "export_outbox_max_attempt 0",
                           "export_dlq_messages_total 0", "export_storage_bytes 0",
                           "export_rocketmq_undecodable_skipped_total 0",
                           "export_reconciler_action_total{action=\"lease_recover\"} 0"}) {
    EXPECT_TRUE(Has(text, name)) << name << "\n" << text;
  }
}

TEST(ExportMetrics, TextContainsLabelsAfterUpdates) {
  ExportMetrics m;
  m.TaskCreated("CUSTOMER_LIST");
  m.TaskCreated("CUSTOMER_LIST");
  m.TaskCompleted("CUSTOMER_LIST", "SUCCEEDED");
  m.AttemptDuration("CUSTOMER_LIST", 12.5);
  m.SetTaskQueueAge(42);
  m.SetOutboxGauges(7, 130.5, 11);
  m.ProviderRequest("customer-service", "CUSTOMER_LIST", 0.3);
  m.ProviderFailure("customer-service", "CUSTOMER_LIST");
  m.ReconcilerAction(kActionRedispatch, 3);
  m.ReconcilerAction(kActionExpire, 0);
  m.DlqMessage();
  m.SetStorageBytes(1048576);
  m.RocketMqUndecodableSkipped();
  std::string t = m.Text();
  EXPECT_TRUE(Has(t, "export_rocketmq_undecodable_skipped_total 1")) << t;
  EXPECT_TRUE(Has(t, "export_task_created_total{type=\"CUSTOMER_LIST\"} 2")) << t;
  EXPECT_TRUE(Has(t, "export_task_completed_total{status=\"SUCCEEDED\",type=\"CUSTOMER_LIST\"} 1"))
      << t;
  EXPECT_TRUE(Has(t, "# TYPE export_task_duration_seconds histogram")) << t;
  EXPECT_TRUE(Has(t, "# TYPE export_provider_request_seconds histogram")) << t;
  EXPECT_TRUE(Has(t, "export_task_duration_seconds_count{type=\"CUSTOMER_LIST\"} 1")) << t;
  EXPECT_TRUE(Has(t, "export_task_duration_seconds_sum{type=\"CUSTOMER_LIST\"} 12.5")) << t;
  EXPECT_TRUE(Has(t, "export_task_duration_seconds_bucket{type=\"CUSTOMER_LIST\",le=\"15\"} 1"))
      << t;
  EXPECT_TRUE(Has(t, "export_task_queue_age_seconds 42")) << t;
  EXPECT_TRUE(Has(t, "export_outbox_pending 7")) << t;
  EXPECT_TRUE(Has(t, "export_outbox_oldest_age_seconds 130.5")) << t;
  EXPECT_TRUE(Has(t, "export_outbox_max_attempt 11")) << t;
  EXPECT_TRUE(Has(t,
                  "export_provider_request_seconds_count{service=\"customer-service\",type="
                  "\"CUSTOMER_LIST\"} 1"))
      << t;
  EXPECT_TRUE(Has(
      t, "export_provider_failure_total{service=\"customer-service\",type=\"CUSTOMER_LIST\"} 1"))
      << t;
  EXPECT_TRUE(Has(t, "export_reconciler_action_total{action=\"redispatch\"} 3")) << t;
  EXPECT_TRUE(Has(t, "export_reconciler_action_total{action=\"expire\"} 0")) << t;
  EXPECT_TRUE(Has(t, "export_dlq_messages_total 1")) << t;
  EXPECT_TRUE(Has(t, "export_storage_bytes 1048576")) << t;
}

TEST(ExportMetrics, TenantLoadSeriesFollowTheDatabaseAndIdleTenantsDisappear) {
  ExportMetrics m;
  m.SetTenantLoad({{"A", 38, 2}, {"B", 0, 2}});
  std::string t = m.Text();
  EXPECT_TRUE(Has(t, "export_tenant_tasks_queued{tenant=\"A\"} 38")) << t;
  EXPECT_TRUE(Has(t, "export_tenant_tasks_running{tenant=\"A\"} 2")) << t;
  EXPECT_TRUE(Has(t, "export_tenant_tasks_queued{tenant=\"B\"} 0")) << t;
  EXPECT_TRUE(Has(t, "export_tenant_tasks_running{tenant=\"B\"} 2")) << t;
  m.SetTenantLoad({{"A", 1, 1}});
  t = m.Text();
  EXPECT_TRUE(Has(t, "export_tenant_tasks_queued{tenant=\"A\"} 1")) << t;
  EXPECT_FALSE(Has(t, "tenant=\"B\"")) << t;
}

TEST(ExportMetrics, WaitTimeIsAHistogramPerTenant) {
  ExportMetrics m;
  m.TaskWait("A", 0.3);
  m.TaskWait("A", 42);
  m.TaskWait("B", 0.02);
  std::string t = m.Text();
  EXPECT_TRUE(Has(t, "# TYPE export_task_wait_seconds histogram")) << t;
  EXPECT_TRUE(Has(t, "export_task_wait_seconds_count{tenant=\"A\"} 2")) << t;
  EXPECT_TRUE(Has(t, "export_task_wait_seconds_bucket{tenant=\"A\",le=\"0.5\"} 1")) << t;
  EXPECT_TRUE(Has(t, "export_task_wait_seconds_bucket{tenant=\"B\",le=\"0.05\"} 1")) << t;
}

TEST(ExportMetrics, ConcurrentUpdatesAreCounted) {
  ExportMetrics m;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&m] {
      for (int i = 0; i < 1000; ++i) {
        m.TaskCreated("T" + std::to_string(i % 3));
        m.DlqMessage();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::string t = m.Text();
  EXPECT_TRUE(Has(t, "export_dlq_messages_total 8000")) << t;
  EXPECT_TRUE(Has(t, "export_task_created_total{type=\"T0\"} 2672")) << t;
}

TEST(ExportMetrics, NotificationDeliveriesAreCountedPerReceiverAndResult) {
  ExportMetrics m;
  m.DeclareNotificationReceiver("ops-hook");
  EXPECT_TRUE(Has(m.Text(),
                  "export_notification_deliveries_total{receiver=\"ops-hook\","
                  "result=\"dead\"} 0"))
      << m.Text();
  m.NotificationDelivery("ops-hook", "failed");
  m.NotificationDelivery("ops-hook", "failed");
  m.NotificationDelivery("ops-hook", "delivered");
  std::string text = m.Text();
  EXPECT_TRUE(Has(text,
                  "export_notification_deliveries_total{receiver=\"ops-hook\","
                  "result=\"failed\"} 2"))
      << text;
  EXPECT_TRUE(Has(text,
                  "export_notification_deliveries_total{receiver=\"ops-hook\","
                  "result=\"delivered\"} 1"))
      << text;
}

TEST(ExportMetrics, ThreadFailuresFollowTheGuardsTotals) {
  ExportMetrics m;
  m.SetThreadFailures({{"consumer", 0}, {"sse_poller", 2}});
  std::string text = m.Text();
  EXPECT_TRUE(Has(text, "export_thread_failures_total{thread=\"consumer\"} 0")) << text;
  EXPECT_TRUE(Has(text, "export_thread_failures_total{thread=\"sse_poller\"} 2")) << text;
  m.SetThreadFailures({{"consumer", 3}, {"sse_poller", 2}});
  m.SetThreadFailures({{"consumer", 3}, {"sse_poller", 1}});  // never goes down
  text = m.Text();
  EXPECT_TRUE(Has(text, "export_thread_failures_total{thread=\"consumer\"} 3")) << text;
  EXPECT_TRUE(Has(text, "export_thread_failures_total{thread=\"sse_poller\"} 2")) << text;
}

}  // namespace
}  // namespace export_center::metrics
