// Reconciler duties that touch files, on a real SQLite store and real local
// storage. Time is moved by rewriting timestamps, never by sleeping.

#include "dispatch/reconciler.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "storage/local_export_storage.h"
#include "store/database.h"
#include "store/sqlite/sqlite_task_store.h"

namespace export_center::dispatch {
namespace {

namespace fs = std::filesystem;
using task::TaskState;

class ReconcilerTest : public ::testing::Test, public ReconcilerObserver {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ec-reconciler-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto opened = store::OpenSqliteTaskStoreWithDatabase((dir_ / "db.sqlite").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened->store);
    db_ = opened->db;
    ASSERT_TRUE(store_->Migrate().ok());
    storage_ = std::move(storage::NewLocalExportStorage((dir_ / "files").string()).value());
    config_.orphan_grace_seconds = 3600;
  }
  void TearDown() override { fs::remove_all(dir_); }

  int64_t CreateTask() {
    store::NewTask t;
    t.tenant_id = "1";
    t.requested_by = "u" + std::to_string(++users_);
    t.export_type = "TEST_LIST";
    t.task_name = "t";
    t.parameters_json = "{}";
    t.params_hash = t.requested_by;
    return store_->CreateTask(t, store::CreateLimits{}).value().task.id;
  }

  // Claims the task and leaves an uncommitted (partial) file, like a writer
  // killed mid-export.
  std::string StartWritingAndCrash(int64_t id) {
    store::ClaimRequest claim{id, 1, "dead-instance", 300, 1800};
    EXPECT_TRUE(store_->ClaimTask(claim).value().claimed);
    auto writer = storage_->Create(storage::MakeObjectKey(id, "xlsx")).value();
    EXPECT_TRUE(writer->Append("half a file").ok());
    writer.release();  // never committed, never aborted: the process "died"
    auto partials = storage_->ListPartials().value();
    EXPECT_EQ(partials.size(), 1u);
    return partials.empty() ? "" : partials[0].name;
  }

  std::string CommitFile(int64_t id) {
    const std::string key = storage::MakeObjectKey(id, "csv");
    auto writer = storage_->Create(key).value();
    EXPECT_TRUE(writer->Append("a,b\r\n").ok());
    EXPECT_TRUE(writer->Commit().ok());
    return key;
  }

  Reconciler MakeReconciler() { return Reconciler(store_.get(), storage_.get(), config_, this); }

  // ReconcilerObserver
  void Redispatched() override { ++wakes_; }
  void ActionTaken(const std::string& action, int n) override { actions_[action] += n; }
  void TaskEnded(const std::string& type, const std::string& status) override {
    ended_.push_back(type + " " + status);
  }
  void StorageBytes(int64_t bytes) override { storage_bytes_.push_back(bytes); }

  // Publishes the task's command: its outbox row is SENT.
  void Send(int64_t id) {
    auto rows = store_->ListOutboxForTask(id).value();
    ASSERT_EQ(rows.size(), 1u);
    ASSERT_TRUE(db_->Exec("UPDATE export_outbox SET status = 'SENT', sent_at = next_retry_at"
                          " WHERE id = ?",
                          {rows[0].id})
                    .ok());
  }

