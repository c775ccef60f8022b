// The create use case without HTTP (usecase/create.h): a task created as its
// owner, as a subscription's run will; the contract version from the
// SourceRoutes seam; the bounded file-key derivation (503 when full).

#include "usecase/create.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "registry/registry.h"
#include "store/sql_task_store.h"
#include "store/sqlite/sqlite_database.h"
#include "store/task_store.h"

namespace export_center::usecase {
namespace {

using json = nlohmann::json;

registry::RegistrySnapshot Snapshot() {
  registry::RegistrySnapshot s;
  registry::ExportDefinition orders;
  orders.name = "ORDER_LIST";
  orders.title = "Orders";
  registry::ParameterSpec keyword;
  keyword.name = "keyword";
  orders.parameters.push_back(keyword);
  orders.file_password = registry::FilePasswordRule::kOptional;
  s.definitions[orders.name] = orders;
  return s;
}

// Answers a fixed contract version, or fails.
class FixedRoutes : public SourceRoutes {
 public:
  StatusOr<std::optional<std::string>> ContractVersionAtCreate(const registry::ExportDefinition&,
                                                               const registry::RegistrySnapshot&,
                                                               const std::string& canonical,
                                                               const Principal& owner) override {
    asked_for = owner.user + " " + canonical;
    if (!version.ok()) return version.status();
    return std::optional<std::string>(*version);
  }
  StatusOr<task::PreviewTable> Preview(const task::Task&,
                                       std::shared_ptr<const registry::RegistrySnapshot>) override {
    return Internal("not used");
  }
  StatusOr<std::string> version = std::string("v7");
  std::string asked_for;
};

class CreateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ec-usecase-create-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto db = store::OpenSqliteDatabase(dir_ + "/tasks.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    store_ = store::NewSqlTaskStore(std::move(db).value());
    ASSERT_TRUE(store_->Migrate().ok());
    registry_ = std::make_unique<registry::Registry>(Snapshot());
    deps_.store = store_.get();
    deps_.limits.max_active_per_user = 50;
    deps_.limits.max_active_per_type = 50;
    deps_.on_created = [this](const std::string& type) { created_.push_back(type); };
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // The request a subscription would build: a JSON body checked for `owner`.
  CreateRequest Request(const Principal& owner, const std::string& keyword,
                        const std::string& password = "") {
    json body = {{"exportType", "ORDER_LIST"}, {"parameters", {{"keyword", keyword}}}};
    if (!password.empty()) body["filePassword"] = password;
    auto request = CheckCreateBody(body, owner, registry_->Current(), deps_.limits);
    EXPECT_TRUE(request.ok()) << request.status().ToString();
    return *request;
  }

  std::string dir_;
  std::unique_ptr<store::TaskStore> store_;
  std::unique_ptr<registry::Registry> registry_;
  CreateDeps deps_;
  std::vector<std::string> created_;
  const Principal owner_{"alice", "t1", task::AppCode::kPlatform, {}};
};

TEST_F(CreateTest, CreatesAsTheOwnerWithoutHttp) {
  FixedRoutes routes;
  deps_.routes = &routes;
  auto created = CreateTask(deps_, owner_, Request(owner_, "north"), "trace-1");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_FALSE(created->deduplicated);
  EXPECT_EQ(created->task.tenant_id, "t1");
  EXPECT_EQ(created->task.requested_by, "alice");
  EXPECT_EQ(created->task.export_type, "ORDER_LIST");
  EXPECT_EQ(created->task.status, task::TaskState::kPending);
  EXPECT_EQ(created->task.contract_version, std::optional<std::string>("v7"));
  EXPECT_EQ(routes.asked_for, "alice {\"keyword\":\"north\"}");
  EXPECT_EQ(created_, std::vector<std::string>{"ORDER_LIST"});
  auto stored = store_->GetTask(created->task.id);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->requested_by, "alice");

