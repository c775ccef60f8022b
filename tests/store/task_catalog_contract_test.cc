// The TaskCatalog role of the TaskStore contract (task_catalog.h) on every
// backend: create (dedupe, limits, rollback), the lists and the change feed,
// cancel and the manual retry.

#include <gtest/gtest.h>

#include "task_store_fixture.h"  // beside this file

namespace export_center::store::contract {
namespace {

// ---- create ---------------------------------------------------------------------

TEST_P(TaskStoreContractTest, CreateWritesTaskAndItsOutboxRowTogether) {
  NewTask nt = MakeTask("alice", "orders", R"({"from":"2025-01-01"})");
  nt.app_code = task::AppCode::kMerchant;
  nt.format = task::FileFormat::kCsv;
  nt.max_attempts = 4;
  nt.contract_version = "v7";
  int64_t before = Now();
  ASSERT_OK_AND_ASSIGN(CreateResult r, store_->CreateTask(nt, {}));
  EXPECT_FALSE(r.deduplicated);
  const Task& t = r.task;
  EXPECT_GT(t.id, 0);
  EXPECT_EQ(t.status, TaskState::kPending);
  EXPECT_EQ(t.dispatch_version, 1);
  EXPECT_EQ(t.attempt_count, 0);
  EXPECT_EQ(t.max_attempts, 4);
  EXPECT_EQ(t.app_code, task::AppCode::kMerchant);
  EXPECT_EQ(t.format, task::FileFormat::kCsv);
  EXPECT_EQ(t.parameters_json, nt.parameters_json);
  EXPECT_EQ(t.params_hash, nt.params_hash);
  EXPECT_EQ(t.contract_version, "v7");
  EXPECT_GE(t.requested_at, before);
  EXPECT_EQ(t.next_retry_at, t.requested_at);
  EXPECT_FALSE(t.lease.owner.has_value());

  std::vector<OutboxEntry> rows = Outbox(t.id);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, OutboxStatus::kPending);
  EXPECT_EQ(rows[0].dispatch_version, 1);
  EXPECT_EQ(rows[0].attempt_count, 0);
  EXPECT_EQ(rows[0].next_retry_at, t.next_retry_at);
  ASSERT_OK_AND_ASSIGN(task::Command c, task::DecodeCommand(rows[0].payload_json));
  EXPECT_EQ(c.task_id, t.id);
  EXPECT_EQ(c.export_type, "orders");
  EXPECT_EQ(c.dispatch_version, 1);
  EXPECT_EQ(c.event_id, rows[0].event_id);
  EXPECT_EQ(c.trace_id, "trace-alice");
}

TEST_P(TaskStoreContractTest, DuplicateWithinWindowReturnsTheSameTask) {
  Task first = Create("alice", "orders", R"({"a":1})");
  ASSERT_OK_AND_ASSIGN(CreateResult again,
                       store_->CreateTask(MakeTask("alice", "orders", R"({"a":1})"), {}));
  EXPECT_TRUE(again.deduplicated);
  EXPECT_EQ(again.task.id, first.id);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_outbox"), 1);
  // Other parameters, type or user are not duplicates.
  EXPECT_NE(Create("alice", "orders", R"({"a":2})").id, first.id);
  EXPECT_NE(Create("bob", "orders", R"({"a":1})").id, first.id);
}

TEST_P(TaskStoreContractTest, DuplicateAfterWindowCreatesANewTask) {
  Task first = Create("alice", "orders", R"({"a":1})");
  Shift("export_task", "requested_at", -61 * kSecond, first.id);
  ASSERT_OK_AND_ASSIGN(CreateResult again,
                       store_->CreateTask(MakeTask("alice", "orders", R"({"a":1})"), {}));
  EXPECT_FALSE(again.deduplicated);
  EXPECT_NE(again.task.id, first.id);
}

TEST_P(TaskStoreContractTest, DuplicateOfAFinishedTaskCreatesANewTask) {
  Task first = Create("alice", "orders", R"({"a":1})");
  ASSERT_OK(store_->RequestCancel(first.id).status());
  ASSERT_OK_AND_ASSIGN(CreateResult again,
                       store_->CreateTask(MakeTask("alice", "orders", R"({"a":1})"), {}));
  EXPECT_FALSE(again.deduplicated);
}

TEST_P(TaskStoreContractTest, FourthActiveTaskOfAUserIsRejected) {
  for (int i = 0; i < 3; ++i) Create("alice", "type" + std::to_string(i));
  auto fourth = store_->CreateTask(MakeTask("alice", "type9"), {});
  ASSERT_EQ(fourth.status().code(), StatusCode::kLimitExceeded);
  EXPECT_NE(fourth.status().message().find("3 active export tasks"), std::string::npos)
      << fourth.status().message();
  // Nothing of the rejected task was written.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_task"), 3);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_outbox"), 3);
  // The same user id in another tenant is another user.
  ASSERT_OK(store_->CreateTask(MakeTask("alice", "type9", "{}", "t2"), {}).status());
  ASSERT_OK(store_->CreateTask(MakeTask("bob", "type9"), {}).status());
}

TEST_P(TaskStoreContractTest, SixthActiveTaskOfATypeIsRejected) {
  for (int i = 0; i < 5; ++i) Create("user" + std::to_string(i), "orders");
  auto sixth = store_->CreateTask(MakeTask("user9", "orders"), {});
  ASSERT_EQ(sixth.status().code(), StatusCode::kLimitExceeded);
  EXPECT_NE(sixth.status().message().find("orders"), std::string::npos);
  ASSERT_OK(store_->CreateTask(MakeTask("user9", "invoices"), {}).status());
}

TEST_P(TaskStoreContractTest, FinishedTasksDoNotCountAgainstTheLimits) {
  std::vector<Task> tasks;
  for (int i = 0; i < 3; ++i) tasks.push_back(Create("alice", "type" + std::to_string(i)));
  ASSERT_OK(store_->RequestCancel(tasks[0].id).status());
  ASSERT_OK(store_->CreateTask(MakeTask("alice", "type9"), {}).status());
}

TEST_P(TaskStoreContractTest, ConcurrentCreatesNeverExceedTheLimits) {
  constexpr int kThreads = 8;
  std::atomic<int> created{0};
  std::atomic<int> limited{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int j = 0; j < 4; ++j) {
        NewTask t = MakeTask("user" + std::to_string(i % 4), "orders",
                             R"({"t":)" + std::to_string(i) + R"(,"j":)" + std::to_string(j) + "}");
        for (int attempt = 0; attempt < 50; ++attempt) {
          auto r = store_->CreateTask(t, {});
          if (r.ok()) {
            ++created;
          } else if (r.status().code() == StatusCode::kLimitExceeded) {
            ++limited;
          } else if (r.status().IsTransient()) {
            continue;
          } else {
            ADD_FAILURE() << r.status().ToString();
          }
          break;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(created, 5);
  EXPECT_EQ(limited, kThreads * 4 - 5);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_task WHERE export_type = 'orders'"), 5);
  for (int u = 0; u < 4; ++u) {
    EXPECT_LE(Count("SELECT COUNT(*) FROM export_task WHERE requested_by = ?",
                    {"user" + std::to_string(u)}),
              3);
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_outbox"), 5);
}

// Dedupe includes the format (docs/task-lifecycle.md#creating-a-task).
TEST_P(TaskStoreContractTest, SameRequestInAnotherFormatIsANewTask) {
  NewTask xlsx = MakeTask("alice", "orders", R"({"a":1})");
  xlsx.format = task::FileFormat::kXlsx;
  NewTask csv = xlsx;
  csv.format = task::FileFormat::kCsv;
  Task first = Create(xlsx);
  ASSERT_OK_AND_ASSIGN(CreateResult second, store_->CreateTask(csv, {}));
  EXPECT_FALSE(second.deduplicated);
  EXPECT_NE(second.task.id, first.id);
  EXPECT_EQ(second.task.format, task::FileFormat::kCsv);
  ASSERT_OK_AND_ASSIGN(CreateResult again, store_->CreateTask(csv, {}));
  EXPECT_TRUE(again.deduplicated);
  EXPECT_EQ(again.task.id, second.task.id);
}

TEST_P(TaskStoreContractTest, CreateRollsBackWholeWhenAnInsertFails) {
  FailEvery("INSERT", "export_outbox");
  EXPECT_FALSE(store_->CreateTask(MakeTask("alice", "orders"), {}).ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_task"), 0) << "no task without its command";
  StopFailing("export_outbox");
  FailEvery("INSERT", "export_task");
  EXPECT_FALSE(store_->CreateTask(MakeTask("alice", "orders"), {}).ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_outbox"), 0) << "no command without its task";
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_task"), 0);
  StopFailing("export_task");
  EXPECT_GT(Create().id, 0) << "the guard row was released";
}

// ---- manual retry (docs/task-lifecycle.md#manual-retry) --------------------------

TEST_P(TaskStoreContractTest, ManualRetryOfAFailedTaskStartsANewVersion) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), TaskState::kFailed, "BAD", "bad params"),
            store::FinishOutcome::kFinished);
  ASSERT_OK_AND_ASSIGN(Task r, store_->ManualRetry(t.id, "trace-retry"));
  EXPECT_EQ(r.status, TaskState::kPending);
  EXPECT_EQ(r.dispatch_version, 2);
  EXPECT_EQ(r.attempt_count, 0);
  EXPECT_FALSE(r.failure_message.has_value());
  EXPECT_FALSE(r.failure_code.has_value());
  EXPECT_FALSE(r.completed_at.has_value());
  std::vector<OutboxEntry> rows = Outbox(t.id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].dispatch_version, 2);
  EXPECT_EQ(rows[1].next_retry_at, r.next_retry_at);
  EXPECT_EQ(task::DecodeCommand(rows[1].payload_json)->trace_id, "trace-retry");
  std::vector<int64_t> due = *store_->SelectDueOutbox(50);
  EXPECT_EQ(std::count(due.begin(), due.end(), rows[1].id), 1);
  EXPECT_TRUE(Claim(t.id, 2).claimed);
}

TEST_P(TaskStoreContractTest, ManualRetryOfACancelledTask) {
  Task t = Create();
  ASSERT_OK(store_->RequestCancel(t.id).status());
  ASSERT_OK_AND_ASSIGN(Task r, store_->ManualRetry(t.id, ""));
  EXPECT_EQ(r.status, TaskState::kPending);
  EXPECT_EQ(r.dispatch_version, 2);
}

TEST_P(TaskStoreContractTest, ManualRetryOfAnActiveTaskIsAConflict) {
  Task t = Create();
  EXPECT_EQ(store_->ManualRetry(t.id, "").status().code(), StatusCode::kConflict);
  ASSERT_TRUE(Claim(t.id).claimed);
  EXPECT_EQ(store_->ManualRetry(t.id, "").status().code(), StatusCode::kConflict);
  EXPECT_EQ(store_->ManualRetry(999, "").status().code(), StatusCode::kNotFound);
}

// ---- cancel -----------------------------------------------------------------------

TEST_P(TaskStoreContractTest, CancelOfAPendingTaskEndsItAtOnce) {
  Task t = Create();
  ASSERT_OK_AND_ASSIGN(TaskState s, store_->RequestCancel(t.id));
  EXPECT_EQ(s, TaskState::kCancelled);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kCancelled);
  EXPECT_TRUE(after.completed_at.has_value());
}

