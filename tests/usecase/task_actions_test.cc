// The use cases on one task (usecase/task_actions.h) without HTTP: the
// access rule of every lookup, retry and cancel by their state rules, export
// again through the create use case. Messages are the API's, unchanged.

#include "usecase/task_actions.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "registry/registry.h"
#include "store/sql_task_store.h"
#include "store/sqlite/sqlite_database.h"
#include "store/task_store.h"
#include "usecase/access.h"

namespace export_center::usecase {
namespace {

registry::RegistrySnapshot Snapshot() {
  registry::RegistrySnapshot s;
  registry::ExportDefinition orders;
  orders.name = "ORDER_LIST";
  orders.title = "Orders";
  s.definitions[orders.name] = orders;
  return s;
}

class TaskActionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ec-usecase-actions-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto db = store::OpenSqliteDatabase(dir_ + "/tasks.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    store_ = store::NewSqlTaskStore(std::move(db).value());
    ASSERT_TRUE(store_->Migrate().ok());
    registry_ = std::make_unique<registry::Registry>(Snapshot());
    create_.store = store_.get();
    actions_.store = store_.get();
    actions_.registry = registry_.get();
    actions_.on_requeued = [this] { ++requeued_; };
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  task::Task Create(const Principal& owner) {
    auto request = CheckCreateBody(nlohmann::json{{"exportType", "ORDER_LIST"}}, owner,
                                   registry_->Current(), create_.limits);
    EXPECT_TRUE(request.ok()) << request.status().ToString();
    auto created = CreateTask(create_, owner, *request, "trace");
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created->task;
  }

  std::string dir_;
  std::unique_ptr<store::TaskStore> store_;
  std::unique_ptr<registry::Registry> registry_;
  CreateDeps create_;
  TaskActionDeps actions_;
  int requeued_ = 0;
  const Principal alice_{"alice", "t1", task::AppCode::kPlatform, {}};
  const Principal bob_{"bob", "t1", task::AppCode::kPlatform, {}};
};

TEST_F(TaskActionsTest, SomeoneElsesTaskLooksMissing) {
  const task::Task t = Create(alice_);
  const std::string id = std::to_string(t.id);
  EXPECT_TRUE(LoadVisibleTask(*store_, alice_, id).ok());
  for (const auto& status :
       {LoadVisibleTask(*store_, bob_, id).status(), RetryTask(actions_, bob_, id, "t").status(),
        CancelTask(actions_, bob_, id).status()}) {
    EXPECT_EQ(status.code(), StatusCode::kNotFound);
    EXPECT_EQ(status.message(), "export task " + id + " not found");
  }
  const Principal admin{
      "root", "t1", task::AppCode::kPlatform, {std::string(kDownloadAllPermission)}};
  EXPECT_TRUE(LoadVisibleTask(*store_, admin, id).ok());
  EXPECT_EQ(LoadVisibleTask(*store_, alice_, "0123").status().message(),
            "task id must be 1-19 digits without leading zeros");
}

TEST_F(TaskActionsTest, RetryFollowsTheStateRules) {
  const task::Task t = Create(alice_);
  auto retried = RetryTask(actions_, alice_, std::to_string(t.id), "t");
  EXPECT_EQ(retried.status().code(), StatusCode::kConflict);
  EXPECT_EQ(retried.status().message(),
            "task " + std::to_string(t.id) +
                " is PENDING; only FAILED, CANCELLED or INCONSISTENT tasks can be retried");
  EXPECT_EQ(requeued_, 0);
}

TEST_F(TaskActionsTest, CancelThenRetryThenExportAgain) {
  const task::Task t = Create(alice_);
  const std::string id = std::to_string(t.id);
  // Active: export again waits for the end.
  auto early = ExportAgain(create_, actions_, alice_, id, std::string(), "t");
  EXPECT_EQ(early.status().message(),
            "task " + id + " is PENDING; export it again once it has ended");
  auto cancelled = CancelTask(actions_, alice_, id);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  EXPECT_EQ(cancelled->status, task::TaskState::kCancelled);
  auto twice = CancelTask(actions_, alice_, id);
  EXPECT_EQ(twice.status().message(),
            "task " + id + " is CANCELLED; only PENDING or RUNNING tasks can be cancelled");
  // A body that could not be read is answered after the task's own checks.
  auto bad_body = ExportAgain(create_, actions_, alice_, id,
                              StatusOr<std::string>(InvalidArgument("unknown field x")), "t");
  EXPECT_EQ(bad_body.status().message(), "unknown field x");
  auto again = ExportAgain(create_, actions_, alice_, id, std::string(), "t2");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_NE(again->task.id, t.id);
  EXPECT_EQ(again->task.requested_by, "alice");
  auto retried = RetryTask(actions_, alice_, id, "t3");
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  EXPECT_EQ(retried->status, task::TaskState::kPending);
  EXPECT_EQ(requeued_, 1);
}

}  // namespace
}  // namespace export_center::usecase
