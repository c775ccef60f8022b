// The AttemptLedger role of the TaskStore contract (attempt_ledger.h) on
// every backend: claim and its misses, lease renewal, progress, commit,
// finish, the automatic retry, cancel on every path of an attempt, the pinned
// contract version; and the claim-miss table as a pure function.

#include <gtest/gtest.h>

#include "common/utf8.h"
#include "task_store_fixture.h"  // beside this file

namespace export_center::store::contract {
namespace {

// ---- claim (docs/task-lifecycle.md#claim-branches) ----------------------------

TEST_P(TaskStoreContractTest, ClaimTakesLeaseSetsDeadlineAndResetsProgress) {
  Task t = Create();
  Exec(
      "UPDATE export_task SET processed_rows = 5, total_rows = 9, failure_message = 'old'"
      " WHERE id = ?",
      {t.id});
  ClaimRequest r{t.id, 1, "w1", 300, 1800};
  ASSERT_OK_AND_ASSIGN(ClaimResult c, store_->ClaimTask(r));
  ASSERT_TRUE(c.claimed);
  ASSERT_TRUE(c.task.has_value());
  const Task& got = *c.task;
  EXPECT_EQ(got.status, TaskState::kRunning);
  EXPECT_EQ(got.attempt_count, 1);
  EXPECT_EQ(got.lease.owner, "w1");
  ASSERT_TRUE(got.started_at && got.lease.until && got.execution_deadline_at);
  EXPECT_EQ(*got.lease.until, *got.started_at + 300 * kSecond);
  EXPECT_EQ(*got.execution_deadline_at, *got.started_at + 1800 * kSecond);
  EXPECT_EQ(got.lease.last_heartbeat_at, got.started_at);
  EXPECT_EQ(got.processed_rows, 0);
  EXPECT_FALSE(got.total_rows.has_value());
  EXPECT_FALSE(got.failure_message.has_value());
}

TEST_P(TaskStoreContractTest, ClaimMissWhenTheTaskNoLongerExists) {
  ClaimResult r = Claim(424242, 1);
  EXPECT_FALSE(r.claimed);
  EXPECT_EQ(r.miss, ClaimMiss::kTaskMissing);
  EXPECT_FALSE(r.task.has_value());
}

TEST_P(TaskStoreContractTest, ClaimMissForAnOldCommandAfterARetry) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_OK_AND_ASSIGN(RetryOutcome o, store_->ScheduleRetry(AttemptOf(t), "provider 503", 0));
  ASSERT_EQ(o, RetryOutcome::kRescheduled);
  EXPECT_EQ(MissOf(t.id, 1), ClaimMiss::kNewerVersion);
}

TEST_P(TaskStoreContractTest, ClaimMissForACommandNewerThanTheTask) {
  Task t = Create();
  EXPECT_EQ(MissOf(t.id, 5), ClaimMiss::kOlderVersion);
  EXPECT_EQ(Get(t.id).status, TaskState::kPending);
}

TEST_P(TaskStoreContractTest, ClaimMissForAFinishedTask) {
  Task done = Create("alice", "orders");
  ASSERT_TRUE(Claim(done.id).claimed);
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(done), AFile(done.id), 7),
            store::CommitOutcome::kCommitted);
  EXPECT_EQ(MissOf(done.id, 1), ClaimMiss::kFinished);

  Task cancelled = Create("alice", "invoices");
  ASSERT_OK(store_->RequestCancel(cancelled.id).status());
  EXPECT_EQ(MissOf(cancelled.id, 1), ClaimMiss::kFinished);
}

TEST_P(TaskStoreContractTest, ClaimMissForADuplicateWhileAnotherInstanceRuns) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id, 1, "w1").claimed);
  ClaimResult r = Claim(t.id, 1, "w2");
  EXPECT_EQ(r.miss, ClaimMiss::kRunningLeaseLive);
  ASSERT_TRUE(r.task.has_value());
  EXPECT_EQ(r.task->lease.owner, "w1");
}

