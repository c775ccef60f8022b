// The subscriptions' use cases and the slot runner (usecase/subscriptions.h,
// usecase/subscription_runner.h) over the real SQLite store and ledger: the
// body's checks name the field; only the owner and operators of the scope
// see one; a run creates the owner's task with the relative dates of its
// slot, once per slot, and pauses or defers instead of failing.

#include "usecase/subscriptions.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "registry/registry.h"
#include "store/sql_subscription_ledger.h"
#include "store/sql_task_store.h"
#include "store/sqlite/sqlite_database.h"
#include "store/task_store.h"
#include "usecase/subscription_runner.h"

namespace export_center::usecase {
namespace {

using json = nlohmann::json;
using subscription::SlotOutcome;

// 2024-03-04T01:00:00Z: Monday 09:00 in Asia/Shanghai.
constexpr int64_t kMonday9Shanghai = 1709514000000;

registry::ExportDefinition Orders() {
  registry::ExportDefinition orders;
  orders.name = "ORDER_LIST";
  orders.title = "Orders";
  orders.required_permission = "export:orders";
  orders.timezone = "Asia/Shanghai";
  registry::ParameterSpec from;
  from.name = "from";
  from.type = "DATE";
  registry::ParameterSpec to;
  to.name = "to";
  to.type = "DATE";
  registry::ParameterSpec keyword;
  keyword.name = "keyword";
  orders.parameters = {from, to, keyword};
  return orders;
}

class SubscriptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ec-usecase-subscriptions-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto db = store::OpenSqliteDatabase(dir_ + "/tasks.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    std::shared_ptr<store::Database> shared = std::move(db).value();
    store_ = store::NewSqlTaskStore(shared);
    ASSERT_TRUE(store_->Migrate().ok());
    ledger_ = store::NewSqlSubscriptionLedger(shared);
    SetDefinition(Orders());
    mail_.enabled = true;
    mail_.host = "127.0.0.1";
    mail_.allowed_domains = {"example.com"};
    deps_.ledger = ledger_.get();
    deps_.snapshot = [this] { return snapshot_; };
    deps_.mail = &mail_;
    deps_.options.min_interval_minutes = 60;
    runner_deps_.ledger = ledger_.get();
    runner_deps_.snapshot = deps_.snapshot;
    runner_deps_.create.store = store_.get();
    runner_deps_.create.limits.max_active_per_user = 50;
    runner_deps_.create.limits.max_active_per_type = 50;
  }
  void TearDown() override {
    ledger_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  void SetDefinition(const registry::ExportDefinition& def) {
    auto s = std::make_shared<registry::RegistrySnapshot>();
    s->definitions[def.name] = def;
    snapshot_ = s;
  }

  static json Body() {
    return {{"exportType", "ORDER_LIST"},
            {"taskName", "Weekly orders"},
            {"parameters",
             {{"from", {{"relative", "last-week"}, {"bound", "start"}}},
              {"to", {{"relative", "last-week"}, {"bound", "end"}}},
              {"keyword", "north"}}},
            {"schedule", {{"preset", "weekly"}, {"days", {"MON"}}, {"time", "09:00"}}},
            {"delivery", {{"emails", {"a@example.com"}}}}};
  }

  // The message of the InvalidArgument `body` is refused with.
  std::string Refusal(const json& body) {
    auto made = CreateSubscription(deps_, alice_, body);
    EXPECT_EQ(made.status().code(), StatusCode::kInvalidArgument) << made.status().ToString();
    return made.status().message();
  }

  SubscriptionView Make(const json& body = Body()) {
    auto made = CreateSubscription(deps_, alice_, body);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return made.ok() ? *made : SubscriptionView{};
  }

  std::string dir_;
  std::unique_ptr<store::TaskStore> store_;
  std::unique_ptr<store::SubscriptionLedger> ledger_;
  std::shared_ptr<const registry::RegistrySnapshot> snapshot_;
  notify::mail::MailOptions mail_;
  SubscriptionDeps deps_;
  SlotRunnerDeps runner_deps_;
  const Principal alice_{"alice", "t1", task::AppCode::kPlatform, {"export:orders"}};
  const Principal bob_{"bob", "t1", task::AppCode::kPlatform, {"export:orders"}};
  const Principal operator_{"olga", "t1", task::AppCode::kPlatform, {"platform:export:operate"}};
};

TEST_F(SubscriptionsTest, APresetBecomesCronInTheDefinitionsZone) {
  SubscriptionView made = Make();
  const store::Subscription& s = made.subscription;
  EXPECT_EQ(s.spec.cron, "0 9 * * 1");
  EXPECT_EQ(s.spec.time_zone, "Asia/Shanghai");
  EXPECT_EQ(s.spec.owner, "alice");
  EXPECT_EQ(s.spec.owner_perms, R"(["export:orders"])");
  EXPECT_EQ(json::parse(s.spec.schedule_json),
            json({{"preset", "weekly"}, {"days", {"MON"}}, {"time", "09:00"}}));
  json params = json::parse(s.spec.parameters_json);
  EXPECT_EQ(params["from"], json({{"relative", "last-week"}, {"bound", "start"}}));
  EXPECT_EQ(params["keyword"], "north");
  EXPECT_EQ(json::parse(s.spec.delivery_json)["emails"], json({"a@example.com"}));
  ASSERT_EQ(made.next_runs.size(), 3u);
  EXPECT_EQ(made.next_runs[1] - made.next_runs[0], 7 * 24 * 3600 * 1000LL);
}

TEST_F(SubscriptionsTest, BadInputIsRefusedNamingTheField) {
  json body = Body();
  body["schedule"] = {{"cron", "0 25 * * *"}};
  EXPECT_EQ(Refusal(body).rfind("schedule.cron: ", 0), 0u) << Refusal(body);
  body["schedule"] = {{"cron", "*/5 * * * *"}};
  EXPECT_NE(Refusal(body).find("schedule.cron: "), std::string::npos);
  EXPECT_NE(Refusal(body).find("the minimum is 60 min"), std::string::npos) << Refusal(body);
  body["schedule"] = {{"cron", "0 9 30 2 *"}};
  EXPECT_EQ(Refusal(body).rfind("schedule.cron: ", 0), 0u);
  body = Body();
  body["timeZone"] = "Mars/Base";
  EXPECT_EQ(Refusal(body).rfind("timeZone: ", 0), 0u) << Refusal(body);
  body = Body();
  body["parameters"]["keyword"] = {{"relative", "yesterday"}};
  EXPECT_EQ(Refusal(body).rfind("parameters.keyword: a relative date is only for DATE", 0), 0u)
      << Refusal(body);
  body = Body();
  body["parameters"]["from"] = {{"relative", "last-decade"}};
  EXPECT_EQ(Refusal(body).rfind("parameters.from.relative: ", 0), 0u) << Refusal(body);
  body = Body();
  body["delivery"]["emails"] = {"a@example.com", "bob@gmail.com"};
  EXPECT_EQ(Refusal(body).rfind("delivery.emails[1]: ", 0), 0u) << Refusal(body);
  body = Body();
  body["schedule"] = {{"preset", "daily"}, {"time", "9am"}};
  EXPECT_EQ(Refusal(body).rfind("schedule.time: ", 0), 0u);
  body["schedule"] = {{"preset", "weekly"}, {"days", {"MON", "FUNDAY"}}, {"time", "09:00"}};
  EXPECT_EQ(Refusal(body).rfind("schedule.days[1]: ", 0), 0u);
  // Mail not configured: no recipients at all.
  mail_.enabled = false;
  EXPECT_EQ(Refusal(Body()).rfind("delivery.emails: e-mail is not configured", 0), 0u);
}

TEST_F(SubscriptionsTest, ATypeTheCallerMayNotExportIsRefusedAsACreateWouldBe) {
  const Principal stranger{"carl", "t1", task::AppCode::kPlatform, {}};
  auto made = CreateSubscription(deps_, stranger, Body());
  EXPECT_EQ(made.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(made.status().message().find("export:orders"), std::string::npos);
}

TEST_F(SubscriptionsTest, CapsPerOwnerAreTheLedgers) {
  deps_.options.max_per_owner = 1;
  Make();
  auto second = CreateSubscription(deps_, alice_, Body());
  EXPECT_EQ(second.status().code(), StatusCode::kLimitExceeded);
}

TEST_F(SubscriptionsTest, OnlyTheOwnerAndOperatorsOfItsScopeSeeIt) {
  const std::string id = std::to_string(Make().subscription.id);
  EXPECT_TRUE(GetSubscription(deps_, alice_, id).ok());
  EXPECT_TRUE(GetSubscription(deps_, operator_, id).ok());
  EXPECT_EQ(GetSubscription(deps_, bob_, id).status().code(), StatusCode::kNotFound);
  const Principal other_tenant_operator{
      "o", "t2", task::AppCode::kPlatform, {"platform:export:operate"}};
  EXPECT_EQ(GetSubscription(deps_, other_tenant_operator, id).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(DeleteSubscription(deps_, bob_, id).code(), StatusCode::kNotFound);
  EXPECT_EQ(GetSubscription(deps_, alice_, "nonsense").status().code(), StatusCode::kNotFound);
  auto own = ListOwnSubscriptions(deps_, bob_, 0, 10);
  ASSERT_TRUE(own.ok());
  EXPECT_TRUE(own->empty());
  auto console = ListScopeSubscriptions(deps_, operator_, "", std::nullopt, 0, 10);
  ASSERT_TRUE(console.ok());
  EXPECT_EQ(console->size(), 1u);
  EXPECT_EQ(ListScopeSubscriptions(deps_, bob_, "", std::nullopt, 0, 10).status().code(),
            StatusCode::kPermissionDenied);
}

TEST_F(SubscriptionsTest, AnEditNeedsTheCurrentVersionAndPauseResumeRun) {
  SubscriptionView made = Make();
  const std::string id = std::to_string(made.subscription.id);
  json edit = Body();
  edit["schedule"] = {{"preset", "daily"}, {"time", "08:30"}};
  edit["version"] = made.subscription.version;
  auto edited = EditSubscription(deps_, alice_, id, edit);
  ASSERT_TRUE(edited.ok()) << edited.status().ToString();
  EXPECT_EQ(edited->subscription.spec.cron, "30 8 * * *");
  auto stale = EditSubscription(deps_, alice_, id, edit);
  EXPECT_EQ(stale.status().code(), StatusCode::kConflict);

  auto paused = PauseSubscription(deps_, alice_, id);
  ASSERT_TRUE(paused.ok());
  EXPECT_EQ(paused->subscription.pause_reason, "OWNER");
  EXPECT_TRUE(paused->next_runs.empty());
  EXPECT_EQ(RunSubscriptionNow(deps_, alice_, id).status().code(), StatusCode::kConflict);
  EXPECT_EQ(PauseSubscription(deps_, alice_, id).status().code(), StatusCode::kConflict);
  auto resumed = ResumeSubscription(deps_, operator_, id);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(resumed->next_runs.size(), 3u);

  int woken = 0;
  deps_.on_run_now = [&] { ++woken; };
  auto run = RunSubscriptionNow(deps_, alice_, id);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->outcome, store::RunOutcome::kClaimed);
  EXPECT_EQ(woken, 1);
  auto runs = ListSubscriptionRuns(deps_, alice_, id, 10);
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  // Its lease is already out: the scheduler's next round takes it over.
  auto expired = ledger_->SelectExpiredRuns(10);
  ASSERT_TRUE(expired.ok());
  EXPECT_EQ(expired->size(), 1u);
}

TEST_F(SubscriptionsTest, TheOwnersSnapshotIsRefreshedWhenTheyCallAnyRoute) {
  const std::string id = std::to_string(Make().subscription.id);
  const Principal alice_now{"alice", "t1", task::AppCode::kPlatform, {"export:other"}};
  ASSERT_TRUE(ListOwnSubscriptions(deps_, alice_now, 0, 10).ok());
  auto s = ledger_->GetSubscription(std::stoll(id));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->spec.owner_perms, R"(["export:other"])");
}

// ---- the slot runner ---------------------------------------------------------

TEST_F(SubscriptionsTest, ARunCreatesTheOwnersTaskWithTheSlotsDatesOncePerSlot) {
  const store::Subscription s = Make().subscription;
  CreateSlotRunner runner(runner_deps_);
  SlotOutcome first = runner.Run(s, kMonday9Shanghai);
  ASSERT_EQ(first.kind, SlotOutcome::Kind::kCreated) << first.detail;
  ASSERT_TRUE(first.task_id.has_value());
  auto task = store_->GetTask(*first.task_id);
  ASSERT_TRUE(task.ok());
  EXPECT_EQ(task->requested_by, "alice");
  EXPECT_EQ(task->task_name, "Weekly orders");
  // Monday 2024-03-04 in Shanghai: last week is 02-26..03-03.
  EXPECT_EQ(json::parse(task->parameters_json),
            json({{"from", "2024-02-26"}, {"to", "2024-03-03"}, {"keyword", "north"}}));

  // The same slot again (its instance died before recording it): the same task.
  SlotOutcome retry = runner.Run(s, kMonday9Shanghai);
  ASSERT_EQ(retry.kind, SlotOutcome::Kind::kCreated) << retry.detail;
  EXPECT_EQ(retry.task_id, first.task_id);
  store::TaskCatalog::ListQuery query;
  query.tenant_id = "t1";
  auto all = store_->ListTasks(query);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->total, 1);
}

TEST_F(SubscriptionsTest, AFullActiveLimitDefersAndALostPermissionOrTypePauses) {
  store::Subscription s = Make().subscription;
  CreateSlotRunner runner(runner_deps_);
  runner_deps_.create.limits.max_active_per_user = 1;
  CreateSlotRunner limited(runner_deps_);
  ASSERT_EQ(limited.Run(s, kMonday9Shanghai).kind, SlotOutcome::Kind::kCreated);
  // A week later the first task is still active: the owner's limit is full.
  SlotOutcome deferred = limited.Run(s, kMonday9Shanghai + 7 * 24 * 3600 * 1000LL);
  EXPECT_EQ(deferred.kind, SlotOutcome::Kind::kDeferred) << deferred.detail;

  s.spec.owner_perms = "[]";
  SlotOutcome lost = runner.Run(s, kMonday9Shanghai);
  EXPECT_EQ(lost.kind, SlotOutcome::Kind::kPause);
  EXPECT_EQ(lost.pause_reason, "PERMISSION_LOST");
  EXPECT_NE(lost.detail.find("export:orders"), std::string::npos) << lost.detail;

  registry::ExportDefinition disabled = Orders();
  disabled.enabled = false;
  SetDefinition(disabled);
  SlotOutcome off = runner.Run(s, kMonday9Shanghai);
  EXPECT_EQ(off.kind, SlotOutcome::Kind::kPause);
  EXPECT_EQ(off.pause_reason, "TYPE_GONE");
  snapshot_ = std::make_shared<registry::RegistrySnapshot>();
  SlotOutcome gone = runner.Run(s, kMonday9Shanghai);
  EXPECT_EQ(gone.pause_reason, "TYPE_GONE");
  EXPECT_NE(gone.detail.find("no longer registered"), std::string::npos);
}

}  // namespace
}  // namespace export_center::usecase
