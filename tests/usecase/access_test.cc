// The access rules (usecase/access.h): who may see a task, which types are
// offered, who may run one, and the state rules of a manual retry.

#include "usecase/access.h"

#include <gtest/gtest.h>

namespace export_center::usecase {
namespace {

Principal Alice() { return {"alice", "t1", task::AppCode::kPlatform, {"customer:export"}}; }

TEST(Access, TaskVisibility) {
  task::Task t;
  t.tenant_id = "t1";
  t.app_code = task::AppCode::kPlatform;
  t.requested_by = "alice";
  EXPECT_TRUE(CanAccessTask(Alice(), t));
  Principal bob{"bob", "t1", task::AppCode::kPlatform, {}};
  EXPECT_FALSE(CanAccessTask(bob, t));
  bob.perms.push_back(std::string(kDownloadAllPermission));
  EXPECT_TRUE(CanAccessTask(bob, t));
  Principal other_tenant{
      "alice", "t2", task::AppCode::kPlatform, {std::string(kDownloadAllPermission)}};
  EXPECT_FALSE(CanAccessTask(other_tenant, t));
  Principal merchant{
      "alice", "t1", task::AppCode::kMerchant, {std::string(kDownloadAllPermission)}};
  EXPECT_FALSE(CanAccessTask(merchant, t));
}

TEST(Access, TypeRules) {
  registry::ExportDefinition def;
  def.name = "CUSTOMER_LIST";
  def.required_permission = "customer:export";
  EXPECT_TRUE(CanSeeType(Alice(), def));
  EXPECT_TRUE(CheckCanRun(Alice(), def).ok());
  Principal none{"bob", "t1", task::AppCode::kPlatform, {}};
  EXPECT_FALSE(CanSeeType(none, def));
  EXPECT_EQ(CheckCanRun(none, def).code(), StatusCode::kPermissionDenied);
  Principal merchant{"m", "t1", task::AppCode::kMerchant, {"customer:export"}};
  EXPECT_FALSE(CanSeeType(merchant, def));
  EXPECT_EQ(CheckCanRun(merchant, def).code(), StatusCode::kPermissionDenied);
  def.app_scope = task::AppCode::kMerchant;
  EXPECT_TRUE(CanSeeType(merchant, def));
  def.enabled = false;
  EXPECT_FALSE(CanSeeType(merchant, def));
  EXPECT_EQ(CheckCanRun(merchant, def).code(), StatusCode::kInvalidArgument);
}

TEST(Access, ManualRetryStates) {
  registry::ExportDefinition def;
  def.name = "CUSTOMER_LIST";
  task::Task t;
  t.id = 7;
  t.export_type = "CUSTOMER_LIST";
  t.status = task::TaskState::kFailed;
  EXPECT_TRUE(CheckManualRetry(t, &def).ok());
  EXPECT_EQ(CheckManualRetry(t, nullptr).message(),
            "export type CUSTOMER_LIST is no longer registered");
  t.status = task::TaskState::kStale;
  EXPECT_EQ(CheckManualRetry(t, &def).code(), StatusCode::kConflict);
  t.status = task::TaskState::kSucceeded;
  EXPECT_EQ(CheckManualRetry(t, &def).message(),
            "task 7 is SUCCEEDED; only FAILED, CANCELLED or INCONSISTENT tasks can be retried");
  def.enabled = false;
  EXPECT_EQ(CheckManualRetry(t, &def).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace export_center::usecase