  // The same request again within the dedupe window: the same task, no hook.
  auto again = CreateTask(deps_, owner_, Request(owner_, "north"), "trace-2");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->deduplicated);
  EXPECT_EQ(again->task.id, created->task.id);
  EXPECT_EQ(created_.size(), 1u);
}

TEST_F(CreateTest, AContractVersionFailureDoesNotFailTheCreate) {
  FixedRoutes routes;
  routes.version = Unavailable("service down");
  deps_.routes = &routes;
  auto created = CreateTask(deps_, owner_, Request(owner_, "south"), "trace");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_FALSE(created->task.contract_version.has_value());
}

TEST_F(CreateTest, TheActiveLimitIsTheStoresAnswer) {
  deps_.limits.max_active_per_user = 1;
  ASSERT_TRUE(CreateTask(deps_, owner_, Request(owner_, "a"), "t").ok());
  auto second = CreateTask(deps_, owner_, Request(owner_, "b"), "t");
  EXPECT_EQ(second.status().code(), StatusCode::kLimitExceeded);
}

TEST_F(CreateTest, APasswordWithoutASealerIsInternal) {
  auto created = CreateTask(deps_, owner_, Request(owner_, "x", "Secret-pass-1"), "t");
  EXPECT_EQ(created.status().code(), StatusCode::kInternal);
  EXPECT_EQ(created.status().message(), "password-protected files are not configured");
}

// Two derivations run at once; a third create meanwhile is refused at once
// with the busy answer (the API's 503 + Retry-After), creates nothing, and a
// create after a slot is free goes through.
TEST_F(CreateTest, FileKeyDerivationsAreBoundedAndTheRestAnswerBusy) {
  KeyDerivationGate gate(2);
  deps_.key_derivations = &gate;
  std::mutex mu;
  std::condition_variable cv;
  int inside = 0, most_inside = 0;
  bool release = false;
  deps_.seal_file_password = [&](std::string_view) -> StatusOr<WrappedFileKey> {
    std::unique_lock<std::mutex> lock(mu);
    most_inside = std::max(most_inside, ++inside);
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
    --inside;
    return WrappedFileKey{"00112233aabbccdd", "c2VhbGVk"};
  };
  std::vector<StatusOr<CreateResult>> results(2, Internal("not run"));
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      results[i] = CreateTask(deps_, owner_, Request(owner_, "k" + std::to_string(i), "Secret-1x"),
                              "t" + std::to_string(i));
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return inside == 2; }));
  }
  EXPECT_EQ(gate.in_use(), 2);
  auto refused = CreateTask(deps_, owner_, Request(owner_, "k2", "Secret-1x"), "t2");
  EXPECT_TRUE(IsKeyDerivationBusy(refused.status())) << refused.status().ToString();
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(refused.status().message(), kKeyDerivationBusy);
  // A plain create is not held back by the derivations.
  EXPECT_TRUE(CreateTask(deps_, owner_, Request(owner_, "plain"), "t").ok());
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  for (auto& t : threads) t.join();
  for (const auto& r : results) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->task.encrypted);
  }
  EXPECT_EQ(most_inside, 2);
  EXPECT_EQ(gate.in_use(), 0);
  auto after = CreateTask(deps_, owner_, Request(owner_, "k2", "Secret-1x"), "t3");
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  // The refused one left no task: k0, k1, plain and k2 now.
  EXPECT_EQ(created_.size(), 4u);
}

TEST(KeyDerivationGate, CountsSlots) {
  KeyDerivationGate gate(2);
  EXPECT_TRUE(gate.TryEnter());
  EXPECT_TRUE(gate.TryEnter());
  EXPECT_FALSE(gate.TryEnter());
  gate.Leave();
  EXPECT_TRUE(gate.TryEnter());
  EXPECT_EQ(KeyDerivationGate(0).capacity(), 1);
}

}  // namespace
}  // namespace export_center::usecase
