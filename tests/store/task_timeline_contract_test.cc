// The timeline (task_event.h, docs/task-lifecycle.md#the-timeline) as every
// TaskStore role writes it, on every backend.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/utf8.h"
#include "task_store_fixture.h"  // beside this file

namespace export_center::store::contract {
namespace {

// ---- the timeline (docs/task-lifecycle.md#the-timeline) ---------------------------

class TaskTimelineContractTest : public TaskStoreContractTest {
 protected:
  std::vector<TaskEvent> Timeline(int64_t task_id) {
    auto events = store_->ListTaskEvents(task_id);
    EXPECT_TRUE(events.ok()) << events.status().ToString();
    return events.ok() ? *events : std::vector<TaskEvent>{};
  }

  // "KIND@version" of every event, oldest first.
  std::vector<std::string> Kinds(int64_t task_id) {
    std::vector<std::string> out;
    for (const TaskEvent& e : Timeline(task_id)) {
      out.push_back(std::string(ToString(e.kind)) + "@" + std::to_string(e.dispatch_version));
    }
    return out;
  }

  // The details of the newest event of `kind`.
  nlohmann::json Last(int64_t task_id, TaskEventKind kind) {
    std::vector<TaskEvent> events = Timeline(task_id);
    for (auto it = events.rbegin(); it != events.rend(); ++it) {
      if (it->kind == kind) return nlohmann::json::parse(it->details_json);
    }
    ADD_FAILURE() << "no " << ToString(kind) << " event";
    return nlohmann::json::object();
  }

  void Send(int64_t task_id, const std::string& publisher = "p1") {
    std::vector<OutboxEntry> rows = Outbox(task_id);
    ASSERT_FALSE(rows.empty());
    const int64_t id = rows.back().id;
    ASSERT_TRUE(store_->ClaimOutbox(id, publisher, 60)->has_value());
    ASSERT_EQ(*store_->MarkOutboxSent(id, publisher), store::MarkOutcome::kMarked);
  }