TEST_P(TaskStoreContractTest, CancelOfARunningTaskSetsTheFlag) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_OK_AND_ASSIGN(TaskState s, store_->RequestCancel(t.id));
  EXPECT_EQ(s, TaskState::kRunning);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kRunning);
  EXPECT_TRUE(after.cancel_requested);
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), TaskState::kCancelled, "CANCELLED", "by user"),
            store::FinishOutcome::kFinished);
  EXPECT_EQ(store_->RequestCancel(t.id).status().code(), StatusCode::kConflict);
  EXPECT_EQ(store_->RequestCancel(777).status().code(), StatusCode::kNotFound);
}

// ---- lists and the change feed --------------------------------------------------

TEST_P(TaskStoreContractTest, ListPagesNewestFirstWithFiltersAndTenantIsolation) {
  std::vector<Task> mine;
  for (int i = 0; i < 5; ++i) {
    mine.push_back(Create(
        MakeTask("alice", i % 2 ? "orders" : "invoices", "{\"i\":" + std::to_string(i) + "}"),
        Unlimited()));
    // Older tasks first: task i was requested (5 - i) minutes ago.
    Shift("export_task", "requested_at", -(5 - i) * kMinute, mine.back().id);
  }
  Create(MakeTask("bob", "orders"), Unlimited());
  Create(MakeTask("alice", "orders", "{}", "other-tenant"), Unlimited());
  NewTask merchant = MakeTask("alice", "orders", R"({"m":1})");
  merchant.app_code = task::AppCode::kMerchant;
  Create(merchant, Unlimited());

  TaskStore::ListQuery q;
  q.tenant_id = "t1";
  q.requested_by = "alice";
  q.size = 2;
  ASSERT_OK_AND_ASSIGN(TaskStore::ListPage p1, store_->ListTasks(q));
  EXPECT_EQ(p1.total, 5);
  ASSERT_EQ(p1.records.size(), 2u);
  EXPECT_EQ(p1.records[0].id, mine[4].id);
  EXPECT_EQ(p1.records[1].id, mine[3].id);
  q.page = 3;
  ASSERT_OK_AND_ASSIGN(TaskStore::ListPage p3, store_->ListTasks(q));
  ASSERT_EQ(p3.records.size(), 1u);
  EXPECT_EQ(p3.records[0].id, mine[0].id);

  q.page = 1;
  q.size = 20;
  q.export_type = "orders";
  EXPECT_EQ(store_->ListTasks(q)->total, 2);
  q.export_type.reset();
  ASSERT_OK(store_->RequestCancel(mine[2].id).status());
  q.status = TaskState::kCancelled;
  ASSERT_OK_AND_ASSIGN(TaskStore::ListPage cancelled, store_->ListTasks(q));
  ASSERT_EQ(cancelled.total, 1);
  EXPECT_EQ(cancelled.records[0].id, mine[2].id);

  TaskStore::ListQuery tenant;
  tenant.tenant_id = "t1";
  EXPECT_EQ(store_->ListTasks(tenant)->total, 6);  // alice's 5 and bob's 1, PLATFORM only
  tenant.app_code = task::AppCode::kMerchant;
  EXPECT_EQ(store_->ListTasks(tenant)->total, 1);
  TaskStore::ListQuery other;
  other.tenant_id = "other-tenant";
  ASSERT_OK_AND_ASSIGN(TaskStore::ListPage o, store_->ListTasks(other));
  ASSERT_EQ(o.total, 1);
  EXPECT_EQ(o.records[0].tenant_id, "other-tenant");
  TaskStore::ListQuery nobody;
  nobody.tenant_id = "t3";
  EXPECT_EQ(store_->ListTasks(nobody)->total, 0);
}

