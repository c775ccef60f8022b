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

// Migration 20: the owner's permission snapshot, the schedule as sent and the
// locale round-trip; a refresh changes every subscription of that owner only,
// and is not an edit (the version stays).
TEST_P(SubscriptionLedgerContractTest, TheOwnersPermissionSnapshotIsKeptAndRefreshed) {
  NewSubscription spec = Spec("alice");
  spec.owner_perms = R"(["export:customers"])";
  spec.schedule_json = R"({"preset":"weekly","days":["MON"],"time":"09:00"})";
  spec.locale = "zh-CN";
  ASSERT_OK_AND_ASSIGN(Subscription made, ledger_->CreateSubscription(spec, {}));
  EXPECT_EQ(made.spec.owner_perms, spec.owner_perms);
  EXPECT_EQ(made.spec.schedule_json, spec.schedule_json);
  EXPECT_EQ(made.spec.locale, "zh-CN");
  ASSERT_OK_AND_ASSIGN(Subscription second, ledger_->CreateSubscription(spec, {}));
  NewSubscription bobs = Spec("bob");
  bobs.owner_perms = R"(["export:customers"])";
  ASSERT_OK_AND_ASSIGN(Subscription bob, ledger_->CreateSubscription(bobs, {}));
  NewSubscription other_tenant = Spec("alice", "t2");
  ASSERT_OK_AND_ASSIGN(Subscription elsewhere, ledger_->CreateSubscription(other_tenant, {}));

  ASSERT_OK_AND_ASSIGN(int64_t changed, ledger_->RefreshOwnerPerms("t1", "alice", "[]"));
  EXPECT_EQ(changed, 2);
  ASSERT_OK_AND_ASSIGN(int64_t again, ledger_->RefreshOwnerPerms("t1", "alice", "[]"));
  EXPECT_EQ(again, 0) << "nothing differs any more";
  ASSERT_OK_AND_ASSIGN(Subscription refreshed, ledger_->GetSubscription(second.id));
  EXPECT_EQ(refreshed.spec.owner_perms, "[]");
  EXPECT_EQ(refreshed.version, second.version) << "a refresh is not an edit";
  ASSERT_OK_AND_ASSIGN(Subscription bob_now, ledger_->GetSubscription(bob.id));
  EXPECT_EQ(bob_now.spec.owner_perms, R"(["export:customers"])");
  ASSERT_OK_AND_ASSIGN(Subscription t2_now, ledger_->GetSubscription(elsewhere.id));
  EXPECT_EQ(t2_now.spec.owner_perms, "[]");
  ASSERT_OK(ledger_->RefreshOwnerPerms("t2", "alice", R"(["x"])").status());
  ASSERT_OK_AND_ASSIGN(t2_now, ledger_->GetSubscription(elsewhere.id));
  EXPECT_EQ(t2_now.spec.owner_perms, R"(["x"])");
}

// An edit is optimistic on the version: a stale one is a Conflict and
// changes nothing; an ACTIVE subscription's next slot moves to the new
// schedule's, a PAUSED one keeps none.
TEST_P(SubscriptionLedgerContractTest, AnEditAppliesOnlyOverTheVersionItRead) {
  const int64_t id = Create();
  ASSERT_OK_AND_ASSIGN(Subscription read, ledger_->GetSubscription(id));
  NewSubscription edit = read.spec;
  edit.cron = "30 8 * * *";
  edit.task_name = "Daily customers";
  edit.delivery_json = R"({"emails":["a@example.com"]})";
  edit.first_slot_at = 7 * kHour;
  ASSERT_OK_AND_ASSIGN(Subscription edited, ledger_->UpdateSubscription(id, read.version, edit));
  EXPECT_EQ(edited.version, read.version + 1);
  EXPECT_EQ(edited.spec.cron, "30 8 * * *");
  EXPECT_EQ(edited.spec.task_name, "Daily customers");
  EXPECT_EQ(edited.spec.delivery_json, edit.delivery_json);
  EXPECT_EQ(edited.next_slot_at, 7 * kHour);
  EXPECT_EQ(edited.spec.owner, "alice") << "an edit never changes the owner";

  edit.task_name = "Lost update";
  Status stale = ledger_->UpdateSubscription(id, read.version, edit).status();
  EXPECT_EQ(stale.code(), StatusCode::kConflict);
  EXPECT_NE(stale.message().find("version"), std::string::npos) << stale.message();
  ASSERT_OK_AND_ASSIGN(Subscription unchanged, ledger_->GetSubscription(id));
  EXPECT_EQ(unchanged.spec.task_name, "Daily customers");

  ASSERT_OK(ledger_->PauseSubscription(id, "OWNER", ""));
  ASSERT_OK_AND_ASSIGN(Subscription paused, ledger_->GetSubscription(id));
  ASSERT_OK_AND_ASSIGN(Subscription paused_edit,
                       ledger_->UpdateSubscription(id, paused.version, edit));
  EXPECT_EQ(paused_edit.state, SubscriptionState::kPaused);
  EXPECT_FALSE(paused_edit.next_slot_at.has_value()) << "paused: no next slot";
  EXPECT_EQ(ledger_->UpdateSubscription(424242, 1, edit).status().code(), StatusCode::kNotFound);
}

