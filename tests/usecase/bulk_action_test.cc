// The bulk action of the operators' console as a use case
// (usecase/bulk_action.h): counted, confirmed by count and fingerprint, acted
// on and audited, without HTTP.

#include "usecase/bulk_action.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "registry/registry.h"
#include "store/sql_task_store.h"
#include "store/sqlite/sqlite_database.h"
#include "store/task_store.h"
#include "usecase/create.h"

namespace export_center::usecase {
namespace {

class BulkActionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ec-usecase-bulk-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto db = store::OpenSqliteDatabase(dir_ + "/tasks.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    store_ = store::NewSqlTaskStore(std::move(db).value());
    ASSERT_TRUE(store_->Migrate().ok());
    registry::RegistrySnapshot snapshot;
    registry::ExportDefinition orders;
    orders.name = "ORDER_LIST";
    snapshot.definitions[orders.name] = orders;
    registry_ = std::make_unique<registry::Registry>(snapshot);
    deps_.operations = store_.get();
    deps_.catalog = store_.get();
    deps_.registry = registry_.get();
    deps_.on_requeued = [this] { ++requeued_; };
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  void CreateFor(const std::string& user) {
    CreateDeps create;
    create.store = store_.get();
    const Principal owner{user, "t1", task::AppCode::kPlatform, {}};
    auto request = CheckCreateBody(nlohmann::json{{"exportType", "ORDER_LIST"}}, owner,
                                   registry_->Current(), create.limits);
    ASSERT_TRUE(request.ok());
    ASSERT_TRUE(CreateTask(create, owner, *request, "trace").ok());
  }

  BulkRequest Cancel() {
    BulkRequest r;
    r.action = "CANCEL";
    r.filter.scope = store::OperatorScope{"t1", task::AppCode::kPlatform};
    r.filter_json = "{}";
    return r;
  }

  std::string dir_;
  std::unique_ptr<store::TaskStore> store_;
  std::unique_ptr<registry::Registry> registry_;
  BulkDeps deps_;
  int requeued_ = 0;
  const Principal operator_{"op", "t1", task::AppCode::kPlatform, {}};
};

TEST_F(BulkActionTest, CountedConfirmedActedOnAndAudited) {
  CreateFor("alice");
  CreateFor("bob");
  BulkRequest r = Cancel();
  auto unconfirmed = RunBulkAction(deps_, operator_, r, "t");
  EXPECT_EQ(unconfirmed.status().message(),
            "expectedCount is required: count first (POST /operator/bulk-actions/count) and "
            "confirm");
  auto count = CountBulkAction(deps_, r);
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  EXPECT_EQ(count->matched, 2);
  ASSERT_TRUE(count->fingerprint.has_value());
  r.expected_count = 3;
  EXPECT_EQ(RunBulkAction(deps_, operator_, r, "t").status().message(),
            "the filter now matches 2 tasks, not 3; count again and confirm");
  r.expected_count = 2;
  r.expected_fingerprint = std::string(64, '0');
  EXPECT_EQ(RunBulkAction(deps_, operator_, r, "t").status().code(), StatusCode::kConflict);
  r.expected_fingerprint = count->fingerprint;
  auto audit = RunBulkAction(deps_, operator_, r, "t");
  ASSERT_TRUE(audit.ok()) << audit.status().ToString();
  EXPECT_EQ(audit->matched, 2);
  EXPECT_EQ(audit->succeeded, 2);
  EXPECT_EQ(audit->outcome, "COMPLETED");
  EXPECT_EQ(audit->actor, "op");
  EXPECT_GT(audit->id, 0);
  // Nothing is left for the action; over the limit it is refused.
  EXPECT_EQ(CountBulkAction(deps_, r)->matched, 0);
  EXPECT_EQ(requeued_, 0);
}

TEST_F(BulkActionTest, OverTheLimitIsRefused) {
  CreateFor("alice");
  CreateFor("bob");
  deps_.max_tasks = 1;
  BulkRequest r = Cancel();
  auto count = CountBulkAction(deps_, r);
  ASSERT_TRUE(count.ok());
  EXPECT_FALSE(count->fingerprint.has_value());
  r.expected_count = 2;
  EXPECT_EQ(RunBulkAction(deps_, operator_, r, "t").status().code(), StatusCode::kLimitExceeded);
}

}  // namespace
}  // namespace export_center::usecase
