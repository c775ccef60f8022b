// The SubscriptionLedger contract (subscription_ledger.h) on every backend:
// SQLite, and the real PostgreSQL and MariaDB servers the store's contract
// binary starts once (store_backends.h, task_store_contract_main.cc). Clocks move by rewriting
// stored timestamps, never by sleeping.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/utf8.h"
#include "store/migrations.h"
#include "store/sql_subscription_ledger.h"
#include "store/subscription_ledger.h"
#include "store_backends.h"  // beside this file

namespace export_center::store {
namespace {

constexpr int64_t kHour = 3600 * 1000;

class SubscriptionLedgerContractTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_OK(Migrate(*db_));
    ledger_ = NewSqlSubscriptionLedger(db_);
  }

  static NewSubscription Spec(const std::string& owner, const std::string& tenant = "t1") {
    NewSubscription spec;
    spec.tenant_id = tenant;
    spec.app_code = "platform";
    spec.owner = owner;
    spec.export_type = "customer_list";
    spec.format = "XLSX";
    spec.task_name = "Weekly customers";
    spec.parameters_json = R"({"from":{"relative":"last-week","bound":"start"}})";
    spec.cron = "0 9 * * MON";
    spec.time_zone = "Asia/Shanghai";
    spec.delivery_json = R"({"skipIfEmpty":true})";
    spec.first_slot_at = 1;  // long past: due at once
    return spec;
  }

  int64_t Create(const std::string& owner = "alice") {
    auto created = ledger_->CreateSubscription(Spec(owner), SubscriptionCaps{});
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? created->id : 0;
  }

  // Makes the subscription's next slot due now (the database clock).
  void MakeDue(int64_t id) {
    ASSERT_OK(
        db_->Exec("UPDATE export_subscription SET next_slot_at = 1 WHERE id = ?", {id}).status());
  }

  void TearDown() override {
    ledger_.reset();
    BackendTest::TearDown();
  }

  std::unique_ptr<SubscriptionLedger> ledger_;
};

TEST_P(SubscriptionLedgerContractTest, CreatesListsAndDeletesWithinCaps) {
  NewSubscription spec = Spec("alice");
  ASSERT_OK_AND_ASSIGN(Subscription made, ledger_->CreateSubscription(spec, {2, 3}));
  EXPECT_GT(made.id, 0);
  EXPECT_EQ(made.spec.parameters_json, spec.parameters_json);
  EXPECT_EQ(made.spec.cron, "0 9 * * MON");
  EXPECT_EQ(made.spec.time_zone, "Asia/Shanghai");
  EXPECT_EQ(made.spec.delivery_json, spec.delivery_json);
  EXPECT_EQ(made.state, SubscriptionState::kActive);
  EXPECT_EQ(made.next_slot_at, 1);
  EXPECT_FALSE(made.last_slot_at.has_value());
  ASSERT_OK(ledger_->CreateSubscription(Spec("alice"), {2, 3}).status());
  Status owner_cap = ledger_->CreateSubscription(Spec("alice"), {2, 3}).status();
  EXPECT_EQ(owner_cap.code(), StatusCode::kLimitExceeded);
  EXPECT_NE(owner_cap.message().find("the owner already has 2"), std::string::npos);
  ASSERT_OK(ledger_->CreateSubscription(Spec("bob"), {2, 3}).status());
  Status tenant_cap = ledger_->CreateSubscription(Spec("carol"), {2, 3}).status();
  EXPECT_EQ(tenant_cap.code(), StatusCode::kLimitExceeded);
  // Another tenant has caps of its own.
  ASSERT_OK(ledger_->CreateSubscription(Spec("carol", "t2"), {2, 3}).status());

  ASSERT_OK_AND_ASSIGN(auto alices, ledger_->ListSubscriptions("t1", std::string("alice"), 0, 10));
  EXPECT_EQ(alices.size(), 2u);
  ASSERT_OK_AND_ASSIGN(auto tenant, ledger_->ListSubscriptions("t1", std::nullopt, 0, 10));
  EXPECT_EQ(tenant.size(), 3u);
  ASSERT_OK_AND_ASSIGN(auto after_first,
                       ledger_->ListSubscriptions("t1", std::nullopt, tenant[0].id, 10));
  EXPECT_EQ(after_first.size(), 2u);

  ASSERT_OK(ledger_->DeleteSubscription(made.id));
  EXPECT_EQ(ledger_->GetSubscription(made.id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ledger_->DeleteSubscription(made.id).code(), StatusCode::kNotFound);
}

TEST_P(SubscriptionLedgerContractTest, ASlotIsClaimedOnceAndNeverAnEarlierOne) {
  int64_t id = Create();
  ASSERT_OK_AND_ASSIGN(auto due, ledger_->SelectDueSubscriptions(10));
  ASSERT_EQ(due, std::vector<int64_t>{id});
  ASSERT_OK_AND_ASSIGN(auto first, ledger_->ClaimSlot(id, 1000, 5 * kHour, "a", 60000));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->outcome, RunOutcome::kClaimed);
  EXPECT_EQ(first->instance, "a");
  EXPECT_TRUE(first->lease_until.has_value());
  ASSERT_OK_AND_ASSIGN(auto again, ledger_->ClaimSlot(id, 1000, 5 * kHour, "b", 60000));
  EXPECT_FALSE(again.has_value());
  ASSERT_OK_AND_ASSIGN(auto earlier, ledger_->ClaimSlot(id, 999, 5 * kHour, "b", 60000));
  EXPECT_FALSE(earlier.has_value());
  ASSERT_OK_AND_ASSIGN(Subscription after, ledger_->GetSubscription(id));
  EXPECT_EQ(after.last_slot_at, 1000);
  EXPECT_EQ(after.next_slot_at, 5 * kHour);
  // next_slot_at (5 h after the epoch) is long past by the database clock: due again.
  ASSERT_OK_AND_ASSIGN(auto later, ledger_->ClaimSlot(id, 2000, std::nullopt, "b", 60000));
  ASSERT_TRUE(later.has_value());
  ASSERT_OK_AND_ASSIGN(Subscription done, ledger_->GetSubscription(id));
  EXPECT_FALSE(done.next_slot_at.has_value());
  ASSERT_OK_AND_ASSIGN(auto none_due, ledger_->SelectDueSubscriptions(10));
  EXPECT_TRUE(none_due.empty());
}