TEST_P(TaskStoreContractTest, ClaimMissLeavesAnExpiredLeaseToTheReconciler) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id, 1, "w1").claimed);
  Shift("export_task", "lease_until", -301 * kSecond, t.id);
  EXPECT_EQ(MissOf(t.id, 1, "w2"), ClaimMiss::kRunningLeaseExpired);
  Task after = Get(t.id);
  EXPECT_EQ(after.lease.owner, "w1");
  EXPECT_EQ(after.attempt_count, 1);
}

TEST_P(TaskStoreContractTest, ClaimMissForACommandArrivingDuringBackoff) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_OK(store_->ScheduleRetry(AttemptOf(t), "provider 503", 15 * kMinute).status());
  EXPECT_EQ(MissOf(t.id, 2), ClaimMiss::kPendingBackoff);
  Shift("export_task", "next_retry_at", -15 * kMinute, t.id);
  EXPECT_TRUE(Claim(t.id, 2).claimed);
}

TEST_P(TaskStoreContractTest, ConcurrentClaimsOfOneCommandHaveOneWinner) {
  Task t = Create();
  std::atomic<int> winners{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      ClaimRequest r{t.id, 1, "w" + std::to_string(i), 300, 1800};
      for (int attempt = 0; attempt < 50; ++attempt) {
        auto c = store_->ClaimTask(r);
        if (!c.ok() && c.status().IsTransient()) continue;
        ASSERT_TRUE(c.ok()) << c.status().ToString();
        if (c->claimed) {
          ++winners;
        } else {
          EXPECT_TRUE(c->miss == ClaimMiss::kRunningLeaseLive || c->miss == ClaimMiss::kLostRace);
        }
        break;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(winners, 1);
  EXPECT_EQ(Get(t.id).attempt_count, 1);
}

// ---- renew, progress, commit (docs/task-lifecycle.md#running-an-attempt) ---------

TEST_P(TaskStoreContractTest, RenewExtendsTheLease) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  Shift("export_task", "lease_until", -200 * kSecond, t.id);
  ASSERT_OK_AND_ASSIGN(RenewOutcome o, store_->RenewLease(AttemptOf(t), 300));
  EXPECT_EQ(o, RenewOutcome::kRenewed);
  Task after = Get(t.id);
  EXPECT_EQ(*after.lease.until, *after.lease.last_heartbeat_at + 300 * kSecond);
  EXPECT_GE(*after.lease.until, Now() + 299 * kSecond);
}

TEST_P(TaskStoreContractTest, RenewIsLostAfterTheVersionChanged) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  Shift("export_task", "lease_until", -301 * kSecond, t.id);
  ASSERT_EQ(store_->RecoverExpiredLeases(10)->size(), 1u);
  EXPECT_EQ(*store_->RenewLease(AttemptOf(t), 300), RenewOutcome::kLost);
}

TEST_P(TaskStoreContractTest, RenewIsLostForAnotherInstance) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id, 1, "w1").claimed);
  EXPECT_EQ(*store_->RenewLease(AttemptOf(t, "w2"), 300), RenewOutcome::kLost);
}

TEST_P(TaskStoreContractTest, RenewReportsAPassedDeadline) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  int64_t lease_before = *Get(t.id).lease.until;
  Shift("export_task", "execution_deadline_at", -1801 * kSecond, t.id);
  EXPECT_EQ(*store_->RenewLease(AttemptOf(t), 300), RenewOutcome::kDeadlinePassed);
  EXPECT_EQ(*Get(t.id).lease.until, lease_before);
}

