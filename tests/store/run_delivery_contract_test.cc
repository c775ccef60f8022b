// The RunDeliveryLedger contract (run_delivery.h) on every backend: SQLite,
// and the real PostgreSQL and MariaDB servers the store's contract binary
// starts once (store_backends.h). The grace period passes by rewriting the
// stored time, never by sleeping.

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "store/migrations.h"
#include "store/run_delivery.h"
#include "store/sql_run_delivery.h"
#include "store/sql_subscription_ledger.h"
#include "store/subscription_ledger.h"
#include "store_backends.h"  // beside this file

namespace export_center::store {
namespace {

constexpr int64_t kHour = 3600 * 1000;

class RunDeliveryContractTest : public BackendTest {
 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_OK(Migrate(*db_));
    ledger_ = NewSqlSubscriptionLedger(db_);
    runs_ = NewSqlRunDeliveryLedger(db_);
  }

  int64_t Subscribe(const std::string& delivery = R"({"emails":["bob@example.com"]})") {
    NewSubscription spec;
    spec.tenant_id = "t1";
    spec.app_code = "PLATFORM";
    spec.owner = "alice";
    spec.export_type = "CUSTOMER_LIST";
    spec.format = "XLSX";
    spec.task_name = "Weekly customers";
    spec.parameters_json = "{}";
    spec.cron = "0 9 * * MON";
    spec.time_zone = "Asia/Shanghai";
    spec.delivery_json = delivery;
    spec.first_slot_at = 1;
    auto made = ledger_->CreateSubscription(spec, SubscriptionCaps{});
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return made.ok() ? made->id : 0;
  }

  // A task row in `status` (only the columns the join reads matter).
  int64_t Task(const std::string& status) {
    static std::atomic<int64_t> next{9000};
    const int64_t id = ++next;
    Status made = db_->Exec(
                         "INSERT INTO export_task (id, tenant_id, app_code, requested_by,"
                         " export_type, task_name, format, parameters_json, params_hash, status,"
                         " next_retry_at, requested_at, updated_at)"
                         " VALUES (?, 't1', 'PLATFORM', 'alice', 'CUSTOMER_LIST', 'n', 'XLSX',"
                         " '{}', ?, ?, 0, 0, 0)",
                         {id, "h" + std::to_string(id), status})
                      .status();
    EXPECT_TRUE(made.ok()) << made.ToString();
    return id;
  }

  // A finished run of `id` at `slot` as the scheduler records it.
  void Run(int64_t id, int64_t slot, RunOutcome outcome, std::optional<int64_t> task_id) {
    ASSERT_OK(
        db_->Exec("UPDATE export_subscription SET state = 'ACTIVE' WHERE id = ?", {id}).status());
    ASSERT_OK_AND_ASSIGN(auto claimed,
                         ledger_->ClaimSlot(id, slot, slot + kHour, "center-a", 60000));
    ASSERT_TRUE(claimed.has_value());
    ASSERT_OK(ledger_->FinishRun(id, slot, "center-a", outcome, task_id, "why").status());
  }

  std::vector<std::pair<int64_t, int64_t>> Due() {
    auto due = runs_->SelectDeliverableRuns(100);
    EXPECT_TRUE(due.ok()) << due.status().ToString();
    std::vector<std::pair<int64_t, int64_t>> out;
    if (due.ok()) {
      for (const DeliverableRun& r : *due) out.emplace_back(r.subscription_id, r.slot_at);
    }
    return out;
  }