  int64_t EventCount(int64_t task_id, const std::string& kind) {
    return Count("SELECT COUNT(*) FROM export_task_event WHERE task_id = ? AND kind = ?",
                 {task_id, kind});
  }
};

// docs/task-lifecycle.md#failure-classes: the user's classified text and the
// operators' full one are stored side by side, each valid UTF-8 and cut; the
// timeline's RETRY_SCHEDULED and FINISHED carry the operators' under "detail";
// a claim, a commit and a manual retry clear it with the message.
TEST_P(TaskTimelineContractTest, AFailuresOperatorDetailIsStoredBesideItsMessage) {
  NewTask nt = MakeTask("alice", "orders");
  nt.max_attempts = 2;
  Task t = Create(nt);
  EXPECT_FALSE(Get(t.id).failure_detail.has_value());
  ASSERT_TRUE(Claim(t.id, 1).claimed);
  const std::string retry_detail = "Unavailable: provider http://crm.internal:8080 answered 503";
  ASSERT_EQ(
      *store_->ScheduleRetry(AttemptOf(t), {"The data source was unavailable", retry_detail}, 0),
      RetryOutcome::kRescheduled);
  EXPECT_EQ(Get(t.id).failure_detail, retry_detail);
  EXPECT_EQ(Last(t.id, TaskEventKind::kRetryScheduled)["detail"], retry_detail);
  EXPECT_EQ(Last(t.id, TaskEventKind::kRetryScheduled)["cause"], "The data source was unavailable");
  ASSERT_TRUE(Claim(t.id, 2).claimed);
  EXPECT_FALSE(Get(t.id).failure_detail.has_value());  // the claim clears it with the message

  std::string detail =
      "InvalidArgument: row 7: column 'amount' (DECIMAL): value \"1\xFF"
      "2\" ";
  while (detail.size() < 3000) detail += "金额不是数字 ";
  Attempt second{t.id, 2, "w1"};
  ASSERT_EQ(*store_->FinishAttempt(second, TaskState::kFailed, "INVALID_DATA",
                                   {"The business system sent data this export type does not "
                                    "accept",
                                    detail}),
            store::FinishOutcome::kFinished);
  Task failed = Get(t.id);
  EXPECT_EQ(failed.failure_message,
            "The business system sent data this export type does not accept");
  ASSERT_TRUE(failed.failure_detail.has_value());
  EXPECT_TRUE(utf8::IsValid(*failed.failure_detail));
  EXPECT_LE(failed.failure_detail->size(), 1000u);
  EXPECT_GT(failed.failure_detail->size(), 900u);
  EXPECT_EQ(failed.failure_detail->rfind(
                "InvalidArgument: row 7: column 'amount' (DECIMAL): value \"1\xEF\xBF\xBD"
                "2\"",
                0),
            0u)
      << *failed.failure_detail;
  nlohmann::json finished = Last(t.id, TaskEventKind::kFinished);
  EXPECT_EQ(finished["detail"], *failed.failure_detail);
  EXPECT_EQ(finished["message"], "The business system sent data this export type does not accept");

  ASSERT_OK_AND_ASSIGN(Task retried, store_->ManualRetry(t.id, ""));
  EXPECT_FALSE(retried.failure_detail.has_value());
  EXPECT_FALSE(Get(t.id).failure_detail.has_value());
  // A plain message (no detail) stores none: FINISHED has no "detail".
  ASSERT_TRUE(Claim(t.id, 3).claimed);
  ASSERT_EQ(*store_->FinishAttempt(Attempt{t.id, 3, "w1"}, TaskState::kFailed, "BAD", "bad"),
            store::FinishOutcome::kFinished);
  EXPECT_FALSE(Get(t.id).failure_detail.has_value());
  EXPECT_FALSE(Last(t.id, TaskEventKind::kFinished).contains("detail"));
}

TEST_P(TaskTimelineContractTest, ARunWithARetryIsOnTheTimelineInOrderWithItsFacts) {
  Task t = Create();
  Send(t.id);
  ASSERT_TRUE(Claim(t.id, 1, "w1").claimed);
  ASSERT_OK(store_->UpdateProgress(AttemptOf(t), 10, 100).status());
  ASSERT_EQ(*store_->ScheduleRetry(AttemptOf(t), "provider answered 503", 30 * kSecond),
            RetryOutcome::kRescheduled);
  Shift("export_task", "next_retry_at", -30 * kSecond, t.id);
  ASSERT_TRUE(Claim(t.id, 2, "w2").claimed);
  Task v2 = Get(t.id);
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(v2, "w2"), AFile(t.id), 7),
            store::CommitOutcome::kCommitted);
  ASSERT_EQ(*store_->RecordDownload(DownloadOf(v2, "alice", "DIRECT"), 600),
            DownloadCount::kCounted);
  Shift("export_task", "expires_at", -8 * kDay, t.id);
  ASSERT_EQ(*store_->MarkExpired(t.id), store::ExpireOutcome::kExpired);