TEST_P(TaskStoreContractTest, ProgressIsStoredAndReportsACancelRequest) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  EXPECT_EQ(*store_->UpdateProgress(AttemptOf(t), 100, 1000), store::ProgressOutcome::kContinue);
  EXPECT_EQ(*store_->UpdateProgress(AttemptOf(t), 200, std::nullopt),
            store::ProgressOutcome::kContinue);
  Task mid = Get(t.id);
  EXPECT_EQ(mid.processed_rows, 200);
  EXPECT_EQ(mid.total_rows, 1000);
  ASSERT_OK_AND_ASSIGN(TaskState s, store_->RequestCancel(t.id));
  EXPECT_EQ(s, TaskState::kRunning);
  EXPECT_EQ(*store_->UpdateProgress(AttemptOf(t), 300, std::nullopt),
            store::ProgressOutcome::kCancelRequested);
}

TEST_P(TaskStoreContractTest, ProgressOfALostAttemptIsAConflict) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  EXPECT_EQ(store_->UpdateProgress(AttemptOf(t, "w2"), 1, std::nullopt).status().code(),
            StatusCode::kConflict);
}

TEST_P(TaskStoreContractTest, CommitSuccessStoresTheFileAndItsExpiry) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  EXPECT_FALSE(Get(t.id).file_sha256.has_value());
  EXPECT_TRUE(Get(t.id).part_rows.empty());
  ASSERT_OK_AND_ASSIGN(store::CommitOutcome ok,
                       store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7));
  EXPECT_EQ(ok, store::CommitOutcome::kCommitted);
  Task done = Get(t.id);
  EXPECT_EQ(done.status, TaskState::kSucceeded);
  EXPECT_EQ(done.object_key, AFile(t.id).object_key);
  EXPECT_EQ(done.file_name, "orders.xlsx");
  EXPECT_EQ(done.size_bytes, 1234);
  EXPECT_EQ(done.total_rows, 10);
  EXPECT_EQ(done.processed_rows, 10);
  EXPECT_EQ(done.file_sha256, kSomeSha256);
  EXPECT_EQ(done.part_rows, (std::vector<int64_t>{7, 3}));
  ASSERT_TRUE(done.completed_at && done.expires_at);
  EXPECT_EQ(*done.expires_at, *done.completed_at + 7 * kDay);
  EXPECT_FALSE(done.lease.owner.has_value());
  EXPECT_FALSE(done.lease.until.has_value());
}

TEST_P(TaskStoreContractTest, CommitFailsAfterTheVersionChanged) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  Shift("export_task", "lease_until", -301 * kSecond, t.id);
  ASSERT_EQ(store_->RecoverExpiredLeases(10)->size(), 1u);
  EXPECT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7),
            store::CommitOutcome::kNotCommitted);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kPending);
  EXPECT_EQ(after.dispatch_version, 2);
  EXPECT_FALSE(after.object_key.has_value());
}

TEST_P(TaskStoreContractTest, CommitFailsAfterTheDeadline) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  Shift("export_task", "execution_deadline_at", -1801 * kSecond, t.id);
  EXPECT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7),
            store::CommitOutcome::kNotCommitted);
  EXPECT_EQ(Get(t.id).status, TaskState::kRunning);
}

TEST_P(TaskStoreContractTest, FinishAttemptEndsInTheGivenState) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  EXPECT_EQ(store_->FinishAttempt(AttemptOf(t), TaskState::kSucceeded, "X", "no").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(*store_->FinishAttempt(AttemptOf(t, "w2"), TaskState::kStale, "C", "m"),
            store::FinishOutcome::kLost);
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), TaskState::kStale, "CONTRACT_CHANGED",
                                   "the SQL contract changed"),
            store::FinishOutcome::kFinished);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kStale);
  EXPECT_EQ(after.failure_code, "CONTRACT_CHANGED");
  EXPECT_EQ(after.failure_message, "the SQL contract changed");
  EXPECT_TRUE(after.completed_at.has_value());
  EXPECT_FALSE(after.lease.owner.has_value());
}