  std::unique_ptr<SubscriptionLedger> ledger_;
  std::unique_ptr<RunDeliveryLedger> runs_;
};

TEST_P(RunDeliveryContractTest, ARunIsOfferedOnceItsTaskEndedOrItFailedAndMarkedOnce) {
  const int64_t id = Subscribe(R"({"emails":["bob@example.com"],"attach":true})");
  const int64_t running = Task("RUNNING");
  const int64_t done = Task("SUCCEEDED");
  const int64_t cancelled = Task("CANCELLED");
  Run(id, 1000 * kHour, RunOutcome::kCreated, running);
  Run(id, 1001 * kHour, RunOutcome::kCreated, done);
  Run(id, 1002 * kHour, RunOutcome::kFailed, std::nullopt);
  Run(id, 1003 * kHour, RunOutcome::kCreated, cancelled);
  Run(id, 1004 * kHour, RunOutcome::kDeferred, std::nullopt);
  EXPECT_EQ(Due(), (std::vector<std::pair<int64_t, int64_t>>{
                       {id, 1001 * kHour}, {id, 1002 * kHour}, {id, 1003 * kHour}}));
  ASSERT_OK_AND_ASSIGN(auto due, runs_->SelectDeliverableRuns(1));
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].task_id, done);
  EXPECT_EQ(due[0].outcome, RunOutcome::kCreated);
  EXPECT_EQ(due[0].owner, "alice");
  EXPECT_EQ(due[0].task_name, "Weekly customers");
  EXPECT_EQ(due[0].time_zone, "Asia/Shanghai");
  EXPECT_EQ(due[0].delivery_json, R"({"emails":["bob@example.com"],"attach":true})");

  // Two instances mark it: one does, the other changes nothing.
  ASSERT_OK_AND_ASSIGN(MarkOutcome a,
                       runs_->MarkRunDelivery(id, 1001 * kHour, RunDelivery::kMailed, "mailed"));
  ASSERT_OK_AND_ASSIGN(
      MarkOutcome b, runs_->MarkRunDelivery(id, 1001 * kHour, RunDelivery::kSkippedEmpty, "late"));
  EXPECT_EQ(a, MarkOutcome::kMarked);
  EXPECT_EQ(b, MarkOutcome::kClaimLost);
  ASSERT_OK_AND_ASSIGN(auto recorded, runs_->GetRunDelivery(id, 1001 * kHour));
  EXPECT_EQ(recorded.delivery, RunDelivery::kMailed);
  EXPECT_EQ(recorded.detail, "mailed");
  EXPECT_EQ(Due(),
            (std::vector<std::pair<int64_t, int64_t>>{{id, 1002 * kHour}, {id, 1003 * kHour}}));
  // The running task ends: its run is offered.
  ASSERT_OK(db_->Exec("UPDATE export_task SET status = 'FAILED' WHERE id = ?", {running}).status());
  EXPECT_EQ(Due().size(), 3u);
  EXPECT_FALSE(runs_->GetRunDelivery(id, 1002 * kHour)->delivery.has_value());
  EXPECT_EQ(runs_->GetRunDelivery(id, 77).status().code(), StatusCode::kNotFound);
}

TEST_P(RunDeliveryContractTest, AFailureNoticeIsClaimedOncePerGracePeriodAcrossInstances) {
  const int64_t id = Subscribe();
  // Three instances deciding three failures at once: one notice.
  std::vector<std::unique_ptr<RunDeliveryLedger>> fleet;
  for (int i = 0; i < 3; ++i) fleet.push_back(NewSqlRunDeliveryLedger(db_));
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      auto ok = fleet[i]->ClaimFailureNotice(id, (10 + i) * kHour, 24 * kHour);
      if (ok.ok() && *ok) granted.fetch_add(1);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(granted.load(), 1);
  ASSERT_OK_AND_ASSIGN(Rows rows, db_->Query("SELECT failure_notice_slot FROM export_subscription"
                                             " WHERE id = ?",
                                             {id}));
  const int64_t winner = rows.at(0).Int(0);
  // The winner's slot again (a round repeated after a crash): still its notice.
  EXPECT_TRUE(*runs_->ClaimFailureNotice(id, winner, 24 * kHour));
  EXPECT_FALSE(*runs_->ClaimFailureNotice(id, 20 * kHour, 24 * kHour));
  // Past the grace period the next failure is told.
  ASSERT_OK(db_->Exec("UPDATE export_subscription SET failure_notice_at = failure_notice_at - ?"
                      " WHERE id = ?",
                      {25 * kHour, id})
                .status());
  EXPECT_TRUE(*runs_->ClaimFailureNotice(id, 21 * kHour, 24 * kHour));
  EXPECT_FALSE(*runs_->ClaimFailureNotice(id, 22 * kHour, 24 * kHour));
  EXPECT_FALSE(*runs_->ClaimFailureNotice(424242, 1, 24 * kHour));  // gone
}

TEST_P(RunDeliveryContractTest, DeliverySettingsChangeOnlyAtTheirVersion) {
  const int64_t id = Subscribe(R"({"emails":["bob@example.com","eve@example.com"]})");
  ASSERT_OK_AND_ASSIGN(DeliverySettings now, runs_->GetDeliverySettings(id));
  EXPECT_EQ(now.delivery_json, R"({"emails":["bob@example.com","eve@example.com"]})");
  ASSERT_OK(runs_->SetDeliveryJson(id, now.version, R"({"emails":["eve@example.com"]})"));
  EXPECT_EQ(runs_->SetDeliveryJson(id, now.version, "{}").code(), StatusCode::kConflict);
  ASSERT_OK_AND_ASSIGN(DeliverySettings after, runs_->GetDeliverySettings(id));
  EXPECT_EQ(after.delivery_json, R"({"emails":["eve@example.com"]})");
  EXPECT_EQ(after.version, now.version + 1);
  EXPECT_EQ(runs_->GetDeliverySettings(424242).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(runs_->SetDeliveryJson(424242, 1, "{}").code(), StatusCode::kNotFound);
}

EC_INSTANTIATE_ON_EVERY_BACKEND(RunDeliveryContractTest);

}  // namespace
}  // namespace export_center::store
