// Password-protected files (docs/configuration.md#password-protected-files-file-password)
// across the TaskStore roles on every backend: the wrapped key lives while an
// attempt may follow and is erased by every end; such a task is never retried
// by hand nor deduplicated.

#include <gtest/gtest.h>

#include "task_store_fixture.h"  // beside this file

namespace export_center::store::contract {
namespace {

// The wrapped key is what every attempt reads back; the claim and an
// automatic retry keep it, since another attempt will need it.
TEST_P(TaskStoreContractTest, AnEncryptedTaskKeepsItsWrappedKeyWhileAttemptsMayFollow) {
  NewTask nt = EncryptedTask();
  nt.max_attempts = 2;
  Task t = Create(nt);
  EXPECT_TRUE(t.encrypted);
  ASSERT_TRUE(t.file_key.has_value());
  EXPECT_EQ(t.file_key->key_id, nt.file_key->key_id);
  EXPECT_EQ(t.file_key->sealed, nt.file_key->sealed);
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->ScheduleRetry(AttemptOf(t), "provider 503", 0), RetryOutcome::kRescheduled);
  Task retrying = Get(t.id);
  ASSERT_TRUE(retrying.file_key.has_value());
  EXPECT_EQ(retrying.file_key->sealed, nt.file_key->sealed);
  ASSERT_TRUE(Claim(t.id, 2).claimed);
  EXPECT_EQ(Get(t.id).file_key->sealed, nt.file_key->sealed);

  Task plain = Create("bob");
  EXPECT_FALSE(plain.encrypted);
  EXPECT_FALSE(plain.file_key.has_value());
}

// Every way a task ends erases the wrapped key in the same transaction;
// `encrypted` stays so the API and the page still say what the file is.
TEST_P(TaskStoreContractTest, EveryEndOfAnEncryptedTaskErasesItsWrappedKey) {
  int n = 0;
  auto fresh = [&](int max_attempts = 3) {
    NewTask nt = EncryptedTask("user" + std::to_string(++n));
    nt.max_attempts = max_attempts;
    return Create(nt, Unlimited());
  };
  auto erased = [&](const Task& t, TaskState state) {
    Task after = Get(t.id);
    EXPECT_EQ(after.status, state) << task::ToString(state);
    EXPECT_TRUE(after.encrypted) << task::ToString(state);
    EXPECT_FALSE(after.file_key.has_value()) << task::ToString(state);
    EXPECT_EQ(Count("SELECT COUNT(*) FROM export_task WHERE id = ? AND (file_key_wrapped IS NOT"
                    " NULL OR file_key_id IS NOT NULL)",
                    {t.id}),
              0)
        << task::ToString(state);
  };

  Task succeeded = fresh();
  ASSERT_TRUE(Claim(succeeded.id).claimed);
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(succeeded), AFile(succeeded.id), 7),
            store::CommitOutcome::kCommitted);
  erased(succeeded, TaskState::kSucceeded);
  Shift("export_task", "expires_at", -7 * kDay, succeeded.id);
  ASSERT_EQ(*store_->MarkExpired(succeeded.id), store::ExpireOutcome::kExpired);
  erased(succeeded, TaskState::kExpired);

  for (TaskState state :
       {TaskState::kFailed, TaskState::kCancelled, TaskState::kStale, TaskState::kInconsistent}) {
    Task t = fresh();
    ASSERT_TRUE(Claim(t.id).claimed);
    ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), state, "CODE", "ended"),
              store::FinishOutcome::kFinished);
    erased(t, state);
  }

  Task exhausted = fresh(1);
  ASSERT_TRUE(Claim(exhausted.id).claimed);
  ASSERT_EQ(*store_->ScheduleRetry(AttemptOf(exhausted), "timeout", 0),
            RetryOutcome::kFailedMaxAttempts);
  erased(exhausted, TaskState::kFailed);

  Task cancelled = fresh();
  ASSERT_EQ(*store_->RequestCancel(cancelled.id), TaskState::kCancelled);
  erased(cancelled, TaskState::kCancelled);

  Task lost = fresh(1);
  ASSERT_TRUE(Claim(lost.id).claimed);
  Shift("export_task", "lease_until", -301 * kSecond, lost.id);
  ASSERT_EQ(store_->RecoverExpiredLeases(10)->size(), 1u);
  erased(lost, TaskState::kFailed);

  Task quarantined = fresh();
  ASSERT_OK(
      store_->QuarantineCommand(quarantined.id, 1, Outbox(quarantined.id)[0].event_id, "bad JSON"));
  erased(quarantined, TaskState::kFailed);
}

// Its key is gone and its password was never kept: a new file needs a new
// password, through export-again, not a retry.
TEST_P(TaskStoreContractTest, ManualRetryOfAnEncryptedTaskIsAConflict) {
  Task t = Create(EncryptedTask());
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), TaskState::kFailed, "BAD", "bad"),
            store::FinishOutcome::kFinished);
  auto retried = store_->ManualRetry(t.id, "");
  ASSERT_FALSE(retried.ok());
  EXPECT_EQ(retried.status().code(), StatusCode::kConflict);
  EXPECT_NE(retried.status().message().find("filePassword"), std::string::npos);
  EXPECT_EQ(Get(t.id).status, TaskState::kFailed);
  EXPECT_EQ(Outbox(t.id).size(), 1u);
}

// Each password makes its own file: an encrypted create is never handed an
// existing task, and a plain create is never handed an encrypted one.
TEST_P(TaskStoreContractTest, EncryptedCreatesAreNeverDeduplicated) {
  Task first = Create(EncryptedTask("alice"), Unlimited());
  Task second = Create(EncryptedTask("alice"), Unlimited());
  EXPECT_NE(first.id, second.id);
  auto plain = store_->CreateTask(MakeTask("alice", "orders"), Unlimited());
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->deduplicated);
  EXPECT_FALSE(plain->task.encrypted);
  auto again = store_->CreateTask(MakeTask("alice", "orders"), Unlimited());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->deduplicated);
  EXPECT_EQ(again->task.id, plain->task.id);
}

}  // namespace
}  // namespace export_center::store::contract