  EXPECT_EQ(Kinds(t.id), (std::vector<std::string>{"CREATED@1", "COMMAND_SENT@1", "CLAIMED@1",
                                                   "PROGRESS@1", "RETRY_SCHEDULED@1", "CLAIMED@2",
                                                   "FINISHED@2", "DOWNLOADED@2", "EXPIRED@2"}));
  EXPECT_EQ(Last(t.id, TaskEventKind::kCreated)["by"], "alice");
  EXPECT_EQ(Last(t.id, TaskEventKind::kCommandSent)["sends"], 1);
  nlohmann::json claimed = Last(t.id, TaskEventKind::kClaimed);
  EXPECT_EQ(claimed["instance"], "w2");
  EXPECT_EQ(claimed["attempt"], 2);
  nlohmann::json progress = Last(t.id, TaskEventKind::kProgress);
  EXPECT_EQ(progress["rows"], 10);
  EXPECT_EQ(progress["total"], 100);
  nlohmann::json retry = Last(t.id, TaskEventKind::kRetryScheduled);
  EXPECT_EQ(retry["cause"], "provider answered 503");
  EXPECT_EQ(retry["nextVersion"], 2);
  EXPECT_TRUE(retry["nextAt"].is_string() && retry["nextAt"].get<std::string>().ends_with("Z"))
      << retry.dump();
  nlohmann::json finished = Last(t.id, TaskEventKind::kFinished);
  EXPECT_EQ(finished["status"], "SUCCEEDED");
  EXPECT_EQ(finished["rows"], 10);
  EXPECT_EQ(finished["bytes"], 1234);
  EXPECT_GE(finished["durationMs"].get<int64_t>(), 0);
  EXPECT_EQ(Last(t.id, TaskEventKind::kDownloaded)["user"], "alice");
  std::vector<TaskEvent> events = Timeline(t.id);
  for (size_t i = 1; i < events.size(); ++i) EXPECT_LE(events[i - 1].at, events[i].at);
  EXPECT_GE(events.front().at, t.requested_at);
}

TEST_P(TaskTimelineContractTest, CancelsRetriesAndFailuresSayWhatHappened) {
  Task pending = Create("alice", "orders");
  ASSERT_EQ(*store_->RequestCancel(pending.id), TaskState::kCancelled);
  ASSERT_OK(store_->ManualRetry(pending.id, "trace").status());
  EXPECT_EQ(Kinds(pending.id), (std::vector<std::string>{"CREATED@1", "CANCEL_REQUESTED@1",
                                                         "FINISHED@1", "MANUAL_RETRY@2"}));
  EXPECT_EQ(Last(pending.id, TaskEventKind::kCancelRequested)["state"], "PENDING");
  EXPECT_EQ(Last(pending.id, TaskEventKind::kFinished)["status"], "CANCELLED");
  EXPECT_EQ(Last(pending.id, TaskEventKind::kManualRetry)["from"], "CANCELLED");

  Task running = Create("bob", "orders");
  ASSERT_TRUE(Claim(running.id).claimed);
  ASSERT_EQ(*store_->RequestCancel(running.id), TaskState::kRunning);
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(running), TaskState::kCancelled, "CANCELLED",
                                   "cancelled by the user"),
            FinishOutcome::kFinished);
  EXPECT_EQ(Kinds(running.id), (std::vector<std::string>{"CREATED@1", "CLAIMED@1",
                                                         "CANCEL_REQUESTED@1", "FINISHED@1"}));
  EXPECT_EQ(Last(running.id, TaskEventKind::kCancelRequested)["state"], "RUNNING");

  Task failing = Create("carol", "orders");
  ASSERT_TRUE(Claim(failing.id).claimed);
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(failing), TaskState::kFailed, "BAD_PARAMS",
                                   "the month is out of range"),
            FinishOutcome::kFinished);
  nlohmann::json failed = Last(failing.id, TaskEventKind::kFinished);
  EXPECT_EQ(failed["status"], "FAILED");
  EXPECT_EQ(failed["code"], "BAD_PARAMS");
  EXPECT_EQ(failed["message"], "the month is out of range");
  EXPECT_FALSE(failed.contains("bytes"));
}

