// The notification outbox (notification_outbox.h, docs/notifications.md) as
// the TaskStore writes and serves it, on every backend: one row per matching
// receiver for every end, in the end's own transaction; claim, retry, deliver,
// dead.

#include <gtest/gtest.h>

#include "task_store_fixture.h"  // beside this file

namespace export_center::store::contract {
namespace {

// ---- notification outbox (docs/notifications.md) -------------------------------------

// Routes used by the notification tests: one that takes everything, one per
// kind of filter.
std::vector<NotificationRoute> TestRoutes() {
  NotificationRoute all{"all", {}, {}, {}, {}};
  NotificationRoute orders{"orders-only", {"orders"}, {}, {}, {}};
  NotificationRoute bob{"bob-only", {}, {"bob"}, {}, {}};
  NotificationRoute failed{"failed-only", {}, {}, {}, {TaskState::kFailed}};
  NotificationRoute other_tenant{"t2-only", {}, {}, {"t2"}, {}};
  return {all, orders, bob, failed, other_tenant};
}

class NotificationOutboxContractTest : public TaskStoreContractTest {
 protected:
  void SetUp() override {
    TaskStoreContractTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    store_->SetNotificationRoutes(TestRoutes());
  }

  std::vector<NotificationEntry> Notes(int64_t task_id) {
    auto rows = store_->notifications().ListNotificationsForTask(task_id);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : std::vector<NotificationEntry>{};
  }

  // "receiver:STATUS" of every row, sorted.
  std::multiset<std::string> Events(int64_t task_id) {
    std::multiset<std::string> out;
    for (const NotificationEntry& e : Notes(task_id))
      out.insert(e.receiver_id + ":" + e.task_status);
    return out;
  }

  Task Running(const std::string& user = "alice", const std::string& type = "orders") {
    Task t = Create(user, type, "{\"n\":" + std::to_string(++created_) + "}");
    EXPECT_TRUE(Claim(t.id).claimed);
    return Get(t.id);
  }

  int created_ = 0;
};

TEST_P(NotificationOutboxContractTest, SuccessAndExpiryEachWriteOneRowPerMatchingReceiver) {
  Task t = Running();
  ASSERT_TRUE(Notes(t.id).empty());  // creating and claiming are no ends
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7), store::CommitOutcome::kCommitted);
  EXPECT_EQ(Events(t.id), (std::multiset<std::string>{"all:SUCCEEDED", "orders-only:SUCCEEDED"}));
  std::vector<NotificationEntry> rows = Notes(t.id);
  // One event, one id for its receivers; each row due now, never tried.
  EXPECT_EQ(rows[0].event_id, rows[1].event_id);
  EXPECT_EQ(rows[0].status, NotificationStatus::kPending);
  EXPECT_EQ(rows[0].attempt_count, 0);
  EXPECT_EQ(rows[0].dispatch_version, 1);
  EXPECT_NE(rows[0].payload_json.find("\"eventId\":\"" + rows[0].event_id + "\""),
            std::string::npos);
  EXPECT_NE(rows[0].payload_json.find("\"status\":\"SUCCEEDED\""), std::string::npos);
  EXPECT_NE(rows[0].payload_json.find("\"taskId\":\"" + std::to_string(t.id) + "\""),
            std::string::npos);
  EXPECT_NE(rows[0].payload_json.find("\"fileName\":\"" + *Get(t.id).file_name + "\""),
            std::string::npos);

  Shift("export_task", "expires_at", -8 * kDay, t.id);
  ASSERT_EQ(*store_->MarkExpired(t.id), store::ExpireOutcome::kExpired);
  EXPECT_EQ(Events(t.id), (std::multiset<std::string>{"all:SUCCEEDED", "orders-only:SUCCEEDED",
                                                      "all:EXPIRED", "orders-only:EXPIRED"}));
  std::set<std::string> ids;
  for (const NotificationEntry& e : Notes(t.id)) ids.insert(e.event_id);
  EXPECT_EQ(ids.size(), 2u);  // the expiry is an event of its own
  EXPECT_EQ(*store_->MarkExpired(t.id),
            store::ExpireOutcome::kNotDue);  // a repeat ends nothing and writes nothing
  EXPECT_EQ(Notes(t.id).size(), 4u);
}