TEST_P(TaskStoreContractTest, ListFiltersByNameStatusSetAndRetrying) {
  NewTask report = MakeTask("alice", "orders", R"({"n":1})");
  report.task_name = "Q3 订单 100%_done";
  Task named = Create(report, Unlimited());
  Task plain = Create(MakeTask("alice", "invoices"), Unlimited());
  Task retried = Create(MakeTask("alice", "refunds"), Unlimited());
  Exec("UPDATE export_task SET attempt_count = 1 WHERE id = ?", {retried.id});
  Task failed = Create(MakeTask("alice", "stock"), Unlimited());
  Exec("UPDATE export_task SET status = 'STALE' WHERE id = ?", {failed.id});

  TaskStore::ListQuery q;
  q.tenant_id = "t1";
  q.requested_by = "alice";
  q.name_contains = "订单";
  ASSERT_OK_AND_ASSIGN(TaskStore::ListPage by_name, store_->ListTasks(q));
  ASSERT_EQ(by_name.total, 1);
  EXPECT_EQ(by_name.records[0].id, named.id);
  q.name_contains = "q3";  // ASCII letters match in any case
  EXPECT_EQ(store_->ListTasks(q)->total, 1);
  q.name_contains = "0%_";  // % and _ are literal characters, not wildcards
  EXPECT_EQ(store_->ListTasks(q)->total, 1);
  q.name_contains = "0%x";
  EXPECT_EQ(store_->ListTasks(q)->total, 0);
  q.name_contains.reset();

  q.retrying = true;
  ASSERT_OK_AND_ASSIGN(TaskStore::ListPage retrying, store_->ListTasks(q));
  ASSERT_EQ(retrying.total, 1);
  EXPECT_EQ(retrying.records[0].id, retried.id);
  q.retrying = false;
  EXPECT_EQ(store_->ListTasks(q)->total, 2);  // named and plain: PENDING, never attempted
  q.retrying.reset();
  q.any_status = {TaskState::kFailed, TaskState::kStale, TaskState::kInconsistent};
  ASSERT_OK_AND_ASSIGN(TaskStore::ListPage problems, store_->ListTasks(q));
  ASSERT_EQ(problems.total, 1);
  EXPECT_EQ(problems.records[0].id, failed.id);
  (void)plain;
}