TEST_P(SubscriptionLedgerContractTest, TheConsoleFindsByTenantAppOwnerAndState) {
  const int64_t a = Create("alice");
  const int64_t b = Create("bob");
  ASSERT_OK(ledger_->CreateSubscription(Spec("carol", "t2"), {}).status());
  ASSERT_OK(ledger_->PauseSubscription(b, "OWNER", ""));
  ASSERT_OK_AND_ASSIGN(auto all, ledger_->FindSubscriptions({}, 0, 10));
  EXPECT_EQ(all.size(), 3u);
  SubscriptionFilter t1;
  t1.tenant_id = "t1";
  t1.app_code = "platform";
  ASSERT_OK_AND_ASSIGN(auto tenant, ledger_->FindSubscriptions(t1, 0, 10));
  EXPECT_EQ(tenant.size(), 2u);
  t1.state = SubscriptionState::kPaused;
  ASSERT_OK_AND_ASSIGN(auto paused, ledger_->FindSubscriptions(t1, 0, 10));
  ASSERT_EQ(paused.size(), 1u);
  EXPECT_EQ(paused[0].id, b);
  ASSERT_OK_AND_ASSIGN(auto page, ledger_->FindSubscriptions({}, a, 1));
  ASSERT_EQ(page.size(), 1u);
  EXPECT_GT(page[0].id, a);
}

// A retried slot finds the task its first try created: the owner's task of
// the type, name and parameters requested since the slot.
TEST_P(SubscriptionLedgerContractTest, ASlotsTaskIsFoundByOwnerTypeNameAndParameters) {
  ASSERT_OK_AND_ASSIGN(Subscription s, ledger_->CreateSubscription(Spec("alice"), {}));
  auto insert = [&](int64_t id, const std::string& by, const std::string& hash, int64_t at) {
    ASSERT_OK(db_->Exec("INSERT INTO export_task (id, tenant_id, app_code, requested_by,"
                        " export_type, task_name, format, parameters_json, params_hash, status,"
                        " next_retry_at, requested_at, updated_at)"
                        " VALUES (?, 't1', 'platform', ?, 'customer_list', 'Weekly customers',"
                        " 'XLSX', '{}', ?, 'PENDING', ?, ?, ?)",
                        {id, by, hash, at, at, at})
                  .status());
  };
  insert(11, "alice", "h1", 5000);
  insert(12, "alice", "h1", 9000);
  insert(13, "bob", "h1", 9500);
  insert(14, "alice", "h2", 9600);
  ASSERT_OK_AND_ASSIGN(auto found, ledger_->FindSlotTask(s, "h1", 8000));
  EXPECT_EQ(found, 12);
  ASSERT_OK_AND_ASSIGN(auto none, ledger_->FindSlotTask(s, "h1", 9100));
  EXPECT_FALSE(none.has_value());
  ASSERT_OK_AND_ASSIGN(auto other, ledger_->FindSlotTask(s, "h2", 0));
  EXPECT_EQ(other, 14);
}

// A run taken over late (its first try died before creating) must not adopt
// the next slot's task, which has the same owner, type, name and parameters:
// only tasks requested before the subscription's next run was fired count.
TEST_P(SubscriptionLedgerContractTest, ALateRetryDoesNotAdoptTheNextSlotsTask) {
  ASSERT_OK_AND_ASSIGN(Subscription s, ledger_->CreateSubscription(Spec("alice"), {}));
  auto run = [&](int64_t slot, const char* outcome, int64_t fired_at) {
    ASSERT_OK(db_->Exec("INSERT INTO export_subscription_run (subscription_id, slot_at, outcome,"
                        " instance, claims, fired_at, updated_at) VALUES (?, ?, ?, 'i', 1, ?, ?)",
                        {s.id, slot, std::string(outcome), fired_at, fired_at})
                  .status());
  };
  auto task = [&](int64_t id, int64_t at) {
    ASSERT_OK(
        db_->Exec("INSERT INTO export_task (id, tenant_id, app_code, requested_by,"
                  " export_type, task_name, format, parameters_json, params_hash, status,"
                  " next_retry_at, requested_at, updated_at)"
                  " VALUES (?, 't1', 'platform', 'alice', 'customer_list', 'Weekly customers',"
                  " 'XLSX', '{}', 'h1', 'PENDING', ?, ?, ?)",
                  {id, at, at, at})
            .status());
  };
  run(8000, "CLAIMED", 8100);    // its instance died before the create
  run(20000, "CREATED", 20500);  // the next slot, fired and created meanwhile
  task(21, 20600);
  ASSERT_OK_AND_ASSIGN(auto for_first, ledger_->FindSlotTask(s, "h1", 8000));
  EXPECT_FALSE(for_first.has_value()) << "adopted task " << *for_first;
  ASSERT_OK_AND_ASSIGN(auto for_next, ledger_->FindSlotTask(s, "h1", 20000));
  EXPECT_EQ(for_next, 21);
  task(22, 9000);  // had the first try created, its task is found
  ASSERT_OK_AND_ASSIGN(auto found, ledger_->FindSlotTask(s, "h1", 8000));
  EXPECT_EQ(found, 22);
}

EC_INSTANTIATE_ON_EVERY_BACKEND(SubscriptionLedgerContractTest);

}  // namespace
}  // namespace export_center::store