TEST_P(NotificationOutboxContractTest, EveryAttemptEndIsNotified) {
  Task failed = Running("bob");
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(failed), TaskState::kFailed, "BAD_DATA", "bad"),
            store::FinishOutcome::kFinished);
  EXPECT_EQ(Events(failed.id),
            (std::multiset<std::string>{"all:FAILED", "orders-only:FAILED", "bob-only:FAILED",
                                        "failed-only:FAILED"}));
  for (TaskState end : {TaskState::kCancelled, TaskState::kStale, TaskState::kInconsistent}) {
    Task t = Running("carol", "customers");
    ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), end, "X", "why"),
              store::FinishOutcome::kFinished);
    EXPECT_EQ(Events(t.id),
              (std::multiset<std::string>{"all:" + std::string(task::ToString(end))}));
  }
  // An attempt that no longer holds its task ends nothing and writes nothing.
  Task lost = Running("carol", "customers");
  EXPECT_EQ(*store_->FinishAttempt(AttemptOf(lost, "someone-else"), TaskState::kFailed, "X", ""),
            store::FinishOutcome::kLost);
  EXPECT_TRUE(Notes(lost.id).empty());
}

TEST_P(NotificationOutboxContractTest, RetriesNotifyOnlyWhenTheyEndTheTask) {
  Task t = Running("carol", "customers");
  ASSERT_EQ(*store_->ScheduleRetry(AttemptOf(t), "503", 0), RetryOutcome::kRescheduled);
  EXPECT_TRUE(Notes(t.id).empty());  // back to PENDING: not an end
  ASSERT_TRUE(Claim(t.id, 2).claimed);
  ASSERT_EQ(*store_->ScheduleRetry({t.id, 2, "w1"}, "503", 0), RetryOutcome::kRescheduled);
  ASSERT_TRUE(Claim(t.id, 3).claimed);
  ASSERT_EQ(*store_->ScheduleRetry({t.id, 3, "w1"}, "503 again", 0),
            RetryOutcome::kFailedMaxAttempts);
  EXPECT_EQ(Events(t.id), (std::multiset<std::string>{"all:FAILED", "failed-only:FAILED"}));
  EXPECT_EQ(Notes(t.id)[0].dispatch_version, 3);

  Task cancelled = Running("carol", "customers");
  ASSERT_EQ(*store_->RequestCancel(cancelled.id), TaskState::kRunning);
  EXPECT_TRUE(Notes(cancelled.id).empty());  // only asked; still RUNNING
  ASSERT_EQ(*store_->ScheduleRetry(AttemptOf(cancelled), "503", 0), RetryOutcome::kCancelled);
  EXPECT_EQ(Events(cancelled.id), (std::multiset<std::string>{"all:CANCELLED"}));
}

TEST_P(NotificationOutboxContractTest, CancelOfAPendingTaskAndQuarantineAreNotified) {
  Task pending = Create("carol", "customers");
  ASSERT_EQ(*store_->RequestCancel(pending.id), TaskState::kCancelled);
  EXPECT_EQ(Events(pending.id), (std::multiset<std::string>{"all:CANCELLED"}));

  Task poison = Create("dave", "customers");
  ASSERT_OK(store_->QuarantineCommand(poison.id, 1, Outbox(poison.id)[0].event_id, "bad JSON"));
  EXPECT_EQ(Events(poison.id), (std::multiset<std::string>{"all:FAILED", "failed-only:FAILED"}));
  // A repeated quarantine is Ok and writes nothing more.
  ASSERT_OK(store_->QuarantineCommand(poison.id, 1, Outbox(poison.id)[0].event_id, "bad JSON"));
  EXPECT_EQ(Notes(poison.id).size(), 2u);
}

