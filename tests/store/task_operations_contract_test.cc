// The TaskOperations role of the TaskStore contract (task_operations.h: the
// operators' console) on every backend: search, bulk actions and their audit,
// type statistics and the queue's health.

#include <gtest/gtest.h>

#include "task_store_fixture.h"  // beside this file

namespace export_center::store::contract {
namespace {

// ---- the operators' console (task_operations.h) --------------------------------------

class TaskOperationsContractTest : public TaskStoreContractTest {
 protected:
  Task Make(const std::string& tenant, const std::string& user, const std::string& type) {
    return Create(MakeTask(user, type, "{\"n\":" + std::to_string(++made_) + "}", tenant),
                  Unlimited());
  }
  // Rewrites a task's outcome and times (ms before now) as if it had run.
  void Ran(int64_t id, TaskState state, int64_t requested_ago, std::optional<int64_t> wait,
           std::optional<int64_t> duration, int64_t rows = 0, int64_t bytes = 0,
           std::optional<std::string> code = std::nullopt) {
    const int64_t requested = Now() - requested_ago;
    std::optional<int64_t> started, completed;
    if (wait) started = requested + *wait;
    if (wait && duration) completed = *started + *duration;
    Exec(
        "UPDATE export_task SET status = ?, requested_at = ?, started_at = ?, completed_at = ?,"
        " total_rows = ?, size_bytes = ?, failure_code = ? WHERE id = ?",
        {std::string(task::ToString(state)), requested, started, completed, rows, bytes, code, id});
  }
  static OperatorScope Tenant(const std::string& tenant) {
    return {tenant, task::AppCode::kPlatform};
  }
  std::vector<int64_t> Ids(const OperatorFilter& f) {
    auto page = store_->SearchTasks(f, 1, 100, std::nullopt);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    std::vector<int64_t> ids;
    if (!page.ok()) return ids;
    EXPECT_EQ(page->total, static_cast<int64_t>(page->records.size()));
    for (const Task& t : page->records) ids.push_back(t.id);
    std::sort(ids.begin(), ids.end());
    return ids;
  }
  int made_ = 0;
};

TEST_P(TaskOperationsContractTest, SearchFiltersAcrossUsersWithinTheScope) {
  Task a = Make("t1", "alice", "orders");
  Task b = Make("t1", "bob", "customers");
  Task old = Make("t1", "bob", "orders");
  Task other = Make("t2", "carol", "orders");
  Ran(b.id, TaskState::kFailed, kMinute, 100, 100, 0, 0, "PROVIDER_ERROR");
  Ran(old.id, TaskState::kFailed, 3 * kDay, 100, 100, 0, 0, "TIMEOUT");

  OperatorFilter f;
  f.scope = Tenant("t1");
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{a.id, b.id, old.id}));
  f.scope = {};  // every tenant
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{a.id, b.id, old.id, other.id}));
  f.scope = Tenant("t2");
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{other.id}));
  f.scope = {"t1", task::AppCode::kMerchant};  // same tenant, other app: nothing
  EXPECT_TRUE(Ids(f).empty());

  f = OperatorFilter();
  f.scope = Tenant("t1");
  f.requested_by = "bob";
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b.id, old.id}));
  f.export_type = "orders";
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{old.id}));
  f = OperatorFilter();
  f.any_status = {TaskState::kFailed};
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b.id, old.id}));
  f.failure_code = "PROVIDER_ERROR";
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b.id}));
  f = OperatorFilter();
  f.from_ms = Now() - kDay;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{a.id, b.id, other.id}));
  f.from_ms.reset();
  f.to_ms = Now() - kDay;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{old.id}));
  EXPECT_EQ(*store_->CountTasks(f), 1);

  // Newest first, paged.
  f = OperatorFilter();
  ASSERT_OK_AND_ASSIGN(TaskCatalog::ListPage page, store_->SearchTasks(f, 2, 3, std::nullopt));
  EXPECT_EQ(page.total, 4);
  ASSERT_EQ(page.records.size(), 1u);
  EXPECT_EQ(page.records[0].id, old.id);
}