TEST_P(TaskTimelineContractTest, ReconcilerAndDeadLetterRepairsSayWhy) {
  Task missing = Create("alice", "orders");
  Exec("DELETE FROM export_outbox WHERE task_id = ?", {missing.id});
  Shift("export_task", "next_retry_at", -61 * kSecond, missing.id);
  ASSERT_EQ(*store_->RedispatchMissingOutbox(60, 50), 1);
  EXPECT_EQ(Last(missing.id, TaskEventKind::kCommandResent)["cause"], "OUTBOX_MISSING");

  Task stale = Create("bob", "orders");
  Send(stale.id);
  Shift("export_outbox", "sent_at", -301 * kSecond, stale.id);
  Shift("export_task", "next_retry_at", -301 * kSecond, stale.id);
  ASSERT_EQ(*store_->ResendStaleSentOutbox(300, 60, 50), 1);
  EXPECT_EQ(*store_->ResendStaleSentOutbox(300, 60, 50), 0);
  EXPECT_EQ(Last(stale.id, TaskEventKind::kCommandResent)["cause"], "SENT_STALE");
  EXPECT_EQ(Outbox(stale.id)[0].status, OutboxStatus::kPending);

  Task claimed = Create("carol", "orders");
  const int64_t row = Outbox(claimed.id)[0].id;
  ASSERT_TRUE(store_->ClaimOutbox(row, "p1", 60)->has_value());
  ASSERT_EQ(*store_->MarkOutboxFailed(row, "p1", "broker down", 0), store::MarkOutcome::kMarked);
  ASSERT_TRUE(store_->ClaimOutbox(row, "p1", 60)->has_value());
  Shift("export_outbox", "lease_until", -61 * kSecond, claimed.id);
  ASSERT_EQ(*store_->ReleaseStaleClaimedOutbox(50), 1);
  EXPECT_EQ(Last(claimed.id, TaskEventKind::kCommandResent)["cause"], "CLAIM_EXPIRED");
  Send(claimed.id, "p2");
  nlohmann::json sent = Last(claimed.id, TaskEventKind::kCommandSent);
  EXPECT_EQ(sent["sends"], 3);
  EXPECT_EQ(sent["lastError"], "broker down") << "a re-send says why the send before failed";

  Task lost = Create("dave", "orders");
  ASSERT_TRUE(Claim(lost.id, 1, "w9").claimed);
  Shift("export_task", "lease_until", -301 * kSecond, lost.id);
  ASSERT_EQ(store_->RecoverExpiredLeases(20)->size(), 1u);
  nlohmann::json recovered = Last(lost.id, TaskEventKind::kLeaseRecovered);
  EXPECT_EQ(recovered["instance"], "w9");
  EXPECT_EQ(recovered["outcome"], "REQUEUED");
  EXPECT_EQ(Kinds(lost.id).back(), "LEASE_RECOVERED@1");

  Task poison = Create("erin", "orders");
  OutboxEntry command = Outbox(poison.id)[0];
  ASSERT_OK(store_->QuarantineCommand(poison.id, 1, command.event_id, "bad JSON"));
  EXPECT_EQ(Kinds(poison.id),
            (std::vector<std::string>{"CREATED@1", "QUARANTINED@1", "FINISHED@1"}));
  EXPECT_EQ(Last(poison.id, TaskEventKind::kQuarantined)["reason"], "bad JSON");
  EXPECT_EQ(Last(poison.id, TaskEventKind::kFinished)["code"], "COMMAND_QUARANTINED");
}

// The event shares the transaction of its change: when the event cannot be
// written, the change is not made either.
TEST_P(TaskTimelineContractTest, AChangeWhoseEventFailsIsRolledBackWithIt) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  FailEvery("INSERT", "export_task_event");
  EXPECT_FALSE(store_->CreateTask(MakeTask("bob", "orders"), {}).ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_task"), 1) << "no task without its CREATED event";
  EXPECT_FALSE(store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7).ok());
  EXPECT_EQ(Get(t.id).status, TaskState::kRunning);
  EXPECT_FALSE(store_->RequestCancel(t.id).ok());
  EXPECT_FALSE(Get(t.id).cancel_requested);
  StopFailing("export_task_event");
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7), store::CommitOutcome::kCommitted);
  EXPECT_EQ(Kinds(t.id), (std::vector<std::string>{"CREATED@1", "CLAIMED@1", "FINISHED@1"}));
}