// A message may quote a replica's bytes: PostgreSQL and MariaDB refuse text
// that is not UTF-8, so the store repairs and cuts every message it writes.
TEST_P(TaskStoreContractTest, MessagesAreStoredValidAndBoundedWhateverTheirBytes) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  std::string message = "value \"SO\xFFK\" is not a DATE; ";
  while (message.size() < 3000) message += "下单日期2026年12月1日";
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), TaskState::kFailed, "INVALID_DATA", message),
            store::FinishOutcome::kFinished);
  Task after = Get(t.id);
  ASSERT_TRUE(after.failure_message.has_value());
  EXPECT_TRUE(utf8::IsValid(*after.failure_message));
  EXPECT_LE(after.failure_message->size(), 1000u);
  EXPECT_EQ(after.failure_message->rfind("value \"SO\xEF\xBF\xBDK\" is not a DATE; 下单", 0), 0u)
      << *after.failure_message;
}

// ---- automatic retry (docs/task-lifecycle.md#automatic-retry) ---------------------

TEST_P(TaskStoreContractTest, ScheduleRetryBumpsVersionAndQueuesACommandAtTheSameInstant) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_OK(store_->UpdateProgress(AttemptOf(t), 50, 100).status());
  int64_t before = Now();
  ASSERT_OK_AND_ASSIGN(RetryOutcome o,
                       store_->ScheduleRetry(AttemptOf(t), "provider 503", kMinute));
  EXPECT_EQ(o, RetryOutcome::kRescheduled);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kPending);
  EXPECT_EQ(after.dispatch_version, 2);
  EXPECT_EQ(after.attempt_count, 1);
  EXPECT_GE(after.next_retry_at, before + kMinute);
  EXPECT_EQ(after.failure_message, "provider 503");
  EXPECT_EQ(after.processed_rows, 0);
  EXPECT_FALSE(after.total_rows.has_value());
  EXPECT_FALSE(after.lease.owner.has_value());

  std::vector<OutboxEntry> rows = Outbox(t.id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].dispatch_version, 2);
  EXPECT_EQ(rows[1].status, OutboxStatus::kPending);
  EXPECT_EQ(rows[1].next_retry_at, after.next_retry_at);
  EXPECT_EQ(task::DecodeCommand(rows[1].payload_json)->dispatch_version, 2);
  // Not due yet: the publisher does not send it early.
  std::vector<int64_t> due = *store_->SelectDueOutbox(50);
  EXPECT_EQ(std::count(due.begin(), due.end(), rows[1].id), 0);
}

TEST_P(TaskStoreContractTest, ScheduleRetryFailsTheTaskAtMaxAttempts) {
  NewTask nt = MakeTask("alice", "orders");
  nt.max_attempts = 2;
  Task t = Create(nt);
  ASSERT_TRUE(Claim(t.id, 1).claimed);
  ASSERT_EQ(*store_->ScheduleRetry(AttemptOf(t), "timeout", 0), RetryOutcome::kRescheduled);
  ASSERT_TRUE(Claim(t.id, 2).claimed);
  Attempt second{t.id, 2, "w1"};
  ASSERT_OK_AND_ASSIGN(RetryOutcome o, store_->ScheduleRetry(second, "timeout again", 0));
  EXPECT_EQ(o, RetryOutcome::kFailedMaxAttempts);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kFailed);
  EXPECT_EQ(after.dispatch_version, 2);
  EXPECT_EQ(after.failure_message, "timeout again");
  EXPECT_EQ(Outbox(t.id).size(), 2u);
}

TEST_P(TaskStoreContractTest, ScheduleRetryOfALostAttemptChangesNothing) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  EXPECT_EQ(*store_->ScheduleRetry(AttemptOf(t, "w2"), "x", 0), RetryOutcome::kLost);
  EXPECT_EQ(Get(t.id).status, TaskState::kRunning);
}