  fs::path dir_;
  std::unique_ptr<store::TaskStore> store_;
  std::shared_ptr<store::Database> db_;
  std::unique_ptr<storage::ExportStorage> storage_;
  ReconcilerOptions config_;
  int users_ = 0;
  int wakes_ = 0;
  std::map<std::string, int> actions_;
  std::vector<std::string> ended_;      // "type status" per task lease recovery ended
  std::vector<int64_t> storage_bytes_;  // each sweep's export_storage_bytes
};

TEST_F(ReconcilerTest, PartialFileOfARunningTaskIsKept) {
  const int64_t id = CreateTask();
  const std::string partial = StartWritingAndCrash(id);
  auto reconciler = MakeReconciler();
  reconciler.RunOnce();
  EXPECT_TRUE(fs::exists(partial));
}

TEST_F(ReconcilerTest, PartialFileIsDeletedOnceTheDeadAttemptsLeaseIsRecovered) {
  const int64_t id = CreateTask();
  const std::string partial = StartWritingAndCrash(id);
  ASSERT_TRUE(db_->Exec("UPDATE export_task SET lease_until = lease_until - 600000").ok());
  auto reconciler = MakeReconciler();
  auto counts = reconciler.RunOnce();
  EXPECT_EQ(counts["lease_recover"], 1);
  task::Task t = store_->GetTask(id).value();
  EXPECT_EQ(t.status, TaskState::kPending);
  EXPECT_EQ(t.dispatch_version, 2);
  EXPECT_GE(wakes_, 1);
  // Recovery happened in this round; the partial goes in the same or next one.
  reconciler.RunOnce();
  EXPECT_FALSE(fs::exists(partial));
  EXPECT_TRUE(storage_->ListPartials().value().empty());
}

// Another installation sharing the volume or bucket: its partials wait out
// the orphan grace like its stored files.
TEST_F(ReconcilerTest, PartialOfATaskThisDatabaseDoesNotKnowWaitsTheGrace) {
  auto writer = storage_->Create(storage::MakeObjectKey(987654, "csv")).value();
  ASSERT_TRUE(writer->Append("someone else's export").ok());
  auto reconciler = MakeReconciler();
  reconciler.RunOnce();
  ASSERT_EQ(storage_->ListPartials().value().size(), 1u);  // within the grace: kept
  const std::string partial = storage_->ListPartials().value()[0].name;
  const auto two_hours_ago = fs::file_time_type::clock::now() - std::chrono::hours(2);
  fs::last_write_time(partial, two_hours_ago);  // older than the 1 h grace
  reconciler.RunOnce();
  EXPECT_TRUE(storage_->ListPartials().value().empty());
  writer.release();  // its file is gone; the "process" died  NOLINT
}

TEST_F(ReconcilerTest, ExpiryDeletesTheFileFirstThenMarksExpired) {
  const int64_t id = CreateTask();
  ASSERT_TRUE(store_->ClaimTask({id, 1, "me", 300, 1800}).value().claimed);
  const std::string key = CommitFile(id);
  store::FileResult file{"t.csv", key, "text/csv", 5, 1, "", {}};
  ASSERT_EQ(store_->CommitSuccess({id, 1, "me"}, file, 7).value(),
            store::CommitOutcome::kCommitted);
  auto reconciler = MakeReconciler();
  reconciler.RunOnce();
  EXPECT_EQ(store_->GetTask(id).value().status, TaskState::kSucceeded);
  EXPECT_TRUE(storage_->Exists(key).value());

  ASSERT_TRUE(db_->Exec("UPDATE export_task SET expires_at = expires_at - 8 * 86400000").ok());
  auto counts = reconciler.RunOnce();
  EXPECT_EQ(counts["expire"], 1);
  EXPECT_EQ(store_->GetTask(id).value().status, TaskState::kExpired);
  EXPECT_FALSE(storage_->Exists(key).value());
  EXPECT_EQ(actions_["expire"], 1);
}

TEST_F(ReconcilerTest, FileItsTaskNeverRecordedIsDeletedOnceTheTaskIsNotRunning) {
  // A crash between the rename and the commit: the file exists, the task
  // never took it and went back to PENDING through lease recovery.
  const int64_t id = CreateTask();
  ASSERT_TRUE(store_->ClaimTask({id, 1, "dead", 300, 1800}).value().claimed);
  const std::string key = CommitFile(id);
  auto reconciler = MakeReconciler();
  reconciler.RunOnce();
  EXPECT_TRUE(storage_->Exists(key).value()) << "RUNNING: the attempt may still commit it";
  ASSERT_TRUE(db_->Exec("UPDATE export_task SET lease_until = lease_until - 600000").ok());
  reconciler.RunOnce();  // lease recovery: PENDING, version 2
  reconciler.RunOnce();
  EXPECT_FALSE(storage_->Exists(key).value());
}

TEST_F(ReconcilerTest, TheSucceededTasksOwnFileIsKept) {
  const int64_t id = CreateTask();
  ASSERT_TRUE(store_->ClaimTask({id, 1, "me", 300, 1800}).value().claimed);
  const std::string key = CommitFile(id);
  ASSERT_EQ(
      store_->CommitSuccess({id, 1, "me"}, {"t.csv", key, "text/csv", 5, 1, "", {}}, 7).value(),
      store::CommitOutcome::kCommitted);
  const std::string stray = CommitFile(id);  // e.g. a superseded attempt's file
  auto reconciler = MakeReconciler();
  auto counts = reconciler.RunOnce();
  EXPECT_EQ(counts["orphan_clean"], 1);
  EXPECT_TRUE(storage_->Exists(key).value());
  EXPECT_FALSE(storage_->Exists(stray).value());
}

// The storage gauge comes from the sweep, which lists the files anyway, so a
// /metrics scrape never walks the storage (docs/observability.md#metrics).
TEST_F(ReconcilerTest, EachSweepReportsTheBytesTheKeptFilesHold) {
  const int64_t id = CreateTask();
  ASSERT_TRUE(store_->ClaimTask({id, 1, "me", 300, 1800}).value().claimed);
  const std::string key = CommitFile(id);  // 5 bytes
  ASSERT_EQ(
      store_->CommitSuccess({id, 1, "me"}, {"t.csv", key, "text/csv", 5, 1, "", {}}, 7).value(),
      store::CommitOutcome::kCommitted);
  CommitFile(id);  // a stray 5-byte file the sweep deletes
  auto reconciler = MakeReconciler();
  reconciler.RunOnce();
  ASSERT_FALSE(storage_bytes_.empty());
  EXPECT_EQ(storage_bytes_.back(), 5) << "the deleted stray no longer counts";
}

TEST_F(ReconcilerTest, FileOfAnUnknownTaskWaitsOutTheGrace) {
  const std::string key = storage::MakeObjectKey(987654321, "csv");
  auto writer = storage_->Create(key).value();
  ASSERT_TRUE(writer->Append("x").ok());
  ASSERT_TRUE(writer->Commit().ok());
  auto reconciler = MakeReconciler();
  reconciler.RunOnce();
  EXPECT_TRUE(storage_->Exists(key).value()) << "still inside the grace period";
  config_.orphan_grace_seconds = 0;
  auto no_grace = MakeReconciler();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto counts = no_grace.RunOnce();
  EXPECT_EQ(counts["orphan_clean"], 1);
  EXPECT_FALSE(storage_->Exists(key).value());
}

TEST_F(ReconcilerTest, ResendAfterRestartReturnsSentRowsOfPendingTasksWithTheSameVersion) {
  const int64_t id = CreateTask();
  auto row = store_->ClaimOutbox(store_->SelectDueOutbox(10).value().at(0), "pub", 60).value();
  ASSERT_TRUE(row.has_value());
  ASSERT_EQ(store_->MarkOutboxSent(row->id, "pub").value(), store::MarkOutcome::kMarked);
  auto reconciler = MakeReconciler();
  EXPECT_EQ(reconciler.ResendAfterRestart(), 1);
  auto rows = store_->ListOutboxForTask(id).value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, store::OutboxStatus::kPending);
  EXPECT_EQ(rows[0].dispatch_version, 1);
  EXPECT_EQ(store_->GetTask(id).value().dispatch_version, 1);
  EXPECT_EQ(wakes_, 1);
}