// Three instances race for each of many slots, as a fleet does: every slot is
// fired exactly once, none is skipped.
TEST_P(SubscriptionLedgerContractTest, AFleetFiresEverySlotExactlyOnce) {
  int64_t id = Create();
  const int kSlots = GetParam() == "sqlite" ? 40 : 25;
  std::vector<std::unique_ptr<SubscriptionLedger>> fleet;
  for (int i = 0; i < 3; ++i) fleet.push_back(NewSqlSubscriptionLedger(db_));
  std::atomic<int> errors{0};
  for (int slot = 1; slot <= kSlots; ++slot) {
    MakeDue(id);
    std::atomic<int> wins{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i) {
      threads.emplace_back([&, i] {
        auto due = fleet[i]->SelectDueSubscriptions(10);
        if (!due.ok()) {
          ++errors;
          return;
        }
        for (int64_t due_id : *due) {
          auto claimed = fleet[i]->ClaimSlot(due_id, slot * kHour, 1000 * kHour,
                                             "instance-" + std::to_string(i), 60000);
          if (!claimed.ok()) {
            ++errors;
          } else if (claimed->has_value()) {
            ++wins;
          }
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(wins.load(), 1) << "slot " << slot;
  }
  EXPECT_EQ(errors.load(), 0);
  ASSERT_OK_AND_ASSIGN(auto runs, ledger_->ListRuns(id, 1000));
  ASSERT_EQ(runs.size(), static_cast<size_t>(kSlots));
  std::set<int64_t> slots;
  for (const SubscriptionRun& run : runs) slots.insert(run.slot_at);
  EXPECT_EQ(slots.size(), static_cast<size_t>(kSlots));
  EXPECT_EQ(*slots.begin(), kHour);
  EXPECT_EQ(*slots.rbegin(), kSlots * kHour);
}

TEST_P(SubscriptionLedgerContractTest, FinishingCountsFailuresAndAnExpiredClaimMovesOn) {
  int64_t id = Create();
  ASSERT_OK(ledger_->ClaimSlot(id, 1000, 10, "a", 60000).status());
  ASSERT_OK_AND_ASSIGN(
      auto failed, ledger_->FinishRun(id, 1000, "a", RunOutcome::kFailed, std::nullopt, "boom"));
  EXPECT_EQ(failed.mark, MarkOutcome::kMarked);
  EXPECT_EQ(failed.consecutive_failures, 1);
  ASSERT_OK(ledger_->ClaimSlot(id, 2000, 10, "a", 60000).status());
  ASSERT_OK_AND_ASSIGN(
      auto twice, ledger_->FinishRun(id, 2000, "a", RunOutcome::kFailed, std::nullopt, "boom"));
  EXPECT_EQ(twice.consecutive_failures, 2);
  // Finishing twice, or as another instance, changes nothing.
  ASSERT_OK_AND_ASSIGN(auto late, ledger_->FinishRun(id, 2000, "a", RunOutcome::kCreated, 77, ""));
  EXPECT_EQ(late.mark, MarkOutcome::kClaimLost);

  // Instance a dies running slot 3000; b takes it over once its lease is out.
  ASSERT_OK(ledger_->ClaimSlot(id, 3000, 10, "a", 60000).status());
  ASSERT_OK_AND_ASSIGN(auto none_expired, ledger_->SelectExpiredRuns(10));
  EXPECT_TRUE(none_expired.empty());
  ASSERT_OK(db_->Exec("UPDATE export_subscription_run SET lease_until = lease_until - 120000"
                      " WHERE slot_at = 3000")
                .status());
  ASSERT_OK_AND_ASSIGN(auto expired, ledger_->SelectExpiredRuns(10));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].slot_at, 3000);
  ASSERT_OK_AND_ASSIGN(auto taken, ledger_->ReclaimExpiredRun(id, 3000, "b", 60000));
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->instance, "b");
  EXPECT_EQ(taken->claims, 2);
  ASSERT_OK_AND_ASSIGN(auto twice_taken, ledger_->ReclaimExpiredRun(id, 3000, "c", 60000));
  EXPECT_FALSE(twice_taken.has_value());
  ASSERT_OK_AND_ASSIGN(auto dead_finish,
                       ledger_->FinishRun(id, 3000, "a", RunOutcome::kCreated, 41, ""));
  EXPECT_EQ(dead_finish.mark, MarkOutcome::kClaimLost);
  ASSERT_OK_AND_ASSIGN(auto created,
                       ledger_->FinishRun(id, 3000, "b", RunOutcome::kCreated, 42, ""));
  EXPECT_EQ(created.mark, MarkOutcome::kMarked);
  EXPECT_EQ(created.consecutive_failures, 0);  // a created run resets the count

  ASSERT_OK_AND_ASSIGN(auto runs, ledger_->ListRuns(id, 10));
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].slot_at, 3000);  // newest first
  EXPECT_EQ(runs[0].outcome, RunOutcome::kCreated);
  EXPECT_EQ(runs[0].task_id, 42);
  EXPECT_FALSE(runs[0].lease_until.has_value());
  EXPECT_EQ(runs[2].outcome, RunOutcome::kFailed);
  EXPECT_EQ(runs[2].detail, "boom");
}

