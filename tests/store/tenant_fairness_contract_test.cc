// Tenant fairness (docs/dispatch.md#tenant-fairness) in the CommandOutbox and
// AttemptLedger roles on every backend: due commands round-robin across
// tenants then users, and the claim's tenant running limit.

#include <gtest/gtest.h>

#include "task_store_fixture.h"  // beside this file

namespace export_center::store::contract {
namespace {

// ---- tenant fairness (docs/dispatch.md#tenant-fairness) ---------------------------

class TenantFairnessTest : public TaskStoreContractTest {
 protected:
  // A task of `tenant`/`user` whose command became due `due_ago_ms` ago.
  Task Queue(const std::string& tenant, const std::string& user, int64_t due_ago_ms) {
    Task t = Create(MakeTask(user, "orders", "{\"n\":" + std::to_string(++made_) + "}", tenant),
                    Unlimited());
    Shift("export_outbox", "next_retry_at", -due_ago_ms, t.id);
    Shift("export_task", "next_retry_at", -due_ago_ms, t.id);
    names_[t.id] = user + "#" + std::to_string(++per_user_[user]);
    return t;
  }
  // SelectDueOutbox's order, as "user#n" names (n: the user's n-th task).
  std::vector<std::string> FairOrder(int limit) {
    auto due = store_->SelectDueOutbox(limit);
    EXPECT_TRUE(due.ok()) << due.status().ToString();
    std::vector<std::string> names;
    if (!due.ok()) return names;
    for (int64_t outbox_id : *due) {
      auto rows = db_->Query("SELECT task_id FROM export_outbox WHERE id = ?", {outbox_id});
      EXPECT_TRUE(rows.ok());
      names.push_back(names_[rows->at(0).Int(0)]);
    }
    return names;
  }
  // The publisher's part: claim and mark SENT every due row.
  void SendDue() {
    auto due = store_->SelectDueOutbox(1000);
    ASSERT_TRUE(due.ok()) << due.status().ToString();
    for (int64_t id : *due) {
      ASSERT_OK_AND_ASSIGN(std::optional<OutboxEntry> e, store_->ClaimOutbox(id, "pub", 60));
      ASSERT_TRUE(e.has_value());
      ASSERT_OK_AND_ASSIGN(store::MarkOutcome sent, store_->MarkOutboxSent(id, "pub"));
      ASSERT_EQ(sent, store::MarkOutcome::kMarked);
    }
  }
  ClaimResult ClaimLimited(const Task& t, int limit, const std::string& instance = "w1") {
    ClaimRequest r;
    r.task_id = t.id;
    r.dispatch_version = t.dispatch_version;
    r.instance = instance;
    r.tenant_running_limit = limit;
    r.handback_backoff_ms = 30 * kSecond;
    auto result = store_->ClaimTask(r);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : ClaimResult{};
  }
  int64_t RunningOf(const std::string& tenant) {
    return Count("SELECT COUNT(*) FROM export_task WHERE status = 'RUNNING' AND tenant_id = ?",
                 {tenant});
  }