TEST_P(TaskOperationsContractTest, TaskIdsPageAscendingForABulkAction) {
  std::vector<int64_t> made;
  for (int i = 0; i < 5; ++i) made.push_back(Make("t1", "u" + std::to_string(i), "orders").id);
  Make("t2", "x", "orders");
  OperatorFilter f;
  f.scope = Tenant("t1");
  EXPECT_EQ(*store_->CountTasks(f), 5);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> first, store_->ListTaskIds(f, 0, 3));
  ASSERT_EQ(first.size(), 3u);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> rest, store_->ListTaskIds(f, first.back(), 3));
  first.insert(first.end(), rest.begin(), rest.end());
  std::sort(made.begin(), made.end());
  EXPECT_EQ(first, made);
}

TEST_P(TaskOperationsContractTest, BulkActionsAreAuditedAndSeenOnlyInTheirScope) {
  BulkActionRecord r;
  r.actor = "op1";
  r.actor_tenant = "t1";
  r.scope_tenant = "t1";
  r.scope_app = task::AppCode::kPlatform;
  r.action = "RETRY";
  r.filter_json = "{\"status\":\"FAILED\"}";
  r.matched = 7;
  ASSERT_OK_AND_ASSIGN(r.id, store_->BeginBulkAction(r));
  BulkActionRecord platform = r;
  platform.actor = "root";
  platform.actor_tenant = "platform";
  platform.scope_tenant.reset();
  platform.scope_app.reset();
  platform.action = "CANCEL";
  ASSERT_OK_AND_ASSIGN(platform.id, store_->BeginBulkAction(platform));

  ASSERT_OK_AND_ASSIGN(std::vector<BulkActionRecord> t1, store_->ListBulkActions(Tenant("t1"), 10));
  ASSERT_EQ(t1.size(), 1u);
  EXPECT_EQ(t1[0].outcome, "RUNNING");  // on record before it acts
  EXPECT_FALSE(t1[0].finished_at.has_value());
  r.succeeded = 5, r.skipped = 1, r.failed = 1, r.outcome = "COMPLETED";
  r.first_error = "task 9: export type gone";
  ASSERT_OK(store_->FinishBulkAction(r));
  ASSERT_OK(store_->FinishBulkAction(r));  // idempotent
  ASSERT_OK_AND_ASSIGN(t1, store_->ListBulkActions(Tenant("t1"), 10));
  ASSERT_EQ(t1.size(), 1u);
  EXPECT_EQ(t1[0].actor, "op1");
  EXPECT_EQ(t1[0].filter_json, "{\"status\":\"FAILED\"}");
  EXPECT_EQ(t1[0].matched, 7);
  EXPECT_EQ(t1[0].succeeded, 5);
  EXPECT_EQ(t1[0].skipped, 1);
  EXPECT_EQ(t1[0].failed, 1);
  EXPECT_EQ(t1[0].outcome, "COMPLETED");
  EXPECT_EQ(*t1[0].first_error, "task 9: export type gone");
  EXPECT_TRUE(t1[0].finished_at.has_value());
  EXPECT_EQ(t1[0].scope_app, task::AppCode::kPlatform);
  EXPECT_TRUE(store_->ListBulkActions(Tenant("t2"), 10)->empty());
  EXPECT_EQ(store_->ListBulkActions({}, 10)->size(), 2u);
  BulkActionRecord missing = r;
  missing.id = 42;
  EXPECT_EQ(store_->FinishBulkAction(missing).code(), StatusCode::kNotFound);
}