TEST_P(SubscriptionLedgerContractTest, PausedSubscriptionsAreNotDueAndResumeFromTheNextSlot) {
  int64_t id = Create();
  ASSERT_OK(ledger_->PauseSubscription(id, "PERMISSION_LOST", "owner lost export:customer_list"));
  EXPECT_EQ(ledger_->PauseSubscription(id, "OWNER", "").code(), StatusCode::kConflict);
  ASSERT_OK_AND_ASSIGN(Subscription paused, ledger_->GetSubscription(id));
  EXPECT_EQ(paused.state, SubscriptionState::kPaused);
  EXPECT_EQ(paused.pause_reason, "PERMISSION_LOST");
  EXPECT_FALSE(paused.next_slot_at.has_value());
  ASSERT_OK_AND_ASSIGN(auto due, ledger_->SelectDueSubscriptions(10));
  EXPECT_TRUE(due.empty());
  ASSERT_OK_AND_ASSIGN(auto claim, ledger_->ClaimSlot(id, 1000, 10, "a", 60000));
  EXPECT_FALSE(claim.has_value());

  ASSERT_OK(ledger_->ResumeSubscription(id, 5));
  EXPECT_EQ(ledger_->ResumeSubscription(id, 5).code(), StatusCode::kConflict);
  ASSERT_OK_AND_ASSIGN(Subscription resumed, ledger_->GetSubscription(id));
  EXPECT_EQ(resumed.state, SubscriptionState::kActive);
  EXPECT_FALSE(resumed.pause_reason.has_value());
  EXPECT_EQ(resumed.next_slot_at, 5);
  EXPECT_EQ(resumed.consecutive_failures, 0);
  ASSERT_OK_AND_ASSIGN(auto due_again, ledger_->SelectDueSubscriptions(10));
  EXPECT_EQ(due_again, std::vector<int64_t>{id});
  EXPECT_EQ(ledger_->PauseSubscription(424242, "OWNER", "").code(), StatusCode::kNotFound);
}

