// The TaskMaintenance and CommandQuarantine roles of the TaskStore contract
// (task_maintenance.h) on every backend: the reconciler's repairs (cases A and
// B, lease recovery, stale claims), the purge, expired artifacts and the
// quarantine of a dead-lettered command.

#include <gtest/gtest.h>

#include "task_store_fixture.h"  // beside this file

namespace export_center::store::contract {
namespace {

// ---- reconciler (docs/task-lifecycle.md#reconciler-duties) -----------------------

TEST_P(TaskStoreContractTest, CaseARedispatchesAMissingCommandWithTheSameVersion) {
  Task t = Create();
  std::string old_event = Outbox(t.id)[0].event_id;
  Exec("DELETE FROM export_outbox WHERE task_id = ?", {t.id});
  EXPECT_EQ(*store_->RedispatchMissingOutbox(60, 50), 0);  // still within grace
  Shift("export_task", "next_retry_at", -61 * kSecond, t.id);
  EXPECT_EQ(*store_->RedispatchMissingOutbox(60, 50), 1);
  EXPECT_EQ(*store_->RedispatchMissingOutbox(60, 50), 0);
  std::vector<OutboxEntry> rows = Outbox(t.id);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].dispatch_version, 1);
  EXPECT_NE(rows[0].event_id, old_event);
  EXPECT_EQ(rows[0].status, OutboxStatus::kPending);
  EXPECT_EQ(Get(t.id).dispatch_version, 1);
}

TEST_P(TaskStoreContractTest, CaseAIsBlockedByAQuarantinedRow) {
  Task t = Create();
  Exec("UPDATE export_outbox SET status = 'QUARANTINED' WHERE task_id = ?", {t.id});
  Shift("export_task", "next_retry_at", -61 * kSecond, t.id);
  EXPECT_EQ(*store_->RedispatchMissingOutbox(60, 50), 0);
}

TEST_P(TaskStoreContractTest, CaseBResendsAStaleSentCommandWithTheSameVersion) {
  Task t = Create();
  OutboxEntry row = Outbox(t.id)[0];
  ASSERT_TRUE(store_->ClaimOutbox(row.id, "p1", 60)->has_value());
  ASSERT_EQ(*store_->MarkOutboxSent(row.id, "p1"), store::MarkOutcome::kMarked);
  EXPECT_EQ(*store_->ResendStaleSentOutbox(600, 60, 20), 0);
  Shift("export_outbox", "sent_at", -601 * kSecond, t.id);
  Shift("export_task", "next_retry_at", -61 * kSecond, t.id);
  EXPECT_EQ(*store_->ResendStaleSentOutbox(600, 60, 20), 1);
  OutboxEntry after = Outbox(t.id)[0];
  EXPECT_EQ(after.id, row.id);
  EXPECT_EQ(after.event_id, row.event_id);
  EXPECT_EQ(after.dispatch_version, 1);
  EXPECT_EQ(after.status, OutboxStatus::kPending);
  EXPECT_EQ(Get(t.id).dispatch_version, 1);
  EXPECT_EQ(store_->SelectDueOutbox(50)->size(), 1u);
}

TEST_P(TaskStoreContractTest, CaseBLeavesCommandsOfRunningTasksAlone) {
  Task t = Create();
  OutboxEntry row = Outbox(t.id)[0];
  ASSERT_TRUE(store_->ClaimOutbox(row.id, "p1", 60)->has_value());
  ASSERT_EQ(*store_->MarkOutboxSent(row.id, "p1"), store::MarkOutcome::kMarked);
  ASSERT_TRUE(Claim(t.id).claimed);
  Shift("export_outbox", "sent_at", -601 * kSecond, t.id);
  Shift("export_task", "next_retry_at", -61 * kSecond, t.id);
  EXPECT_EQ(*store_->ResendStaleSentOutbox(600, 60, 20), 0);
}

TEST_P(TaskStoreContractTest, LeaseRecoveryRequeuesWithANewVersion) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  EXPECT_TRUE(store_->RecoverExpiredLeases(20)->empty());  // lease still live
  Shift("export_task", "lease_until", -301 * kSecond, t.id);
  ASSERT_OK_AND_ASSIGN(std::vector<RecoveredLease> rec, store_->RecoverExpiredLeases(20));
  ASSERT_EQ(rec.size(), 1u);
  EXPECT_EQ(rec[0].task_id, t.id);
  EXPECT_EQ(rec[0].old_version, 1);
  EXPECT_EQ(rec[0].outcome, LeaseRecovery::kRequeued);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kPending);
  EXPECT_EQ(after.dispatch_version, 2);
  EXPECT_FALSE(after.lease.owner.has_value());
  EXPECT_LE(after.next_retry_at, Now());
  std::vector<OutboxEntry> rows = Outbox(t.id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].dispatch_version, 2);
  EXPECT_TRUE(store_->RecoverExpiredLeases(20)->empty());
  EXPECT_TRUE(Claim(t.id, 2, "w2").claimed);
}

