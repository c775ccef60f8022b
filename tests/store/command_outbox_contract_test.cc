// The CommandOutbox role of the TaskStore contract (command_outbox.h) on
// every backend: the publisher's claim, mark and back-off, and the age of the
// oldest due row.

#include <gtest/gtest.h>

#include "task_store_fixture.h"  // beside this file

namespace export_center::store::contract {
namespace {

// ---- outbox publisher (docs/dispatch.md#the-outbox-row) --------------------------

TEST_P(TaskStoreContractTest, PublisherClaimsADueRowOnce) {
  Task t = Create();
  int64_t id = Outbox(t.id)[0].id;
  std::vector<int64_t> due = *store_->SelectDueOutbox(50);
  ASSERT_EQ(due, std::vector<int64_t>{id});
  ASSERT_OK_AND_ASSIGN(std::optional<OutboxEntry> e, store_->ClaimOutbox(id, "p1", 60));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->status, OutboxStatus::kClaimed);
  EXPECT_EQ(e->attempt_count, 1);
  EXPECT_EQ(e->lease_owner, "p1");
  EXPECT_GE(*e->lease_until, Now() + 59 * kSecond);
  EXPECT_FALSE(store_->ClaimOutbox(id, "p2", 60)->has_value());
  EXPECT_TRUE(store_->SelectDueOutbox(50)->empty());
  EXPECT_EQ(*store_->MarkOutboxSent(id, "p2"), store::MarkOutcome::kClaimLost);
  EXPECT_EQ(*store_->MarkOutboxSent(id, "p1"), store::MarkOutcome::kMarked);
  OutboxEntry sent = Outbox(t.id)[0];
  EXPECT_EQ(sent.status, OutboxStatus::kSent);
  EXPECT_TRUE(sent.sent_at.has_value());
  EXPECT_FALSE(sent.lease_owner.has_value());
}

TEST_P(TaskStoreContractTest, PublisherFailureBacksOffAndKeepsTheRow) {
  Task t = Create();
  int64_t id = Outbox(t.id)[0].id;
  ASSERT_TRUE(store_->ClaimOutbox(id, "p1", 60)->has_value());
  int64_t before = Now();
  ASSERT_EQ(*store_->MarkOutboxFailed(id, "p1", "broker down", 5 * kSecond),
            store::MarkOutcome::kMarked);
  OutboxEntry e = Outbox(t.id)[0];
  EXPECT_EQ(e.status, OutboxStatus::kPending);
  EXPECT_EQ(e.last_error, "broker down");
  EXPECT_GE(e.next_retry_at, before + 5 * kSecond);
  EXPECT_TRUE(store_->SelectDueOutbox(50)->empty());
  Shift("export_outbox", "next_retry_at", -5 * kSecond, t.id);
  EXPECT_EQ(store_->SelectDueOutbox(50)->size(), 1u);
  ASSERT_OK_AND_ASSIGN(std::optional<OutboxEntry> again, store_->ClaimOutbox(id, "p2", 60));
  EXPECT_EQ(again->attempt_count, 2);
}

TEST_P(TaskStoreContractTest, TwoPublishersClaimingOneRowAtOnceHaveOneWinner) {
  for (int round = 0; round < 10; ++round) {
    Task t = Create(MakeTask("user" + std::to_string(round), "orders"), Unlimited());
    const int64_t row = Outbox(t.id)[0].id;
    std::atomic<int> ready{0};
    std::atomic<int> winners{0};
    auto claim = [&](const std::string& instance) {
      ++ready;
      while (ready.load() < 2) std::this_thread::yield();  // start together
      for (int attempt = 0; attempt < 50; ++attempt) {
        auto won = store_->ClaimOutbox(row, instance, 60);
        if (!won.ok() && won.status().IsTransient()) continue;
        ASSERT_TRUE(won.ok()) << won.status().ToString();
        if (won->has_value()) ++winners;
        break;
      }
    };
    std::thread a(claim, "p1");
    std::thread b(claim, "p2");
    a.join();
    b.join();
    EXPECT_EQ(winners.load(), 1) << "round " << round;
    EXPECT_EQ(Outbox(t.id)[0].attempt_count, 1) << "round " << round;
  }
}

// outbox_oldest_age measures the oldest DUE row (docs/observability.md#metrics).
TEST_P(TaskStoreContractTest, OutboxAgeCountsFromWhenARowBecameDue) {
  Task waiting = Create("alice");
  // Created long ago, but its back-off has ten minutes to run: not late.
  Shift("export_outbox", "created_at", -3600 * kSecond, waiting.id);
  Shift("export_outbox", "next_retry_at", 600 * kSecond, waiting.id);
  Shift("export_outbox", "due_since", 600 * kSecond, waiting.id);
  Task resent = Create("bob");
  // Created long ago and re-sent just now by the reconciler: not late either.
  Shift("export_outbox", "created_at", -3600 * kSecond, resent.id);
  ASSERT_OK_AND_ASSIGN(TaskStore::Gauges fresh, store_->ReadGauges());
  EXPECT_EQ(fresh.outbox_pending, 2);
  EXPECT_LT(fresh.outbox_oldest_age_seconds, 60);
  Shift("export_outbox", "next_retry_at", -200 * kSecond, resent.id);
  Shift("export_outbox", "due_since", -200 * kSecond, resent.id);
  ASSERT_OK_AND_ASSIGN(TaskStore::Gauges late, store_->ReadGauges());
  EXPECT_GE(late.outbox_oldest_age_seconds, 200);
  EXPECT_LT(late.outbox_oldest_age_seconds, 300);
}

// docs/observability.md#alerts: a failed send moves next_retry_at on, not the time the
// row first became due, so the outbox age keeps growing while the channel
// is down (the ExportOutboxOldestAge alert can fire). A re-send of a
// delivered row and a hand-back start the age afresh.
TEST_P(TaskStoreContractTest, AFailedSendDoesNotResetTheOutboxAge) {
  Task t = Create("alice");
  const int64_t id = Outbox(t.id)[0].id;
  // Due for 300 s, every send failing.
  Shift("export_outbox", "next_retry_at", -300 * kSecond, t.id);
  Shift("export_outbox", "due_since", -300 * kSecond, t.id);
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(std::optional<OutboxEntry> claimed, store_->ClaimOutbox(id, "p", 60));
    ASSERT_TRUE(claimed.has_value());
    ASSERT_OK_AND_ASSIGN(store::MarkOutcome failed,
                         store_->MarkOutboxFailed(id, "p", "broker down", 0));
    ASSERT_EQ(failed, store::MarkOutcome::kMarked);
  }
  ASSERT_OK_AND_ASSIGN(std::optional<OutboxEntry> claimed, store_->ClaimOutbox(id, "p", 60));
  ASSERT_TRUE(claimed.has_value());
  // The last failure backs off for a minute: the row is still late.
  ASSERT_OK_AND_ASSIGN(store::MarkOutcome failed,
                       store_->MarkOutboxFailed(id, "p", "broker down", 60000));
  ASSERT_EQ(failed, store::MarkOutcome::kMarked);
  ASSERT_OK_AND_ASSIGN(TaskStore::Gauges down, store_->ReadGauges());
  EXPECT_GE(down.outbox_oldest_age_seconds, 300);
  EXPECT_LT(down.outbox_oldest_age_seconds, 400);
  EXPECT_EQ(down.outbox_max_attempt, 4);

  // Delivered at last, then re-sent by the reconciler (case B): due afresh.
  Shift("export_outbox", "next_retry_at", -61 * kSecond, t.id);
  ASSERT_TRUE(store_->ClaimOutbox(id, "p", 60)->has_value());
  ASSERT_EQ(*store_->MarkOutboxSent(id, "p"), store::MarkOutcome::kMarked);
  Shift("export_outbox", "sent_at", -600 * kSecond, t.id);
  ASSERT_OK_AND_ASSIGN(int resent, store_->ResendStaleSentOutbox(300, 0, 10));
  ASSERT_EQ(resent, 1);
  ASSERT_OK_AND_ASSIGN(TaskStore::Gauges again, store_->ReadGauges());
  EXPECT_LT(again.outbox_oldest_age_seconds, 60);
}

}  // namespace
}  // namespace export_center::store::contract