// A detail is outside text: one over the bound is cut on a character boundary (a
// byte cut would split "验" and PostgreSQL and MariaDB would refuse the row).
TEST_P(SubscriptionLedgerContractTest, ALongDetailIsCutOnACharacterBoundary) {
  int64_t id = Create();
  std::string detail = "x";
  for (int i = 0; i < 1000; ++i) detail += "验";  // 1 + 3 000 bytes
  ASSERT_OK(ledger_->PauseSubscription(id, "FAILURES", detail));
  ASSERT_OK_AND_ASSIGN(Subscription paused, ledger_->GetSubscription(id));
  ASSERT_TRUE(paused.pause_detail.has_value());
  EXPECT_LE(paused.pause_detail->size(), 2000u);
  EXPECT_GT(paused.pause_detail->size(), 1900u);
  EXPECT_TRUE(utf8::IsValid(*paused.pause_detail));
}

TEST_P(SubscriptionLedgerContractTest, AMissedSlotIsRecordedSkippedAndOldRunsArePruned) {
  int64_t id = Create();
  ASSERT_OK_AND_ASSIGN(auto skipped,
                       ledger_->ClaimSlot(id, 1000, 10, "a", 60000, RunOutcome::kSkipped,
                                          "missed: outside the catch-up window"));
  ASSERT_TRUE(skipped.has_value());
  EXPECT_EQ(skipped->outcome, RunOutcome::kSkipped);
  EXPECT_FALSE(skipped->lease_until.has_value());
  ASSERT_OK_AND_ASSIGN(auto expired, ledger_->SelectExpiredRuns(10));
  EXPECT_TRUE(expired.empty());
  ASSERT_OK(ledger_->ClaimSlot(id, 2000, 10, "a", 60000).status());  // still running
  ASSERT_OK(db_->Exec("UPDATE export_subscription_run SET fired_at = 5").status());
  ASSERT_OK_AND_ASSIGN(int64_t pruned, ledger_->PruneRuns(100, 10));
  EXPECT_EQ(pruned, 1);  // the skipped run; the running one stays
  ASSERT_OK_AND_ASSIGN(auto runs, ledger_->ListRuns(id, 10));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].slot_at, 2000);
}

TEST_P(SubscriptionLedgerContractTest, ADeferredRunStaysClaimedUntilItsNewLeaseEnds) {
  const int64_t id = Create();
  ASSERT_OK_AND_ASSIGN(auto run, ledger_->ClaimSlot(id, 1000, 2000, "a", 60000));
  ASSERT_TRUE(run.has_value());
  ASSERT_OK_AND_ASSIGN(MarkOutcome lost, ledger_->DeferRun(id, 1000, "b", 0, "not b's"));
  EXPECT_EQ(lost, MarkOutcome::kClaimLost);
  ASSERT_OK_AND_ASSIGN(MarkOutcome deferred,
                       ledger_->DeferRun(id, 1000, "a", 3'600'000, "3 exports already active"));
  EXPECT_EQ(deferred, MarkOutcome::kMarked);
  ASSERT_OK_AND_ASSIGN(auto runs, ledger_->ListRuns(id, 10));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].outcome, RunOutcome::kClaimed);
  EXPECT_EQ(runs[0].detail, "3 exports already active");
  ASSERT_OK_AND_ASSIGN(int64_t now, ledger_->DatabaseNowMs());
  ASSERT_TRUE(runs[0].lease_until.has_value());
  EXPECT_GE(*runs[0].lease_until, now + 3'500'000) << "an hour from the database's now";
  ASSERT_OK_AND_ASSIGN(auto expired, ledger_->SelectExpiredRuns(10));
  EXPECT_TRUE(expired.empty()) << "not offered before its new lease ends";
  ASSERT_OK(db_->Exec("UPDATE export_subscription_run SET lease_until = 1").status());
  ASSERT_OK_AND_ASSIGN(auto taken, ledger_->ReclaimExpiredRun(id, 1000, "b", 60000));
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->claims, 2) << "the deferral counts as a claim";
  EXPECT_EQ(taken->detail, "3 exports already active");
}

TEST_P(SubscriptionLedgerContractTest, TheClockIsTheDatabasesInEpochMilliseconds) {
  const int64_t before = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  ASSERT_OK_AND_ASSIGN(int64_t now, ledger_->DatabaseNowMs());
  // The servers run on this machine: their clock is ours, give or take.
  EXPECT_NEAR(static_cast<double>(now), static_cast<double>(before), 60'000.0);
}

EC_INSTANTIATE_ON_EVERY_BACKEND(SubscriptionLedgerContractTest);

}  // namespace
}  // namespace export_center::store
