// The subscriptions' duty (subscription/scheduler.h) over the real SQL ledger
// on SQLite, with the round's clock set by the test (the ledger's own
// statements still read the database clock, where every slot here is due):
// exactly once per slot with three instances racing, the latest missed slot
// only, the catch-up window, DST, failures that pause, a lost permission,
// deferrals and their bound, and the take-over of a dead instance's run.

#include "subscription/scheduler.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "store/migrations.h"
#include "store/sql_subscription_ledger.h"
#include "store/sqlite/sqlite_database.h"
#include "store/subscription_ledger_wrapper.h"

namespace export_center::subscription {
namespace {

using store::RunOutcome;
using store::Subscription;
using store::SubscriptionLedger;
using store::SubscriptionRun;

constexpr int64_t kMinute = 60'000;
constexpr int64_t kHour = 60 * kMinute;
constexpr int64_t kDay = 24 * kHour;
// 2026-03-05T00:00:00Z, a Thursday.
constexpr int64_t k2026March5 = 1772668800000;

#define ASSERT_OK(expr)                                    \
  do {                                                     \
    const ::export_center::Status ec_status_ = (expr);     \
    ASSERT_TRUE(ec_status_.ok()) << ec_status_.ToString(); \
  } while (0)

// The SQL ledger with the round's clock set by the test.
class ClockedLedger final : public store::SubscriptionLedgerWrapper {
 public:
  using SubscriptionLedgerWrapper::SubscriptionLedgerWrapper;
  void Set(int64_t now_ms) { now_ms_ = now_ms; }

  StatusOr<int64_t> DatabaseNowMs() override { return now_ms_.load(); }

 private:
  std::atomic<int64_t> now_ms_{0};
};

// Answers each call with the next scripted outcome (the last one repeats) and
// records every (subscription, slot) it was asked to run.
class ScriptedRunner final : public SlotRunner {
 public:
  explicit ScriptedRunner(std::vector<SlotOutcome> script = {Created()})
      : script_(std::move(script)) {}
  static SlotOutcome Created() { return {SlotOutcome::Kind::kCreated, 42, "", ""}; }

  SlotOutcome Run(const Subscription& s, int64_t slot_at) override {
    std::lock_guard lock(mu_);
    calls_.emplace_back(s.id, slot_at);
    const size_t i = std::min(calls_.size() - 1, script_.size() - 1);
    return script_[i];
  }
  std::vector<std::pair<int64_t, int64_t>> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::vector<SlotOutcome> script_;
  std::vector<std::pair<int64_t, int64_t>> calls_;
};

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("ec-scheduler-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    std::filesystem::remove(path_);
    auto db = store::OpenSqliteDatabase(path_.string());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    ASSERT_OK(store::Migrate(*db_));
    ledger_ = std::make_unique<ClockedLedger>(store::NewSqlSubscriptionLedger(db_));
  }
  void TearDown() override {
    ledger_.reset();
    db_.reset();
    std::filesystem::remove(path_);
  }

  // A subscription due at once whose last slot was `last_slot_at` (0: none).
  int64_t Create(const std::string& cron, const std::string& zone = "UTC",
                 int64_t last_slot_at = 0) {
    store::NewSubscription spec;
    spec.tenant_id = "t1";
    spec.app_code = "PLATFORM";
    spec.owner = "alice";
    spec.export_type = "ORDER_LIST";
    spec.format = "XLSX";
    spec.task_name = "Orders";
    spec.parameters_json = "{}";
    spec.cron = cron;
    spec.time_zone = zone;
    spec.first_slot_at = 1;  // long past: due by the database clock
    auto made = ledger_->CreateSubscription(spec, store::SubscriptionCaps{100, 1000});
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    if (made.ok() && last_slot_at != 0) {
      EXPECT_TRUE(db_->Exec("UPDATE export_subscription SET last_slot_at = ? WHERE id = ?",
                            {last_slot_at, made->id})
                      .ok());
    }
    return made.ok() ? made->id : 0;
  }

  // Makes the subscription due again by the database clock (the next slot the
  // scheduler stored lies in the test's past or future; the round's own clock
  // decides which slot fires).
  void MakeDue(int64_t id) {
    ASSERT_OK(
        db_->Exec("UPDATE export_subscription SET next_slot_at = 1 WHERE id = ?", {id}).status());
  }