  int made_ = 0;
  std::map<int64_t, std::string> names_;
  std::map<std::string, int> per_user_;
};

TEST_P(TenantFairnessTest, DueCommandsGoRoundRobinAcrossTenantsThenUsers) {
  // Tenant A's user a1 queued first and most; a2 and tenant B came later.
  for (int i = 0; i < 6; ++i) Queue("A", "a1", 100 * kSecond - i * kSecond);
  for (int i = 0; i < 2; ++i) Queue("A", "a2", 50 * kSecond - i * kSecond);
  Queue("B", "b1", 10 * kSecond);
  // Round 1: each tenant's oldest (A: a1's); then A alternates a2 and a1
  // while B has nothing left. Within a round, the older row goes first.
  EXPECT_EQ(FairOrder(50), (std::vector<std::string>{"a1#1", "b1#1", "a2#1", "a1#2", "a2#2", "a1#3",
                                                     "a1#4", "a1#5", "a1#6"}));
  // A batch smaller than the backlog still holds B's and a2's first rows.
  EXPECT_EQ(FairOrder(3), (std::vector<std::string>{"a1#1", "b1#1", "a2#1"}));
}

TEST_P(TenantFairnessTest, AHugeBacklogDoesNotStarveANewTenant) {
  for (int i = 0; i < 120; ++i) Queue("A", "a1", 600 * kSecond - i * kSecond);
  Queue("B", "b1", 1 * kSecond);
  Queue("C", "c1", 2 * kSecond);
  std::vector<std::string> batch = FairOrder(10);
  ASSERT_EQ(batch.size(), 10u);
  EXPECT_EQ(batch[0], "a1#1");
  EXPECT_EQ(batch[1], "c1#1");  // older than B's
  EXPECT_EQ(batch[2], "b1#1");
}

TEST_P(TenantFairnessTest, EveryDueRowIsStillSelectedAndNoRowBeforeItIsDue) {
  std::set<int64_t> expected;
  for (int i = 0; i < 7; ++i) Queue("A", "a" + std::to_string(i % 3), 10 * kSecond);
  for (int i = 0; i < 4; ++i) Queue("B", "b", 5 * kSecond);
  Task later = Queue("B", "b", 0);
  Shift("export_outbox", "next_retry_at", 60 * kSecond, later.id);  // in its back-off
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> due, store_->SelectDueOutbox(1000));
  EXPECT_EQ(due.size(), 11u);
  EXPECT_EQ(std::set<int64_t>(due.begin(), due.end()).size(), due.size());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_outbox WHERE status = 'PENDING'"
                  " AND task_id = ?",
                  {later.id}),
            1);
  for (int64_t id : due) {
    EXPECT_EQ(
        Count("SELECT COUNT(*) FROM export_outbox WHERE id = ? AND task_id = ?", {id, later.id}),
        0);
  }
}

TEST_P(TenantFairnessTest, AClaimOverTheTenantLimitHandsTheCommandBack) {
  Task a1 = Queue("A", "u", kSecond);
  Task a2 = Queue("A", "u", kSecond);
  Task a3 = Queue("A", "v", kSecond);
  Task b1 = Queue("B", "w", kSecond);
  SendDue();
  const int64_t due_at = Get(a3.id).next_retry_at;
  ASSERT_TRUE(ClaimLimited(a1, 2).claimed);
  ASSERT_TRUE(ClaimLimited(a2, 2).claimed);
  ClaimResult over = ClaimLimited(a3, 2);
  EXPECT_FALSE(over.claimed);
  EXPECT_EQ(over.miss, ClaimMiss::kTenantAtLimit);
  // The task is untouched: no attempt, same version, still PENDING and due.
  Task after = Get(a3.id);
  EXPECT_EQ(after.status, TaskState::kPending);
  EXPECT_EQ(after.attempt_count, 0);
  EXPECT_EQ(after.dispatch_version, 1);
  EXPECT_EQ(after.next_retry_at, due_at);
  // Its command is PENDING again, due after the hand-back back-off, with no
  // failed send counted; no second row was written.
  std::vector<OutboxEntry> rows = Outbox(a3.id);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, OutboxStatus::kPending);
  EXPECT_EQ(rows[0].attempt_count, 0);
  EXPECT_GT(rows[0].next_retry_at, Now() + 20 * kSecond);
  EXPECT_FALSE(rows[0].lease_owner.has_value());
  // Another tenant is not affected.
  EXPECT_TRUE(ClaimLimited(b1, 2).claimed);
  EXPECT_EQ(RunningOf("A"), 2);

  // Nothing of the reconciler's takes the handed-back command for lost.
  ASSERT_OK_AND_ASSIGN(int redispatched, store_->RedispatchMissingOutbox(0, 100));
  EXPECT_EQ(redispatched, 0);
  ASSERT_OK_AND_ASSIGN(int resent, store_->ResendStaleSentOutbox(0, 0, 100));
  EXPECT_EQ(resent, 0);
  ASSERT_OK_AND_ASSIGN(int released, store_->ReleaseStaleClaimedOutbox(100));
  EXPECT_EQ(released, 0);
  EXPECT_TRUE(store_->RecoverExpiredLeases(100)->empty());

  // One of A's ends; once the back-off has passed the command is sent again
  // and claimed, as the same version.
  ASSERT_OK_AND_ASSIGN(store::CommitOutcome done,
                       store_->CommitSuccess(AttemptOf(a1), AFile(a1.id), 7));
  ASSERT_EQ(done, store::CommitOutcome::kCommitted);
  EXPECT_TRUE(store_->SelectDueOutbox(50)->empty());
  Shift("export_outbox", "next_retry_at", -31 * kSecond, a3.id);
  SendDue();
  ClaimResult later = ClaimLimited(a3, 2);
  EXPECT_TRUE(later.claimed);
  EXPECT_EQ(later.task->attempt_count, 1);
  EXPECT_EQ(later.task->dispatch_version, 1);
}