// A tenant's operator of one app lists that app's actions only: a MERCHANT
// operator never sees the PLATFORM operators' rows of the same tenant (their
// actors, the user ids in their filters, the task ids in their errors), nor
// an action over every app of the tenant, which only operate-all sees.
TEST_P(TaskOperationsContractTest, BulkActionAuditHonoursTheAppScope) {
  BulkActionRecord platform_op;
  platform_op.actor = "platform-op";
  platform_op.actor_tenant = "t1";
  platform_op.scope_tenant = "t1";
  platform_op.scope_app = task::AppCode::kPlatform;
  platform_op.action = "RETRY";
  platform_op.filter_json = "{\"user\":\"platform-user\"}";
  platform_op.matched = 1;
  ASSERT_OK_AND_ASSIGN(platform_op.id, store_->BeginBulkAction(platform_op));
  BulkActionRecord merchant_op = platform_op;
  merchant_op.actor = "merchant-op";
  merchant_op.scope_app = task::AppCode::kMerchant;
  merchant_op.filter_json = "{}";
  ASSERT_OK_AND_ASSIGN(merchant_op.id, store_->BeginBulkAction(merchant_op));
  BulkActionRecord every_app = platform_op;  // operate-all with ?tenantId=t1
  every_app.actor = "root";
  every_app.scope_app.reset();
  ASSERT_OK_AND_ASSIGN(every_app.id, store_->BeginBulkAction(every_app));

  auto actors = [&](const OperatorScope& scope) {
    auto rows = store_->ListBulkActions(scope, 10);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    std::vector<std::string> out;
    if (rows.ok()) {
      for (const auto& r : *rows) out.push_back(r.actor);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(actors({"t1", task::AppCode::kMerchant}), std::vector<std::string>{"merchant-op"});
  EXPECT_EQ(actors({"t1", task::AppCode::kPlatform}), std::vector<std::string>{"platform-op"});
  EXPECT_EQ(actors({"t1", std::nullopt}),
            (std::vector<std::string>{"merchant-op", "platform-op", "root"}));
  EXPECT_EQ(actors({}), (std::vector<std::string>{"merchant-op", "platform-op", "root"}));
}

// The migration that records the app (version 12) keeps the rows written
// before it, without an app: they are listed to operate-all only.
TEST_P(TaskOperationsContractTest, BulkActionsOlderThanTheAppColumnStayWithOperateAll) {
  // The database as version 11 left it, with one row written then.
  Exec("DELETE FROM export_schema_version WHERE version >= 12");
  Exec("ALTER TABLE export_bulk_action DROP COLUMN scope_app");
  Exec("ALTER TABLE export_task DROP COLUMN failure_detail");
  Exec(
      "INSERT INTO export_bulk_action (id, actor, actor_tenant, scope_tenant, action,"
      " filter_json, matched, succeeded, skipped, failed, outcome, started_at)"
      " VALUES (77, 'platform-op', 't1', 't1', 'CANCEL', '{\"user\":\"u9\"}', 1, 1, 0, 0,"
      " 'COMPLETED', 1000)");
  ASSERT_OK(store_->Migrate());
  EXPECT_EQ(*CurrentSchemaVersion(*db_), LatestSchemaVersion());
  EXPECT_TRUE(store_->ListBulkActions({"t1", task::AppCode::kMerchant}, 10)->empty());
  EXPECT_TRUE(store_->ListBulkActions({"t1", task::AppCode::kPlatform}, 10)->empty());
  ASSERT_OK_AND_ASSIGN(std::vector<BulkActionRecord> all,
                       store_->ListBulkActions({"t1", std::nullopt}, 10));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].id, 77);
  EXPECT_EQ(all[0].actor, "platform-op");
  EXPECT_FALSE(all[0].scope_app.has_value());
  EXPECT_EQ(store_->ListBulkActions({}, 10)->size(), 1u);
}