// ---- re-sending (docs/task-lifecycle.md#reconciler-duties) ---------------------------

TEST_F(ReconcilerTest, NothingIsReSentWhileATaskWaitsOutA15MinuteBackoff) {
  // Case B candidate: SENT an hour ago; case A candidate: no outbox row at all.
  const int64_t sent = CreateTask();
  Send(sent);
  const int64_t missing = CreateTask();
  ASSERT_TRUE(db_->Exec("DELETE FROM export_outbox WHERE task_id = ?", {missing}).ok());
  const int64_t now = store_->DatabaseNowMs().value();
  // Both wait out a 15-minute retry back-off that ends 10 s from now.
  ASSERT_TRUE(db_->Exec("UPDATE export_task SET next_retry_at = ?", {now + 10000}).ok());
  ASSERT_TRUE(db_->Exec("UPDATE export_outbox SET sent_at = ?", {now - 3600000}).ok());
  auto reconciler = MakeReconciler();
  EXPECT_EQ(reconciler.RunOnce()["redispatch"], 0);
  EXPECT_EQ(store_->ListOutboxForTask(sent).value().at(0).status, store::OutboxStatus::kSent);
  EXPECT_TRUE(store_->ListOutboxForTask(missing).value().empty());
  // Once the back-off and the grace are over, both are re-sent.
  ASSERT_TRUE(db_->Exec("UPDATE export_task SET next_retry_at = ?",
                        {now - int64_t{config_.redispatch_grace_seconds} * 1000 - 1000})
                  .ok());
  EXPECT_EQ(reconciler.RunOnce()["redispatch"], 2);
}