TEST_P(TenantFairnessTest, AHandBackAlsoReturnsARowThePublisherHasNotMarkedSentYet) {
  Task a1 = Queue("A", "u", kSecond);
  Task a2 = Queue("A", "u", kSecond);
  Queue("B", "w", kSecond);  // waiting, so the limit binds
  SendDue();
  ASSERT_TRUE(ClaimLimited(a1, 1).claimed);
  // The consumer can be faster than the publisher's MarkOutboxSent.
  Exec(
      "UPDATE export_outbox SET status = 'CLAIMED', lease_owner = 'pub',"
      " lease_until = next_retry_at + 60000 WHERE task_id = ?",
      {a2.id});
  EXPECT_EQ(ClaimLimited(a2, 1).miss, ClaimMiss::kTenantAtLimit);
  EXPECT_EQ(Outbox(a2.id)[0].status, OutboxStatus::kPending);
  ASSERT_OK_AND_ASSIGN(store::MarkOutcome marked,
                       store_->MarkOutboxSent(Outbox(a2.id)[0].id, "pub"));
  EXPECT_EQ(marked, store::MarkOutcome::kClaimLost);  // the publisher's late mark changes nothing
  EXPECT_EQ(Outbox(a2.id)[0].status, OutboxStatus::kPending);
}

TEST_P(TenantFairnessTest, TheLimitBindsOnlyWhileAnotherTenantHasATaskWaiting) {
  std::vector<Task> a;
  for (int i = 0; i < 5; ++i) a.push_back(Queue("A", "u", kSecond));
  Task b1 = Queue("B", "w", kSecond);
  Shift("export_task", "next_retry_at", 60 * kSecond, b1.id);  // B in its retry back-off
  SendDue();
  // Alone (B's task is not due yet, so not waiting), A takes slots past its limit.
  ASSERT_TRUE(ClaimLimited(a[0], 2).claimed);
  ASSERT_TRUE(ClaimLimited(a[1], 2).claimed);
  ASSERT_TRUE(ClaimLimited(a[2], 2).claimed);
  EXPECT_EQ(RunningOf("A"), 3);
  // B's task is due: now A is held to its limit and B's claim goes through.
  Shift("export_task", "next_retry_at", -61 * kSecond, b1.id);
  EXPECT_EQ(ClaimLimited(a[3], 2).miss, ClaimMiss::kTenantAtLimit);
  EXPECT_EQ(Outbox(a[3].id)[0].status, OutboxStatus::kPending);
  EXPECT_TRUE(ClaimLimited(Get(b1.id), 2).claimed);
  // B running is not B waiting: A alone in the queue again uses the free slot.
  EXPECT_TRUE(ClaimLimited(a[4], 2).claimed);
  EXPECT_EQ(RunningOf("A"), 4);
}