// docs/http-api.md#get-export-tasksevents--task-events: more changes in one millisecond than a page
// holds are paged through by the key (updated_at, id), each once, in key order; up_to bounds a read
// from above, and ListChangeKeys reads the same keys.
TEST_P(TaskStoreContractTest, ListChangedTasksPagesByKeysetThroughOneMillisecond) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 23; ++i) {
    const std::string params = "{\"i\":" + std::to_string(i) + "}";
    ids.push_back(Create(MakeTask("u" + std::to_string(i % 3), "orders", params), Unlimited()).id);
  }
  const int64_t t0 = Now() + 10 * kSecond;
  // 20 changes in one millisecond, one before it and two after it.
  Exec("UPDATE export_task SET updated_at = ?", {t0});
  Exec("UPDATE export_task SET updated_at = ? WHERE id = ?", {t0 - 1, ids[5]});
  Exec("UPDATE export_task SET updated_at = ? WHERE id = ?", {t0 + 1, ids[0]});
  Exec("UPDATE export_task SET updated_at = ? WHERE id = ?", {t0 + 2, ids[9]});
  std::vector<TaskStore::ChangeKey> expected;
  for (int64_t id : ids) {
    const int64_t at = id == ids[5] ? t0 - 1 : id == ids[0] ? t0 + 1 : id == ids[9] ? t0 + 2 : t0;
    expected.push_back({at, id});
  }
  std::sort(expected.begin(), expected.end());

  TaskStore::ChangeQuery q;
  q.updated_after_ms = t0 - 2;
  q.after_id = 0;
  q.limit = 4;
  std::vector<TaskStore::ChangeKey> paged;
  for (int pages = 0; pages < 20; ++pages) {
    ASSERT_OK_AND_ASSIGN(std::vector<Task> page, store_->ListChangedTasks(q));
    for (const Task& t : page) paged.push_back({t.updated_at, t.id});
    if (page.size() < 4u) break;
    q.updated_after_ms = page.back().updated_at;
    q.after_id = page.back().id;
  }
  EXPECT_EQ(paged, expected);

  // Keys only, bounded above: the changes of t0 up to the 10th of them.
  q.updated_after_ms = t0 - 1;
  q.after_id = ids[5];
  q.up_to = expected[10];
  q.limit = 100;
  ASSERT_OK_AND_ASSIGN(std::vector<TaskStore::ChangeKey> keys, store_->ListChangeKeys(q));
  EXPECT_EQ(keys, std::vector<TaskStore::ChangeKey>(expected.begin() + 1, expected.begin() + 11));
  ASSERT_OK_AND_ASSIGN(std::vector<Task> bounded, store_->ListChangedTasks(q));
  ASSERT_EQ(bounded.size(), 10u);
  EXPECT_EQ(bounded.back().id, expected[10].id);

  // One tenant's user, paged the same way.
  q.up_to.reset();
  q.updated_after_ms = t0;
  q.after_id = expected[3].id;
  q.tenant_id = "t1";
  q.requested_by = "u1";
  ASSERT_OK_AND_ASSIGN(std::vector<Task> mine, store_->ListChangedTasks(q));
  for (const Task& t : mine) {
    EXPECT_EQ(t.requested_by, "u1");
    EXPECT_GT((TaskStore::ChangeKey{t.updated_at, t.id}), expected[3]);
  }
  EXPECT_FALSE(mine.empty());

  // The read is served by the (updated_at, id) index (migration 6), which
  // replaced the (updated_at) one.
  const std::string index_count =
      GetParam() == "sqlite"     ? "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index'"
                                   " AND name = ?"
      : GetParam() == "postgres" ? "SELECT COUNT(*) FROM pg_indexes WHERE indexname = ?"
                                 : "SELECT COUNT(DISTINCT index_name)"
                                   " FROM information_schema.statistics"
                                   " WHERE table_schema = DATABASE() AND index_name = ?";
  EXPECT_EQ(Count(index_count, {std::string("idx_export_task_change_key")}), 1);
  EXPECT_EQ(Count(index_count, {std::string("idx_export_task_updated_at")}), 0);
  if (GetParam() == "sqlite") {
    ASSERT_OK_AND_ASSIGN(Rows plan,
                         db_->Query("EXPLAIN QUERY PLAN SELECT updated_at, id FROM export_task"
                                    " WHERE updated_at >= ? AND (updated_at > ? OR id > ?)"
                                    " ORDER BY updated_at, id LIMIT ?",
                                    {t0, t0, int64_t{0}, int64_t{10}}));
    std::string text;
    for (const Row& r : plan) text += r.Text(r.size() - 1) + "\n";
    EXPECT_NE(text.find("idx_export_task_change_key"), std::string::npos) << text;
    EXPECT_EQ(text.find("TEMP B-TREE"), std::string::npos) << text;
  }
}