TEST_P(TaskStoreContractTest, LeaseRecoveryFailsTheTaskAtMaxAttempts) {
  NewTask nt = MakeTask("alice", "orders");
  nt.max_attempts = 1;
  Task t = Create(nt);
  ASSERT_TRUE(Claim(t.id).claimed);
  Shift("export_task", "lease_until", -301 * kSecond, t.id);
  ASSERT_OK_AND_ASSIGN(std::vector<RecoveredLease> rec, store_->RecoverExpiredLeases(20));
  ASSERT_EQ(rec.size(), 1u);
  EXPECT_EQ(rec[0].outcome, LeaseRecovery::kFailed);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kFailed);
  EXPECT_EQ(after.dispatch_version, 1);
  EXPECT_EQ(after.failure_code, "LEASE_LOST");
  EXPECT_EQ(Outbox(t.id).size(), 1u);
}

TEST_P(TaskStoreContractTest, StaleClaimedOutboxRowIsReleased) {
  Task t = Create();
  int64_t id = Outbox(t.id)[0].id;
  ASSERT_TRUE(store_->ClaimOutbox(id, "p1", 60)->has_value());
  EXPECT_EQ(*store_->ReleaseStaleClaimedOutbox(50), 0);
  Shift("export_outbox", "lease_until", -61 * kSecond, t.id);
  EXPECT_EQ(*store_->ReleaseStaleClaimedOutbox(50), 1);
  OutboxEntry e = Outbox(t.id)[0];
  EXPECT_EQ(e.status, OutboxStatus::kPending);
  EXPECT_FALSE(e.lease_owner.has_value());
  EXPECT_EQ(Get(t.id).dispatch_version, 1);
  EXPECT_EQ(store_->SelectDueOutbox(50)->size(), 1u);
  EXPECT_EQ(*store_->MarkOutboxSent(id, "p1"),
            store::MarkOutcome::kClaimLost);  // its lease is gone
}

TEST_P(TaskStoreContractTest, PurgeDeletesOnlyOldSentRowsInBatches) {
  std::vector<Task> tasks;
  for (int i = 0; i < 4; ++i)
    tasks.push_back(Create("u" + std::to_string(i), "t" + std::to_string(i)));
  for (int i = 0; i < 3; ++i) {
    int64_t id = Outbox(tasks[i].id)[0].id;
    ASSERT_TRUE(store_->ClaimOutbox(id, "p1", 60)->has_value());
    ASSERT_EQ(*store_->MarkOutboxSent(id, "p1"), store::MarkOutcome::kMarked);
  }
  EXPECT_EQ(*store_->PurgeSentOutbox(7 * 86400, 2), 0);  // too young
  Exec("UPDATE export_outbox SET sent_at = sent_at - ?, created_at = created_at - ?",
       {8 * kDay, 8 * kDay});
  EXPECT_EQ(*store_->PurgeSentOutbox(7 * 86400, 2), 2);
  EXPECT_EQ(*store_->PurgeSentOutbox(7 * 86400, 2), 1);
  EXPECT_EQ(*store_->PurgeSentOutbox(7 * 86400, 2), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_outbox"), 1);
  EXPECT_EQ(Outbox(tasks[3].id).size(), 1u);
}

TEST_P(TaskStoreContractTest, ExpiredArtifactsAreListedAndMarked) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7), store::CommitOutcome::kCommitted);
  const std::string key = AFile(t.id).object_key;
  EXPECT_TRUE(store_->ListExpiredArtifacts(10)->empty());
  EXPECT_EQ(*store_->MarkExpired(t.id), store::ExpireOutcome::kNotDue);
  EXPECT_EQ(Get(t.id).object_key, key);
  Shift("export_task", "expires_at", -7 * kDay, t.id);
  ASSERT_OK_AND_ASSIGN(std::vector<ExpiredArtifact> expired, store_->ListExpiredArtifacts(10));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].task_id, t.id);
  EXPECT_EQ(expired[0].object_key, key);
  EXPECT_EQ(*store_->MarkExpired(t.id), store::ExpireOutcome::kExpired);
  EXPECT_EQ(*store_->MarkExpired(t.id), store::ExpireOutcome::kNotDue);
  EXPECT_EQ(Get(t.id).status, TaskState::kExpired);
}

// ---- dead letters (docs/task-lifecycle.md#dead-letters-and-quarantine) ------------