TEST_P(NotificationOutboxContractTest, LeaseRecoveryNotifiesTheEndsItMakes) {
  Task retried = Running("carol", "customers");
  Shift("export_task", "lease_until", -301 * kSecond, retried.id);
  Task exhausted = Running("carol", "customers");
  Exec("UPDATE export_task SET attempt_count = max_attempts WHERE id = ?", {exhausted.id});
  Shift("export_task", "lease_until", -301 * kSecond, exhausted.id);
  Task cancelled = Running("carol", "customers");
  ASSERT_EQ(*store_->RequestCancel(cancelled.id), TaskState::kRunning);
  Shift("export_task", "lease_until", -301 * kSecond, cancelled.id);
  ASSERT_OK_AND_ASSIGN(std::vector<RecoveredLease> recovered, store_->RecoverExpiredLeases(10));
  ASSERT_EQ(recovered.size(), 3u);
  EXPECT_TRUE(Notes(retried.id).empty());  // PENDING at version 2: not an end
  EXPECT_EQ(Events(exhausted.id), (std::multiset<std::string>{"all:FAILED", "failed-only:FAILED"}));
  EXPECT_EQ(Events(cancelled.id), (std::multiset<std::string>{"all:CANCELLED"}));
}

TEST_P(NotificationOutboxContractTest, WithoutRoutesNothingIsWritten) {
  store_->SetNotificationRoutes({});
  Task t = Running();
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7), store::CommitOutcome::kCommitted);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_notification"), 0);
}

TEST_P(NotificationOutboxContractTest, NotificationRowsShareTheTransactionOfTheEnd) {
  Task t = Running();
  FailEvery("INSERT", "export_notification");
  EXPECT_FALSE(store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7).ok());
  // Rolled back together: no notification, and the task is still running.
  EXPECT_EQ(Get(t.id).status, TaskState::kRunning);
  StopFailing("export_notification");
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7), store::CommitOutcome::kCommitted);
  EXPECT_EQ(Notes(t.id).size(), 2u);
}

TEST_P(NotificationOutboxContractTest, ClaimRetryDeliverLifecycle) {
  Task t = Create("carol", "customers");
  ASSERT_EQ(*store_->RequestCancel(t.id), TaskState::kCancelled);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> due,
                       store_->notifications().SelectDueNotifications(10));
  ASSERT_EQ(due.size(), 1u);
  NotificationOutbox& outbox = store_->notifications();
  ASSERT_OK_AND_ASSIGN(std::optional<NotificationEntry> claimed,
                       outbox.ClaimNotification(due[0], "n1", 60));
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->status, NotificationStatus::kClaimed);
  EXPECT_EQ(claimed->attempt_count, 1);
  EXPECT_EQ(*claimed->lease_owner, "n1");
  // Held: neither offered nor claimable by another instance.
  EXPECT_TRUE(outbox.SelectDueNotifications(10)->empty());
  EXPECT_FALSE(outbox.ClaimNotification(due[0], "n2", 60)->has_value());
  EXPECT_EQ(*outbox.MarkNotificationDelivered(due[0], "n2"), store::MarkOutcome::kClaimLost);

  // A failure waits out its back-off, keeping the same event id.
  ASSERT_EQ(*outbox.MarkNotificationRetry(due[0], "n1", "HTTP 503", 15 * kSecond),
            store::MarkOutcome::kMarked);
  EXPECT_TRUE(outbox.SelectDueNotifications(10)->empty());
  EXPECT_FALSE(outbox.ClaimNotification(due[0], "n2", 60)->has_value());
  Shift("export_notification", "next_retry_at", -16 * kSecond, t.id);
  ASSERT_OK_AND_ASSIGN(claimed, outbox.ClaimNotification(due[0], "n2", 60));
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->attempt_count, 2);
  EXPECT_EQ(*claimed->last_error, "HTTP 503");
  EXPECT_EQ(claimed->event_id, Notes(t.id)[0].event_id);

  // n2 dies holding it: after its lease another instance takes it over, and
  // n2's late report changes nothing.
  Shift("export_notification", "lease_until", -61 * kSecond, t.id);
  ASSERT_OK_AND_ASSIGN(due, outbox.SelectDueNotifications(10));
  ASSERT_EQ(due.size(), 1u);
  ASSERT_TRUE(outbox.ClaimNotification(due[0], "n3", 60)->has_value());
  EXPECT_EQ(*outbox.MarkNotificationDelivered(due[0], "n2"), store::MarkOutcome::kClaimLost);
  ASSERT_EQ(*outbox.MarkNotificationDelivered(due[0], "n3"), store::MarkOutcome::kMarked);
  NotificationEntry done = Notes(t.id)[0];
  EXPECT_EQ(done.status, NotificationStatus::kDelivered);
  EXPECT_EQ(done.attempt_count, 3);
  EXPECT_TRUE(done.delivered_at.has_value());
  EXPECT_FALSE(done.lease_owner.has_value());
  // Delivered is final: never due again, even long after.
  Shift("export_notification", "next_retry_at", -kDay, t.id);
  EXPECT_TRUE(outbox.SelectDueNotifications(10)->empty());
  EXPECT_FALSE(outbox.ClaimNotification(due[0], "n1", 60)->has_value());
  // Purged once old enough, not before.
  EXPECT_EQ(*outbox.PurgeDeliveredNotifications(3600, 10), 0);
  Shift("export_notification", "delivered_at", -3601 * kSecond, t.id);
  EXPECT_EQ(*outbox.PurgeDeliveredNotifications(3600, 10), 1);
  EXPECT_TRUE(Notes(t.id).empty());
}

