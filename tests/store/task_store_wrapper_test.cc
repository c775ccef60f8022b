// TaskStoreWrapper (store/task_store_wrapper.h): a fake derived from it
// overrides one method and every other call reaches the real store; the role
// interfaces it is handed out as share one GetTask (TaskReader is a virtual base).

#include "store/task_store_wrapper.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

#include "store/sqlite/sqlite_task_store.h"

namespace export_center::store {
namespace {

// Breaks GetTask only.
class NoReads : public TaskStoreWrapper {
 public:
  using TaskStoreWrapper::TaskStoreWrapper;
  StatusOr<task::Task> GetTask(int64_t) override {
    ++reads;
    return Unavailable("reads are down");
  }
  std::atomic<int> reads{0};
};

class TaskStoreWrapperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ec-wrapper-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto store = OpenSqliteTaskStore(dir_ + "/store.db");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    real_ = std::move(store).value();
    ASSERT_TRUE(real_->Migrate().ok());
  }
  void TearDown() override {
    real_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string dir_;
  std::unique_ptr<TaskStore> real_;
};

TEST_F(TaskStoreWrapperTest, AFakeOverridesOneMethodAndForwardsTheRest) {
  NoReads fake(real_.get());
  EXPECT_EQ(fake.target(), real_.get());
  ASSERT_TRUE(fake.CheckGuardRow().ok());
  NewTask t;
  t.tenant_id = "t1";
  t.requested_by = "alice";
  t.export_type = "orders";
  t.task_name = "orders";
  t.parameters_json = "{}";
  t.params_hash = "h";
  auto created = fake.CreateTask(t, CreateLimits{});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  // Forwarded: the real store holds the task and its command row.
  auto real_read = real_->GetTask(created->task.id);
  ASSERT_TRUE(real_read.ok());
  EXPECT_EQ(real_read->requested_by, "alice");
  auto outbox = fake.ListOutboxForTask(created->task.id);
  ASSERT_TRUE(outbox.ok());
  EXPECT_EQ(outbox->size(), 1u);
  TaskCatalog::ListQuery q;
  q.tenant_id = "t1";
  auto page = fake.ListTasks(q);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 1);
  // Overridden: through the union and through every role that reads a task.
  EXPECT_EQ(fake.GetTask(created->task.id).status().code(), StatusCode::kUnavailable);
  TaskCatalog* catalog = &fake;
  AttemptLedger* ledger = &fake;
  TaskMaintenance* maintenance = &fake;
  EXPECT_EQ(catalog->GetTask(created->task.id).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(ledger->GetTask(created->task.id).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(maintenance->GetTask(created->task.id).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(fake.reads.load(), 4);
}

TEST_F(TaskStoreWrapperTest, OutcomesAreNamedNotBooleans) {
  NoReads fake(real_.get());
  NewTask t;
  t.tenant_id = "t1";
  t.requested_by = "bob";
  t.export_type = "orders";
  t.task_name = "orders";
  t.parameters_json = "{}";
  t.params_hash = "h2";
  auto created = fake.CreateTask(t, CreateLimits{});
  ASSERT_TRUE(created.ok());
  DownloadRecord d;
  d.task_id = created->task.id;
  d.tenant_id = "t1";
  d.user = "bob";
  d.via = "DIRECT";
  d.served_by = "STREAM";
  auto first = fake.RecordDownload(d, 600);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, DownloadCount::kCounted);
  auto again = fake.RecordDownload(d, 600);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, DownloadCount::kWithinWindow);
  auto expired = fake.MarkExpired(created->task.id);
  ASSERT_TRUE(expired.ok());
  EXPECT_EQ(*expired, ExpireOutcome::kNotDue) << "a PENDING task does not expire";
  auto lost = fake.MarkOutboxSent(fake.ListOutboxForTask(created->task.id)->at(0).id, "nobody");
  ASSERT_TRUE(lost.ok());
  EXPECT_EQ(*lost, MarkOutcome::kClaimLost) << "an unclaimed row is not ours to mark";
}

}  // namespace
}  // namespace export_center::store