TEST_P(TenantFairnessTest, ALimitedClaimOfAnUnclaimableTaskExplainsTheMissAsBefore) {
  Task a1 = Queue("A", "u", kSecond);
  Task a2 = Queue("A", "u", kSecond);
  SendDue();
  ASSERT_TRUE(ClaimLimited(a1, 1).claimed);
  // A duplicate delivery of the running task is not a hand-back.
  EXPECT_EQ(ClaimLimited(a1, 1, "w2").miss, ClaimMiss::kRunningLeaseLive);
  Task stale = a2;
  stale.dispatch_version = 0;
  EXPECT_EQ(ClaimLimited(stale, 1).miss, ClaimMiss::kNewerVersion);
  EXPECT_EQ(Outbox(a2.id)[0].status, OutboxStatus::kSent);
}

TEST_P(TenantFairnessTest, ConcurrentClaimsNeverExceedTheTenantLimit) {
  constexpr int kTasks = 10;
  constexpr int kLimit = 3;
  std::vector<Task> tasks;
  for (int i = 0; i < kTasks; ++i) tasks.push_back(Queue("A", "u" + std::to_string(i), kSecond));
  Queue("B", "w", kSecond);  // waiting, so the limit binds
  SendDue();
  // Two stores on one database stand for two instances.
  std::unique_ptr<TaskStore> other = NewSqlTaskStore(db_);
  std::atomic<int> claimed{0};
  std::atomic<int> handed_back{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kTasks; ++i) {
    threads.emplace_back([&, i] {
      ClaimRequest r;
      r.task_id = tasks[i].id;
      r.dispatch_version = 1;
      r.instance = "w" + std::to_string(i);
      r.tenant_running_limit = kLimit;
      TaskStore* store = i % 2 == 0 ? store_.get() : other.get();
      StatusOr<ClaimResult> result = Unavailable("not tried");
      for (int tries = 0; tries < 20; ++tries) {  // Unavailable: retry the whole call
        result = store->ClaimTask(r);
        if (result.ok() || result.status().code() != StatusCode::kUnavailable) break;
      }
      ASSERT_TRUE(result.ok()) << result.status().ToString();
      if (result->claimed) ++claimed;
      if (result->miss == ClaimMiss::kTenantAtLimit) ++handed_back;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(claimed.load(), kLimit);
  EXPECT_EQ(handed_back.load(), kTasks - kLimit);
  EXPECT_EQ(RunningOf("A"), kLimit);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_outbox WHERE status = 'PENDING'"), kTasks - kLimit);
}

TEST_P(TenantFairnessTest, GaugesCountQueuedAndRunningTasksPerTenant) {
  Task a1 = Queue("A", "u", kSecond);
  Queue("A", "u", kSecond);
  Queue("B", "v", kSecond);
  Task c1 = Queue("C", "w", kSecond);
  SendDue();
  ASSERT_TRUE(ClaimLimited(a1, 5).claimed);
  ASSERT_OK(store_->RequestCancel(c1.id).status());
  ASSERT_OK_AND_ASSIGN(TaskStore::Gauges g, store_->ReadGauges());
  ASSERT_EQ(g.tenants.size(), 2u);  // C has nothing queued or running
  EXPECT_EQ(g.tenants[0].tenant_id, "A");
  EXPECT_EQ(g.tenants[0].queued, 1);
  EXPECT_EQ(g.tenants[0].running, 1);
  EXPECT_EQ(g.tenants[1].tenant_id, "B");
  EXPECT_EQ(g.tenants[1].queued, 1);
  EXPECT_EQ(g.tenants[1].running, 0);
}

EC_INSTANTIATE_ON_EVERY_BACKEND(TenantFairnessTest);

}  // namespace
}  // namespace export_center::store::contract