TEST_P(TaskTimelineContractTest, ProgressIsSampledByTenthsAndByTime) {
  Task known = Create("alice", "orders");
  ASSERT_TRUE(Claim(known.id).claimed);
  for (int rows = 10; rows <= 1000; rows += 10) {
    ASSERT_OK(store_->UpdateProgress(AttemptOf(known), rows, 1000).status());
  }
  // The first checkpoint, then one per tenth reached: 10, 100, 200, ..., 1000.
  EXPECT_EQ(EventCount(known.id, "PROGRESS"), 11);
  EXPECT_EQ(Last(known.id, TaskEventKind::kProgress)["rows"], 1000);

  Task unknown = Create("bob", "orders");
  ASSERT_TRUE(Claim(unknown.id).claimed);
  for (int rows = 10; rows <= 100; rows += 10) {
    ASSERT_OK(store_->UpdateProgress(AttemptOf(unknown), rows, std::nullopt).status());
  }
  EXPECT_EQ(EventCount(unknown.id, "PROGRESS"), 1) << "no total: one per 30 s";
  Exec("UPDATE export_task_event SET created_at = created_at - ? WHERE task_id = ?",
       {31 * kSecond, unknown.id});
  ASSERT_OK(store_->UpdateProgress(AttemptOf(unknown), 110, std::nullopt).status());
  EXPECT_EQ(EventCount(unknown.id, "PROGRESS"), 2);
  for (int i = 0; i < 30; ++i) {
    Exec("UPDATE export_task_event SET created_at = created_at - ? WHERE task_id = ?",
         {31 * kSecond, unknown.id});
    ASSERT_OK(store_->UpdateProgress(AttemptOf(unknown), 120 + i, std::nullopt).status());
  }
  EXPECT_EQ(EventCount(unknown.id, "PROGRESS"), kMaxProgressEventsPerAttempt);
}

TEST_P(TaskTimelineContractTest, EventsAreCappedButTheEndIsNeverDropped) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7), store::CommitOutcome::kCommitted);
  for (int i = 0; i < kMaxEventsPerTask + 20; ++i) {
    ASSERT_EQ(*store_->RecordDownload(DownloadOf(t, "u" + std::to_string(i), "DIRECT"), 0),
              DownloadCount::kCounted);
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_task_event WHERE task_id = ?", {t.id}),
            kMaxEventsPerTask);
  EXPECT_EQ(Get(t.id).downloads.count, kMaxEventsPerTask + 20)
      << "the cap drops events, not counts";
  Shift("export_task", "expires_at", -8 * kDay, t.id);
  ASSERT_EQ(*store_->MarkExpired(t.id), store::ExpireOutcome::kExpired);
  std::vector<std::string> kinds = Kinds(t.id);
  EXPECT_EQ(kinds.size(), static_cast<size_t>(kMaxEventsPerTask));
  EXPECT_EQ(kinds.front(), "CREATED@1");
  EXPECT_EQ(kinds.back(), "EXPIRED@1");
  EXPECT_EQ(EventCount(t.id, "FINISHED"), 1);
  EXPECT_EQ(EventCount(t.id, "CLAIMED"), 0) << "the oldest ordinary event made room";
}

TEST_P(TaskTimelineContractTest, ATimelineHoldsOnlyItsOwnTask) {
  Task a = Create("alice", "orders");
  Task b = Create("bob", "orders");
  ASSERT_EQ(*store_->RequestCancel(b.id), TaskState::kCancelled);
  EXPECT_EQ(Kinds(a.id), std::vector<std::string>{"CREATED@1"});
  EXPECT_EQ(Kinds(b.id).size(), 3u);
  EXPECT_TRUE(Timeline(987654321).empty());
}

EC_INSTANTIATE_ON_EVERY_BACKEND(TaskTimelineContractTest);

}  // namespace
}  // namespace export_center::store::contract