TEST_F(ReconcilerTest, AReSendIgnoresMaxAttemptsAndKeepsTheVersion) {
  const int64_t id = CreateTask();
  Send(id);
  // Every execution attempt is used up; re-sending is not an attempt.
  ASSERT_TRUE(db_->Exec("UPDATE export_task SET attempt_count = max_attempts,"
                        " next_retry_at = next_retry_at - 3600000")
                  .ok());
  ASSERT_TRUE(db_->Exec("UPDATE export_outbox SET sent_at = sent_at - 3600000").ok());
  auto reconciler = MakeReconciler();
  EXPECT_EQ(reconciler.RunOnce()["redispatch"], 1);
  auto row = store_->ListOutboxForTask(id).value().at(0);
  EXPECT_EQ(row.status, store::OutboxStatus::kPending);
  EXPECT_EQ(row.dispatch_version, 1);
  task::Task t = store_->GetTask(id).value();
  EXPECT_EQ(t.status, TaskState::kPending);
  EXPECT_EQ(t.attempt_count, t.max_attempts);
}

// ---- lease recovery ends what it must (docs/task-lifecycle.md#lease-recovery) ------

TEST_F(ReconcilerTest, LeaseRecoveryOfACancelRequestedTaskEndsItCancelled) {
  const int64_t id = CreateTask();
  ASSERT_TRUE(store_->ClaimTask({id, 1, "dead", 300, 1800}).value().claimed);
  ASSERT_EQ(store_->RequestCancel(id).value(), TaskState::kRunning);
  ASSERT_TRUE(db_->Exec("UPDATE export_task SET lease_until = lease_until - 600000").ok());
  auto reconciler = MakeReconciler();
  EXPECT_EQ(reconciler.RunOnce()["lease_recover"], 1);
  task::Task t = store_->GetTask(id).value();
  EXPECT_EQ(t.status, TaskState::kCancelled);
  EXPECT_EQ(t.dispatch_version, 1);
  EXPECT_EQ(store_->ListOutboxForTask(id).value().size(), 1u) << "no command for a new version";
  EXPECT_EQ(ended_, std::vector<std::string>{"TEST_LIST CANCELLED"});
}

TEST_F(ReconcilerTest, LeaseRecoveryAtMaxAttemptsCountsAFailedTask) {
  const int64_t id = CreateTask();
  ASSERT_TRUE(store_->ClaimTask({id, 1, "dead", 300, 1800}).value().claimed);
  ASSERT_TRUE(db_->Exec("UPDATE export_task SET attempt_count = max_attempts,"
                        " lease_until = lease_until - 600000")
                  .ok());
  auto reconciler = MakeReconciler();
  EXPECT_EQ(reconciler.RunOnce()["lease_recover"], 1);
  EXPECT_EQ(store_->GetTask(id).value().status, TaskState::kFailed);
  EXPECT_EQ(ended_, std::vector<std::string>{"TEST_LIST FAILED"});
}

// ---- history retention (docs/configuration.md#retention) ------------------------------

TEST_F(ReconcilerTest, HistoryIsKeptForeverUnlessARetentionIsSet) {
  const int64_t id = CreateTask();
  ASSERT_EQ(store_->RequestCancel(id).value(), TaskState::kCancelled);
  ASSERT_TRUE(db_->Exec("UPDATE export_task SET updated_at = updated_at - ?",
                        {int64_t{400} * 24 * 3600 * 1000})
                  .ok());
  EXPECT_EQ(MakeReconciler().RunOnce()["history_delete"], 0);
  EXPECT_TRUE(store_->GetTask(id).ok());

  config_.task_history_days = 365;
  const int64_t young = CreateTask();
  ASSERT_EQ(store_->RequestCancel(young).value(), TaskState::kCancelled);
  const int64_t active = CreateTask();
  ASSERT_TRUE(db_->Exec("UPDATE export_task SET updated_at = updated_at - ? WHERE id = ?",
                        {int64_t{400} * 24 * 3600 * 1000, active})
                  .ok());
  EXPECT_EQ(MakeReconciler().RunOnce()["history_delete"], 1);
  EXPECT_EQ(actions_["history_delete"], 1);  // export_reconciler_action_total
  EXPECT_EQ(store_->GetTask(id).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->ListTaskEvents(id).value().empty());
  EXPECT_EQ(store_->GetTask(young).value().status, TaskState::kCancelled);
  EXPECT_EQ(store_->GetTask(active).value().status, TaskState::kPending);
}

}  // namespace
}  // namespace export_center::dispatch