TEST_P(NotificationOutboxContractTest, ADeadRowIsNeverSentAgainNorPurged) {
  Task t = Create("carol", "customers");
  ASSERT_EQ(*store_->RequestCancel(t.id), TaskState::kCancelled);
  NotificationOutbox& outbox = store_->notifications();
  int64_t id = Notes(t.id)[0].id;
  ASSERT_TRUE(outbox.ClaimNotification(id, "n1", 60)->has_value());
  ASSERT_EQ(*outbox.MarkNotificationDead(id, "n1", "HTTP 500 after 8 attempts"),
            store::MarkOutcome::kMarked);
  Shift("export_notification", "next_retry_at", -kDay, t.id);
  EXPECT_TRUE(outbox.SelectDueNotifications(10)->empty());
  EXPECT_FALSE(outbox.ClaimNotification(id, "n1", 60)->has_value());
  Exec("UPDATE export_notification SET delivered_at = 0 WHERE id = ?", {id});
  EXPECT_EQ(*outbox.PurgeDeliveredNotifications(1, 10), 0);
  NotificationEntry dead = Notes(t.id)[0];
  EXPECT_EQ(dead.status, NotificationStatus::kDead);
  EXPECT_EQ(*dead.last_error, "HTTP 500 after 8 attempts");
}

// The webhook says the file is encrypted, never how: no key id, no wrapped key.
TEST_P(NotificationOutboxContractTest, TheEndedEventSaysTheFileIsEncrypted) {
  Task t = Create(EncryptedTask("alice", R"({"enc":1})"), Unlimited());
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7), store::CommitOutcome::kCommitted);
  std::vector<NotificationEntry> rows = Notes(t.id);
  ASSERT_FALSE(rows.empty());
  for (const NotificationEntry& row : rows) {
    EXPECT_NE(row.payload_json.find("\"encrypted\":true"), std::string::npos) << row.payload_json;
    EXPECT_EQ(row.payload_json.find(SomeWrappedKey().key_id), std::string::npos);
    EXPECT_EQ(row.payload_json.find("c2VhbGVk"), std::string::npos);
  }
  Task plain = Running("bob");
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(plain), AFile(plain.id), 7),
            store::CommitOutcome::kCommitted);
  ASSERT_FALSE(Notes(plain.id).empty());
  EXPECT_NE(Notes(plain.id)[0].payload_json.find("\"encrypted\":false"), std::string::npos);
}

EC_INSTANTIATE_ON_EVERY_BACKEND(NotificationOutboxContractTest);

}  // namespace
}  // namespace export_center::store::contract