TEST_P(TaskOperationsContractTest, TypeStatsAreComputedFromTheStoreForTheWindow) {
  // orders: waits 1..4 s, durations 10, 20, 30 s, one failure, one still running.
  std::vector<Task> orders;
  for (int i = 0; i < 5; ++i) orders.push_back(Make("t1", "u" + std::to_string(i), "orders"));
  Ran(orders[0].id, TaskState::kSucceeded, kHourMs, 1000, 10000, 1000, 100);
  Ran(orders[1].id, TaskState::kSucceeded, kHourMs, 2000, 20000, 2000, 200);
  Ran(orders[2].id, TaskState::kFailed, kHourMs, 3000, 30000, 0, 0, "PROVIDER_ERROR");
  Ran(orders[3].id, TaskState::kRunning, kHourMs, 4000, std::nullopt);
  // Outside 24 h, inside 7 d.
  Ran(orders[4].id, TaskState::kFailed, 2 * kDay, 500, 500, 0, 0, "TIMEOUT");
  Task customers = Make("t2", "v", "customers");
  Ran(customers.id, TaskState::kFailed, kHourMs, 100, 100, 0, 0, "TIMEOUT");

  ASSERT_OK_AND_ASSIGN(std::vector<TypeStats> day, store_->ReadTypeStats(Tenant("t1"), kDay));
  ASSERT_EQ(day.size(), 1u) << "t2's type is not t1's business";
  const TypeStats& s = day[0];
  EXPECT_EQ(s.export_type, "orders");
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.ended, 3);
  EXPECT_EQ(s.succeeded, 2);
  EXPECT_EQ(s.wait_p50_ms, 2000);  // nearest rank of 1, 2, 3, 4 s
  EXPECT_EQ(s.wait_p95_ms, 4000);
  EXPECT_EQ(s.duration_p50_ms, 20000);  // of 10, 20, 30 s
  EXPECT_EQ(s.duration_p95_ms, 30000);
  ASSERT_TRUE(s.rows_per_second.has_value());
  EXPECT_DOUBLE_EQ(*s.rows_per_second, 100.0);  // 3000 rows in 30 s of succeeded work
  EXPECT_EQ(s.bytes, 300);
  ASSERT_EQ(s.top_failure_codes.size(), 1u);
  EXPECT_EQ(s.top_failure_codes[0].code, "PROVIDER_ERROR");

  ASSERT_OK_AND_ASSIGN(std::vector<TypeStats> week, store_->ReadTypeStats({}, 7 * kDay));
  ASSERT_EQ(week.size(), 2u);
  EXPECT_EQ(week[0].export_type, "orders");  // busiest first
  EXPECT_EQ(week[0].count, 5);
  ASSERT_EQ(week[0].top_failure_codes.size(), 2u);
  EXPECT_EQ(week[1].export_type, "customers");
  EXPECT_EQ(week[1].succeeded, 0);
  EXPECT_FALSE(week[1].rows_per_second.has_value());

  // Another instance on the same database reads the same figures.
  std::unique_ptr<TaskStore> other = NewSqlTaskStore(db_);
  ASSERT_OK_AND_ASSIGN(std::vector<TypeStats> again, other->ReadTypeStats(Tenant("t1"), kDay));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].wait_p95_ms, s.wait_p95_ms);
  EXPECT_EQ(again[0].count, s.count);
  EXPECT_TRUE(store_->ReadTypeStats(Tenant("t3"), kDay)->empty());
}