TEST_P(TaskStoreContractTest, ListChangedTasksReturnsChangesAfterAPointOldestFirst) {
  Task a = Create(MakeTask("alice", "orders"), Unlimited());
  Task b = Create(MakeTask("bob", "orders"), Unlimited());
  Task other = Create(MakeTask("alice", "orders", "{}", "other-tenant"), Unlimited());
  const int64_t now = Now();
  Exec("UPDATE export_task SET updated_at = ? WHERE id = ?", {now - 3000, a.id});
  Exec("UPDATE export_task SET updated_at = ? WHERE id = ?", {now - 2000, b.id});
  Exec("UPDATE export_task SET updated_at = ? WHERE id = ?", {now - 1000, other.id});

  TaskStore::ChangeQuery q;
  q.updated_after_ms = now - 2500;
  ASSERT_OK_AND_ASSIGN(std::vector<Task> all, store_->ListChangedTasks(q));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, b.id);
  EXPECT_EQ(all[1].id, other.id);
  EXPECT_EQ(all[0].updated_at, now - 2000);

  q.updated_after_ms = now - 5000;
  q.tenant_id = "t1";
  EXPECT_EQ(store_->ListChangedTasks(q)->size(), 2u);  // a and b, not the other tenant's
  q.requested_by = "alice";
  ASSERT_OK_AND_ASSIGN(std::vector<Task> alice, store_->ListChangedTasks(q));
  ASSERT_EQ(alice.size(), 1u);
  EXPECT_EQ(alice[0].id, a.id);
  q.tenant_id.reset();
  q.requested_by.reset();
  q.limit = 1;
  ASSERT_OK_AND_ASSIGN(std::vector<Task> first, store_->ListChangedTasks(q));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].id, a.id);

  // A progress update moves updated_at on: the change shows up again.
  ASSERT_TRUE(Claim(b.id).claimed);
  q.limit = 500;
  q.updated_after_ms = now - 1;
  ASSERT_OK_AND_ASSIGN(std::vector<Task> claimed, store_->ListChangedTasks(q));
  ASSERT_EQ(claimed.size(), 1u);
  EXPECT_EQ(claimed[0].id, b.id);
  EXPECT_EQ(claimed[0].status, TaskState::kRunning);
}

}  // namespace
}  // namespace export_center::store::contract