// The governed columns decided at create are what every attempt reads back,
// the claim's and a manual retry's too; a task without any reads back empty.
TEST_P(TaskStoreContractTest, ColumnPolicyIsStoredWithTheTaskAndKeptByARetry) {
  NewTask nt = MakeTask("alice", "orders");
  task::ColumnDecision phone;
  phone.key = "mobile";
  phone.action = task::ColumnAction::kMask;
  phone.keep_first = 3;
  phone.keep_last = 4;
  task::ColumnDecision salary;
  salary.key = "工资";
  nt.column_policy.decisions = {phone, salary};
  Task t = Create(nt);
  const std::string expected = task::ColumnPolicyToJson(nt.column_policy);
  EXPECT_EQ(task::ColumnPolicyToJson(t.column_policy), expected);
  EXPECT_EQ(task::ColumnPolicyToJson(Get(t.id).column_policy), expected);
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), TaskState::kFailed, "BAD", "bad"),
            store::FinishOutcome::kFinished);
  ASSERT_OK_AND_ASSIGN(Task retried, store_->ManualRetry(t.id, ""));
  EXPECT_EQ(task::ColumnPolicyToJson(retried.column_policy), expected);
  EXPECT_EQ(retried.column_policy.masked(), 1);
  EXPECT_EQ(retried.column_policy.omitted(), 1);

  EXPECT_TRUE(Get(Create("bob").id).column_policy.empty());
}

// task::Task::locale (migration 15): written at create, read back by the
// attempt's claim, kept by a manual retry (the same task row), and part of
// the duplicate check.
TEST_P(TaskStoreContractTest, TheRequestersLocaleIsStoredAndKeptByARetry) {
  NewTask nt = MakeTask("alice", "orders", R"({"a":1})");
  nt.locale = "zh-Hant-TW";
  Task t = Create(nt);
  EXPECT_EQ(t.locale, "zh-Hant-TW");
  EXPECT_EQ(Get(t.id).locale, "zh-Hant-TW");
  ClaimResult claim = Claim(t.id);
  ASSERT_TRUE(claim.claimed);
  ASSERT_TRUE(claim.task.has_value());
  EXPECT_EQ(claim.task->locale, "zh-Hant-TW");
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), TaskState::kFailed, "BAD", "bad"),
            store::FinishOutcome::kFinished);
  ASSERT_OK_AND_ASSIGN(Task retried, store_->ManualRetry(t.id, ""));
  EXPECT_EQ(retried.locale, "zh-Hant-TW");
  ClaimResult again = Claim(t.id, retried.dispatch_version);
  ASSERT_TRUE(again.claimed && again.task.has_value());
  EXPECT_EQ(again.task->locale, "zh-Hant-TW");

  // The same request in another language is another file, not a duplicate;
  // in the same language it is.
  NewTask zh = MakeTask("bob", "orders", R"({"a":1})");
  zh.locale = "zh-CN";
  NewTask en = zh;
  en.locale = "en";
  const Task first = Create(zh, Unlimited());
  ASSERT_OK_AND_ASSIGN(CreateResult other, store_->CreateTask(en, Unlimited()));
  EXPECT_FALSE(other.deduplicated);
  EXPECT_EQ(other.task.locale, "en");
  ASSERT_OK_AND_ASSIGN(CreateResult same, store_->CreateTask(zh, Unlimited()));
  EXPECT_TRUE(same.deduplicated);
  EXPECT_EQ(same.task.id, first.id);

  // No language given: "" (the definition's default), as for rows made before.
  EXPECT_EQ(Get(Create("carol").id).locale, "");
}

// Cancel is honoured on every path (docs/task-lifecycle.md#cancellation).
TEST_P(TaskStoreContractTest, ScheduleRetryOfACancelRequestedAttemptEndsCancelled) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->RequestCancel(t.id), TaskState::kRunning);
  ASSERT_OK_AND_ASSIGN(RetryOutcome o, store_->ScheduleRetry(AttemptOf(t), "provider 503", 0));
  EXPECT_EQ(o, RetryOutcome::kCancelled);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kCancelled);
  EXPECT_EQ(after.dispatch_version, 1);
  EXPECT_FALSE(after.lease.owner.has_value());
  EXPECT_EQ(Outbox(t.id).size(), 1u);
}