TEST_P(TaskOperationsContractTest, QueueHealthShowsDueCommandsRunningAndDeadDeliveries) {
  store_->SetNotificationRoutes({NotificationRoute{"all", {}, {}, {}, {}}});
  Task queued = Make("t1", "alice", "orders");
  Shift("export_outbox", "due_since", -90 * kSecond, queued.id);
  Shift("export_outbox", "next_retry_at", -90 * kSecond, queued.id);
  Task running1 = Make("t1", "bob", "orders");
  Task running2 = Make("t2", "carol", "orders");
  ASSERT_TRUE(Claim(running1.id, 1, "w1").claimed);
  ASSERT_TRUE(Claim(running2.id, 1, "w2").claimed);
  Task cancelled = Make("t1", "dave", "orders");
  ASSERT_EQ(*store_->RequestCancel(cancelled.id), TaskState::kCancelled);
  NotificationOutbox& outbox = store_->notifications();
  ASSERT_OK_AND_ASSIGN(std::vector<NotificationEntry> notes,
                       outbox.ListNotificationsForTask(cancelled.id));
  ASSERT_EQ(notes.size(), 1u);
  const int64_t dead_id = notes[0].id;
  ASSERT_TRUE(outbox.ClaimNotification(dead_id, "n1", 60)->has_value());
  ASSERT_EQ(*outbox.MarkNotificationDead(dead_id, "n1", "HTTP 500"), MarkOutcome::kMarked);
  // Every other command went out (the publisher's part).
  Exec("UPDATE export_outbox SET status = 'SENT', sent_at = 1 WHERE task_id <> ?", {queued.id});

  ASSERT_OK_AND_ASSIGN(QueueHealth t1, store_->ReadQueueHealth(Tenant("t1")));
  EXPECT_EQ(t1.due_commands, 1) << "the claimed commands are no longer due";
  ASSERT_TRUE(t1.oldest_due_age_ms.has_value());
  EXPECT_GE(*t1.oldest_due_age_ms, 90 * kSecond);
  ASSERT_EQ(t1.running_per_instance.size(), 1u);
  EXPECT_EQ(t1.running_per_instance[0].instance, "w1");
  EXPECT_EQ(t1.dead_notifications, 1);
  ASSERT_OK_AND_ASSIGN(QueueHealth t2, store_->ReadQueueHealth(Tenant("t2")));
  EXPECT_EQ(t2.due_commands, 0);
  EXPECT_FALSE(t2.oldest_due_age_ms.has_value());
  EXPECT_EQ(t2.dead_notifications, 0);
  ASSERT_OK_AND_ASSIGN(QueueHealth all, store_->ReadQueueHealth({}));
  EXPECT_EQ(all.running_per_instance.size(), 2u);
  EXPECT_EQ(all.dead_notifications, 1);

  // The dead delivery: listed in its tenant's scope only, re-delivered once.
  EXPECT_TRUE(store_->ListDeadNotifications(Tenant("t2"), 10)->empty());
  ASSERT_OK_AND_ASSIGN(std::vector<NotificationEntry> dead,
                       store_->ListDeadNotifications(Tenant("t1"), 10));
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].id, dead_id);
  EXPECT_EQ(*dead[0].last_error, "HTTP 500");
  EXPECT_EQ(store_->RedeliverNotification(Tenant("t2"), dead_id).code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->RedeliverNotification(Tenant("t1"), 987654321).code(), StatusCode::kNotFound);
  ASSERT_OK(store_->RedeliverNotification(Tenant("t1"), dead_id));
  EXPECT_EQ(store_->RedeliverNotification({}, dead_id).code(), StatusCode::kConflict);
  ASSERT_OK_AND_ASSIGN(notes, outbox.ListNotificationsForTask(cancelled.id));
  EXPECT_EQ(notes[0].status, NotificationStatus::kPending);
  EXPECT_EQ(notes[0].attempt_count, 0);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> due, outbox.SelectDueNotifications(10));
  EXPECT_EQ(due, std::vector<int64_t>{dead_id});
  EXPECT_EQ(store_->ReadQueueHealth({})->dead_notifications, 0);

  // The task's dispatch: its command and its notification.
  ASSERT_OK_AND_ASSIGN(TaskDispatch d, store_->ReadTaskDispatch(cancelled.id));
  ASSERT_EQ(d.commands.size(), 1u);
  EXPECT_EQ(d.commands[0].dispatch_version, 1);
  EXPECT_EQ(d.notifications.size(), 1u);
}

EC_INSTANTIATE_ON_EVERY_BACKEND(TaskOperationsContractTest);

}  // namespace
}  // namespace export_center::store::contract