  // Lets every lease that ends within a few ms end (leases are database-clock).
  void ExpireLeases() {
    ASSERT_OK(db_->Exec("UPDATE export_subscription_run SET lease_until = 1"
                        " WHERE outcome = 'CLAIMED'")
                  .status());
  }

  SchedulerOptions Options(const std::string& instance = "a") {
    SchedulerOptions o;
    o.instance = instance;
    o.catch_up_window_ms = kHour;
    o.max_consecutive_failures = 3;
    o.max_claims = 3;
    return o;
  }

  RoundFigures Round(SubscriptionScheduler& s) {
    auto figures = s.RunRound();
    EXPECT_TRUE(figures.ok()) << figures.status().ToString();
    return figures.ok() ? *figures : RoundFigures{};
  }

  std::vector<SubscriptionRun> Runs(int64_t id) {
    auto runs = ledger_->ListRuns(id, 1000);
    EXPECT_TRUE(runs.ok()) << runs.status().ToString();
    return runs.ok() ? *runs : std::vector<SubscriptionRun>{};
  }

  Subscription Get(int64_t id) {
    auto s = ledger_->GetSubscription(id);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : Subscription{};
  }

  std::filesystem::path path_;
  std::shared_ptr<store::Database> db_;
  std::unique_ptr<ClockedLedger> ledger_;
};

TEST_F(SchedulerTest, ThreeInstancesFireEverySlotExactlyOnce) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 12; ++i) ids.push_back(Create("* * * * *", "UTC", k2026March5 - kMinute));
  ScriptedRunner runner;
  std::vector<std::unique_ptr<SubscriptionScheduler>> fleet;
  for (const char* name : {"a", "b", "c"}) {
    fleet.push_back(std::make_unique<SubscriptionScheduler>(ledger_.get(), &runner, Options(name)));
  }
  constexpr int kSlots = 15;
  for (int k = 0; k < kSlots; ++k) {
    ledger_->Set(k2026March5 + k * kMinute + 7'000);  // 7 s into minute k
    std::vector<std::thread> rounds;
    for (auto& scheduler : fleet) {
      rounds.emplace_back([&, s = scheduler.get()] { (void)s->RunRound(); });
    }
    for (auto& t : rounds) t.join();
    for (int64_t id : ids) MakeDue(id);
  }
  std::map<int64_t, std::set<int64_t>> fired;
  for (auto [id, slot] : runner.calls()) {
    EXPECT_TRUE(fired[id].insert(slot).second)
        << "subscription " << id << " slot " << slot << " ran twice";
  }
  for (int64_t id : ids) {
    ASSERT_EQ(fired[id].size(), static_cast<size_t>(kSlots)) << "subscription " << id;
    int k = 0;
    for (int64_t slot : fired[id]) EXPECT_EQ(slot, k2026March5 + k++ * kMinute);
    std::vector<SubscriptionRun> runs = Runs(id);
    ASSERT_EQ(runs.size(), static_cast<size_t>(kSlots));
    for (const SubscriptionRun& r : runs) {
      EXPECT_EQ(r.outcome, RunOutcome::kCreated);
      EXPECT_EQ(r.task_id, 42);
    }
  }
}

TEST_F(SchedulerTest, AFleetThatWasDownRunsTheLatestMissedSlotOnceNotTheBurst) {
  const int64_t id = Create("*/10 * * * *", "UTC", k2026March5);
  ScriptedRunner runner;
  SubscriptionScheduler scheduler(ledger_.get(), &runner, Options());
  ledger_->Set(k2026March5 + 3 * kHour + 25 * kMinute);  // 20 slots were missed
  RoundFigures figures = Round(scheduler);
  EXPECT_EQ(figures.fired, 1);
  ASSERT_EQ(runner.calls().size(), 1u);
  EXPECT_EQ(runner.calls()[0].second, k2026March5 + 3 * kHour + 20 * kMinute) << "the latest";
  EXPECT_EQ(Get(id).next_slot_at, k2026March5 + 3 * kHour + 30 * kMinute);
  EXPECT_EQ(Round(scheduler).fired, 0) << "not due again before its next slot";
}