TEST_P(TaskStoreContractTest, CommitRefusesACancelRequestedAttempt) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->RequestCancel(t.id), TaskState::kRunning);
  EXPECT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7),
            store::CommitOutcome::kNotCommitted);
  EXPECT_EQ(Get(t.id).status, TaskState::kRunning);
}

// The outbox row's attempt_count counts sends of that row only
// (docs/dispatch.md#the-outbox-row).
TEST_P(TaskStoreContractTest, ARetrysNewOutboxRowStartsAtAttemptCountZero) {
  Task t = Create();
  const int64_t v1 = Outbox(t.id)[0].id;
  for (int i = 0; i < 3; ++i) {  // three failed sends of the first command
    ASSERT_TRUE(store_->ClaimOutbox(v1, "p", 60)->has_value());
    ASSERT_EQ(*store_->MarkOutboxFailed(v1, "p", "down", 0), store::MarkOutcome::kMarked);
  }
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->ScheduleRetry(AttemptOf(t), "503", 0), RetryOutcome::kRescheduled);
  std::vector<OutboxEntry> rows = Outbox(t.id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].attempt_count, 3);
  EXPECT_EQ(rows[1].dispatch_version, 2);
  EXPECT_EQ(rows[1].attempt_count, 0);
}

// A versioned contract is pinned before its first page
// (docs/task-lifecycle.md#stale-and-inconsistent).
TEST_P(TaskStoreContractTest, ContractVersionIsPinnedOnceByTheAttempt) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_OK_AND_ASSIGN(std::string pinned, store_->PinContractVersion(AttemptOf(t), "v3"));
  EXPECT_EQ(pinned, "v3");
  EXPECT_EQ(Get(t.id).contract_version, "v3");
  ASSERT_OK_AND_ASSIGN(std::string again, store_->PinContractVersion(AttemptOf(t), "v4"));
  EXPECT_EQ(again, "v3") << "a recorded version is never overwritten";
  EXPECT_EQ(store_->PinContractVersion(AttemptOf(t, "w2"), "v4").status().code(),
            StatusCode::kConflict);
  NewTask recorded = MakeTask("bob", "orders");
  recorded.contract_version = "v1";
  Task r = Create(recorded);
  ASSERT_TRUE(Claim(r.id).claimed);
  EXPECT_EQ(*store_->PinContractVersion(AttemptOf(r), "v2"), "v1");
}

// ---- the claim-miss table as a pure function --------------------------------------

TEST(ClassifyClaimMissTest, CoversEveryRowOfTheSeedTable) {
  ClaimFacts f;
  EXPECT_EQ(ClassifyClaimMiss(f, 1), ClaimMiss::kTaskMissing);
  f.found = true;
  f.dispatch_version = 2;
  EXPECT_EQ(ClassifyClaimMiss(f, 1), ClaimMiss::kNewerVersion);
  EXPECT_EQ(ClassifyClaimMiss(f, 3), ClaimMiss::kOlderVersion);
  for (TaskState s : {TaskState::kSucceeded, TaskState::kFailed, TaskState::kExpired,
                      TaskState::kCancelled, TaskState::kStale, TaskState::kInconsistent}) {
    f.status = s;
    EXPECT_EQ(ClassifyClaimMiss(f, 2), ClaimMiss::kFinished) << task::ToString(s);
  }
  f.status = TaskState::kRunning;
  f.lease_live = true;
  EXPECT_EQ(ClassifyClaimMiss(f, 2), ClaimMiss::kRunningLeaseLive);
  f.lease_live = false;
  EXPECT_EQ(ClassifyClaimMiss(f, 2), ClaimMiss::kRunningLeaseExpired);
  f.status = TaskState::kPending;
  f.in_backoff = true;
  EXPECT_EQ(ClassifyClaimMiss(f, 2), ClaimMiss::kPendingBackoff);
  f.in_backoff = false;
  EXPECT_EQ(ClassifyClaimMiss(f, 2), ClaimMiss::kLostRace);
}

}  // namespace
}  // namespace export_center::store::contract