TEST_P(TaskStoreContractTest, QuarantineIsolatesTheRowAndFailsTheTask) {
  Task t = Create();
  OutboxEntry row = Outbox(t.id)[0];
  ASSERT_TRUE(store_->ClaimOutbox(row.id, "p1", 60)->has_value());
  ASSERT_EQ(*store_->MarkOutboxSent(row.id, "p1"), store::MarkOutcome::kMarked);
  ASSERT_OK(store_->QuarantineCommand(t.id, 1, row.event_id, "bad JSON"));
  OutboxEntry after = Outbox(t.id)[0];
  EXPECT_EQ(after.status, OutboxStatus::kQuarantined);
  EXPECT_NE(after.last_error->find("bad JSON"), std::string::npos);
  Task failed = Get(t.id);
  EXPECT_EQ(failed.status, TaskState::kFailed);
  EXPECT_EQ(failed.failure_code, "COMMAND_QUARANTINED");
  // Repeating the quarantine (a redelivered dead letter) is harmless.
  ASSERT_OK(store_->QuarantineCommand(t.id, 1, row.event_id, "bad JSON"));
  // A manual retry gets a fresh version; the quarantined row stays as audit.
  ASSERT_OK_AND_ASSIGN(Task retried, store_->ManualRetry(t.id, ""));
  EXPECT_EQ(retried.dispatch_version, 2);
  std::vector<OutboxEntry> rows = Outbox(t.id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, OutboxStatus::kQuarantined);
}

TEST_P(TaskStoreContractTest, QuarantineOfAnOldOrForeignMessageChangesNothing) {
  Task t = Create();
  EXPECT_EQ(store_->QuarantineCommand(t.id, 1, "not-the-event", "bad").code(),
            StatusCode::kConflict);
  EXPECT_EQ(store_->QuarantineCommand(t.id, 2, Outbox(t.id)[0].event_id, "bad").code(),
            StatusCode::kConflict);
  EXPECT_EQ(Get(t.id).status, TaskState::kPending);
  EXPECT_EQ(Outbox(t.id)[0].status, OutboxStatus::kPending);
}

TEST_P(TaskStoreContractTest, LeaseRecoveryOfACancelRequestedTaskEndsCancelled) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->RequestCancel(t.id), TaskState::kRunning);
  Shift("export_task", "lease_until", -301 * kSecond, t.id);
  ASSERT_OK_AND_ASSIGN(std::vector<RecoveredLease> recovered, store_->RecoverExpiredLeases(10));
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0].outcome, LeaseRecovery::kCancelled);
  EXPECT_NE(recovered[0].outcome, LeaseRecovery::kFailed);
  EXPECT_EQ(recovered[0].export_type, "orders");
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kCancelled);
  EXPECT_EQ(after.dispatch_version, 1);
  EXPECT_EQ(Outbox(t.id).size(), 1u);
}

// Quarantine (docs/task-lifecycle.md#dead-letters-and-quarantine).
TEST_P(TaskStoreContractTest, QuarantineNeverFailsARunningTask) {
  Task t = Create();
  OutboxEntry row = Outbox(t.id)[0];
  ASSERT_TRUE(Claim(t.id).claimed);
  EXPECT_EQ(store_->QuarantineCommand(t.id, 1, row.event_id, "bad JSON").code(),
            StatusCode::kConflict);
  EXPECT_EQ(Get(t.id).status, TaskState::kRunning);
  EXPECT_EQ(Outbox(t.id)[0].status, OutboxStatus::kPending) << "both updates or neither";
}

TEST_P(TaskStoreContractTest, QuarantineOfAFinishedTaskChangesNothing) {
  Task t = Create();
  OutboxEntry row = Outbox(t.id)[0];
  ASSERT_EQ(*store_->RequestCancel(t.id), TaskState::kCancelled);
  EXPECT_EQ(store_->QuarantineCommand(t.id, 1, row.event_id, "bad JSON").code(),
            StatusCode::kConflict);
  EXPECT_EQ(Get(t.id).status, TaskState::kCancelled);
  EXPECT_EQ(Outbox(t.id)[0].status, OutboxStatus::kPending);
}

TEST_P(TaskStoreContractTest, FailedQuarantineTransactionRollsBack) {
  Task t = Create();
  OutboxEntry row = Outbox(t.id)[0];
  FailEvery("UPDATE", "export_task");
  Status s = store_->QuarantineCommand(t.id, 1, row.event_id, "bad JSON");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.code(), StatusCode::kConflict) << "a database failure, not an old message: retry";
  EXPECT_EQ(Outbox(t.id)[0].status, OutboxStatus::kPending) << "the outbox update rolled back";
  StopFailing("export_task");
  ASSERT_OK(store_->QuarantineCommand(t.id, 1, row.event_id, "bad JSON"));
  EXPECT_EQ(Get(t.id).status, TaskState::kFailed);
  EXPECT_EQ(Outbox(t.id)[0].status, OutboxStatus::kQuarantined);
}

}  // namespace
}  // namespace export_center::store::contract