TEST_F(SchedulerTest, ASlotMissedOutsideTheCatchUpWindowIsRecordedSkippedNotRunLate) {
  const int64_t id = Create("0 9 * * *", "UTC", k2026March5 - kDay + 9 * kHour);
  ScriptedRunner runner;
  SubscriptionScheduler scheduler(ledger_.get(), &runner, Options());
  ledger_->Set(k2026March5 + 11 * kHour);  // 09:00 was two hours ago; the window is one
  RoundFigures figures = Round(scheduler);
  EXPECT_EQ(figures.fired, 0);
  EXPECT_EQ(figures.skipped, 1);
  EXPECT_TRUE(runner.calls().empty());
  std::vector<SubscriptionRun> runs = Runs(id);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].outcome, RunOutcome::kSkipped);
  EXPECT_EQ(runs[0].slot_at, k2026March5 + 9 * kHour);
  EXPECT_EQ(runs[0].detail, "missed by 120 min, outside the catch-up window of 60 min");
  EXPECT_EQ(Get(id).next_slot_at, k2026March5 + kDay + 9 * kHour) << "tomorrow's slot stands";
}

TEST_F(SchedulerTest, ADailyNineOClockInNewYorkFiresAtNineLocalAcrossTheSpringChange) {
  // 2026-03-08: clocks go from 02:00 EST to 03:00 EDT.
  const int64_t id = Create("0 9 * * *", "America/New_York", k2026March5);
  ScriptedRunner runner;
  SchedulerOptions options = Options();
  options.catch_up_window_ms = 3 * kHour;  // 14:30 UTC is 90 min after 09:00 EDT
  SubscriptionScheduler scheduler(ledger_.get(), &runner, options);
  for (int day = 0; day < 6; ++day) {
    ledger_->Set(k2026March5 + day * kDay + 14 * kHour + 30 * kMinute);  // 14:30 UTC
    Round(scheduler);
    MakeDue(id);
  }
  std::vector<int64_t> utc_hours;
  for (auto [sub, slot] : runner.calls()) utc_hours.push_back((slot % kDay) / kHour);
  // March 5, 6, 7 at 09:00 EST (14:00 UTC); March 8, 9, 10 at 09:00 EDT (13:00 UTC).
  EXPECT_EQ(utc_hours, (std::vector<int64_t>{14, 14, 14, 13, 13, 13}));
}

TEST_F(SchedulerTest, FailuresInARowPauseTheSubscriptionOnceAndACreatedRunResetsThem) {
  const SlotOutcome failed{SlotOutcome::Kind::kFailed, std::nullopt, "provider said no", ""};
  const int64_t id = Create("* * * * *", "UTC", k2026March5 - kMinute);
  ScriptedRunner runner({failed, failed, ScriptedRunner::Created(), failed, failed, failed});
  SubscriptionScheduler scheduler(ledger_.get(), &runner, Options());
  int paused = 0;
  for (int k = 0; k < 8; ++k) {
    ledger_->Set(k2026March5 + k * kMinute);
    paused += Round(scheduler).paused;
    if (Get(id).state == store::SubscriptionState::kActive) MakeDue(id);
  }
  EXPECT_EQ(paused, 1) << "paused once, not every round";
  EXPECT_EQ(runner.calls().size(), 6u) << "nothing runs once paused";
  Subscription s = Get(id);
  EXPECT_EQ(s.state, store::SubscriptionState::kPaused);
  EXPECT_EQ(s.pause_reason, "FAILURES");
  EXPECT_EQ(s.pause_detail, "3 runs in a row failed; the last: provider said no");
  EXPECT_EQ(s.next_slot_at, std::nullopt);
}

TEST_F(SchedulerTest, ALostPermissionPausesWithItsReasonInsteadOfFailingEveryRun) {
  const int64_t id = Create("* * * * *", "UTC", k2026March5 - kMinute);
  ScriptedRunner runner(
      {{SlotOutcome::Kind::kPause, std::nullopt,
        "exporting ORDER_LIST requires permission order:export", "PERMISSION_LOST"}});
  SubscriptionScheduler scheduler(ledger_.get(), &runner, Options());
  ledger_->Set(k2026March5);
  EXPECT_EQ(Round(scheduler).paused, 1);
  Subscription s = Get(id);
  EXPECT_EQ(s.state, store::SubscriptionState::kPaused);
  EXPECT_EQ(s.pause_reason, "PERMISSION_LOST");
  std::vector<SubscriptionRun> runs = Runs(id);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].outcome, RunOutcome::kSkipped);
  EXPECT_EQ(runs[0].detail, "exporting ORDER_LIST requires permission order:export");
}

TEST_F(SchedulerTest, ADeferredRunIsTriedAgainLaterAndCreatesItsTask) {
  const int64_t id = Create("* * * * *", "UTC", k2026March5 - kMinute);
  const SlotOutcome full{SlotOutcome::Kind::kDeferred, std::nullopt, "3 exports already active",
                         ""};
  ScriptedRunner runner({full, ScriptedRunner::Created()});
  SubscriptionScheduler scheduler(ledger_.get(), &runner, Options());
  ledger_->Set(k2026March5);
  EXPECT_EQ(Round(scheduler).deferred, 1);
  std::vector<SubscriptionRun> runs = Runs(id);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].outcome, RunOutcome::kClaimed) << "held, not finished";
  EXPECT_EQ(runs[0].detail, "3 exports already active");
  EXPECT_EQ(Round(scheduler).fired, 0) << "not before its deferral ends";
  ExpireLeases();
  RoundFigures figures = Round(scheduler);
  EXPECT_EQ(figures.taken_over, 1);
  EXPECT_EQ(figures.created, 1);
  runs = Runs(id);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].outcome, RunOutcome::kCreated);
  EXPECT_EQ(runs[0].claims, 2);
  EXPECT_EQ(runner.calls()[0], runner.calls()[1]) << "the same slot, tried again";
}

TEST_F(SchedulerTest, DeferralsAreBoundedAndTheRunEndsRecordedDeferred) {
  const int64_t id = Create("* * * * *", "UTC", k2026March5 - kMinute);
  ScriptedRunner runner(
      {{SlotOutcome::Kind::kDeferred, std::nullopt, "3 exports already active", ""}});
  SubscriptionScheduler scheduler(ledger_.get(), &runner, Options());  // max_claims 3
  ledger_->Set(k2026March5);
  int gave_up = 0;
  for (int k = 0; k < 6; ++k) {
    gave_up += Round(scheduler).gave_up;
    ExpireLeases();
  }
  EXPECT_EQ(gave_up, 1);
  EXPECT_EQ(runner.calls().size(), 3u);
  std::vector<SubscriptionRun> runs = Runs(id);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].outcome, RunOutcome::kDeferred);
  EXPECT_EQ(runs[0].detail, "given up after 3 tries; the last: 3 exports already active");
  EXPECT_EQ(Get(id).state, store::SubscriptionState::kActive) << "the next slot still fires";
}

TEST_F(SchedulerTest, ARunADeadInstanceHeldIsTakenOverOnceItsLeaseEnds) {
  const int64_t id = Create("* * * * *", "UTC", k2026March5 - kMinute);
  auto claimed = ledger_->ClaimSlot(id, k2026March5, k2026March5 + kMinute, "dead", 60'000,
                                    RunOutcome::kClaimed, "");
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  ScriptedRunner runner;
  SubscriptionScheduler a(ledger_.get(), &runner, Options("a"));
  SubscriptionScheduler b(ledger_.get(), &runner, Options("b"));
  ledger_->Set(k2026March5 + 10'000);
  EXPECT_EQ(Round(a).fired, 0) << "the lease still stands";
  ExpireLeases();
  std::thread other([&] { (void)b.RunRound(); });
  Round(a);
  other.join();
  ASSERT_EQ(runner.calls().size(), 1u) << "one taker";
  std::vector<SubscriptionRun> runs = Runs(id);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].outcome, RunOutcome::kCreated);
  EXPECT_EQ(runs[0].claims, 2);
  EXPECT_NE(runs[0].instance, "dead");
}

}  // namespace
}  // namespace export_center::subscription
