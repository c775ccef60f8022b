// The TaskStore contract (task_store.h), run against every backend: SQLite on
// a temp file, and a real PostgreSQL server and a real MariaDB server, each
// started once for this binary (a fresh database per test).
//
// Time never passes by sleeping: tests move a clock by rewriting a stored
// timestamp through the Database, e.g. lease_until - 301000 makes a 300 s
// lease expire, so every comparison still happens inside SQL.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/ids.h"
#include "common/utf8.h"
#include "store/database.h"
#include "store/migrations.h"
#include "store/sql_task_store.h"
#include "store/sqlite/sqlite_database.h"
#include "store/sqlite/sqlite_task_store.h"
#include "store/task_store.h"
#include "task/command.h"

#ifdef EC_TEST_WITH_POSTGRES
#include "store/postgres/postgres_task_store.h"
#endif
#ifdef EC_TEST_WITH_MYSQL
#include "store/mysql/mysql_task_store.h"
#endif
#include "store_backends.h"  // beside this file

namespace export_center::store {
namespace {

using task::Task;
using task::TaskState;

constexpr int64_t kSecond = 1000;
constexpr int64_t kMinute = 60 * kSecond;
constexpr int64_t kDay = 24 * 60 * kMinute;
constexpr int64_t kHourMs = 60 * kMinute;

// ---- fixture ------------------------------------------------------------------

class TaskStoreContractTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = std::make_unique<Backend>(GetParam());
    std::string skip;
    db_ = backend_->OpenFresh(&skip);
    if (db_ == nullptr && !skip.empty() && testing::RealServersRequired()) {
      FAIL() << GetParam() << " unavailable in CI: " << skip;
    }
    if (db_ == nullptr && !skip.empty()) GTEST_SKIP() << GetParam() << ": " << skip;
    ASSERT_NE(db_, nullptr);
    store_ = NewSqlTaskStore(db_);
    ASSERT_OK(store_->Migrate());
  }

  void TearDown() override {
    store_.reset();
    db_.reset();
    backend_.reset();
  }

  static NewTask MakeTask(const std::string& user, const std::string& type,
                          const std::string& params = "{}", const std::string& tenant = "t1") {
    NewTask t;
    t.tenant_id = tenant;
    t.requested_by = user;
    t.export_type = type;
    t.task_name = "Export of " + type;
    t.parameters_json = params;
    t.params_hash = "hash:" + params;
    t.trace_id = "trace-" + user;
    return t;
  }

  static CreateLimits Unlimited() { return {60, 1000, 1000}; }

  Task Create(const NewTask& t, const CreateLimits& limits = {}) {
    auto r = store_->CreateTask(t, limits);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->task : Task{};
  }
  Task Create(const std::string& user = "alice", const std::string& type = "orders",
              const std::string& params = "{}") {
    return Create(MakeTask(user, type, params));
  }

  Task Get(int64_t id) {
    auto t = store_->GetTask(id);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? *t : Task{};
  }

  ClaimResult Claim(int64_t id, int32_t version = 1, const std::string& instance = "w1") {
    ClaimRequest r;
    r.task_id = id;
    r.dispatch_version = version;
    r.instance = instance;
    auto result = store_->ClaimTask(r);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : ClaimResult{};
  }

  std::optional<ClaimMiss> MissOf(int64_t id, int32_t version, const std::string& instance = "w2") {
    ClaimResult r = Claim(id, version, instance);
    EXPECT_FALSE(r.claimed);
    return r.miss;
  }

  std::vector<OutboxEntry> Outbox(int64_t task_id) {
    auto rows = store_->ListOutboxForTask(task_id);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : std::vector<OutboxEntry>{};
  }

  int64_t Now() {
    auto now = store_->DatabaseNowMs();
    EXPECT_TRUE(now.ok());
    return now.ok() ? *now : 0;
  }

  // Moves a stored time: the test's way of letting time pass.
  void Shift(const std::string& table, const std::string& column, int64_t delta_ms,
             int64_t id_or_task_id) {
    const std::string key = table == "export_task" ? "id" : "task_id";
    auto n = db_->Exec(
        "UPDATE " + table + " SET " + column + " = " + column + " + ? WHERE " + key + " = ?",
        {delta_ms, id_or_task_id});
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    ASSERT_GE(*n, 1) << "no row to shift in " << table;
  }

  int64_t Count(const std::string& sql, const SqlParams& params = {}) {
    auto rows = db_->Query(sql, params);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? rows->at(0).Int(0) : -1;
  }

  void Exec(const std::string& sql, const SqlParams& params = {}) {
    auto n = db_->Exec(sql, params);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
  }

  // Makes every `event` (INSERT or UPDATE) on `table` fail inside the
  // database, as a broken statement in the middle of a transaction would.
  void FailEvery(const std::string& event, const std::string& table) {
    const std::string name = "ec_fail_" + table;
    if (GetParam() == "sqlite") {
      Exec("CREATE TRIGGER " + name + " BEFORE " + event + " ON " + table +
           " BEGIN SELECT RAISE(ABORT, 'injected failure'); END");
      return;
    }
    if (GetParam() == "mysql") {
      Exec("CREATE TRIGGER " + name + " BEFORE " + event + " ON " + table +
           " FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected failure'");
      return;
    }
    Exec(
        "CREATE OR REPLACE FUNCTION ec_fail() RETURNS trigger LANGUAGE plpgsql AS"
        " $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$");
    Exec("CREATE TRIGGER " + name + " BEFORE " + event + " ON " + table +
         " FOR EACH ROW EXECUTE FUNCTION ec_fail()");
  }
  void StopFailing(const std::string& table) {
    const std::string name = "ec_fail_" + table;
    Exec(GetParam() == "postgres" ? "DROP TRIGGER " + name + " ON " + table
                                  : "DROP TRIGGER " + name);
  }

  static Attempt AttemptOf(const Task& t, const std::string& instance = "w1") {
    return {t.id, t.dispatch_version, instance};
  }

  static constexpr char kSomeSha256[] =
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

  static FileResult AFile(int64_t id) {
    return {"orders.xlsx",
            "exports/2025/01/01/" + std::to_string(id) + "/f.xlsx",
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            1234,
            10,
            std::string(kSomeSha256),
            {7, 3}};
  }

  std::unique_ptr<Backend> backend_;
  std::shared_ptr<Database> db_;
  std::unique_ptr<TaskStore> store_;
};

// ---- schema -------------------------------------------------------------------

TEST_P(TaskStoreContractTest, MigrateTwiceIsANoOp) {
  Task t = Create();
  ASSERT_OK(store_->Migrate());
  ASSERT_OK(store_->Migrate());
  EXPECT_EQ(*CurrentSchemaVersion(*db_), LatestSchemaVersion());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_schema_version"),
            static_cast<int64_t>(AllMigrations().size()));
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_task_guard"), 1);
  EXPECT_EQ(Get(t.id).id, t.id);
}

// `export-center check` reads the version and changes nothing: a database
// never migrated stays without the version table.
TEST_P(TaskStoreContractTest, ReadSchemaVersionsReadsWithoutMigrating) {
  auto migrated = store_->ReadSchemaVersions();
  ASSERT_OK(migrated.status());
  EXPECT_EQ(migrated->current, LatestSchemaVersion());
  EXPECT_EQ(migrated->latest, LatestSchemaVersion());

  ASSERT_OK(db_->Exec("DELETE FROM export_schema_version WHERE version = " +
                      std::to_string(LatestSchemaVersion()))
                .status());
  auto behind = store_->ReadSchemaVersions();
  ASSERT_OK(behind.status());
  // The migration before the latest (versions may leave gaps while branches merge).
  EXPECT_EQ(behind->current, AllMigrations().end()[-2].version);

  std::string skip;
  std::shared_ptr<Database> fresh = backend_->OpenFresh(&skip);
  ASSERT_NE(fresh, nullptr) << skip;
  std::unique_ptr<TaskStore> never_migrated = NewSqlTaskStore(fresh);
  EXPECT_FALSE(never_migrated->ReadSchemaVersions().ok());
  EXPECT_FALSE(never_migrated->ReadSchemaVersions().ok()) << "the read created the table";
}

// ---- compatibility between releases (docs/store.md#compatibility-rule) -------------

// Each version row records the oldest release that works with its migration.
TEST_P(TaskStoreContractTest, EveryAppliedMigrationRecordsTheOldestReleaseItWorksWith) {
  auto rows = db_->Query("SELECT version, compatible_from FROM export_schema_version");
  ASSERT_OK(rows.status());
  std::map<int64_t, std::string> recorded;
  for (const Row& row : *rows) recorded[row.Int(0)] = row.Text(1);
  ASSERT_EQ(recorded.size(), AllMigrations().size());
  for (const Migration& m : AllMigrations()) {
    EXPECT_EQ(recorded[m.version], m.compatible_from) << "migration " << m.version;
  }
}

// 0.9.0 made the version table without compatible_from: the next migrate
// adds it and fills it in for the rows 0.9.0 wrote.
TEST_P(TaskStoreContractTest, AVersionTableOfTheOldestReleaseGainsCompatibleFrom) {
  Exec("ALTER TABLE export_schema_version DROP COLUMN compatible_from");
  auto before = store_->ReadSchemaVersions();
  ASSERT_OK(before.status());
  EXPECT_EQ(before->incompatible, "");
  ASSERT_OK(store_->Migrate());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_schema_version WHERE compatible_from = ?",
                  {std::string(kOldestRelease)}),
            static_cast<int64_t>(AllMigrations().size()));
}

// A newer release applied a migration this binary does not know that only
// adds: this binary keeps working (the rolling upgrade's old instances).
TEST_P(TaskStoreContractTest, AnUnknownMigrationThatOnlyAddsIsAccepted) {
  const int next = LatestSchemaVersion() + 1;
  Exec(
      "INSERT INTO export_schema_version (version, description, applied_at, compatible_from)"
      " VALUES (?, 'export_task.next_column: a newer release adds a column', 0, ?)",
      {next, std::string(kOldestRelease)});
  ASSERT_OK(store_->Migrate());
  auto versions = store_->ReadSchemaVersions();
  ASSERT_OK(versions.status());
  EXPECT_EQ(versions->current, next);
  EXPECT_EQ(versions->incompatible, "");
  EXPECT_EQ(Get(Create().id).status, TaskState::kPending);
}

// A newer release dropped something this one reads (the second step of a
// two-release plan): this binary refuses the database, changes nothing and
// says which release to run.
TEST_P(TaskStoreContractTest, AnUnknownMigrationNeedingANewerReleaseIsRefused) {
  const int next = LatestSchemaVersion() + 1;
  Exec(
      "INSERT INTO export_schema_version (version, description, applied_at, compatible_from)"
      " VALUES (?, 'drop export_task.legacy_column', 0, '99.10.0')",
      {next});
  Exec("DELETE FROM export_task_guard");
  const std::string expected =
      "the database's schema has migration " + std::to_string(next) +
      " (drop export_task.legacy_column), which works only with export-center 99.10.0 or "
      "later; this binary is " +
      std::string(ThisRelease()) + ": run export-center 99.10.0 or later against this database";
  Status refused = store_->Migrate();
  EXPECT_EQ(refused.code(), StatusCode::kConflict);
  EXPECT_EQ(refused.message(), expected);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_task_guard"), 0) << "the refusal changed something";
  auto versions = store_->ReadSchemaVersions();
  ASSERT_OK(versions.status());
  EXPECT_EQ(versions->incompatible, expected);

  // Releases are compared by number: 99.9.x is older than 99.10.0, 99.10.0 itself works.
  EXPECT_EQ(Migrate(*db_, "99.9.12").code(), StatusCode::kConflict);
  ASSERT_OK(Migrate(*db_, "99.10.0"));
  ASSERT_OK(Migrate(*db_, "100.0.0"));
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_task_guard"), 1);
}

TEST_P(TaskStoreContractTest, ConcurrentMigrationsOfAFreshDatabaseAllSucceed) {
  std::string skip;
  std::shared_ptr<Database> fresh = backend_->OpenFresh(&skip);
  ASSERT_NE(fresh, nullptr);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      Status s = Migrate(*fresh);
      if (!s.ok()) {
        ++failures;
        ADD_FAILURE() << s.ToString();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(*CurrentSchemaVersion(*fresh), LatestSchemaVersion());
}

TEST_P(TaskStoreContractTest, MissingGuardRowFailsTheStartUpCheckUntilMigrated) {
  ASSERT_OK(store_->CheckGuardRow());
  Exec("DELETE FROM export_task_guard");
  EXPECT_EQ(store_->CheckGuardRow().code(), StatusCode::kInternal);
  EXPECT_EQ(store_->CreateTask(MakeTask("alice", "orders"), {}).status().code(),
            StatusCode::kInternal);
  ASSERT_OK(store_->Migrate());
  ASSERT_OK(store_->CheckGuardRow());
}

TEST_P(TaskStoreContractTest, DatabaseClockIsEpochMilliseconds) {
  int64_t db_now = Now();
  int64_t local = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  EXPECT_NEAR(static_cast<double>(db_now), static_cast<double>(local), 5.0 * kMinute);
}

// ---- create ---------------------------------------------------------------------

TEST_P(TaskStoreContractTest, CreateWritesTaskAndItsOutboxRowTogether) {
  NewTask nt = MakeTask("alice", "orders", R"({"from":"2025-01-01"})");
  nt.app_code = task::AppCode::kMerchant;
  nt.format = task::FileFormat::kCsv;
  nt.max_attempts = 4;
  nt.contract_version = "v7";
  int64_t before = Now();
  ASSERT_OK_AND_ASSIGN(CreateResult r, store_->CreateTask(nt, {}));
  EXPECT_FALSE(r.deduplicated);
  const Task& t = r.task;
  EXPECT_GT(t.id, 0);
  EXPECT_EQ(t.status, TaskState::kPending);
  EXPECT_EQ(t.dispatch_version, 1);
  EXPECT_EQ(t.attempt_count, 0);
  EXPECT_EQ(t.max_attempts, 4);
  EXPECT_EQ(t.app_code, task::AppCode::kMerchant);
  EXPECT_EQ(t.format, task::FileFormat::kCsv);
  EXPECT_EQ(t.parameters_json, nt.parameters_json);
  EXPECT_EQ(t.params_hash, nt.params_hash);
  EXPECT_EQ(t.contract_version, "v7");
  EXPECT_GE(t.requested_at, before);
  EXPECT_EQ(t.next_retry_at, t.requested_at);
  EXPECT_FALSE(t.lease_owner.has_value());

  std::vector<OutboxEntry> rows = Outbox(t.id);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, OutboxStatus::kPending);
  EXPECT_EQ(rows[0].dispatch_version, 1);
  EXPECT_EQ(rows[0].attempt_count, 0);
  EXPECT_EQ(rows[0].next_retry_at, t.next_retry_at);
  ASSERT_OK_AND_ASSIGN(task::Command c, task::DecodeCommand(rows[0].payload_json));
  EXPECT_EQ(c.task_id, t.id);
  EXPECT_EQ(c.export_type, "orders");
  EXPECT_EQ(c.dispatch_version, 1);
  EXPECT_EQ(c.event_id, rows[0].event_id);
  EXPECT_EQ(c.trace_id, "trace-alice");
}

TEST_P(TaskStoreContractTest, DuplicateWithinWindowReturnsTheSameTask) {
  Task first = Create("alice", "orders", R"({"a":1})");
  ASSERT_OK_AND_ASSIGN(CreateResult again,
                       store_->CreateTask(MakeTask("alice", "orders", R"({"a":1})"), {}));
  EXPECT_TRUE(again.deduplicated);
  EXPECT_EQ(again.task.id, first.id);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_outbox"), 1);
  // Other parameters, type or user are not duplicates.
  EXPECT_NE(Create("alice", "orders", R"({"a":2})").id, first.id);
  EXPECT_NE(Create("bob", "orders", R"({"a":1})").id, first.id);
}

TEST_P(TaskStoreContractTest, DuplicateAfterWindowCreatesANewTask) {
  Task first = Create("alice", "orders", R"({"a":1})");
  Shift("export_task", "requested_at", -61 * kSecond, first.id);
  ASSERT_OK_AND_ASSIGN(CreateResult again,
                       store_->CreateTask(MakeTask("alice", "orders", R"({"a":1})"), {}));
  EXPECT_FALSE(again.deduplicated);
  EXPECT_NE(again.task.id, first.id);
}

TEST_P(TaskStoreContractTest, DuplicateOfAFinishedTaskCreatesANewTask) {
  Task first = Create("alice", "orders", R"({"a":1})");
  ASSERT_OK(store_->RequestCancel(first.id).status());
  ASSERT_OK_AND_ASSIGN(CreateResult again,
                       store_->CreateTask(MakeTask("alice", "orders", R"({"a":1})"), {}));
  EXPECT_FALSE(again.deduplicated);
}

TEST_P(TaskStoreContractTest, FourthActiveTaskOfAUserIsRejected) {
  for (int i = 0; i < 3; ++i) Create("alice", "type" + std::to_string(i));
  auto fourth = store_->CreateTask(MakeTask("alice", "type9"), {});
  ASSERT_EQ(fourth.status().code(), StatusCode::kLimitExceeded);
  EXPECT_NE(fourth.status().message().find("3 active export tasks"), std::string::npos)
      << fourth.status().message();
  // Nothing of the rejected task was written.
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_task"), 3);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_outbox"), 3);
  // The same user id in another tenant is another user.
  ASSERT_OK(store_->CreateTask(MakeTask("alice", "type9", "{}", "t2"), {}).status());
  ASSERT_OK(store_->CreateTask(MakeTask("bob", "type9"), {}).status());
}

TEST_P(TaskStoreContractTest, SixthActiveTaskOfATypeIsRejected) {
  for (int i = 0; i < 5; ++i) Create("user" + std::to_string(i), "orders");
  auto sixth = store_->CreateTask(MakeTask("user9", "orders"), {});
  ASSERT_EQ(sixth.status().code(), StatusCode::kLimitExceeded);
  EXPECT_NE(sixth.status().message().find("orders"), std::string::npos);
  ASSERT_OK(store_->CreateTask(MakeTask("user9", "invoices"), {}).status());
}

TEST_P(TaskStoreContractTest, FinishedTasksDoNotCountAgainstTheLimits) {
  std::vector<Task> tasks;
  for (int i = 0; i < 3; ++i) tasks.push_back(Create("alice", "type" + std::to_string(i)));
  ASSERT_OK(store_->RequestCancel(tasks[0].id).status());
  ASSERT_OK(store_->CreateTask(MakeTask("alice", "type9"), {}).status());
}

TEST_P(TaskStoreContractTest, ConcurrentCreatesNeverExceedTheLimits) {
  constexpr int kThreads = 8;
  std::atomic<int> created{0};
  std::atomic<int> limited{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int j = 0; j < 4; ++j) {
        NewTask t = MakeTask("user" + std::to_string(i % 4), "orders",
                             R"({"t":)" + std::to_string(i) + R"(,"j":)" + std::to_string(j) + "}");
        for (int attempt = 0; attempt < 50; ++attempt) {
          auto r = store_->CreateTask(t, {});
          if (r.ok()) {
            ++created;
          } else if (r.status().code() == StatusCode::kLimitExceeded) {
            ++limited;
          } else if (r.status().IsTransient()) {
            continue;
          } else {
            ADD_FAILURE() << r.status().ToString();
          }
          break;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(created, 5);
  EXPECT_EQ(limited, kThreads * 4 - 5);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_task WHERE export_type = 'orders'"), 5);
  for (int u = 0; u < 4; ++u) {
    EXPECT_LE(Count("SELECT COUNT(*) FROM export_task WHERE requested_by = ?",
                    {"user" + std::to_string(u)}),
              3);
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_outbox"), 5);
}

// ---- claim (docs/task-lifecycle.md#claim-branches) ----------------------------

TEST_P(TaskStoreContractTest, ClaimTakesLeaseSetsDeadlineAndResetsProgress) {
  Task t = Create();
  Exec(
      "UPDATE export_task SET processed_rows = 5, total_rows = 9, failure_message = 'old'"
      " WHERE id = ?",
      {t.id});
  ClaimRequest r{t.id, 1, "w1", 300, 1800};
  ASSERT_OK_AND_ASSIGN(ClaimResult c, store_->ClaimTask(r));
  ASSERT_TRUE(c.claimed);
  ASSERT_TRUE(c.task.has_value());
  const Task& got = *c.task;
  EXPECT_EQ(got.status, TaskState::kRunning);
  EXPECT_EQ(got.attempt_count, 1);
  EXPECT_EQ(got.lease_owner, "w1");
  ASSERT_TRUE(got.started_at && got.lease_until && got.execution_deadline_at);
  EXPECT_EQ(*got.lease_until, *got.started_at + 300 * kSecond);
  EXPECT_EQ(*got.execution_deadline_at, *got.started_at + 1800 * kSecond);
  EXPECT_EQ(got.last_heartbeat_at, got.started_at);
  EXPECT_EQ(got.processed_rows, 0);
  EXPECT_FALSE(got.total_rows.has_value());
  EXPECT_FALSE(got.failure_message.has_value());
}

TEST_P(TaskStoreContractTest, ClaimMissWhenTheTaskNoLongerExists) {
  ClaimResult r = Claim(424242, 1);
  EXPECT_FALSE(r.claimed);
  EXPECT_EQ(r.miss, ClaimMiss::kTaskMissing);
  EXPECT_FALSE(r.task.has_value());
}

TEST_P(TaskStoreContractTest, ClaimMissForAnOldCommandAfterARetry) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_OK_AND_ASSIGN(RetryOutcome o, store_->ScheduleRetry(AttemptOf(t), "provider 503", 0));
  ASSERT_EQ(o, RetryOutcome::kRescheduled);
  EXPECT_EQ(MissOf(t.id, 1), ClaimMiss::kNewerVersion);
}

TEST_P(TaskStoreContractTest, ClaimMissForACommandNewerThanTheTask) {
  Task t = Create();
  EXPECT_EQ(MissOf(t.id, 5), ClaimMiss::kOlderVersion);
  EXPECT_EQ(Get(t.id).status, TaskState::kPending);
}

TEST_P(TaskStoreContractTest, ClaimMissForAFinishedTask) {
  Task done = Create("alice", "orders");
  ASSERT_TRUE(Claim(done.id).claimed);
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(done), AFile(done.id), 7),
            store::CommitOutcome::kCommitted);
  EXPECT_EQ(MissOf(done.id, 1), ClaimMiss::kFinished);

  Task cancelled = Create("alice", "invoices");
  ASSERT_OK(store_->RequestCancel(cancelled.id).status());
  EXPECT_EQ(MissOf(cancelled.id, 1), ClaimMiss::kFinished);
}

TEST_P(TaskStoreContractTest, ClaimMissForADuplicateWhileAnotherInstanceRuns) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id, 1, "w1").claimed);
  ClaimResult r = Claim(t.id, 1, "w2");
  EXPECT_EQ(r.miss, ClaimMiss::kRunningLeaseLive);
  ASSERT_TRUE(r.task.has_value());
  EXPECT_EQ(r.task->lease_owner, "w1");
}

TEST_P(TaskStoreContractTest, ClaimMissLeavesAnExpiredLeaseToTheReconciler) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id, 1, "w1").claimed);
  Shift("export_task", "lease_until", -301 * kSecond, t.id);
  EXPECT_EQ(MissOf(t.id, 1, "w2"), ClaimMiss::kRunningLeaseExpired);
  Task after = Get(t.id);
  EXPECT_EQ(after.lease_owner, "w1");
  EXPECT_EQ(after.attempt_count, 1);
}

TEST_P(TaskStoreContractTest, ClaimMissForACommandArrivingDuringBackoff) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_OK(store_->ScheduleRetry(AttemptOf(t), "provider 503", 15 * kMinute).status());
  EXPECT_EQ(MissOf(t.id, 2), ClaimMiss::kPendingBackoff);
  Shift("export_task", "next_retry_at", -15 * kMinute, t.id);
  EXPECT_TRUE(Claim(t.id, 2).claimed);
}

TEST_P(TaskStoreContractTest, ConcurrentClaimsOfOneCommandHaveOneWinner) {
  Task t = Create();
  std::atomic<int> winners{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      ClaimRequest r{t.id, 1, "w" + std::to_string(i), 300, 1800};
      for (int attempt = 0; attempt < 50; ++attempt) {
        auto c = store_->ClaimTask(r);
        if (!c.ok() && c.status().IsTransient()) continue;
        ASSERT_TRUE(c.ok()) << c.status().ToString();
        if (c->claimed) {
          ++winners;
        } else {
          EXPECT_TRUE(c->miss == ClaimMiss::kRunningLeaseLive || c->miss == ClaimMiss::kLostRace);
        }
        break;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(winners, 1);
  EXPECT_EQ(Get(t.id).attempt_count, 1);
}

// ---- renew, progress, commit (docs/task-lifecycle.md#running-an-attempt) ---------

TEST_P(TaskStoreContractTest, RenewExtendsTheLease) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  Shift("export_task", "lease_until", -200 * kSecond, t.id);
  ASSERT_OK_AND_ASSIGN(RenewOutcome o, store_->RenewLease(AttemptOf(t), 300));
  EXPECT_EQ(o, RenewOutcome::kRenewed);
  Task after = Get(t.id);
  EXPECT_EQ(*after.lease_until, *after.last_heartbeat_at + 300 * kSecond);
  EXPECT_GE(*after.lease_until, Now() + 299 * kSecond);
}

TEST_P(TaskStoreContractTest, RenewIsLostAfterTheVersionChanged) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  Shift("export_task", "lease_until", -301 * kSecond, t.id);
  ASSERT_EQ(store_->RecoverExpiredLeases(10)->size(), 1u);
  EXPECT_EQ(*store_->RenewLease(AttemptOf(t), 300), RenewOutcome::kLost);
}

TEST_P(TaskStoreContractTest, RenewIsLostForAnotherInstance) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id, 1, "w1").claimed);
  EXPECT_EQ(*store_->RenewLease(AttemptOf(t, "w2"), 300), RenewOutcome::kLost);
}

TEST_P(TaskStoreContractTest, RenewReportsAPassedDeadline) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  int64_t lease_before = *Get(t.id).lease_until;
  Shift("export_task", "execution_deadline_at", -1801 * kSecond, t.id);
  EXPECT_EQ(*store_->RenewLease(AttemptOf(t), 300), RenewOutcome::kDeadlinePassed);
  EXPECT_EQ(*Get(t.id).lease_until, lease_before);
}

TEST_P(TaskStoreContractTest, ProgressIsStoredAndReportsACancelRequest) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  EXPECT_EQ(*store_->UpdateProgress(AttemptOf(t), 100, 1000), store::ProgressOutcome::kContinue);
  EXPECT_EQ(*store_->UpdateProgress(AttemptOf(t), 200, std::nullopt),
            store::ProgressOutcome::kContinue);
  Task mid = Get(t.id);
  EXPECT_EQ(mid.processed_rows, 200);
  EXPECT_EQ(mid.total_rows, 1000);
  ASSERT_OK_AND_ASSIGN(TaskState s, store_->RequestCancel(t.id));
  EXPECT_EQ(s, TaskState::kRunning);
  EXPECT_EQ(*store_->UpdateProgress(AttemptOf(t), 300, std::nullopt),
            store::ProgressOutcome::kCancelRequested);
}

TEST_P(TaskStoreContractTest, ProgressOfALostAttemptIsAConflict) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  EXPECT_EQ(store_->UpdateProgress(AttemptOf(t, "w2"), 1, std::nullopt).status().code(),
            StatusCode::kConflict);
}

TEST_P(TaskStoreContractTest, CommitSuccessStoresTheFileAndItsExpiry) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  EXPECT_FALSE(Get(t.id).file_sha256.has_value());
  EXPECT_TRUE(Get(t.id).part_rows.empty());
  ASSERT_OK_AND_ASSIGN(store::CommitOutcome ok,
                       store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7));
  EXPECT_EQ(ok, store::CommitOutcome::kCommitted);
  Task done = Get(t.id);
  EXPECT_EQ(done.status, TaskState::kSucceeded);
  EXPECT_EQ(done.object_key, AFile(t.id).object_key);
  EXPECT_EQ(done.file_name, "orders.xlsx");
  EXPECT_EQ(done.size_bytes, 1234);
  EXPECT_EQ(done.total_rows, 10);
  EXPECT_EQ(done.processed_rows, 10);
  EXPECT_EQ(done.file_sha256, kSomeSha256);
  EXPECT_EQ(done.part_rows, (std::vector<int64_t>{7, 3}));
  ASSERT_TRUE(done.completed_at && done.expires_at);
  EXPECT_EQ(*done.expires_at, *done.completed_at + 7 * kDay);
  EXPECT_FALSE(done.lease_owner.has_value());
  EXPECT_FALSE(done.lease_until.has_value());
}

TEST_P(TaskStoreContractTest, CommitFailsAfterTheVersionChanged) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  Shift("export_task", "lease_until", -301 * kSecond, t.id);
  ASSERT_EQ(store_->RecoverExpiredLeases(10)->size(), 1u);
  EXPECT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7),
            store::CommitOutcome::kNotCommitted);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kPending);
  EXPECT_EQ(after.dispatch_version, 2);
  EXPECT_FALSE(after.object_key.has_value());
}

TEST_P(TaskStoreContractTest, CommitFailsAfterTheDeadline) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  Shift("export_task", "execution_deadline_at", -1801 * kSecond, t.id);
  EXPECT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7),
            store::CommitOutcome::kNotCommitted);
  EXPECT_EQ(Get(t.id).status, TaskState::kRunning);
}

TEST_P(TaskStoreContractTest, FinishAttemptEndsInTheGivenState) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  EXPECT_EQ(store_->FinishAttempt(AttemptOf(t), TaskState::kSucceeded, "X", "no").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(*store_->FinishAttempt(AttemptOf(t, "w2"), TaskState::kStale, "C", "m"),
            store::FinishOutcome::kLost);
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), TaskState::kStale, "CONTRACT_CHANGED",
                                   "the SQL contract changed"),
            store::FinishOutcome::kFinished);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kStale);
  EXPECT_EQ(after.failure_code, "CONTRACT_CHANGED");
  EXPECT_EQ(after.failure_message, "the SQL contract changed");
  EXPECT_TRUE(after.completed_at.has_value());
  EXPECT_FALSE(after.lease_owner.has_value());
}

// A message may quote a replica's bytes: PostgreSQL and MariaDB refuse text
// that is not UTF-8, so the store repairs and cuts every message it writes.
TEST_P(TaskStoreContractTest, MessagesAreStoredValidAndBoundedWhateverTheirBytes) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  std::string message = "value \"SO\xFFK\" is not a DATE; ";
  while (message.size() < 3000) message += "下单日期2026年12月1日";
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), TaskState::kFailed, "INVALID_DATA", message),
            store::FinishOutcome::kFinished);
  Task after = Get(t.id);
  ASSERT_TRUE(after.failure_message.has_value());
  EXPECT_TRUE(utf8::IsValid(*after.failure_message));
  EXPECT_LE(after.failure_message->size(), 1000u);
  EXPECT_EQ(after.failure_message->rfind("value \"SO\xEF\xBF\xBDK\" is not a DATE; 下单", 0), 0u)
      << *after.failure_message;
}

// ---- retries (docs/task-lifecycle.md#automatic-retry and #manual-retry) -----------

TEST_P(TaskStoreContractTest, ScheduleRetryBumpsVersionAndQueuesACommandAtTheSameInstant) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_OK(store_->UpdateProgress(AttemptOf(t), 50, 100).status());
  int64_t before = Now();
  ASSERT_OK_AND_ASSIGN(RetryOutcome o,
                       store_->ScheduleRetry(AttemptOf(t), "provider 503", kMinute));
  EXPECT_EQ(o, RetryOutcome::kRescheduled);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kPending);
  EXPECT_EQ(after.dispatch_version, 2);
  EXPECT_EQ(after.attempt_count, 1);
  EXPECT_GE(after.next_retry_at, before + kMinute);
  EXPECT_EQ(after.failure_message, "provider 503");
  EXPECT_EQ(after.processed_rows, 0);
  EXPECT_FALSE(after.total_rows.has_value());
  EXPECT_FALSE(after.lease_owner.has_value());

  std::vector<OutboxEntry> rows = Outbox(t.id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].dispatch_version, 2);
  EXPECT_EQ(rows[1].status, OutboxStatus::kPending);
  EXPECT_EQ(rows[1].next_retry_at, after.next_retry_at);
  EXPECT_EQ(task::DecodeCommand(rows[1].payload_json)->dispatch_version, 2);
  // Not due yet: the publisher does not send it early.
  std::vector<int64_t> due = *store_->SelectDueOutbox(50);
  EXPECT_EQ(std::count(due.begin(), due.end(), rows[1].id), 0);
}

TEST_P(TaskStoreContractTest, ScheduleRetryFailsTheTaskAtMaxAttempts) {
  NewTask nt = MakeTask("alice", "orders");
  nt.max_attempts = 2;
  Task t = Create(nt);
  ASSERT_TRUE(Claim(t.id, 1).claimed);
  ASSERT_EQ(*store_->ScheduleRetry(AttemptOf(t), "timeout", 0), RetryOutcome::kRescheduled);
  ASSERT_TRUE(Claim(t.id, 2).claimed);
  Attempt second{t.id, 2, "w1"};
  ASSERT_OK_AND_ASSIGN(RetryOutcome o, store_->ScheduleRetry(second, "timeout again", 0));
  EXPECT_EQ(o, RetryOutcome::kFailedMaxAttempts);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kFailed);
  EXPECT_EQ(after.dispatch_version, 2);
  EXPECT_EQ(after.failure_message, "timeout again");
  EXPECT_EQ(Outbox(t.id).size(), 2u);
}

TEST_P(TaskStoreContractTest, ScheduleRetryOfALostAttemptChangesNothing) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  EXPECT_EQ(*store_->ScheduleRetry(AttemptOf(t, "w2"), "x", 0), RetryOutcome::kLost);
  EXPECT_EQ(Get(t.id).status, TaskState::kRunning);
}

// The governed columns decided at create are what every attempt reads back,
// the claim's and a manual retry's too; a task without any reads back empty.
TEST_P(TaskStoreContractTest, ColumnPolicyIsStoredWithTheTaskAndKeptByARetry) {
  NewTask nt = MakeTask("alice", "orders");
  task::ColumnDecision phone;
  phone.key = "mobile";
  phone.action = task::ColumnAction::kMask;
  phone.keep_first = 3;
  phone.keep_last = 4;
  task::ColumnDecision salary;
  salary.key = "工资";
  nt.column_policy.decisions = {phone, salary};
  Task t = Create(nt);
  const std::string expected = task::ColumnPolicyToJson(nt.column_policy);
  EXPECT_EQ(task::ColumnPolicyToJson(t.column_policy), expected);
  EXPECT_EQ(task::ColumnPolicyToJson(Get(t.id).column_policy), expected);
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), TaskState::kFailed, "BAD", "bad"),
            store::FinishOutcome::kFinished);
  ASSERT_OK_AND_ASSIGN(Task retried, store_->ManualRetry(t.id, ""));
  EXPECT_EQ(task::ColumnPolicyToJson(retried.column_policy), expected);
  EXPECT_EQ(retried.column_policy.masked(), 1);
  EXPECT_EQ(retried.column_policy.omitted(), 1);

  EXPECT_TRUE(Get(Create("bob").id).column_policy.empty());
}

// task::Task::locale (migration 15): written at create, read back by the
// attempt's claim, kept by a manual retry (the same task row), and part of
// the duplicate check.
TEST_P(TaskStoreContractTest, TheRequestersLocaleIsStoredAndKeptByARetry) {
  NewTask nt = MakeTask("alice", "orders", R"({"a":1})");
  nt.locale = "zh-Hant-TW";
  Task t = Create(nt);
  EXPECT_EQ(t.locale, "zh-Hant-TW");
  EXPECT_EQ(Get(t.id).locale, "zh-Hant-TW");
  ClaimResult claim = Claim(t.id);
  ASSERT_TRUE(claim.claimed);
  ASSERT_TRUE(claim.task.has_value());
  EXPECT_EQ(claim.task->locale, "zh-Hant-TW");
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), TaskState::kFailed, "BAD", "bad"),
            store::FinishOutcome::kFinished);
  ASSERT_OK_AND_ASSIGN(Task retried, store_->ManualRetry(t.id, ""));
  EXPECT_EQ(retried.locale, "zh-Hant-TW");
  ClaimResult again = Claim(t.id, retried.dispatch_version);
  ASSERT_TRUE(again.claimed && again.task.has_value());
  EXPECT_EQ(again.task->locale, "zh-Hant-TW");

  // The same request in another language is another file, not a duplicate;
  // in the same language it is.
  NewTask zh = MakeTask("bob", "orders", R"({"a":1})");
  zh.locale = "zh-CN";
  NewTask en = zh;
  en.locale = "en";
  const Task first = Create(zh, Unlimited());
  ASSERT_OK_AND_ASSIGN(CreateResult other, store_->CreateTask(en, Unlimited()));
  EXPECT_FALSE(other.deduplicated);
  EXPECT_EQ(other.task.locale, "en");
  ASSERT_OK_AND_ASSIGN(CreateResult same, store_->CreateTask(zh, Unlimited()));
  EXPECT_TRUE(same.deduplicated);
  EXPECT_EQ(same.task.id, first.id);

  // No language given: "" (the definition's default), as for rows made before.
  EXPECT_EQ(Get(Create("carol").id).locale, "");
}

TEST_P(TaskStoreContractTest, ManualRetryOfAFailedTaskStartsANewVersion) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), TaskState::kFailed, "BAD", "bad params"),
            store::FinishOutcome::kFinished);
  ASSERT_OK_AND_ASSIGN(Task r, store_->ManualRetry(t.id, "trace-retry"));
  EXPECT_EQ(r.status, TaskState::kPending);
  EXPECT_EQ(r.dispatch_version, 2);
  EXPECT_EQ(r.attempt_count, 0);
  EXPECT_FALSE(r.failure_message.has_value());
  EXPECT_FALSE(r.failure_code.has_value());
  EXPECT_FALSE(r.completed_at.has_value());
  std::vector<OutboxEntry> rows = Outbox(t.id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].dispatch_version, 2);
  EXPECT_EQ(rows[1].next_retry_at, r.next_retry_at);
  EXPECT_EQ(task::DecodeCommand(rows[1].payload_json)->trace_id, "trace-retry");
  std::vector<int64_t> due = *store_->SelectDueOutbox(50);
  EXPECT_EQ(std::count(due.begin(), due.end(), rows[1].id), 1);
  EXPECT_TRUE(Claim(t.id, 2).claimed);
}

TEST_P(TaskStoreContractTest, ManualRetryOfACancelledTask) {
  Task t = Create();
  ASSERT_OK(store_->RequestCancel(t.id).status());
  ASSERT_OK_AND_ASSIGN(Task r, store_->ManualRetry(t.id, ""));
  EXPECT_EQ(r.status, TaskState::kPending);
  EXPECT_EQ(r.dispatch_version, 2);
}

TEST_P(TaskStoreContractTest, ManualRetryOfAnActiveTaskIsAConflict) {
  Task t = Create();
  EXPECT_EQ(store_->ManualRetry(t.id, "").status().code(), StatusCode::kConflict);
  ASSERT_TRUE(Claim(t.id).claimed);
  EXPECT_EQ(store_->ManualRetry(t.id, "").status().code(), StatusCode::kConflict);
  EXPECT_EQ(store_->ManualRetry(999, "").status().code(), StatusCode::kNotFound);
}

// ---- cancel -----------------------------------------------------------------------

TEST_P(TaskStoreContractTest, CancelOfAPendingTaskEndsItAtOnce) {
  Task t = Create();
  ASSERT_OK_AND_ASSIGN(TaskState s, store_->RequestCancel(t.id));
  EXPECT_EQ(s, TaskState::kCancelled);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kCancelled);
  EXPECT_TRUE(after.completed_at.has_value());
}

TEST_P(TaskStoreContractTest, CancelOfARunningTaskSetsTheFlag) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_OK_AND_ASSIGN(TaskState s, store_->RequestCancel(t.id));
  EXPECT_EQ(s, TaskState::kRunning);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kRunning);
  EXPECT_TRUE(after.cancel_requested);
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), TaskState::kCancelled, "CANCELLED", "by user"),
            store::FinishOutcome::kFinished);
  EXPECT_EQ(store_->RequestCancel(t.id).status().code(), StatusCode::kConflict);
  EXPECT_EQ(store_->RequestCancel(777).status().code(), StatusCode::kNotFound);
}

// ---- outbox publisher (docs/dispatch.md#the-outbox-row) --------------------------

TEST_P(TaskStoreContractTest, PublisherClaimsADueRowOnce) {
  Task t = Create();
  int64_t id = Outbox(t.id)[0].id;
  std::vector<int64_t> due = *store_->SelectDueOutbox(50);
  ASSERT_EQ(due, std::vector<int64_t>{id});
  ASSERT_OK_AND_ASSIGN(std::optional<OutboxEntry> e, store_->ClaimOutbox(id, "p1", 60));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->status, OutboxStatus::kClaimed);
  EXPECT_EQ(e->attempt_count, 1);
  EXPECT_EQ(e->lease_owner, "p1");
  EXPECT_GE(*e->lease_until, Now() + 59 * kSecond);
  EXPECT_FALSE(store_->ClaimOutbox(id, "p2", 60)->has_value());
  EXPECT_TRUE(store_->SelectDueOutbox(50)->empty());
  EXPECT_EQ(*store_->MarkOutboxSent(id, "p2"), store::MarkOutcome::kClaimLost);
  EXPECT_EQ(*store_->MarkOutboxSent(id, "p1"), store::MarkOutcome::kMarked);
  OutboxEntry sent = Outbox(t.id)[0];
  EXPECT_EQ(sent.status, OutboxStatus::kSent);
  EXPECT_TRUE(sent.sent_at.has_value());
  EXPECT_FALSE(sent.lease_owner.has_value());
}

TEST_P(TaskStoreContractTest, PublisherFailureBacksOffAndKeepsTheRow) {
  Task t = Create();
  int64_t id = Outbox(t.id)[0].id;
  ASSERT_TRUE(store_->ClaimOutbox(id, "p1", 60)->has_value());
  int64_t before = Now();
  ASSERT_EQ(*store_->MarkOutboxFailed(id, "p1", "broker down", 5 * kSecond),
            store::MarkOutcome::kMarked);
  OutboxEntry e = Outbox(t.id)[0];
  EXPECT_EQ(e.status, OutboxStatus::kPending);
  EXPECT_EQ(e.last_error, "broker down");
  EXPECT_GE(e.next_retry_at, before + 5 * kSecond);
  EXPECT_TRUE(store_->SelectDueOutbox(50)->empty());
  Shift("export_outbox", "next_retry_at", -5 * kSecond, t.id);
  EXPECT_EQ(store_->SelectDueOutbox(50)->size(), 1u);
  ASSERT_OK_AND_ASSIGN(std::optional<OutboxEntry> again, store_->ClaimOutbox(id, "p2", 60));
  EXPECT_EQ(again->attempt_count, 2);
}

// ---- reconciler (docs/task-lifecycle.md#reconciler-duties) -----------------------

TEST_P(TaskStoreContractTest, CaseARedispatchesAMissingCommandWithTheSameVersion) {
  Task t = Create();
  std::string old_event = Outbox(t.id)[0].event_id;
  Exec("DELETE FROM export_outbox WHERE task_id = ?", {t.id});
  EXPECT_EQ(*store_->RedispatchMissingOutbox(60, 50), 0);  // still within grace
  Shift("export_task", "next_retry_at", -61 * kSecond, t.id);
  EXPECT_EQ(*store_->RedispatchMissingOutbox(60, 50), 1);
  EXPECT_EQ(*store_->RedispatchMissingOutbox(60, 50), 0);
  std::vector<OutboxEntry> rows = Outbox(t.id);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].dispatch_version, 1);
  EXPECT_NE(rows[0].event_id, old_event);
  EXPECT_EQ(rows[0].status, OutboxStatus::kPending);
  EXPECT_EQ(Get(t.id).dispatch_version, 1);
}

TEST_P(TaskStoreContractTest, CaseAIsBlockedByAQuarantinedRow) {
  Task t = Create();
  Exec("UPDATE export_outbox SET status = 'QUARANTINED' WHERE task_id = ?", {t.id});
  Shift("export_task", "next_retry_at", -61 * kSecond, t.id);
  EXPECT_EQ(*store_->RedispatchMissingOutbox(60, 50), 0);
}

TEST_P(TaskStoreContractTest, CaseBResendsAStaleSentCommandWithTheSameVersion) {
  Task t = Create();
  OutboxEntry row = Outbox(t.id)[0];
  ASSERT_TRUE(store_->ClaimOutbox(row.id, "p1", 60)->has_value());
  ASSERT_EQ(*store_->MarkOutboxSent(row.id, "p1"), store::MarkOutcome::kMarked);
  EXPECT_EQ(*store_->ResendStaleSentOutbox(600, 60, 20), 0);
  Shift("export_outbox", "sent_at", -601 * kSecond, t.id);
  Shift("export_task", "next_retry_at", -61 * kSecond, t.id);
  EXPECT_EQ(*store_->ResendStaleSentOutbox(600, 60, 20), 1);
  OutboxEntry after = Outbox(t.id)[0];
  EXPECT_EQ(after.id, row.id);
  EXPECT_EQ(after.event_id, row.event_id);
  EXPECT_EQ(after.dispatch_version, 1);
  EXPECT_EQ(after.status, OutboxStatus::kPending);
  EXPECT_EQ(Get(t.id).dispatch_version, 1);
  EXPECT_EQ(store_->SelectDueOutbox(50)->size(), 1u);
}

TEST_P(TaskStoreContractTest, CaseBLeavesCommandsOfRunningTasksAlone) {
  Task t = Create();
  OutboxEntry row = Outbox(t.id)[0];
  ASSERT_TRUE(store_->ClaimOutbox(row.id, "p1", 60)->has_value());
  ASSERT_EQ(*store_->MarkOutboxSent(row.id, "p1"), store::MarkOutcome::kMarked);
  ASSERT_TRUE(Claim(t.id).claimed);
  Shift("export_outbox", "sent_at", -601 * kSecond, t.id);
  Shift("export_task", "next_retry_at", -61 * kSecond, t.id);
  EXPECT_EQ(*store_->ResendStaleSentOutbox(600, 60, 20), 0);
}

TEST_P(TaskStoreContractTest, LeaseRecoveryRequeuesWithANewVersion) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  EXPECT_TRUE(store_->RecoverExpiredLeases(20)->empty());  // lease still live
  Shift("export_task", "lease_until", -301 * kSecond, t.id);
  ASSERT_OK_AND_ASSIGN(std::vector<RecoveredLease> rec, store_->RecoverExpiredLeases(20));
  ASSERT_EQ(rec.size(), 1u);
  EXPECT_EQ(rec[0].task_id, t.id);
  EXPECT_EQ(rec[0].old_version, 1);
  EXPECT_EQ(rec[0].outcome, LeaseRecovery::kRequeued);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kPending);
  EXPECT_EQ(after.dispatch_version, 2);
  EXPECT_FALSE(after.lease_owner.has_value());
  EXPECT_LE(after.next_retry_at, Now());
  std::vector<OutboxEntry> rows = Outbox(t.id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].dispatch_version, 2);
  EXPECT_TRUE(store_->RecoverExpiredLeases(20)->empty());
  EXPECT_TRUE(Claim(t.id, 2, "w2").claimed);
}

TEST_P(TaskStoreContractTest, LeaseRecoveryFailsTheTaskAtMaxAttempts) {
  NewTask nt = MakeTask("alice", "orders");
  nt.max_attempts = 1;
  Task t = Create(nt);
  ASSERT_TRUE(Claim(t.id).claimed);
  Shift("export_task", "lease_until", -301 * kSecond, t.id);
  ASSERT_OK_AND_ASSIGN(std::vector<RecoveredLease> rec, store_->RecoverExpiredLeases(20));
  ASSERT_EQ(rec.size(), 1u);
  EXPECT_EQ(rec[0].outcome, LeaseRecovery::kFailed);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kFailed);
  EXPECT_EQ(after.dispatch_version, 1);
  EXPECT_EQ(after.failure_code, "LEASE_LOST");
  EXPECT_EQ(Outbox(t.id).size(), 1u);
}

TEST_P(TaskStoreContractTest, StaleClaimedOutboxRowIsReleased) {
  Task t = Create();
  int64_t id = Outbox(t.id)[0].id;
  ASSERT_TRUE(store_->ClaimOutbox(id, "p1", 60)->has_value());
  EXPECT_EQ(*store_->ReleaseStaleClaimedOutbox(50), 0);
  Shift("export_outbox", "lease_until", -61 * kSecond, t.id);
  EXPECT_EQ(*store_->ReleaseStaleClaimedOutbox(50), 1);
  OutboxEntry e = Outbox(t.id)[0];
  EXPECT_EQ(e.status, OutboxStatus::kPending);
  EXPECT_FALSE(e.lease_owner.has_value());
  EXPECT_EQ(Get(t.id).dispatch_version, 1);
  EXPECT_EQ(store_->SelectDueOutbox(50)->size(), 1u);
  EXPECT_EQ(*store_->MarkOutboxSent(id, "p1"),
            store::MarkOutcome::kClaimLost);  // its lease is gone
}

TEST_P(TaskStoreContractTest, PurgeDeletesOnlyOldSentRowsInBatches) {
  std::vector<Task> tasks;
  for (int i = 0; i < 4; ++i)
    tasks.push_back(Create("u" + std::to_string(i), "t" + std::to_string(i)));
  for (int i = 0; i < 3; ++i) {
    int64_t id = Outbox(tasks[i].id)[0].id;
    ASSERT_TRUE(store_->ClaimOutbox(id, "p1", 60)->has_value());
    ASSERT_EQ(*store_->MarkOutboxSent(id, "p1"), store::MarkOutcome::kMarked);
  }
  EXPECT_EQ(*store_->PurgeSentOutbox(7 * 86400, 2), 0);  // too young
  Exec("UPDATE export_outbox SET sent_at = sent_at - ?, created_at = created_at - ?",
       {8 * kDay, 8 * kDay});
  EXPECT_EQ(*store_->PurgeSentOutbox(7 * 86400, 2), 2);
  EXPECT_EQ(*store_->PurgeSentOutbox(7 * 86400, 2), 1);
  EXPECT_EQ(*store_->PurgeSentOutbox(7 * 86400, 2), 0);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_outbox"), 1);
  EXPECT_EQ(Outbox(tasks[3].id).size(), 1u);
}

TEST_P(TaskStoreContractTest, ExpiredArtifactsAreListedAndMarked) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7), store::CommitOutcome::kCommitted);
  const std::string key = AFile(t.id).object_key;
  EXPECT_TRUE(store_->ListExpiredArtifacts(10)->empty());
  EXPECT_EQ(*store_->MarkExpired(t.id), store::ExpireOutcome::kNotDue);
  EXPECT_EQ(Get(t.id).object_key, key);
  Shift("export_task", "expires_at", -7 * kDay, t.id);
  ASSERT_OK_AND_ASSIGN(std::vector<ExpiredArtifact> expired, store_->ListExpiredArtifacts(10));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].task_id, t.id);
  EXPECT_EQ(expired[0].object_key, key);
  EXPECT_EQ(*store_->MarkExpired(t.id), store::ExpireOutcome::kExpired);
  EXPECT_EQ(*store_->MarkExpired(t.id), store::ExpireOutcome::kNotDue);
  EXPECT_EQ(Get(t.id).status, TaskState::kExpired);
}

// ---- dead letters (docs/task-lifecycle.md#dead-letters-and-quarantine) ------------

TEST_P(TaskStoreContractTest, QuarantineIsolatesTheRowAndFailsTheTask) {
  Task t = Create();
  OutboxEntry row = Outbox(t.id)[0];
  ASSERT_TRUE(store_->ClaimOutbox(row.id, "p1", 60)->has_value());
  ASSERT_EQ(*store_->MarkOutboxSent(row.id, "p1"), store::MarkOutcome::kMarked);
  ASSERT_OK(store_->QuarantineCommand(t.id, 1, row.event_id, "bad JSON"));
  OutboxEntry after = Outbox(t.id)[0];
  EXPECT_EQ(after.status, OutboxStatus::kQuarantined);
  EXPECT_NE(after.last_error->find("bad JSON"), std::string::npos);
  Task failed = Get(t.id);
  EXPECT_EQ(failed.status, TaskState::kFailed);
  EXPECT_EQ(failed.failure_code, "COMMAND_QUARANTINED");
  // Repeating the quarantine (a redelivered dead letter) is harmless.
  ASSERT_OK(store_->QuarantineCommand(t.id, 1, row.event_id, "bad JSON"));
  // A manual retry gets a fresh version; the quarantined row stays as audit.
  ASSERT_OK_AND_ASSIGN(Task retried, store_->ManualRetry(t.id, ""));
  EXPECT_EQ(retried.dispatch_version, 2);
  std::vector<OutboxEntry> rows = Outbox(t.id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, OutboxStatus::kQuarantined);
}

TEST_P(TaskStoreContractTest, QuarantineOfAnOldOrForeignMessageChangesNothing) {
  Task t = Create();
  EXPECT_EQ(store_->QuarantineCommand(t.id, 1, "not-the-event", "bad").code(),
            StatusCode::kConflict);
  EXPECT_EQ(store_->QuarantineCommand(t.id, 2, Outbox(t.id)[0].event_id, "bad").code(),
            StatusCode::kConflict);
  EXPECT_EQ(Get(t.id).status, TaskState::kPending);
  EXPECT_EQ(Outbox(t.id)[0].status, OutboxStatus::kPending);
}

// ---- list, downloads, gauges ------------------------------------------------------

TEST_P(TaskStoreContractTest, ListPagesNewestFirstWithFiltersAndTenantIsolation) {
  std::vector<Task> mine;
  for (int i = 0; i < 5; ++i) {
    mine.push_back(Create(
        MakeTask("alice", i % 2 ? "orders" : "invoices", "{\"i\":" + std::to_string(i) + "}"),
        Unlimited()));
    // Older tasks first: task i was requested (5 - i) minutes ago.
    Shift("export_task", "requested_at", -(5 - i) * kMinute, mine.back().id);
  }
  Create(MakeTask("bob", "orders"), Unlimited());
  Create(MakeTask("alice", "orders", "{}", "other-tenant"), Unlimited());
  NewTask merchant = MakeTask("alice", "orders", R"({"m":1})");
  merchant.app_code = task::AppCode::kMerchant;
  Create(merchant, Unlimited());

  TaskStore::ListQuery q;
  q.tenant_id = "t1";
  q.requested_by = "alice";
  q.size = 2;
  ASSERT_OK_AND_ASSIGN(TaskStore::ListPage p1, store_->ListTasks(q));
  EXPECT_EQ(p1.total, 5);
  ASSERT_EQ(p1.records.size(), 2u);
  EXPECT_EQ(p1.records[0].id, mine[4].id);
  EXPECT_EQ(p1.records[1].id, mine[3].id);
  q.page = 3;
  ASSERT_OK_AND_ASSIGN(TaskStore::ListPage p3, store_->ListTasks(q));
  ASSERT_EQ(p3.records.size(), 1u);
  EXPECT_EQ(p3.records[0].id, mine[0].id);

  q.page = 1;
  q.size = 20;
  q.export_type = "orders";
  EXPECT_EQ(store_->ListTasks(q)->total, 2);
  q.export_type.reset();
  ASSERT_OK(store_->RequestCancel(mine[2].id).status());
  q.status = TaskState::kCancelled;
  ASSERT_OK_AND_ASSIGN(TaskStore::ListPage cancelled, store_->ListTasks(q));
  ASSERT_EQ(cancelled.total, 1);
  EXPECT_EQ(cancelled.records[0].id, mine[2].id);

  TaskStore::ListQuery tenant;
  tenant.tenant_id = "t1";
  EXPECT_EQ(store_->ListTasks(tenant)->total, 6);  // alice's 5 and bob's 1, PLATFORM only
  tenant.app_code = task::AppCode::kMerchant;
  EXPECT_EQ(store_->ListTasks(tenant)->total, 1);
  TaskStore::ListQuery other;
  other.tenant_id = "other-tenant";
  ASSERT_OK_AND_ASSIGN(TaskStore::ListPage o, store_->ListTasks(other));
  ASSERT_EQ(o.total, 1);
  EXPECT_EQ(o.records[0].tenant_id, "other-tenant");
  TaskStore::ListQuery nobody;
  nobody.tenant_id = "t3";
  EXPECT_EQ(store_->ListTasks(nobody)->total, 0);
}

DownloadRecord DownloadOf(const Task& t, const std::string& user, const std::string& via) {
  DownloadRecord d;
  d.task_id = t.id;
  d.tenant_id = t.tenant_id;
  d.app_code = t.app_code;
  d.user = user;
  d.export_type = t.export_type;
  d.via = via;
  d.served_by = "STREAM";
  d.client_address = "127.0.0.1";
  d.user_agent = "curl/8.0 \xe6\xb5\x8b\xe8\xaf\x95";
  d.request_id = "req-1";
  return d;
}

constexpr int kWindow = 600;  // limits.download-audit-window-seconds' default

TEST_P(TaskStoreContractTest, DownloadsAreCountedAndAuditedInOneStep) {
  Task t = Create();
  ASSERT_TRUE(store_->RecordDownload(DownloadOf(t, t.requested_by, "DIRECT"), kWindow).ok());
  ASSERT_TRUE(store_->RecordDownload(DownloadOf(t, "admin", "SIGNED_LINK"), kWindow).ok());
  Task after = Get(t.id);
  EXPECT_EQ(after.download_count, 2);
  EXPECT_TRUE(after.last_downloaded_at.has_value());

  DownloadAuditQuery q;
  q.tenant_id = t.tenant_id;
  q.app_code = t.app_code;
  ASSERT_OK_AND_ASSIGN(DownloadAuditPage all, store_->ListDownloadAudit(q));
  ASSERT_EQ(all.total, 2);
  ASSERT_EQ(all.records.size(), 2u);
  const DownloadAuditEntry& newest = all.records[0];
  EXPECT_EQ(newest.record.user, "admin");  // newest first
  EXPECT_EQ(newest.record.via, "SIGNED_LINK");
  EXPECT_EQ(newest.record.task_id, t.id);
  EXPECT_EQ(newest.record.export_type, t.export_type);
  EXPECT_EQ(newest.record.user_agent, "curl/8.0 \xe6\xb5\x8b\xe8\xaf\x95");
  EXPECT_EQ(newest.record.client_address, "127.0.0.1");
  EXPECT_EQ(newest.record.request_id, "req-1");
  EXPECT_GE(newest.downloaded_at, *after.last_downloaded_at - kMinute);
  EXPECT_EQ(all.records[1].record.user, t.requested_by);

  // A missing task counts nothing and audits nothing.
  Task ghost = t;
  ghost.id = 31337;
  EXPECT_EQ(store_->RecordDownload(DownloadOf(ghost, "x", "DIRECT"), kWindow).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(store_->ListDownloadAudit(q)->total, 2);
}

// docs/http-api.md#download-audit: once per (task, user) and window, also
// when a download manager asks for 16 ranges at the same moment.
TEST_P(TaskStoreContractTest, DownloadIsAuditedOncePerTaskUserAndWindow) {
  Task t = Create();
  Task other = Create("bob", "orders");
  ASSERT_OK_AND_ASSIGN(store::DownloadCount first,
                       store_->RecordDownload(DownloadOf(t, "alice", "DIRECT"), 600));
  EXPECT_EQ(first, store::DownloadCount::kCounted);
  ASSERT_OK_AND_ASSIGN(store::DownloadCount again,
                       store_->RecordDownload(DownloadOf(t, "alice", "DIRECT"), 600));
  EXPECT_EQ(again, store::DownloadCount::kWithinWindow) << "the same user inside the window";
  // Via a signed link it is still alice's download of the same file.
  EXPECT_EQ(*store_->RecordDownload(DownloadOf(t, "alice", "SIGNED_LINK"), 600),
            store::DownloadCount::kWithinWindow);
  EXPECT_EQ(*store_->RecordDownload(DownloadOf(t, "admin", "DIRECT"), 600),
            store::DownloadCount::kCounted)
      << "another user";
  EXPECT_EQ(*store_->RecordDownload(DownloadOf(other, "alice", "DIRECT"), 600),
            store::DownloadCount::kCounted)
      << "another task";
  EXPECT_EQ(Get(t.id).download_count, 2);

  // The window passes (the row ages by the database clock): alice counts again.
  Exec("UPDATE export_download_audit SET downloaded_at = downloaded_at - ? WHERE task_id = ?",
       {int64_t{601} * kSecond, t.id});
  EXPECT_EQ(*store_->RecordDownload(DownloadOf(t, "alice", "DIRECT"), 600),
            store::DownloadCount::kCounted);
  EXPECT_EQ(Get(t.id).download_count, 3);

  // 16 parallel calls (a download manager's ranges): one row, one count.
  Task fresh = Create("carol", "orders");
  std::atomic<int> counted{0}, failed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&] {
      // Unavailable (a lock wait or deadlock the database broke) is retried
      // as every caller of the store does.
      for (int tries = 0; tries < 20; ++tries) {
        auto r = store_->RecordDownload(DownloadOf(fresh, "carol", "DIRECT"), 600);
        if (r.ok()) {
          if (*r == store::DownloadCount::kCounted) ++counted;
          return;
        }
        if (r.status().code() != StatusCode::kUnavailable) break;
      }
      ++failed;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(counted, 1);
  EXPECT_EQ(Get(fresh.id).download_count, 1);
  DownloadAuditQuery q;
  q.tenant_id = fresh.tenant_id;
  q.app_code = fresh.app_code;
  q.task_id = fresh.id;
  EXPECT_EQ(store_->ListDownloadAudit(q)->total, 1);
}

// A signed link names its signer, not whoever follows it: followed from
// another address it is a download of its own, even inside the signer's
// window; that follower's repeated ranges count once; the signer's own
// answers (direct, or the link from the signer's address) stay one download.
TEST_P(TaskStoreContractTest, ASignedLinkFollowedByAnotherIsItsOwnDownload) {
  Task t = Create();
  auto from = [&](const std::string& via, const std::string& address) {
    DownloadRecord d = DownloadOf(t, "alice", via);
    d.client_address = address;
    return d;
  };
  EXPECT_EQ(*store_->RecordDownload(from("DIRECT", "10.0.0.1"), kWindow),
            store::DownloadCount::kCounted);
  EXPECT_EQ(*store_->RecordDownload(from("SIGNED_LINK", "10.0.0.1"), kWindow),
            store::DownloadCount::kWithinWindow)
      << "the signer following the link from where it downloaded";
  EXPECT_EQ(*store_->RecordDownload(from("SIGNED_LINK", "192.0.2.7"), kWindow),
            store::DownloadCount::kCounted)
      << "someone else following alice's link";
  EXPECT_EQ(*store_->RecordDownload(from("SIGNED_LINK", "192.0.2.7"), kWindow),
            store::DownloadCount::kWithinWindow)
      << "the same follower's next range";
  EXPECT_EQ(*store_->RecordDownload(from("DIRECT", "10.0.0.2"), kWindow),
            store::DownloadCount::kWithinWindow)
      << "alice with her token, from another address: still her download";
  EXPECT_EQ(Get(t.id).download_count, 2);
  DownloadAuditQuery q;
  q.tenant_id = t.tenant_id;
  q.app_code = t.app_code;
  q.task_id = t.id;
  ASSERT_OK_AND_ASSIGN(DownloadAuditPage page, store_->ListDownloadAudit(q));
  ASSERT_EQ(page.total, 2);
  EXPECT_EQ(page.records[0].record.via, "SIGNED_LINK");
  EXPECT_EQ(page.records[0].record.client_address, "192.0.2.7");
}

TEST_P(TaskStoreContractTest, DownloadAuditFiltersAndStaysInItsTenant) {
  Task t = Create();
  ASSERT_TRUE(store_->RecordDownload(DownloadOf(t, "alice", "DIRECT"), 0).ok());
  // No window: each call counts.
  ASSERT_TRUE(store_->RecordDownload(DownloadOf(t, "bob", "DIRECT"), 0).ok());
  ASSERT_TRUE(store_->RecordDownload(DownloadOf(t, "bob", "DIRECT"), 0).ok());
  DownloadAuditQuery q;
  q.tenant_id = t.tenant_id;
  q.app_code = t.app_code;

  DownloadAuditQuery by_user = q;
  by_user.user = "bob";
  EXPECT_EQ(store_->ListDownloadAudit(by_user)->total, 2);
  DownloadAuditQuery by_task = q;
  by_task.task_id = t.id + 1;
  EXPECT_EQ(store_->ListDownloadAudit(by_task)->total, 0);
  by_task.task_id = t.id;
  EXPECT_EQ(store_->ListDownloadAudit(by_task)->total, 3);

  ASSERT_OK_AND_ASSIGN(DownloadAuditPage all, store_->ListDownloadAudit(q));
  const int64_t at = all.records[0].downloaded_at;
  DownloadAuditQuery window = q;
  window.from_ms = at + 1;
  EXPECT_EQ(store_->ListDownloadAudit(window)->total, 0);
  window.from_ms = at - kMinute;
  window.to_ms = at + 1;
  EXPECT_EQ(store_->ListDownloadAudit(window)->total, 3);

  DownloadAuditQuery paged = q;
  paged.size = 2;
  paged.page = 2;
  ASSERT_OK_AND_ASSIGN(DownloadAuditPage second, store_->ListDownloadAudit(paged));
  EXPECT_EQ(second.total, 3);
  EXPECT_EQ(second.records.size(), 1u);

  DownloadAuditQuery other_tenant = q;
  other_tenant.tenant_id = "other-tenant";
  EXPECT_EQ(store_->ListDownloadAudit(other_tenant)->total, 0);
  DownloadAuditQuery other_app = q;
  other_app.app_code =
      t.app_code == task::AppCode::kPlatform ? task::AppCode::kMerchant : task::AppCode::kPlatform;
  EXPECT_EQ(store_->ListDownloadAudit(other_app)->total, 0);
}

TEST_P(TaskStoreContractTest, ListFiltersByNameStatusSetAndRetrying) {
  NewTask report = MakeTask("alice", "orders", R"({"n":1})");
  report.task_name = "Q3 订单 100%_done";
  Task named = Create(report, Unlimited());
  Task plain = Create(MakeTask("alice", "invoices"), Unlimited());
  Task retried = Create(MakeTask("alice", "refunds"), Unlimited());
  Exec("UPDATE export_task SET attempt_count = 1 WHERE id = ?", {retried.id});
  Task failed = Create(MakeTask("alice", "stock"), Unlimited());
  Exec("UPDATE export_task SET status = 'STALE' WHERE id = ?", {failed.id});

  TaskStore::ListQuery q;
  q.tenant_id = "t1";
  q.requested_by = "alice";
  q.name_contains = "订单";
  ASSERT_OK_AND_ASSIGN(TaskStore::ListPage by_name, store_->ListTasks(q));
  ASSERT_EQ(by_name.total, 1);
  EXPECT_EQ(by_name.records[0].id, named.id);
  q.name_contains = "q3";  // ASCII letters match in any case
  EXPECT_EQ(store_->ListTasks(q)->total, 1);
  q.name_contains = "0%_";  // % and _ are literal characters, not wildcards
  EXPECT_EQ(store_->ListTasks(q)->total, 1);
  q.name_contains = "0%x";
  EXPECT_EQ(store_->ListTasks(q)->total, 0);
  q.name_contains.reset();

  q.retrying = true;
  ASSERT_OK_AND_ASSIGN(TaskStore::ListPage retrying, store_->ListTasks(q));
  ASSERT_EQ(retrying.total, 1);
  EXPECT_EQ(retrying.records[0].id, retried.id);
  q.retrying = false;
  EXPECT_EQ(store_->ListTasks(q)->total, 2);  // named and plain: PENDING, never attempted
  q.retrying.reset();
  q.any_status = {TaskState::kFailed, TaskState::kStale, TaskState::kInconsistent};
  ASSERT_OK_AND_ASSIGN(TaskStore::ListPage problems, store_->ListTasks(q));
  ASSERT_EQ(problems.total, 1);
  EXPECT_EQ(problems.records[0].id, failed.id);
  (void)plain;
}

// docs/http-api.md#get-export-tasksevents--task-events: more changes in one millisecond than a page
// holds are paged through by the key (updated_at, id), each once, in key order; up_to bounds a read
// from above, and ListChangeKeys reads the same keys.
TEST_P(TaskStoreContractTest, ListChangedTasksPagesByKeysetThroughOneMillisecond) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 23; ++i) {
    const std::string params = "{\"i\":" + std::to_string(i) + "}";
    ids.push_back(Create(MakeTask("u" + std::to_string(i % 3), "orders", params), Unlimited()).id);
  }
  const int64_t t0 = Now() + 10 * kSecond;
  // 20 changes in one millisecond, one before it and two after it.
  Exec("UPDATE export_task SET updated_at = ?", {t0});
  Exec("UPDATE export_task SET updated_at = ? WHERE id = ?", {t0 - 1, ids[5]});
  Exec("UPDATE export_task SET updated_at = ? WHERE id = ?", {t0 + 1, ids[0]});
  Exec("UPDATE export_task SET updated_at = ? WHERE id = ?", {t0 + 2, ids[9]});
  std::vector<TaskStore::ChangeKey> expected;
  for (int64_t id : ids) {
    const int64_t at = id == ids[5] ? t0 - 1 : id == ids[0] ? t0 + 1 : id == ids[9] ? t0 + 2 : t0;
    expected.push_back({at, id});
  }
  std::sort(expected.begin(), expected.end());

  TaskStore::ChangeQuery q;
  q.updated_after_ms = t0 - 2;
  q.after_id = 0;
  q.limit = 4;
  std::vector<TaskStore::ChangeKey> paged;
  for (int pages = 0; pages < 20; ++pages) {
    ASSERT_OK_AND_ASSIGN(std::vector<Task> page, store_->ListChangedTasks(q));
    for (const Task& t : page) paged.push_back({t.updated_at, t.id});
    if (page.size() < 4u) break;
    q.updated_after_ms = page.back().updated_at;
    q.after_id = page.back().id;
  }
  EXPECT_EQ(paged, expected);

  // Keys only, bounded above: the changes of t0 up to the 10th of them.
  q.updated_after_ms = t0 - 1;
  q.after_id = ids[5];
  q.up_to = expected[10];
  q.limit = 100;
  ASSERT_OK_AND_ASSIGN(std::vector<TaskStore::ChangeKey> keys, store_->ListChangeKeys(q));
  EXPECT_EQ(keys, std::vector<TaskStore::ChangeKey>(expected.begin() + 1, expected.begin() + 11));
  ASSERT_OK_AND_ASSIGN(std::vector<Task> bounded, store_->ListChangedTasks(q));
  ASSERT_EQ(bounded.size(), 10u);
  EXPECT_EQ(bounded.back().id, expected[10].id);

  // One tenant's user, paged the same way.
  q.up_to.reset();
  q.updated_after_ms = t0;
  q.after_id = expected[3].id;
  q.tenant_id = "t1";
  q.requested_by = "u1";
  ASSERT_OK_AND_ASSIGN(std::vector<Task> mine, store_->ListChangedTasks(q));
  for (const Task& t : mine) {
    EXPECT_EQ(t.requested_by, "u1");
    EXPECT_GT((TaskStore::ChangeKey{t.updated_at, t.id}), expected[3]);
  }
  EXPECT_FALSE(mine.empty());

  // The read is served by the (updated_at, id) index (migration 6), which
  // replaced the (updated_at) one.
  const std::string index_count =
      GetParam() == "sqlite"     ? "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index'"
                                   " AND name = ?"
      : GetParam() == "postgres" ? "SELECT COUNT(*) FROM pg_indexes WHERE indexname = ?"
                                 : "SELECT COUNT(DISTINCT index_name)"
                                   " FROM information_schema.statistics"
                                   " WHERE table_schema = DATABASE() AND index_name = ?";
  EXPECT_EQ(Count(index_count, {std::string("idx_export_task_change_key")}), 1);
  EXPECT_EQ(Count(index_count, {std::string("idx_export_task_updated_at")}), 0);
  if (GetParam() == "sqlite") {
    ASSERT_OK_AND_ASSIGN(Rows plan,
                         db_->Query("EXPLAIN QUERY PLAN SELECT updated_at, id FROM export_task"
                                    " WHERE updated_at >= ? AND (updated_at > ? OR id > ?)"
                                    " ORDER BY updated_at, id LIMIT ?",
                                    {t0, t0, int64_t{0}, int64_t{10}}));
    std::string text;
    for (const Row& r : plan) text += r.Text(r.size() - 1) + "\n";
    EXPECT_NE(text.find("idx_export_task_change_key"), std::string::npos) << text;
    EXPECT_EQ(text.find("TEMP B-TREE"), std::string::npos) << text;
  }
}

TEST_P(TaskStoreContractTest, ListChangedTasksReturnsChangesAfterAPointOldestFirst) {
  Task a = Create(MakeTask("alice", "orders"), Unlimited());
  Task b = Create(MakeTask("bob", "orders"), Unlimited());
  Task other = Create(MakeTask("alice", "orders", "{}", "other-tenant"), Unlimited());
  const int64_t now = Now();
  Exec("UPDATE export_task SET updated_at = ? WHERE id = ?", {now - 3000, a.id});
  Exec("UPDATE export_task SET updated_at = ? WHERE id = ?", {now - 2000, b.id});
  Exec("UPDATE export_task SET updated_at = ? WHERE id = ?", {now - 1000, other.id});

  TaskStore::ChangeQuery q;
  q.updated_after_ms = now - 2500;
  ASSERT_OK_AND_ASSIGN(std::vector<Task> all, store_->ListChangedTasks(q));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, b.id);
  EXPECT_EQ(all[1].id, other.id);
  EXPECT_EQ(all[0].updated_at, now - 2000);

  q.updated_after_ms = now - 5000;
  q.tenant_id = "t1";
  EXPECT_EQ(store_->ListChangedTasks(q)->size(), 2u);  // a and b, not the other tenant's
  q.requested_by = "alice";
  ASSERT_OK_AND_ASSIGN(std::vector<Task> alice, store_->ListChangedTasks(q));
  ASSERT_EQ(alice.size(), 1u);
  EXPECT_EQ(alice[0].id, a.id);
  q.tenant_id.reset();
  q.requested_by.reset();
  q.limit = 1;
  ASSERT_OK_AND_ASSIGN(std::vector<Task> first, store_->ListChangedTasks(q));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].id, a.id);

  // A progress update moves updated_at on: the change shows up again.
  ASSERT_TRUE(Claim(b.id).claimed);
  q.limit = 500;
  q.updated_after_ms = now - 1;
  ASSERT_OK_AND_ASSIGN(std::vector<Task> claimed, store_->ListChangedTasks(q));
  ASSERT_EQ(claimed.size(), 1u);
  EXPECT_EQ(claimed[0].id, b.id);
  EXPECT_EQ(claimed[0].status, TaskState::kRunning);
}

TEST_P(TaskStoreContractTest, DownloadsAreCounted) {
  Task t = Create();
  Exec("UPDATE export_task SET updated_at = updated_at - 10000 WHERE id = ?", {t.id});
  ASSERT_TRUE(store_->RecordDownload(DownloadOf(t, t.requested_by, "DIRECT"), 0).ok());
  ASSERT_TRUE(store_->RecordDownload(DownloadOf(t, t.requested_by, "DIRECT"), 0).ok());
  Task after = Get(t.id);
  EXPECT_EQ(after.download_count, 2);
  EXPECT_TRUE(after.last_downloaded_at.has_value());
  EXPECT_GT(after.updated_at, t.updated_at - 10000);  // a change the task events see
}

TEST_P(TaskStoreContractTest, GaugesReflectTheBacklog) {
  ASSERT_OK_AND_ASSIGN(TaskStore::Gauges empty, store_->ReadGauges());
  EXPECT_EQ(empty.outbox_pending, 0);
  EXPECT_EQ(empty.outbox_oldest_age_seconds, 0);
  EXPECT_EQ(empty.task_queue_age_seconds, 0);
  Task a = Create("alice", "orders");
  Task b = Create("bob", "orders");
  Shift("export_outbox", "next_retry_at", -120 * kSecond, a.id);
  Shift("export_outbox", "due_since", -120 * kSecond, a.id);
  Shift("export_task", "next_retry_at", -30 * kSecond, b.id);
  int64_t id = Outbox(b.id)[0].id;
  ASSERT_TRUE(store_->ClaimOutbox(id, "p", 60)->has_value());
  ASSERT_EQ(*store_->MarkOutboxFailed(id, "p", "down", 0), store::MarkOutcome::kMarked);
  ASSERT_OK_AND_ASSIGN(TaskStore::Gauges g, store_->ReadGauges());
  EXPECT_EQ(g.outbox_pending, 2);
  EXPECT_GE(g.outbox_oldest_age_seconds, 120);
  EXPECT_EQ(g.outbox_max_attempt, 1);
  EXPECT_GE(g.task_queue_age_seconds, 30);
}

// ---- hardening: each test below names the rule it holds ---------------------------

// Ids (docs/store.md#ids): the node comes from the database, so two stores on
// one database never share one.
TEST_P(TaskStoreContractTest, StoresOnOneDatabaseGetDifferentIdNodes) {
  std::vector<std::unique_ptr<TaskStore>> stores;
  std::set<int> nodes = {IdNodeOf(Create("alice").id)};
  for (int i = 0; i < 3; ++i) {
    stores.push_back(NewSqlTaskStore(db_));
    ASSERT_OK_AND_ASSIGN(CreateResult r,
                         stores.back()->CreateTask(MakeTask("u" + std::to_string(i), "t"), {}));
    nodes.insert(IdNodeOf(r.task.id));
    EXPECT_EQ(IdNodeOf(Outbox(r.task.id)[0].id), IdNodeOf(r.task.id)) << "one node per store";
  }
  EXPECT_EQ(nodes.size(), 4u);
  EXPECT_EQ(Count("SELECT next_node FROM export_id_node WHERE name = 'ID_NODE'"), 4);
}

// Dedupe includes the format (docs/task-lifecycle.md#creating-a-task).
TEST_P(TaskStoreContractTest, SameRequestInAnotherFormatIsANewTask) {
  NewTask xlsx = MakeTask("alice", "orders", R"({"a":1})");
  xlsx.format = task::FileFormat::kXlsx;
  NewTask csv = xlsx;
  csv.format = task::FileFormat::kCsv;
  Task first = Create(xlsx);
  ASSERT_OK_AND_ASSIGN(CreateResult second, store_->CreateTask(csv, {}));
  EXPECT_FALSE(second.deduplicated);
  EXPECT_NE(second.task.id, first.id);
  EXPECT_EQ(second.task.format, task::FileFormat::kCsv);
  ASSERT_OK_AND_ASSIGN(CreateResult again, store_->CreateTask(csv, {}));
  EXPECT_TRUE(again.deduplicated);
  EXPECT_EQ(again.task.id, second.task.id);
}

TEST_P(TaskStoreContractTest, CreateRollsBackWholeWhenAnInsertFails) {
  FailEvery("INSERT", "export_outbox");
  EXPECT_FALSE(store_->CreateTask(MakeTask("alice", "orders"), {}).ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_task"), 0) << "no task without its command";
  StopFailing("export_outbox");
  FailEvery("INSERT", "export_task");
  EXPECT_FALSE(store_->CreateTask(MakeTask("alice", "orders"), {}).ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_outbox"), 0) << "no command without its task";
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_task"), 0);
  StopFailing("export_task");
  EXPECT_GT(Create().id, 0) << "the guard row was released";
}

TEST_P(TaskStoreContractTest, TwoPublishersClaimingOneRowAtOnceHaveOneWinner) {
  for (int round = 0; round < 10; ++round) {
    Task t = Create(MakeTask("user" + std::to_string(round), "orders"), Unlimited());
    const int64_t row = Outbox(t.id)[0].id;
    std::atomic<int> ready{0};
    std::atomic<int> winners{0};
    auto claim = [&](const std::string& instance) {
      ++ready;
      while (ready.load() < 2) std::this_thread::yield();  // start together
      for (int attempt = 0; attempt < 50; ++attempt) {
        auto won = store_->ClaimOutbox(row, instance, 60);
        if (!won.ok() && won.status().IsTransient()) continue;
        ASSERT_TRUE(won.ok()) << won.status().ToString();
        if (won->has_value()) ++winners;
        break;
      }
    };
    std::thread a(claim, "p1");
    std::thread b(claim, "p2");
    a.join();
    b.join();
    EXPECT_EQ(winners.load(), 1) << "round " << round;
    EXPECT_EQ(Outbox(t.id)[0].attempt_count, 1) << "round " << round;
  }
}

// Quarantine (docs/task-lifecycle.md#dead-letters-and-quarantine).
TEST_P(TaskStoreContractTest, QuarantineNeverFailsARunningTask) {
  Task t = Create();
  OutboxEntry row = Outbox(t.id)[0];
  ASSERT_TRUE(Claim(t.id).claimed);
  EXPECT_EQ(store_->QuarantineCommand(t.id, 1, row.event_id, "bad JSON").code(),
            StatusCode::kConflict);
  EXPECT_EQ(Get(t.id).status, TaskState::kRunning);
  EXPECT_EQ(Outbox(t.id)[0].status, OutboxStatus::kPending) << "both updates or neither";
}

TEST_P(TaskStoreContractTest, QuarantineOfAFinishedTaskChangesNothing) {
  Task t = Create();
  OutboxEntry row = Outbox(t.id)[0];
  ASSERT_EQ(*store_->RequestCancel(t.id), TaskState::kCancelled);
  EXPECT_EQ(store_->QuarantineCommand(t.id, 1, row.event_id, "bad JSON").code(),
            StatusCode::kConflict);
  EXPECT_EQ(Get(t.id).status, TaskState::kCancelled);
  EXPECT_EQ(Outbox(t.id)[0].status, OutboxStatus::kPending);
}

TEST_P(TaskStoreContractTest, FailedQuarantineTransactionRollsBack) {
  Task t = Create();
  OutboxEntry row = Outbox(t.id)[0];
  FailEvery("UPDATE", "export_task");
  Status s = store_->QuarantineCommand(t.id, 1, row.event_id, "bad JSON");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.code(), StatusCode::kConflict) << "a database failure, not an old message: retry";
  EXPECT_EQ(Outbox(t.id)[0].status, OutboxStatus::kPending) << "the outbox update rolled back";
  StopFailing("export_task");
  ASSERT_OK(store_->QuarantineCommand(t.id, 1, row.event_id, "bad JSON"));
  EXPECT_EQ(Get(t.id).status, TaskState::kFailed);
  EXPECT_EQ(Outbox(t.id)[0].status, OutboxStatus::kQuarantined);
}

// Cancel is honoured on every path (docs/task-lifecycle.md#cancellation).
TEST_P(TaskStoreContractTest, ScheduleRetryOfACancelRequestedAttemptEndsCancelled) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->RequestCancel(t.id), TaskState::kRunning);
  ASSERT_OK_AND_ASSIGN(RetryOutcome o, store_->ScheduleRetry(AttemptOf(t), "provider 503", 0));
  EXPECT_EQ(o, RetryOutcome::kCancelled);
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kCancelled);
  EXPECT_EQ(after.dispatch_version, 1);
  EXPECT_FALSE(after.lease_owner.has_value());
  EXPECT_EQ(Outbox(t.id).size(), 1u);
}

TEST_P(TaskStoreContractTest, CommitRefusesACancelRequestedAttempt) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->RequestCancel(t.id), TaskState::kRunning);
  EXPECT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7),
            store::CommitOutcome::kNotCommitted);
  EXPECT_EQ(Get(t.id).status, TaskState::kRunning);
}

TEST_P(TaskStoreContractTest, LeaseRecoveryOfACancelRequestedTaskEndsCancelled) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->RequestCancel(t.id), TaskState::kRunning);
  Shift("export_task", "lease_until", -301 * kSecond, t.id);
  ASSERT_OK_AND_ASSIGN(std::vector<RecoveredLease> recovered, store_->RecoverExpiredLeases(10));
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0].outcome, LeaseRecovery::kCancelled);
  EXPECT_NE(recovered[0].outcome, LeaseRecovery::kFailed);
  EXPECT_EQ(recovered[0].export_type, "orders");
  Task after = Get(t.id);
  EXPECT_EQ(after.status, TaskState::kCancelled);
  EXPECT_EQ(after.dispatch_version, 1);
  EXPECT_EQ(Outbox(t.id).size(), 1u);
}

// The outbox row's attempt_count counts sends of that row only
// (docs/dispatch.md#the-outbox-row).
TEST_P(TaskStoreContractTest, ARetrysNewOutboxRowStartsAtAttemptCountZero) {
  Task t = Create();
  const int64_t v1 = Outbox(t.id)[0].id;
  for (int i = 0; i < 3; ++i) {  // three failed sends of the first command
    ASSERT_TRUE(store_->ClaimOutbox(v1, "p", 60)->has_value());
    ASSERT_EQ(*store_->MarkOutboxFailed(v1, "p", "down", 0), store::MarkOutcome::kMarked);
  }
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->ScheduleRetry(AttemptOf(t), "503", 0), RetryOutcome::kRescheduled);
  std::vector<OutboxEntry> rows = Outbox(t.id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].attempt_count, 3);
  EXPECT_EQ(rows[1].dispatch_version, 2);
  EXPECT_EQ(rows[1].attempt_count, 0);
}

// A versioned contract is pinned before its first page
// (docs/task-lifecycle.md#stale-and-inconsistent).
TEST_P(TaskStoreContractTest, ContractVersionIsPinnedOnceByTheAttempt) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_OK_AND_ASSIGN(std::string pinned, store_->PinContractVersion(AttemptOf(t), "v3"));
  EXPECT_EQ(pinned, "v3");
  EXPECT_EQ(Get(t.id).contract_version, "v3");
  ASSERT_OK_AND_ASSIGN(std::string again, store_->PinContractVersion(AttemptOf(t), "v4"));
  EXPECT_EQ(again, "v3") << "a recorded version is never overwritten";
  EXPECT_EQ(store_->PinContractVersion(AttemptOf(t, "w2"), "v4").status().code(),
            StatusCode::kConflict);
  NewTask recorded = MakeTask("bob", "orders");
  recorded.contract_version = "v1";
  Task r = Create(recorded);
  ASSERT_TRUE(Claim(r.id).claimed);
  EXPECT_EQ(*store_->PinContractVersion(AttemptOf(r), "v2"), "v1");
}

// outbox_oldest_age measures the oldest DUE row (docs/observability.md#metrics).
TEST_P(TaskStoreContractTest, OutboxAgeCountsFromWhenARowBecameDue) {
  Task waiting = Create("alice");
  // Created long ago, but its back-off has ten minutes to run: not late.
  Shift("export_outbox", "created_at", -3600 * kSecond, waiting.id);
  Shift("export_outbox", "next_retry_at", 600 * kSecond, waiting.id);
  Shift("export_outbox", "due_since", 600 * kSecond, waiting.id);
  Task resent = Create("bob");
  // Created long ago and re-sent just now by the reconciler: not late either.
  Shift("export_outbox", "created_at", -3600 * kSecond, resent.id);
  ASSERT_OK_AND_ASSIGN(TaskStore::Gauges fresh, store_->ReadGauges());
  EXPECT_EQ(fresh.outbox_pending, 2);
  EXPECT_LT(fresh.outbox_oldest_age_seconds, 60);
  Shift("export_outbox", "next_retry_at", -200 * kSecond, resent.id);
  Shift("export_outbox", "due_since", -200 * kSecond, resent.id);
  ASSERT_OK_AND_ASSIGN(TaskStore::Gauges late, store_->ReadGauges());
  EXPECT_GE(late.outbox_oldest_age_seconds, 200);
  EXPECT_LT(late.outbox_oldest_age_seconds, 300);
}

// docs/observability.md#alerts: a failed send moves next_retry_at on, not the time the
// row first became due, so the outbox age keeps growing while the channel
// is down (the ExportOutboxOldestAge alert can fire). A re-send of a
// delivered row and a hand-back start the age afresh.
TEST_P(TaskStoreContractTest, AFailedSendDoesNotResetTheOutboxAge) {
  Task t = Create("alice");
  const int64_t id = Outbox(t.id)[0].id;
  // Due for 300 s, every send failing.
  Shift("export_outbox", "next_retry_at", -300 * kSecond, t.id);
  Shift("export_outbox", "due_since", -300 * kSecond, t.id);
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(std::optional<OutboxEntry> claimed, store_->ClaimOutbox(id, "p", 60));
    ASSERT_TRUE(claimed.has_value());
    ASSERT_OK_AND_ASSIGN(store::MarkOutcome failed,
                         store_->MarkOutboxFailed(id, "p", "broker down", 0));
    ASSERT_EQ(failed, store::MarkOutcome::kMarked);
  }
  ASSERT_OK_AND_ASSIGN(std::optional<OutboxEntry> claimed, store_->ClaimOutbox(id, "p", 60));
  ASSERT_TRUE(claimed.has_value());
  // The last failure backs off for a minute: the row is still late.
  ASSERT_OK_AND_ASSIGN(store::MarkOutcome failed,
                       store_->MarkOutboxFailed(id, "p", "broker down", 60000));
  ASSERT_EQ(failed, store::MarkOutcome::kMarked);
  ASSERT_OK_AND_ASSIGN(TaskStore::Gauges down, store_->ReadGauges());
  EXPECT_GE(down.outbox_oldest_age_seconds, 300);
  EXPECT_LT(down.outbox_oldest_age_seconds, 400);
  EXPECT_EQ(down.outbox_max_attempt, 4);

  // Delivered at last, then re-sent by the reconciler (case B): due afresh.
  Shift("export_outbox", "next_retry_at", -61 * kSecond, t.id);
  ASSERT_TRUE(store_->ClaimOutbox(id, "p", 60)->has_value());
  ASSERT_EQ(*store_->MarkOutboxSent(id, "p"), store::MarkOutcome::kMarked);
  Shift("export_outbox", "sent_at", -600 * kSecond, t.id);
  ASSERT_OK_AND_ASSIGN(int resent, store_->ResendStaleSentOutbox(300, 0, 10));
  ASSERT_EQ(resent, 1);
  ASSERT_OK_AND_ASSIGN(TaskStore::Gauges again, store_->ReadGauges());
  EXPECT_LT(again.outbox_oldest_age_seconds, 60);
}

// ---- notification outbox (docs/notifications.md) -------------------------------------

// Routes used by the notification tests: one that takes everything, one per
// kind of filter.
std::vector<NotificationRoute> TestRoutes() {
  NotificationRoute all{"all", {}, {}, {}, {}};
  NotificationRoute orders{"orders-only", {"orders"}, {}, {}, {}};
  NotificationRoute bob{"bob-only", {}, {"bob"}, {}, {}};
  NotificationRoute failed{"failed-only", {}, {}, {}, {TaskState::kFailed}};
  NotificationRoute other_tenant{"t2-only", {}, {}, {"t2"}, {}};
  return {all, orders, bob, failed, other_tenant};
}

class NotificationOutboxContractTest : public TaskStoreContractTest {
 protected:
  void SetUp() override {
    TaskStoreContractTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    store_->SetNotificationRoutes(TestRoutes());
  }

  std::vector<NotificationEntry> Notes(int64_t task_id) {
    auto rows = store_->notifications().ListNotificationsForTask(task_id);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : std::vector<NotificationEntry>{};
  }

  // "receiver:STATUS" of every row, sorted.
  std::multiset<std::string> Events(int64_t task_id) {
    std::multiset<std::string> out;
    for (const NotificationEntry& e : Notes(task_id))
      out.insert(e.receiver_id + ":" + e.task_status);
    return out;
  }

  Task Running(const std::string& user = "alice", const std::string& type = "orders") {
    Task t = Create(user, type, "{\"n\":" + std::to_string(++created_) + "}");
    EXPECT_TRUE(Claim(t.id).claimed);
    return Get(t.id);
  }

  int created_ = 0;
};

TEST_P(NotificationOutboxContractTest, SuccessAndExpiryEachWriteOneRowPerMatchingReceiver) {
  Task t = Running();
  ASSERT_TRUE(Notes(t.id).empty());  // creating and claiming are no ends
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7), store::CommitOutcome::kCommitted);
  EXPECT_EQ(Events(t.id), (std::multiset<std::string>{"all:SUCCEEDED", "orders-only:SUCCEEDED"}));
  std::vector<NotificationEntry> rows = Notes(t.id);
  // One event, one id for its receivers; each row due now, never tried.
  EXPECT_EQ(rows[0].event_id, rows[1].event_id);
  EXPECT_EQ(rows[0].status, NotificationStatus::kPending);
  EXPECT_EQ(rows[0].attempt_count, 0);
  EXPECT_EQ(rows[0].dispatch_version, 1);
  EXPECT_NE(rows[0].payload_json.find("\"eventId\":\"" + rows[0].event_id + "\""),
            std::string::npos);
  EXPECT_NE(rows[0].payload_json.find("\"status\":\"SUCCEEDED\""), std::string::npos);
  EXPECT_NE(rows[0].payload_json.find("\"taskId\":\"" + std::to_string(t.id) + "\""),
            std::string::npos);
  EXPECT_NE(rows[0].payload_json.find("\"fileName\":\"" + *Get(t.id).file_name + "\""),
            std::string::npos);

  Shift("export_task", "expires_at", -8 * kDay, t.id);
  ASSERT_EQ(*store_->MarkExpired(t.id), store::ExpireOutcome::kExpired);
  EXPECT_EQ(Events(t.id), (std::multiset<std::string>{"all:SUCCEEDED", "orders-only:SUCCEEDED",
                                                      "all:EXPIRED", "orders-only:EXPIRED"}));
  std::set<std::string> ids;
  for (const NotificationEntry& e : Notes(t.id)) ids.insert(e.event_id);
  EXPECT_EQ(ids.size(), 2u);  // the expiry is an event of its own
  EXPECT_EQ(*store_->MarkExpired(t.id),
            store::ExpireOutcome::kNotDue);  // a repeat ends nothing and writes nothing
  EXPECT_EQ(Notes(t.id).size(), 4u);
}

TEST_P(NotificationOutboxContractTest, EveryAttemptEndIsNotified) {
  Task failed = Running("bob");
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(failed), TaskState::kFailed, "BAD_DATA", "bad"),
            store::FinishOutcome::kFinished);
  EXPECT_EQ(Events(failed.id),
            (std::multiset<std::string>{"all:FAILED", "orders-only:FAILED", "bob-only:FAILED",
                                        "failed-only:FAILED"}));
  for (TaskState end : {TaskState::kCancelled, TaskState::kStale, TaskState::kInconsistent}) {
    Task t = Running("carol", "customers");
    ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), end, "X", "why"),
              store::FinishOutcome::kFinished);
    EXPECT_EQ(Events(t.id),
              (std::multiset<std::string>{"all:" + std::string(task::ToString(end))}));
  }
  // An attempt that no longer holds its task ends nothing and writes nothing.
  Task lost = Running("carol", "customers");
  EXPECT_EQ(*store_->FinishAttempt(AttemptOf(lost, "someone-else"), TaskState::kFailed, "X", ""),
            store::FinishOutcome::kLost);
  EXPECT_TRUE(Notes(lost.id).empty());
}

TEST_P(NotificationOutboxContractTest, RetriesNotifyOnlyWhenTheyEndTheTask) {
  Task t = Running("carol", "customers");
  ASSERT_EQ(*store_->ScheduleRetry(AttemptOf(t), "503", 0), RetryOutcome::kRescheduled);
  EXPECT_TRUE(Notes(t.id).empty());  // back to PENDING: not an end
  ASSERT_TRUE(Claim(t.id, 2).claimed);
  ASSERT_EQ(*store_->ScheduleRetry({t.id, 2, "w1"}, "503", 0), RetryOutcome::kRescheduled);
  ASSERT_TRUE(Claim(t.id, 3).claimed);
  ASSERT_EQ(*store_->ScheduleRetry({t.id, 3, "w1"}, "503 again", 0),
            RetryOutcome::kFailedMaxAttempts);
  EXPECT_EQ(Events(t.id), (std::multiset<std::string>{"all:FAILED", "failed-only:FAILED"}));
  EXPECT_EQ(Notes(t.id)[0].dispatch_version, 3);

  Task cancelled = Running("carol", "customers");
  ASSERT_EQ(*store_->RequestCancel(cancelled.id), TaskState::kRunning);
  EXPECT_TRUE(Notes(cancelled.id).empty());  // only asked; still RUNNING
  ASSERT_EQ(*store_->ScheduleRetry(AttemptOf(cancelled), "503", 0), RetryOutcome::kCancelled);
  EXPECT_EQ(Events(cancelled.id), (std::multiset<std::string>{"all:CANCELLED"}));
}

TEST_P(NotificationOutboxContractTest, CancelOfAPendingTaskAndQuarantineAreNotified) {
  Task pending = Create("carol", "customers");
  ASSERT_EQ(*store_->RequestCancel(pending.id), TaskState::kCancelled);
  EXPECT_EQ(Events(pending.id), (std::multiset<std::string>{"all:CANCELLED"}));

  Task poison = Create("dave", "customers");
  ASSERT_OK(store_->QuarantineCommand(poison.id, 1, Outbox(poison.id)[0].event_id, "bad JSON"));
  EXPECT_EQ(Events(poison.id), (std::multiset<std::string>{"all:FAILED", "failed-only:FAILED"}));
  // A repeated quarantine is Ok and writes nothing more.
  ASSERT_OK(store_->QuarantineCommand(poison.id, 1, Outbox(poison.id)[0].event_id, "bad JSON"));
  EXPECT_EQ(Notes(poison.id).size(), 2u);
}

TEST_P(NotificationOutboxContractTest, LeaseRecoveryNotifiesTheEndsItMakes) {
  Task retried = Running("carol", "customers");
  Shift("export_task", "lease_until", -301 * kSecond, retried.id);
  Task exhausted = Running("carol", "customers");
  Exec("UPDATE export_task SET attempt_count = max_attempts WHERE id = ?", {exhausted.id});
  Shift("export_task", "lease_until", -301 * kSecond, exhausted.id);
  Task cancelled = Running("carol", "customers");
  ASSERT_EQ(*store_->RequestCancel(cancelled.id), TaskState::kRunning);
  Shift("export_task", "lease_until", -301 * kSecond, cancelled.id);
  ASSERT_OK_AND_ASSIGN(std::vector<RecoveredLease> recovered, store_->RecoverExpiredLeases(10));
  ASSERT_EQ(recovered.size(), 3u);
  EXPECT_TRUE(Notes(retried.id).empty());  // PENDING at version 2: not an end
  EXPECT_EQ(Events(exhausted.id), (std::multiset<std::string>{"all:FAILED", "failed-only:FAILED"}));
  EXPECT_EQ(Events(cancelled.id), (std::multiset<std::string>{"all:CANCELLED"}));
}

TEST_P(NotificationOutboxContractTest, WithoutRoutesNothingIsWritten) {
  store_->SetNotificationRoutes({});
  Task t = Running();
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7), store::CommitOutcome::kCommitted);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_notification"), 0);
}

TEST_P(NotificationOutboxContractTest, NotificationRowsShareTheTransactionOfTheEnd) {
  Task t = Running();
  FailEvery("INSERT", "export_notification");
  EXPECT_FALSE(store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7).ok());
  // Rolled back together: no notification, and the task is still running.
  EXPECT_EQ(Get(t.id).status, TaskState::kRunning);
  StopFailing("export_notification");
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7), store::CommitOutcome::kCommitted);
  EXPECT_EQ(Notes(t.id).size(), 2u);
}

TEST_P(NotificationOutboxContractTest, ClaimRetryDeliverLifecycle) {
  Task t = Create("carol", "customers");
  ASSERT_EQ(*store_->RequestCancel(t.id), TaskState::kCancelled);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> due,
                       store_->notifications().SelectDueNotifications(10));
  ASSERT_EQ(due.size(), 1u);
  NotificationOutbox& outbox = store_->notifications();
  ASSERT_OK_AND_ASSIGN(std::optional<NotificationEntry> claimed,
                       outbox.ClaimNotification(due[0], "n1", 60));
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->status, NotificationStatus::kClaimed);
  EXPECT_EQ(claimed->attempt_count, 1);
  EXPECT_EQ(*claimed->lease_owner, "n1");
  // Held: neither offered nor claimable by another instance.
  EXPECT_TRUE(outbox.SelectDueNotifications(10)->empty());
  EXPECT_FALSE(outbox.ClaimNotification(due[0], "n2", 60)->has_value());
  EXPECT_EQ(*outbox.MarkNotificationDelivered(due[0], "n2"), store::MarkOutcome::kClaimLost);

  // A failure waits out its back-off, keeping the same event id.
  ASSERT_EQ(*outbox.MarkNotificationRetry(due[0], "n1", "HTTP 503", 15 * kSecond),
            store::MarkOutcome::kMarked);
  EXPECT_TRUE(outbox.SelectDueNotifications(10)->empty());
  EXPECT_FALSE(outbox.ClaimNotification(due[0], "n2", 60)->has_value());
  Shift("export_notification", "next_retry_at", -16 * kSecond, t.id);
  ASSERT_OK_AND_ASSIGN(claimed, outbox.ClaimNotification(due[0], "n2", 60));
  ASSERT_TRUE(claimed.has_value());
  EXPECT_EQ(claimed->attempt_count, 2);
  EXPECT_EQ(*claimed->last_error, "HTTP 503");
  EXPECT_EQ(claimed->event_id, Notes(t.id)[0].event_id);

  // n2 dies holding it: after its lease another instance takes it over, and
  // n2's late report changes nothing.
  Shift("export_notification", "lease_until", -61 * kSecond, t.id);
  ASSERT_OK_AND_ASSIGN(due, outbox.SelectDueNotifications(10));
  ASSERT_EQ(due.size(), 1u);
  ASSERT_TRUE(outbox.ClaimNotification(due[0], "n3", 60)->has_value());
  EXPECT_EQ(*outbox.MarkNotificationDelivered(due[0], "n2"), store::MarkOutcome::kClaimLost);
  ASSERT_EQ(*outbox.MarkNotificationDelivered(due[0], "n3"), store::MarkOutcome::kMarked);
  NotificationEntry done = Notes(t.id)[0];
  EXPECT_EQ(done.status, NotificationStatus::kDelivered);
  EXPECT_EQ(done.attempt_count, 3);
  EXPECT_TRUE(done.delivered_at.has_value());
  EXPECT_FALSE(done.lease_owner.has_value());
  // Delivered is final: never due again, even long after.
  Shift("export_notification", "next_retry_at", -kDay, t.id);
  EXPECT_TRUE(outbox.SelectDueNotifications(10)->empty());
  EXPECT_FALSE(outbox.ClaimNotification(due[0], "n1", 60)->has_value());
  // Purged once old enough, not before.
  EXPECT_EQ(*outbox.PurgeDeliveredNotifications(3600, 10), 0);
  Shift("export_notification", "delivered_at", -3601 * kSecond, t.id);
  EXPECT_EQ(*outbox.PurgeDeliveredNotifications(3600, 10), 1);
  EXPECT_TRUE(Notes(t.id).empty());
}

TEST_P(NotificationOutboxContractTest, ADeadRowIsNeverSentAgainNorPurged) {
  Task t = Create("carol", "customers");
  ASSERT_EQ(*store_->RequestCancel(t.id), TaskState::kCancelled);
  NotificationOutbox& outbox = store_->notifications();
  int64_t id = Notes(t.id)[0].id;
  ASSERT_TRUE(outbox.ClaimNotification(id, "n1", 60)->has_value());
  ASSERT_EQ(*outbox.MarkNotificationDead(id, "n1", "HTTP 500 after 8 attempts"),
            store::MarkOutcome::kMarked);
  Shift("export_notification", "next_retry_at", -kDay, t.id);
  EXPECT_TRUE(outbox.SelectDueNotifications(10)->empty());
  EXPECT_FALSE(outbox.ClaimNotification(id, "n1", 60)->has_value());
  Exec("UPDATE export_notification SET delivered_at = 0 WHERE id = ?", {id});
  EXPECT_EQ(*outbox.PurgeDeliveredNotifications(1, 10), 0);
  NotificationEntry dead = Notes(t.id)[0];
  EXPECT_EQ(dead.status, NotificationStatus::kDead);
  EXPECT_EQ(*dead.last_error, "HTTP 500 after 8 attempts");
}

// ---- password-protected files (docs/configuration.md#password-protected-files-file-password)
// ---------

WrappedFileKey SomeWrappedKey(const std::string& tag = "a") {
  return {"0123456789abcdef", "c2VhbGVkIGtleSBtYXRlcmlhbA==" + tag};
}

NewTask EncryptedTask(const std::string& user = "alice", const std::string& params = "{}") {
  NewTask t;
  t.tenant_id = "t1";
  t.requested_by = user;
  t.export_type = "orders";
  t.task_name = "Export of orders";
  t.parameters_json = params;
  t.params_hash = "hash:" + params;
  t.trace_id = "trace-" + user;
  t.file_key = SomeWrappedKey(user);
  return t;
}

// The wrapped key is what every attempt reads back; the claim and an
// automatic retry keep it, since another attempt will need it.
TEST_P(TaskStoreContractTest, AnEncryptedTaskKeepsItsWrappedKeyWhileAttemptsMayFollow) {
  NewTask nt = EncryptedTask();
  nt.max_attempts = 2;
  Task t = Create(nt);
  EXPECT_TRUE(t.encrypted);
  ASSERT_TRUE(t.file_key.has_value());
  EXPECT_EQ(t.file_key->key_id, nt.file_key->key_id);
  EXPECT_EQ(t.file_key->sealed, nt.file_key->sealed);
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->ScheduleRetry(AttemptOf(t), "provider 503", 0), RetryOutcome::kRescheduled);
  Task retrying = Get(t.id);
  ASSERT_TRUE(retrying.file_key.has_value());
  EXPECT_EQ(retrying.file_key->sealed, nt.file_key->sealed);
  ASSERT_TRUE(Claim(t.id, 2).claimed);
  EXPECT_EQ(Get(t.id).file_key->sealed, nt.file_key->sealed);

  Task plain = Create("bob");
  EXPECT_FALSE(plain.encrypted);
  EXPECT_FALSE(plain.file_key.has_value());
}

// Every way a task ends erases the wrapped key in the same transaction;
// `encrypted` stays so the API and the page still say what the file is.
TEST_P(TaskStoreContractTest, EveryEndOfAnEncryptedTaskErasesItsWrappedKey) {
  int n = 0;
  auto fresh = [&](int max_attempts = 3) {
    NewTask nt = EncryptedTask("user" + std::to_string(++n));
    nt.max_attempts = max_attempts;
    return Create(nt, Unlimited());
  };
  auto erased = [&](const Task& t, TaskState state) {
    Task after = Get(t.id);
    EXPECT_EQ(after.status, state) << task::ToString(state);
    EXPECT_TRUE(after.encrypted) << task::ToString(state);
    EXPECT_FALSE(after.file_key.has_value()) << task::ToString(state);
    EXPECT_EQ(Count("SELECT COUNT(*) FROM export_task WHERE id = ? AND (file_key_wrapped IS NOT"
                    " NULL OR file_key_id IS NOT NULL)",
                    {t.id}),
              0)
        << task::ToString(state);
  };

  Task succeeded = fresh();
  ASSERT_TRUE(Claim(succeeded.id).claimed);
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(succeeded), AFile(succeeded.id), 7),
            store::CommitOutcome::kCommitted);
  erased(succeeded, TaskState::kSucceeded);
  Shift("export_task", "expires_at", -7 * kDay, succeeded.id);
  ASSERT_EQ(*store_->MarkExpired(succeeded.id), store::ExpireOutcome::kExpired);
  erased(succeeded, TaskState::kExpired);

  for (TaskState state :
       {TaskState::kFailed, TaskState::kCancelled, TaskState::kStale, TaskState::kInconsistent}) {
    Task t = fresh();
    ASSERT_TRUE(Claim(t.id).claimed);
    ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), state, "CODE", "ended"),
              store::FinishOutcome::kFinished);
    erased(t, state);
  }

  Task exhausted = fresh(1);
  ASSERT_TRUE(Claim(exhausted.id).claimed);
  ASSERT_EQ(*store_->ScheduleRetry(AttemptOf(exhausted), "timeout", 0),
            RetryOutcome::kFailedMaxAttempts);
  erased(exhausted, TaskState::kFailed);

  Task cancelled = fresh();
  ASSERT_EQ(*store_->RequestCancel(cancelled.id), TaskState::kCancelled);
  erased(cancelled, TaskState::kCancelled);

  Task lost = fresh(1);
  ASSERT_TRUE(Claim(lost.id).claimed);
  Shift("export_task", "lease_until", -301 * kSecond, lost.id);
  ASSERT_EQ(store_->RecoverExpiredLeases(10)->size(), 1u);
  erased(lost, TaskState::kFailed);

  Task quarantined = fresh();
  ASSERT_OK(
      store_->QuarantineCommand(quarantined.id, 1, Outbox(quarantined.id)[0].event_id, "bad JSON"));
  erased(quarantined, TaskState::kFailed);
}

// Its key is gone and its password was never kept: a new file needs a new
// password, through export-again, not a retry.
TEST_P(TaskStoreContractTest, ManualRetryOfAnEncryptedTaskIsAConflict) {
  Task t = Create(EncryptedTask());
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(t), TaskState::kFailed, "BAD", "bad"),
            store::FinishOutcome::kFinished);
  auto retried = store_->ManualRetry(t.id, "");
  ASSERT_FALSE(retried.ok());
  EXPECT_EQ(retried.status().code(), StatusCode::kConflict);
  EXPECT_NE(retried.status().message().find("filePassword"), std::string::npos);
  EXPECT_EQ(Get(t.id).status, TaskState::kFailed);
  EXPECT_EQ(Outbox(t.id).size(), 1u);
}

// Each password makes its own file: an encrypted create is never handed an
// existing task, and a plain create is never handed an encrypted one.
TEST_P(TaskStoreContractTest, EncryptedCreatesAreNeverDeduplicated) {
  Task first = Create(EncryptedTask("alice"), Unlimited());
  Task second = Create(EncryptedTask("alice"), Unlimited());
  EXPECT_NE(first.id, second.id);
  auto plain = store_->CreateTask(MakeTask("alice", "orders"), Unlimited());
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->deduplicated);
  EXPECT_FALSE(plain->task.encrypted);
  auto again = store_->CreateTask(MakeTask("alice", "orders"), Unlimited());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->deduplicated);
  EXPECT_EQ(again->task.id, plain->task.id);
}

// The webhook says the file is encrypted, never how: no key id, no wrapped key.
TEST_P(NotificationOutboxContractTest, TheEndedEventSaysTheFileIsEncrypted) {
  Task t = Create(EncryptedTask("alice", R"({"enc":1})"), Unlimited());
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7), store::CommitOutcome::kCommitted);
  std::vector<NotificationEntry> rows = Notes(t.id);
  ASSERT_FALSE(rows.empty());
  for (const NotificationEntry& row : rows) {
    EXPECT_NE(row.payload_json.find("\"encrypted\":true"), std::string::npos) << row.payload_json;
    EXPECT_EQ(row.payload_json.find(SomeWrappedKey().key_id), std::string::npos);
    EXPECT_EQ(row.payload_json.find("c2VhbGVk"), std::string::npos);
  }
  Task plain = Running("bob");
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(plain), AFile(plain.id), 7),
            store::CommitOutcome::kCommitted);
  ASSERT_FALSE(Notes(plain.id).empty());
  EXPECT_NE(Notes(plain.id)[0].payload_json.find("\"encrypted\":false"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Backends, NotificationOutboxContractTest,
                         ::testing::Values(std::string("sqlite"), std::string("postgres"),
                                           std::string("mysql")),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

INSTANTIATE_TEST_SUITE_P(Backends, TaskStoreContractTest,
                         ::testing::Values(std::string("sqlite"), std::string("postgres"),
                                           std::string("mysql")),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// ---- the timeline (docs/task-lifecycle.md#the-timeline) ---------------------------

class TaskTimelineContractTest : public TaskStoreContractTest {
 protected:
  std::vector<TaskEvent> Timeline(int64_t task_id) {
    auto events = store_->ListTaskEvents(task_id);
    EXPECT_TRUE(events.ok()) << events.status().ToString();
    return events.ok() ? *events : std::vector<TaskEvent>{};
  }

  // "KIND@version" of every event, oldest first.
  std::vector<std::string> Kinds(int64_t task_id) {
    std::vector<std::string> out;
    for (const TaskEvent& e : Timeline(task_id)) {
      out.push_back(std::string(ToString(e.kind)) + "@" + std::to_string(e.dispatch_version));
    }
    return out;
  }

  // The details of the newest event of `kind`.
  nlohmann::json Last(int64_t task_id, TaskEventKind kind) {
    std::vector<TaskEvent> events = Timeline(task_id);
    for (auto it = events.rbegin(); it != events.rend(); ++it) {
      if (it->kind == kind) return nlohmann::json::parse(it->details_json);
    }
    ADD_FAILURE() << "no " << ToString(kind) << " event";
    return nlohmann::json::object();
  }

  void Send(int64_t task_id, const std::string& publisher = "p1") {
    std::vector<OutboxEntry> rows = Outbox(task_id);
    ASSERT_FALSE(rows.empty());
    const int64_t id = rows.back().id;
    ASSERT_TRUE(store_->ClaimOutbox(id, publisher, 60)->has_value());
    ASSERT_EQ(*store_->MarkOutboxSent(id, publisher), store::MarkOutcome::kMarked);
  }

  int64_t EventCount(int64_t task_id, const std::string& kind) {
    return Count("SELECT COUNT(*) FROM export_task_event WHERE task_id = ? AND kind = ?",
                 {task_id, kind});
  }
};

// docs/task-lifecycle.md#failure-classes: the user's classified text and the
// operators' full one are stored side by side, each valid UTF-8 and cut; the
// timeline's RETRY_SCHEDULED and FINISHED carry the operators' under "detail";
// a claim, a commit and a manual retry clear it with the message.
TEST_P(TaskTimelineContractTest, AFailuresOperatorDetailIsStoredBesideItsMessage) {
  NewTask nt = MakeTask("alice", "orders");
  nt.max_attempts = 2;
  Task t = Create(nt);
  EXPECT_FALSE(Get(t.id).failure_detail.has_value());
  ASSERT_TRUE(Claim(t.id, 1).claimed);
  const std::string retry_detail = "Unavailable: provider http://crm.internal:8080 answered 503";
  ASSERT_EQ(
      *store_->ScheduleRetry(AttemptOf(t), {"The data source was unavailable", retry_detail}, 0),
      RetryOutcome::kRescheduled);
  EXPECT_EQ(Get(t.id).failure_detail, retry_detail);
  EXPECT_EQ(Last(t.id, TaskEventKind::kRetryScheduled)["detail"], retry_detail);
  EXPECT_EQ(Last(t.id, TaskEventKind::kRetryScheduled)["cause"], "The data source was unavailable");
  ASSERT_TRUE(Claim(t.id, 2).claimed);
  EXPECT_FALSE(Get(t.id).failure_detail.has_value());  // the claim clears it with the message

  std::string detail =
      "InvalidArgument: row 7: column 'amount' (DECIMAL): value \"1\xFF"
      "2\" ";
  while (detail.size() < 3000) detail += "金额不是数字 ";
  Attempt second{t.id, 2, "w1"};
  ASSERT_EQ(*store_->FinishAttempt(second, TaskState::kFailed, "INVALID_DATA",
                                   {"The business system sent data this export type does not "
                                    "accept",
                                    detail}),
            store::FinishOutcome::kFinished);
  Task failed = Get(t.id);
  EXPECT_EQ(failed.failure_message,
            "The business system sent data this export type does not accept");
  ASSERT_TRUE(failed.failure_detail.has_value());
  EXPECT_TRUE(utf8::IsValid(*failed.failure_detail));
  EXPECT_LE(failed.failure_detail->size(), 1000u);
  EXPECT_GT(failed.failure_detail->size(), 900u);
  EXPECT_EQ(failed.failure_detail->rfind(
                "InvalidArgument: row 7: column 'amount' (DECIMAL): value \"1\xEF\xBF\xBD"
                "2\"",
                0),
            0u)
      << *failed.failure_detail;
  nlohmann::json finished = Last(t.id, TaskEventKind::kFinished);
  EXPECT_EQ(finished["detail"], *failed.failure_detail);
  EXPECT_EQ(finished["message"], "The business system sent data this export type does not accept");

  ASSERT_OK_AND_ASSIGN(Task retried, store_->ManualRetry(t.id, ""));
  EXPECT_FALSE(retried.failure_detail.has_value());
  EXPECT_FALSE(Get(t.id).failure_detail.has_value());
  // A plain message (no detail) stores none: FINISHED has no "detail".
  ASSERT_TRUE(Claim(t.id, 3).claimed);
  ASSERT_EQ(*store_->FinishAttempt(Attempt{t.id, 3, "w1"}, TaskState::kFailed, "BAD", "bad"),
            store::FinishOutcome::kFinished);
  EXPECT_FALSE(Get(t.id).failure_detail.has_value());
  EXPECT_FALSE(Last(t.id, TaskEventKind::kFinished).contains("detail"));
}

TEST_P(TaskTimelineContractTest, ARunWithARetryIsOnTheTimelineInOrderWithItsFacts) {
  Task t = Create();
  Send(t.id);
  ASSERT_TRUE(Claim(t.id, 1, "w1").claimed);
  ASSERT_OK(store_->UpdateProgress(AttemptOf(t), 10, 100).status());
  ASSERT_EQ(*store_->ScheduleRetry(AttemptOf(t), "provider answered 503", 30 * kSecond),
            RetryOutcome::kRescheduled);
  Shift("export_task", "next_retry_at", -30 * kSecond, t.id);
  ASSERT_TRUE(Claim(t.id, 2, "w2").claimed);
  Task v2 = Get(t.id);
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(v2, "w2"), AFile(t.id), 7),
            store::CommitOutcome::kCommitted);
  ASSERT_EQ(*store_->RecordDownload(DownloadOf(v2, "alice", "DIRECT"), 600),
            DownloadCount::kCounted);
  Shift("export_task", "expires_at", -8 * kDay, t.id);
  ASSERT_EQ(*store_->MarkExpired(t.id), store::ExpireOutcome::kExpired);

  EXPECT_EQ(Kinds(t.id), (std::vector<std::string>{"CREATED@1", "COMMAND_SENT@1", "CLAIMED@1",
                                                   "PROGRESS@1", "RETRY_SCHEDULED@1", "CLAIMED@2",
                                                   "FINISHED@2", "DOWNLOADED@2", "EXPIRED@2"}));
  EXPECT_EQ(Last(t.id, TaskEventKind::kCreated)["by"], "alice");
  EXPECT_EQ(Last(t.id, TaskEventKind::kCommandSent)["sends"], 1);
  nlohmann::json claimed = Last(t.id, TaskEventKind::kClaimed);
  EXPECT_EQ(claimed["instance"], "w2");
  EXPECT_EQ(claimed["attempt"], 2);
  nlohmann::json progress = Last(t.id, TaskEventKind::kProgress);
  EXPECT_EQ(progress["rows"], 10);
  EXPECT_EQ(progress["total"], 100);
  nlohmann::json retry = Last(t.id, TaskEventKind::kRetryScheduled);
  EXPECT_EQ(retry["cause"], "provider answered 503");
  EXPECT_EQ(retry["nextVersion"], 2);
  EXPECT_TRUE(retry["nextAt"].is_string() && retry["nextAt"].get<std::string>().ends_with("Z"))
      << retry.dump();
  nlohmann::json finished = Last(t.id, TaskEventKind::kFinished);
  EXPECT_EQ(finished["status"], "SUCCEEDED");
  EXPECT_EQ(finished["rows"], 10);
  EXPECT_EQ(finished["bytes"], 1234);
  EXPECT_GE(finished["durationMs"].get<int64_t>(), 0);
  EXPECT_EQ(Last(t.id, TaskEventKind::kDownloaded)["user"], "alice");
  std::vector<TaskEvent> events = Timeline(t.id);
  for (size_t i = 1; i < events.size(); ++i) EXPECT_LE(events[i - 1].at, events[i].at);
  EXPECT_GE(events.front().at, t.requested_at);
}

TEST_P(TaskTimelineContractTest, CancelsRetriesAndFailuresSayWhatHappened) {
  Task pending = Create("alice", "orders");
  ASSERT_EQ(*store_->RequestCancel(pending.id), TaskState::kCancelled);
  ASSERT_OK(store_->ManualRetry(pending.id, "trace").status());
  EXPECT_EQ(Kinds(pending.id), (std::vector<std::string>{"CREATED@1", "CANCEL_REQUESTED@1",
                                                         "FINISHED@1", "MANUAL_RETRY@2"}));
  EXPECT_EQ(Last(pending.id, TaskEventKind::kCancelRequested)["state"], "PENDING");
  EXPECT_EQ(Last(pending.id, TaskEventKind::kFinished)["status"], "CANCELLED");
  EXPECT_EQ(Last(pending.id, TaskEventKind::kManualRetry)["from"], "CANCELLED");

  Task running = Create("bob", "orders");
  ASSERT_TRUE(Claim(running.id).claimed);
  ASSERT_EQ(*store_->RequestCancel(running.id), TaskState::kRunning);
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(running), TaskState::kCancelled, "CANCELLED",
                                   "cancelled by the user"),
            FinishOutcome::kFinished);
  EXPECT_EQ(Kinds(running.id), (std::vector<std::string>{"CREATED@1", "CLAIMED@1",
                                                         "CANCEL_REQUESTED@1", "FINISHED@1"}));
  EXPECT_EQ(Last(running.id, TaskEventKind::kCancelRequested)["state"], "RUNNING");

  Task failing = Create("carol", "orders");
  ASSERT_TRUE(Claim(failing.id).claimed);
  ASSERT_EQ(*store_->FinishAttempt(AttemptOf(failing), TaskState::kFailed, "BAD_PARAMS",
                                   "the month is out of range"),
            FinishOutcome::kFinished);
  nlohmann::json failed = Last(failing.id, TaskEventKind::kFinished);
  EXPECT_EQ(failed["status"], "FAILED");
  EXPECT_EQ(failed["code"], "BAD_PARAMS");
  EXPECT_EQ(failed["message"], "the month is out of range");
  EXPECT_FALSE(failed.contains("bytes"));
}

TEST_P(TaskTimelineContractTest, ReconcilerAndDeadLetterRepairsSayWhy) {
  Task missing = Create("alice", "orders");
  Exec("DELETE FROM export_outbox WHERE task_id = ?", {missing.id});
  Shift("export_task", "next_retry_at", -61 * kSecond, missing.id);
  ASSERT_EQ(*store_->RedispatchMissingOutbox(60, 50), 1);
  EXPECT_EQ(Last(missing.id, TaskEventKind::kCommandResent)["cause"], "OUTBOX_MISSING");

  Task stale = Create("bob", "orders");
  Send(stale.id);
  Shift("export_outbox", "sent_at", -301 * kSecond, stale.id);
  Shift("export_task", "next_retry_at", -301 * kSecond, stale.id);
  ASSERT_EQ(*store_->ResendStaleSentOutbox(300, 60, 50), 1);
  EXPECT_EQ(*store_->ResendStaleSentOutbox(300, 60, 50), 0);
  EXPECT_EQ(Last(stale.id, TaskEventKind::kCommandResent)["cause"], "SENT_STALE");
  EXPECT_EQ(Outbox(stale.id)[0].status, OutboxStatus::kPending);

  Task claimed = Create("carol", "orders");
  const int64_t row = Outbox(claimed.id)[0].id;
  ASSERT_TRUE(store_->ClaimOutbox(row, "p1", 60)->has_value());
  ASSERT_EQ(*store_->MarkOutboxFailed(row, "p1", "broker down", 0), store::MarkOutcome::kMarked);
  ASSERT_TRUE(store_->ClaimOutbox(row, "p1", 60)->has_value());
  Shift("export_outbox", "lease_until", -61 * kSecond, claimed.id);
  ASSERT_EQ(*store_->ReleaseStaleClaimedOutbox(50), 1);
  EXPECT_EQ(Last(claimed.id, TaskEventKind::kCommandResent)["cause"], "CLAIM_EXPIRED");
  Send(claimed.id, "p2");
  nlohmann::json sent = Last(claimed.id, TaskEventKind::kCommandSent);
  EXPECT_EQ(sent["sends"], 3);
  EXPECT_EQ(sent["lastError"], "broker down") << "a re-send says why the send before failed";

  Task lost = Create("dave", "orders");
  ASSERT_TRUE(Claim(lost.id, 1, "w9").claimed);
  Shift("export_task", "lease_until", -301 * kSecond, lost.id);
  ASSERT_EQ(store_->RecoverExpiredLeases(20)->size(), 1u);
  nlohmann::json recovered = Last(lost.id, TaskEventKind::kLeaseRecovered);
  EXPECT_EQ(recovered["instance"], "w9");
  EXPECT_EQ(recovered["outcome"], "REQUEUED");
  EXPECT_EQ(Kinds(lost.id).back(), "LEASE_RECOVERED@1");

  Task poison = Create("erin", "orders");
  OutboxEntry command = Outbox(poison.id)[0];
  ASSERT_OK(store_->QuarantineCommand(poison.id, 1, command.event_id, "bad JSON"));
  EXPECT_EQ(Kinds(poison.id),
            (std::vector<std::string>{"CREATED@1", "QUARANTINED@1", "FINISHED@1"}));
  EXPECT_EQ(Last(poison.id, TaskEventKind::kQuarantined)["reason"], "bad JSON");
  EXPECT_EQ(Last(poison.id, TaskEventKind::kFinished)["code"], "COMMAND_QUARANTINED");
}

// The event shares the transaction of its change: when the event cannot be
// written, the change is not made either.
TEST_P(TaskTimelineContractTest, AChangeWhoseEventFailsIsRolledBackWithIt) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  FailEvery("INSERT", "export_task_event");
  EXPECT_FALSE(store_->CreateTask(MakeTask("bob", "orders"), {}).ok());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_task"), 1) << "no task without its CREATED event";
  EXPECT_FALSE(store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7).ok());
  EXPECT_EQ(Get(t.id).status, TaskState::kRunning);
  EXPECT_FALSE(store_->RequestCancel(t.id).ok());
  EXPECT_FALSE(Get(t.id).cancel_requested);
  StopFailing("export_task_event");
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7), store::CommitOutcome::kCommitted);
  EXPECT_EQ(Kinds(t.id), (std::vector<std::string>{"CREATED@1", "CLAIMED@1", "FINISHED@1"}));
}

TEST_P(TaskTimelineContractTest, ProgressIsSampledByTenthsAndByTime) {
  Task known = Create("alice", "orders");
  ASSERT_TRUE(Claim(known.id).claimed);
  for (int rows = 10; rows <= 1000; rows += 10) {
    ASSERT_OK(store_->UpdateProgress(AttemptOf(known), rows, 1000).status());
  }
  // The first checkpoint, then one per tenth reached: 10, 100, 200, ..., 1000.
  EXPECT_EQ(EventCount(known.id, "PROGRESS"), 11);
  EXPECT_EQ(Last(known.id, TaskEventKind::kProgress)["rows"], 1000);

  Task unknown = Create("bob", "orders");
  ASSERT_TRUE(Claim(unknown.id).claimed);
  for (int rows = 10; rows <= 100; rows += 10) {
    ASSERT_OK(store_->UpdateProgress(AttemptOf(unknown), rows, std::nullopt).status());
  }
  EXPECT_EQ(EventCount(unknown.id, "PROGRESS"), 1) << "no total: one per 30 s";
  Exec("UPDATE export_task_event SET created_at = created_at - ? WHERE task_id = ?",
       {31 * kSecond, unknown.id});
  ASSERT_OK(store_->UpdateProgress(AttemptOf(unknown), 110, std::nullopt).status());
  EXPECT_EQ(EventCount(unknown.id, "PROGRESS"), 2);
  for (int i = 0; i < 30; ++i) {
    Exec("UPDATE export_task_event SET created_at = created_at - ? WHERE task_id = ?",
         {31 * kSecond, unknown.id});
    ASSERT_OK(store_->UpdateProgress(AttemptOf(unknown), 120 + i, std::nullopt).status());
  }
  EXPECT_EQ(EventCount(unknown.id, "PROGRESS"), kMaxProgressEventsPerAttempt);
}

TEST_P(TaskTimelineContractTest, EventsAreCappedButTheEndIsNeverDropped) {
  Task t = Create();
  ASSERT_TRUE(Claim(t.id).claimed);
  ASSERT_EQ(*store_->CommitSuccess(AttemptOf(t), AFile(t.id), 7), store::CommitOutcome::kCommitted);
  for (int i = 0; i < kMaxEventsPerTask + 20; ++i) {
    ASSERT_EQ(*store_->RecordDownload(DownloadOf(t, "u" + std::to_string(i), "DIRECT"), 0),
              DownloadCount::kCounted);
  }
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_task_event WHERE task_id = ?", {t.id}),
            kMaxEventsPerTask);
  EXPECT_EQ(Get(t.id).download_count, kMaxEventsPerTask + 20) << "the cap drops events, not counts";
  Shift("export_task", "expires_at", -8 * kDay, t.id);
  ASSERT_EQ(*store_->MarkExpired(t.id), store::ExpireOutcome::kExpired);
  std::vector<std::string> kinds = Kinds(t.id);
  EXPECT_EQ(kinds.size(), static_cast<size_t>(kMaxEventsPerTask));
  EXPECT_EQ(kinds.front(), "CREATED@1");
  EXPECT_EQ(kinds.back(), "EXPIRED@1");
  EXPECT_EQ(EventCount(t.id, "FINISHED"), 1);
  EXPECT_EQ(EventCount(t.id, "CLAIMED"), 0) << "the oldest ordinary event made room";
}

TEST_P(TaskTimelineContractTest, ATimelineHoldsOnlyItsOwnTask) {
  Task a = Create("alice", "orders");
  Task b = Create("bob", "orders");
  ASSERT_EQ(*store_->RequestCancel(b.id), TaskState::kCancelled);
  EXPECT_EQ(Kinds(a.id), std::vector<std::string>{"CREATED@1"});
  EXPECT_EQ(Kinds(b.id).size(), 3u);
  EXPECT_TRUE(Timeline(987654321).empty());
}

INSTANTIATE_TEST_SUITE_P(Backends, TaskTimelineContractTest,
                         ::testing::Values(std::string("sqlite"), std::string("postgres"),
                                           std::string("mysql")),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// ---- tenant fairness (docs/dispatch.md#tenant-fairness) ---------------------------

class TenantFairnessTest : public TaskStoreContractTest {
 protected:
  // A task of `tenant`/`user` whose command became due `due_ago_ms` ago.
  Task Queue(const std::string& tenant, const std::string& user, int64_t due_ago_ms) {
    Task t = Create(MakeTask(user, "orders", "{\"n\":" + std::to_string(++made_) + "}", tenant),
                    Unlimited());
    Shift("export_outbox", "next_retry_at", -due_ago_ms, t.id);
    Shift("export_task", "next_retry_at", -due_ago_ms, t.id);
    names_[t.id] = user + "#" + std::to_string(++per_user_[user]);
    return t;
  }
  // SelectDueOutbox's order, as "user#n" names (n: the user's n-th task).
  std::vector<std::string> FairOrder(int limit) {
    auto due = store_->SelectDueOutbox(limit);
    EXPECT_TRUE(due.ok()) << due.status().ToString();
    std::vector<std::string> names;
    if (!due.ok()) return names;
    for (int64_t outbox_id : *due) {
      auto rows = db_->Query("SELECT task_id FROM export_outbox WHERE id = ?", {outbox_id});
      EXPECT_TRUE(rows.ok());
      names.push_back(names_[rows->at(0).Int(0)]);
    }
    return names;
  }
  // The publisher's part: claim and mark SENT every due row.
  void SendDue() {
    auto due = store_->SelectDueOutbox(1000);
    ASSERT_TRUE(due.ok()) << due.status().ToString();
    for (int64_t id : *due) {
      ASSERT_OK_AND_ASSIGN(std::optional<OutboxEntry> e, store_->ClaimOutbox(id, "pub", 60));
      ASSERT_TRUE(e.has_value());
      ASSERT_OK_AND_ASSIGN(store::MarkOutcome sent, store_->MarkOutboxSent(id, "pub"));
      ASSERT_EQ(sent, store::MarkOutcome::kMarked);
    }
  }
  ClaimResult ClaimLimited(const Task& t, int limit, const std::string& instance = "w1") {
    ClaimRequest r;
    r.task_id = t.id;
    r.dispatch_version = t.dispatch_version;
    r.instance = instance;
    r.tenant_running_limit = limit;
    r.handback_backoff_ms = 30 * kSecond;
    auto result = store_->ClaimTask(r);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : ClaimResult{};
  }
  int64_t RunningOf(const std::string& tenant) {
    return Count("SELECT COUNT(*) FROM export_task WHERE status = 'RUNNING' AND tenant_id = ?",
                 {tenant});
  }

  int made_ = 0;
  std::map<int64_t, std::string> names_;
  std::map<std::string, int> per_user_;
};

TEST_P(TenantFairnessTest, DueCommandsGoRoundRobinAcrossTenantsThenUsers) {
  // Tenant A's user a1 queued first and most; a2 and tenant B came later.
  for (int i = 0; i < 6; ++i) Queue("A", "a1", 100 * kSecond - i * kSecond);
  for (int i = 0; i < 2; ++i) Queue("A", "a2", 50 * kSecond - i * kSecond);
  Queue("B", "b1", 10 * kSecond);
  // Round 1: each tenant's oldest (A: a1's); then A alternates a2 and a1
  // while B has nothing left. Within a round, the older row goes first.
  EXPECT_EQ(FairOrder(50), (std::vector<std::string>{"a1#1", "b1#1", "a2#1", "a1#2", "a2#2", "a1#3",
                                                     "a1#4", "a1#5", "a1#6"}));
  // A batch smaller than the backlog still holds B's and a2's first rows.
  EXPECT_EQ(FairOrder(3), (std::vector<std::string>{"a1#1", "b1#1", "a2#1"}));
}

TEST_P(TenantFairnessTest, AHugeBacklogDoesNotStarveANewTenant) {
  for (int i = 0; i < 120; ++i) Queue("A", "a1", 600 * kSecond - i * kSecond);
  Queue("B", "b1", 1 * kSecond);
  Queue("C", "c1", 2 * kSecond);
  std::vector<std::string> batch = FairOrder(10);
  ASSERT_EQ(batch.size(), 10u);
  EXPECT_EQ(batch[0], "a1#1");
  EXPECT_EQ(batch[1], "c1#1");  // older than B's
  EXPECT_EQ(batch[2], "b1#1");
}

TEST_P(TenantFairnessTest, EveryDueRowIsStillSelectedAndNoRowBeforeItIsDue) {
  std::set<int64_t> expected;
  for (int i = 0; i < 7; ++i) Queue("A", "a" + std::to_string(i % 3), 10 * kSecond);
  for (int i = 0; i < 4; ++i) Queue("B", "b", 5 * kSecond);
  Task later = Queue("B", "b", 0);
  Shift("export_outbox", "next_retry_at", 60 * kSecond, later.id);  // in its back-off
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> due, store_->SelectDueOutbox(1000));
  EXPECT_EQ(due.size(), 11u);
  EXPECT_EQ(std::set<int64_t>(due.begin(), due.end()).size(), due.size());
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_outbox WHERE status = 'PENDING'"
                  " AND task_id = ?",
                  {later.id}),
            1);
  for (int64_t id : due) {
    EXPECT_EQ(
        Count("SELECT COUNT(*) FROM export_outbox WHERE id = ? AND task_id = ?", {id, later.id}),
        0);
  }
}

TEST_P(TenantFairnessTest, AClaimOverTheTenantLimitHandsTheCommandBack) {
  Task a1 = Queue("A", "u", kSecond);
  Task a2 = Queue("A", "u", kSecond);
  Task a3 = Queue("A", "v", kSecond);
  Task b1 = Queue("B", "w", kSecond);
  SendDue();
  const int64_t due_at = Get(a3.id).next_retry_at;
  ASSERT_TRUE(ClaimLimited(a1, 2).claimed);
  ASSERT_TRUE(ClaimLimited(a2, 2).claimed);
  ClaimResult over = ClaimLimited(a3, 2);
  EXPECT_FALSE(over.claimed);
  EXPECT_EQ(over.miss, ClaimMiss::kTenantAtLimit);
  // The task is untouched: no attempt, same version, still PENDING and due.
  Task after = Get(a3.id);
  EXPECT_EQ(after.status, TaskState::kPending);
  EXPECT_EQ(after.attempt_count, 0);
  EXPECT_EQ(after.dispatch_version, 1);
  EXPECT_EQ(after.next_retry_at, due_at);
  // Its command is PENDING again, due after the hand-back back-off, with no
  // failed send counted; no second row was written.
  std::vector<OutboxEntry> rows = Outbox(a3.id);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, OutboxStatus::kPending);
  EXPECT_EQ(rows[0].attempt_count, 0);
  EXPECT_GT(rows[0].next_retry_at, Now() + 20 * kSecond);
  EXPECT_FALSE(rows[0].lease_owner.has_value());
  // Another tenant is not affected.
  EXPECT_TRUE(ClaimLimited(b1, 2).claimed);
  EXPECT_EQ(RunningOf("A"), 2);

  // Nothing of the reconciler's takes the handed-back command for lost.
  ASSERT_OK_AND_ASSIGN(int redispatched, store_->RedispatchMissingOutbox(0, 100));
  EXPECT_EQ(redispatched, 0);
  ASSERT_OK_AND_ASSIGN(int resent, store_->ResendStaleSentOutbox(0, 0, 100));
  EXPECT_EQ(resent, 0);
  ASSERT_OK_AND_ASSIGN(int released, store_->ReleaseStaleClaimedOutbox(100));
  EXPECT_EQ(released, 0);
  EXPECT_TRUE(store_->RecoverExpiredLeases(100)->empty());

  // One of A's ends; once the back-off has passed the command is sent again
  // and claimed, as the same version.
  ASSERT_OK_AND_ASSIGN(store::CommitOutcome done,
                       store_->CommitSuccess(AttemptOf(a1), AFile(a1.id), 7));
  ASSERT_EQ(done, store::CommitOutcome::kCommitted);
  EXPECT_TRUE(store_->SelectDueOutbox(50)->empty());
  Shift("export_outbox", "next_retry_at", -31 * kSecond, a3.id);
  SendDue();
  ClaimResult later = ClaimLimited(a3, 2);
  EXPECT_TRUE(later.claimed);
  EXPECT_EQ(later.task->attempt_count, 1);
  EXPECT_EQ(later.task->dispatch_version, 1);
}

TEST_P(TenantFairnessTest, AHandBackAlsoReturnsARowThePublisherHasNotMarkedSentYet) {
  Task a1 = Queue("A", "u", kSecond);
  Task a2 = Queue("A", "u", kSecond);
  Queue("B", "w", kSecond);  // waiting, so the limit binds
  SendDue();
  ASSERT_TRUE(ClaimLimited(a1, 1).claimed);
  // The consumer can be faster than the publisher's MarkOutboxSent.
  Exec(
      "UPDATE export_outbox SET status = 'CLAIMED', lease_owner = 'pub',"
      " lease_until = next_retry_at + 60000 WHERE task_id = ?",
      {a2.id});
  EXPECT_EQ(ClaimLimited(a2, 1).miss, ClaimMiss::kTenantAtLimit);
  EXPECT_EQ(Outbox(a2.id)[0].status, OutboxStatus::kPending);
  ASSERT_OK_AND_ASSIGN(store::MarkOutcome marked,
                       store_->MarkOutboxSent(Outbox(a2.id)[0].id, "pub"));
  EXPECT_EQ(marked, store::MarkOutcome::kClaimLost);  // the publisher's late mark changes nothing
  EXPECT_EQ(Outbox(a2.id)[0].status, OutboxStatus::kPending);
}

TEST_P(TenantFairnessTest, TheLimitBindsOnlyWhileAnotherTenantHasATaskWaiting) {
  std::vector<Task> a;
  for (int i = 0; i < 5; ++i) a.push_back(Queue("A", "u", kSecond));
  Task b1 = Queue("B", "w", kSecond);
  Shift("export_task", "next_retry_at", 60 * kSecond, b1.id);  // B in its retry back-off
  SendDue();
  // Alone (B's task is not due yet, so not waiting), A takes slots past its limit.
  ASSERT_TRUE(ClaimLimited(a[0], 2).claimed);
  ASSERT_TRUE(ClaimLimited(a[1], 2).claimed);
  ASSERT_TRUE(ClaimLimited(a[2], 2).claimed);
  EXPECT_EQ(RunningOf("A"), 3);
  // B's task is due: now A is held to its limit and B's claim goes through.
  Shift("export_task", "next_retry_at", -61 * kSecond, b1.id);
  EXPECT_EQ(ClaimLimited(a[3], 2).miss, ClaimMiss::kTenantAtLimit);
  EXPECT_EQ(Outbox(a[3].id)[0].status, OutboxStatus::kPending);
  EXPECT_TRUE(ClaimLimited(Get(b1.id), 2).claimed);
  // B running is not B waiting: A alone in the queue again uses the free slot.
  EXPECT_TRUE(ClaimLimited(a[4], 2).claimed);
  EXPECT_EQ(RunningOf("A"), 4);
}

TEST_P(TenantFairnessTest, ALimitedClaimOfAnUnclaimableTaskExplainsTheMissAsBefore) {
  Task a1 = Queue("A", "u", kSecond);
  Task a2 = Queue("A", "u", kSecond);
  SendDue();
  ASSERT_TRUE(ClaimLimited(a1, 1).claimed);
  // A duplicate delivery of the running task is not a hand-back.
  EXPECT_EQ(ClaimLimited(a1, 1, "w2").miss, ClaimMiss::kRunningLeaseLive);
  Task stale = a2;
  stale.dispatch_version = 0;
  EXPECT_EQ(ClaimLimited(stale, 1).miss, ClaimMiss::kNewerVersion);
  EXPECT_EQ(Outbox(a2.id)[0].status, OutboxStatus::kSent);
}

TEST_P(TenantFairnessTest, ConcurrentClaimsNeverExceedTheTenantLimit) {
  constexpr int kTasks = 10;
  constexpr int kLimit = 3;
  std::vector<Task> tasks;
  for (int i = 0; i < kTasks; ++i) tasks.push_back(Queue("A", "u" + std::to_string(i), kSecond));
  Queue("B", "w", kSecond);  // waiting, so the limit binds
  SendDue();
  // Two stores on one database stand for two instances.
  std::unique_ptr<TaskStore> other = NewSqlTaskStore(db_);
  std::atomic<int> claimed{0};
  std::atomic<int> handed_back{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kTasks; ++i) {
    threads.emplace_back([&, i] {
      ClaimRequest r;
      r.task_id = tasks[i].id;
      r.dispatch_version = 1;
      r.instance = "w" + std::to_string(i);
      r.tenant_running_limit = kLimit;
      TaskStore* store = i % 2 == 0 ? store_.get() : other.get();
      StatusOr<ClaimResult> result = Unavailable("not tried");
      for (int tries = 0; tries < 20; ++tries) {  // Unavailable: retry the whole call
        result = store->ClaimTask(r);
        if (result.ok() || result.status().code() != StatusCode::kUnavailable) break;
      }
      ASSERT_TRUE(result.ok()) << result.status().ToString();
      if (result->claimed) ++claimed;
      if (result->miss == ClaimMiss::kTenantAtLimit) ++handed_back;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(claimed.load(), kLimit);
  EXPECT_EQ(handed_back.load(), kTasks - kLimit);
  EXPECT_EQ(RunningOf("A"), kLimit);
  EXPECT_EQ(Count("SELECT COUNT(*) FROM export_outbox WHERE status = 'PENDING'"), kTasks - kLimit);
}

TEST_P(TenantFairnessTest, GaugesCountQueuedAndRunningTasksPerTenant) {
  Task a1 = Queue("A", "u", kSecond);
  Queue("A", "u", kSecond);
  Queue("B", "v", kSecond);
  Task c1 = Queue("C", "w", kSecond);
  SendDue();
  ASSERT_TRUE(ClaimLimited(a1, 5).claimed);
  ASSERT_OK(store_->RequestCancel(c1.id).status());
  ASSERT_OK_AND_ASSIGN(TaskStore::Gauges g, store_->ReadGauges());
  ASSERT_EQ(g.tenants.size(), 2u);  // C has nothing queued or running
  EXPECT_EQ(g.tenants[0].tenant_id, "A");
  EXPECT_EQ(g.tenants[0].queued, 1);
  EXPECT_EQ(g.tenants[0].running, 1);
  EXPECT_EQ(g.tenants[1].tenant_id, "B");
  EXPECT_EQ(g.tenants[1].queued, 1);
  EXPECT_EQ(g.tenants[1].running, 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, TenantFairnessTest,
                         ::testing::Values(std::string("sqlite"), std::string("postgres"),
                                           std::string("mysql")),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// ---- the operators' console (task_operations.h) --------------------------------------

class TaskOperationsContractTest : public TaskStoreContractTest {
 protected:
  Task Make(const std::string& tenant, const std::string& user, const std::string& type) {
    return Create(MakeTask(user, type, "{\"n\":" + std::to_string(++made_) + "}", tenant),
                  Unlimited());
  }
  // Rewrites a task's outcome and times (ms before now) as if it had run.
  void Ran(int64_t id, TaskState state, int64_t requested_ago, std::optional<int64_t> wait,
           std::optional<int64_t> duration, int64_t rows = 0, int64_t bytes = 0,
           std::optional<std::string> code = std::nullopt) {
    const int64_t requested = Now() - requested_ago;
    std::optional<int64_t> started, completed;
    if (wait) started = requested + *wait;
    if (wait && duration) completed = *started + *duration;
    Exec(
        "UPDATE export_task SET status = ?, requested_at = ?, started_at = ?, completed_at = ?,"
        " total_rows = ?, size_bytes = ?, failure_code = ? WHERE id = ?",
        {std::string(task::ToString(state)), requested, started, completed, rows, bytes, code, id});
  }
  static OperatorScope Tenant(const std::string& tenant) {
    return {tenant, task::AppCode::kPlatform};
  }
  std::vector<int64_t> Ids(const OperatorFilter& f) {
    auto page = store_->SearchTasks(f, 1, 100, std::nullopt);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    std::vector<int64_t> ids;
    if (!page.ok()) return ids;
    EXPECT_EQ(page->total, static_cast<int64_t>(page->records.size()));
    for (const Task& t : page->records) ids.push_back(t.id);
    std::sort(ids.begin(), ids.end());
    return ids;
  }
  int made_ = 0;
};

TEST_P(TaskOperationsContractTest, SearchFiltersAcrossUsersWithinTheScope) {
  Task a = Make("t1", "alice", "orders");
  Task b = Make("t1", "bob", "customers");
  Task old = Make("t1", "bob", "orders");
  Task other = Make("t2", "carol", "orders");
  Ran(b.id, TaskState::kFailed, kMinute, 100, 100, 0, 0, "PROVIDER_ERROR");
  Ran(old.id, TaskState::kFailed, 3 * kDay, 100, 100, 0, 0, "TIMEOUT");

  OperatorFilter f;
  f.scope = Tenant("t1");
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{a.id, b.id, old.id}));
  f.scope = {};  // every tenant
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{a.id, b.id, old.id, other.id}));
  f.scope = Tenant("t2");
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{other.id}));
  f.scope = {"t1", task::AppCode::kMerchant};  // same tenant, other app: nothing
  EXPECT_TRUE(Ids(f).empty());

  f = OperatorFilter();
  f.scope = Tenant("t1");
  f.requested_by = "bob";
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b.id, old.id}));
  f.export_type = "orders";
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{old.id}));
  f = OperatorFilter();
  f.any_status = {TaskState::kFailed};
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b.id, old.id}));
  f.failure_code = "PROVIDER_ERROR";
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{b.id}));
  f = OperatorFilter();
  f.from_ms = Now() - kDay;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{a.id, b.id, other.id}));
  f.from_ms.reset();
  f.to_ms = Now() - kDay;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{old.id}));
  EXPECT_EQ(*store_->CountTasks(f), 1);

  // Newest first, paged.
  f = OperatorFilter();
  ASSERT_OK_AND_ASSIGN(TaskCatalog::ListPage page, store_->SearchTasks(f, 2, 3, std::nullopt));
  EXPECT_EQ(page.total, 4);
  ASSERT_EQ(page.records.size(), 1u);
  EXPECT_EQ(page.records[0].id, old.id);
}

TEST_P(TaskOperationsContractTest, TaskIdsPageAscendingForABulkAction) {
  std::vector<int64_t> made;
  for (int i = 0; i < 5; ++i) made.push_back(Make("t1", "u" + std::to_string(i), "orders").id);
  Make("t2", "x", "orders");
  OperatorFilter f;
  f.scope = Tenant("t1");
  EXPECT_EQ(*store_->CountTasks(f), 5);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> first, store_->ListTaskIds(f, 0, 3));
  ASSERT_EQ(first.size(), 3u);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> rest, store_->ListTaskIds(f, first.back(), 3));
  first.insert(first.end(), rest.begin(), rest.end());
  std::sort(made.begin(), made.end());
  EXPECT_EQ(first, made);
}

TEST_P(TaskOperationsContractTest, BulkActionsAreAuditedAndSeenOnlyInTheirScope) {
  BulkActionRecord r;
  r.actor = "op1";
  r.actor_tenant = "t1";
  r.scope_tenant = "t1";
  r.scope_app = task::AppCode::kPlatform;
  r.action = "RETRY";
  r.filter_json = "{\"status\":\"FAILED\"}";
  r.matched = 7;
  ASSERT_OK_AND_ASSIGN(r.id, store_->BeginBulkAction(r));
  BulkActionRecord platform = r;
  platform.actor = "root";
  platform.actor_tenant = "platform";
  platform.scope_tenant.reset();
  platform.scope_app.reset();
  platform.action = "CANCEL";
  ASSERT_OK_AND_ASSIGN(platform.id, store_->BeginBulkAction(platform));

  ASSERT_OK_AND_ASSIGN(std::vector<BulkActionRecord> t1, store_->ListBulkActions(Tenant("t1"), 10));
  ASSERT_EQ(t1.size(), 1u);
  EXPECT_EQ(t1[0].outcome, "RUNNING");  // on record before it acts
  EXPECT_FALSE(t1[0].finished_at.has_value());
  r.succeeded = 5, r.skipped = 1, r.failed = 1, r.outcome = "COMPLETED";
  r.first_error = "task 9: export type gone";
  ASSERT_OK(store_->FinishBulkAction(r));
  ASSERT_OK(store_->FinishBulkAction(r));  // idempotent
  ASSERT_OK_AND_ASSIGN(t1, store_->ListBulkActions(Tenant("t1"), 10));
  ASSERT_EQ(t1.size(), 1u);
  EXPECT_EQ(t1[0].actor, "op1");
  EXPECT_EQ(t1[0].filter_json, "{\"status\":\"FAILED\"}");
  EXPECT_EQ(t1[0].matched, 7);
  EXPECT_EQ(t1[0].succeeded, 5);
  EXPECT_EQ(t1[0].skipped, 1);
  EXPECT_EQ(t1[0].failed, 1);
  EXPECT_EQ(t1[0].outcome, "COMPLETED");
  EXPECT_EQ(*t1[0].first_error, "task 9: export type gone");
  EXPECT_TRUE(t1[0].finished_at.has_value());
  EXPECT_EQ(t1[0].scope_app, task::AppCode::kPlatform);
  EXPECT_TRUE(store_->ListBulkActions(Tenant("t2"), 10)->empty());
  EXPECT_EQ(store_->ListBulkActions({}, 10)->size(), 2u);
  BulkActionRecord missing = r;
  missing.id = 42;
  EXPECT_EQ(store_->FinishBulkAction(missing).code(), StatusCode::kNotFound);
}

// A tenant's operator of one app lists that app's actions only: a MERCHANT
// operator never sees the PLATFORM operators' rows of the same tenant (their
// actors, the user ids in their filters, the task ids in their errors), nor
// an action over every app of the tenant, which only operate-all sees.
TEST_P(TaskOperationsContractTest, BulkActionAuditHonoursTheAppScope) {
  BulkActionRecord platform_op;
  platform_op.actor = "platform-op";
  platform_op.actor_tenant = "t1";
  platform_op.scope_tenant = "t1";
  platform_op.scope_app = task::AppCode::kPlatform;
  platform_op.action = "RETRY";
  platform_op.filter_json = "{\"user\":\"platform-user\"}";
  platform_op.matched = 1;
  ASSERT_OK_AND_ASSIGN(platform_op.id, store_->BeginBulkAction(platform_op));
  BulkActionRecord merchant_op = platform_op;
  merchant_op.actor = "merchant-op";
  merchant_op.scope_app = task::AppCode::kMerchant;
  merchant_op.filter_json = "{}";
  ASSERT_OK_AND_ASSIGN(merchant_op.id, store_->BeginBulkAction(merchant_op));
  BulkActionRecord every_app = platform_op;  // operate-all with ?tenantId=t1
  every_app.actor = "root";
  every_app.scope_app.reset();
  ASSERT_OK_AND_ASSIGN(every_app.id, store_->BeginBulkAction(every_app));

  auto actors = [&](const OperatorScope& scope) {
    auto rows = store_->ListBulkActions(scope, 10);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    std::vector<std::string> out;
    if (rows.ok()) {
      for (const auto& r : *rows) out.push_back(r.actor);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(actors({"t1", task::AppCode::kMerchant}), std::vector<std::string>{"merchant-op"});
  EXPECT_EQ(actors({"t1", task::AppCode::kPlatform}), std::vector<std::string>{"platform-op"});
  EXPECT_EQ(actors({"t1", std::nullopt}),
            (std::vector<std::string>{"merchant-op", "platform-op", "root"}));
  EXPECT_EQ(actors({}), (std::vector<std::string>{"merchant-op", "platform-op", "root"}));
}

// The migration that records the app (version 12) keeps the rows written
// before it, without an app: they are listed to operate-all only.
TEST_P(TaskOperationsContractTest, BulkActionsOlderThanTheAppColumnStayWithOperateAll) {
  // The database as version 11 left it, with one row written then.
  Exec("DELETE FROM export_schema_version WHERE version >= 12");
  Exec("ALTER TABLE export_bulk_action DROP COLUMN scope_app");
  Exec("ALTER TABLE export_task DROP COLUMN failure_detail");
  Exec(
      "INSERT INTO export_bulk_action (id, actor, actor_tenant, scope_tenant, action,"
      " filter_json, matched, succeeded, skipped, failed, outcome, started_at)"
      " VALUES (77, 'platform-op', 't1', 't1', 'CANCEL', '{\"user\":\"u9\"}', 1, 1, 0, 0,"
      " 'COMPLETED', 1000)");
  ASSERT_OK(store_->Migrate());
  EXPECT_EQ(*CurrentSchemaVersion(*db_), LatestSchemaVersion());
  EXPECT_TRUE(store_->ListBulkActions({"t1", task::AppCode::kMerchant}, 10)->empty());
  EXPECT_TRUE(store_->ListBulkActions({"t1", task::AppCode::kPlatform}, 10)->empty());
  ASSERT_OK_AND_ASSIGN(std::vector<BulkActionRecord> all,
                       store_->ListBulkActions({"t1", std::nullopt}, 10));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].id, 77);
  EXPECT_EQ(all[0].actor, "platform-op");
  EXPECT_FALSE(all[0].scope_app.has_value());
  EXPECT_EQ(store_->ListBulkActions({}, 10)->size(), 1u);
}

TEST_P(TaskOperationsContractTest, TypeStatsAreComputedFromTheStoreForTheWindow) {
  // orders: waits 1..4 s, durations 10, 20, 30 s, one failure, one still running.
  std::vector<Task> orders;
  for (int i = 0; i < 5; ++i) orders.push_back(Make("t1", "u" + std::to_string(i), "orders"));
  Ran(orders[0].id, TaskState::kSucceeded, kHourMs, 1000, 10000, 1000, 100);
  Ran(orders[1].id, TaskState::kSucceeded, kHourMs, 2000, 20000, 2000, 200);
  Ran(orders[2].id, TaskState::kFailed, kHourMs, 3000, 30000, 0, 0, "PROVIDER_ERROR");
  Ran(orders[3].id, TaskState::kRunning, kHourMs, 4000, std::nullopt);
  // Outside 24 h, inside 7 d.
  Ran(orders[4].id, TaskState::kFailed, 2 * kDay, 500, 500, 0, 0, "TIMEOUT");
  Task customers = Make("t2", "v", "customers");
  Ran(customers.id, TaskState::kFailed, kHourMs, 100, 100, 0, 0, "TIMEOUT");

  ASSERT_OK_AND_ASSIGN(std::vector<TypeStats> day, store_->ReadTypeStats(Tenant("t1"), kDay));
  ASSERT_EQ(day.size(), 1u) << "t2's type is not t1's business";
  const TypeStats& s = day[0];
  EXPECT_EQ(s.export_type, "orders");
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.ended, 3);
  EXPECT_EQ(s.succeeded, 2);
  EXPECT_EQ(s.wait_p50_ms, 2000);  // nearest rank of 1, 2, 3, 4 s
  EXPECT_EQ(s.wait_p95_ms, 4000);
  EXPECT_EQ(s.duration_p50_ms, 20000);  // of 10, 20, 30 s
  EXPECT_EQ(s.duration_p95_ms, 30000);
  ASSERT_TRUE(s.rows_per_second.has_value());
  EXPECT_DOUBLE_EQ(*s.rows_per_second, 100.0);  // 3000 rows in 30 s of succeeded work
  EXPECT_EQ(s.bytes, 300);
  ASSERT_EQ(s.top_failure_codes.size(), 1u);
  EXPECT_EQ(s.top_failure_codes[0].code, "PROVIDER_ERROR");

  ASSERT_OK_AND_ASSIGN(std::vector<TypeStats> week, store_->ReadTypeStats({}, 7 * kDay));
  ASSERT_EQ(week.size(), 2u);
  EXPECT_EQ(week[0].export_type, "orders");  // busiest first
  EXPECT_EQ(week[0].count, 5);
  ASSERT_EQ(week[0].top_failure_codes.size(), 2u);
  EXPECT_EQ(week[1].export_type, "customers");
  EXPECT_EQ(week[1].succeeded, 0);
  EXPECT_FALSE(week[1].rows_per_second.has_value());

  // Another instance on the same database reads the same figures.
  std::unique_ptr<TaskStore> other = NewSqlTaskStore(db_);
  ASSERT_OK_AND_ASSIGN(std::vector<TypeStats> again, other->ReadTypeStats(Tenant("t1"), kDay));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].wait_p95_ms, s.wait_p95_ms);
  EXPECT_EQ(again[0].count, s.count);
  EXPECT_TRUE(store_->ReadTypeStats(Tenant("t3"), kDay)->empty());
}

TEST_P(TaskOperationsContractTest, QueueHealthShowsDueCommandsRunningAndDeadDeliveries) {
  store_->SetNotificationRoutes({NotificationRoute{"all", {}, {}, {}, {}}});
  Task queued = Make("t1", "alice", "orders");
  Shift("export_outbox", "due_since", -90 * kSecond, queued.id);
  Shift("export_outbox", "next_retry_at", -90 * kSecond, queued.id);
  Task running1 = Make("t1", "bob", "orders");
  Task running2 = Make("t2", "carol", "orders");
  ASSERT_TRUE(Claim(running1.id, 1, "w1").claimed);
  ASSERT_TRUE(Claim(running2.id, 1, "w2").claimed);
  Task cancelled = Make("t1", "dave", "orders");
  ASSERT_EQ(*store_->RequestCancel(cancelled.id), TaskState::kCancelled);
  NotificationOutbox& outbox = store_->notifications();
  ASSERT_OK_AND_ASSIGN(std::vector<NotificationEntry> notes,
                       outbox.ListNotificationsForTask(cancelled.id));
  ASSERT_EQ(notes.size(), 1u);
  const int64_t dead_id = notes[0].id;
  ASSERT_TRUE(outbox.ClaimNotification(dead_id, "n1", 60)->has_value());
  ASSERT_EQ(*outbox.MarkNotificationDead(dead_id, "n1", "HTTP 500"), MarkOutcome::kMarked);
  // Every other command went out (the publisher's part).
  Exec("UPDATE export_outbox SET status = 'SENT', sent_at = 1 WHERE task_id <> ?", {queued.id});

  ASSERT_OK_AND_ASSIGN(QueueHealth t1, store_->ReadQueueHealth(Tenant("t1")));
  EXPECT_EQ(t1.due_commands, 1) << "the claimed commands are no longer due";
  ASSERT_TRUE(t1.oldest_due_age_ms.has_value());
  EXPECT_GE(*t1.oldest_due_age_ms, 90 * kSecond);
  ASSERT_EQ(t1.running_per_instance.size(), 1u);
  EXPECT_EQ(t1.running_per_instance[0].instance, "w1");
  EXPECT_EQ(t1.dead_notifications, 1);
  ASSERT_OK_AND_ASSIGN(QueueHealth t2, store_->ReadQueueHealth(Tenant("t2")));
  EXPECT_EQ(t2.due_commands, 0);
  EXPECT_FALSE(t2.oldest_due_age_ms.has_value());
  EXPECT_EQ(t2.dead_notifications, 0);
  ASSERT_OK_AND_ASSIGN(QueueHealth all, store_->ReadQueueHealth({}));
  EXPECT_EQ(all.running_per_instance.size(), 2u);
  EXPECT_EQ(all.dead_notifications, 1);

  // The dead delivery: listed in its tenant's scope only, re-delivered once.
  EXPECT_TRUE(store_->ListDeadNotifications(Tenant("t2"), 10)->empty());
  ASSERT_OK_AND_ASSIGN(std::vector<NotificationEntry> dead,
                       store_->ListDeadNotifications(Tenant("t1"), 10));
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].id, dead_id);
  EXPECT_EQ(*dead[0].last_error, "HTTP 500");
  EXPECT_EQ(store_->RedeliverNotification(Tenant("t2"), dead_id).code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->RedeliverNotification(Tenant("t1"), 987654321).code(), StatusCode::kNotFound);
  ASSERT_OK(store_->RedeliverNotification(Tenant("t1"), dead_id));
  EXPECT_EQ(store_->RedeliverNotification({}, dead_id).code(), StatusCode::kConflict);
  ASSERT_OK_AND_ASSIGN(notes, outbox.ListNotificationsForTask(cancelled.id));
  EXPECT_EQ(notes[0].status, NotificationStatus::kPending);
  EXPECT_EQ(notes[0].attempt_count, 0);
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> due, outbox.SelectDueNotifications(10));
  EXPECT_EQ(due, std::vector<int64_t>{dead_id});
  EXPECT_EQ(store_->ReadQueueHealth({})->dead_notifications, 0);

  // The task's dispatch: its command and its notification.
  ASSERT_OK_AND_ASSIGN(TaskDispatch d, store_->ReadTaskDispatch(cancelled.id));
  ASSERT_EQ(d.commands.size(), 1u);
  EXPECT_EQ(d.commands[0].dispatch_version, 1);
  EXPECT_EQ(d.notifications.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Backends, TaskOperationsContractTest,
                         ::testing::Values(std::string("sqlite"), std::string("postgres"),
                                           std::string("mysql")),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// ---- factories ----------------------------------------------------------------------

TEST(StoreFactoriesTest, SqliteFactoryOpensAFileAndSharesItsDatabase) {
  char tmpl[] = "/tmp/ec-store-factory-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  {
    ASSERT_OK_AND_ASSIGN(SqliteStoreWithDatabase s,
                         OpenSqliteTaskStoreWithDatabase(std::string(tmpl) + "/a.db"));
    ASSERT_OK(s.store->Migrate());
    ASSERT_OK(s.store->CheckGuardRow());
    NewTask t;
    t.tenant_id = "t";
    t.requested_by = "u";
    t.export_type = "x";
    t.task_name = "x";
    t.parameters_json = "{}";
    ASSERT_OK(s.store->CreateTask(t, {}).status());
    EXPECT_EQ(s.db->Query("SELECT COUNT(*) FROM export_task")->at(0).Int(0), 1);
    ASSERT_OK(OpenSqliteTaskStore(std::string(tmpl) + "/a.db").status());
  }
  std::filesystem::remove_all(tmpl);
}

TEST(StoreFactoriesTest, SqliteInMemoryStoreWorksOnOneConnection) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TaskStore> store, OpenSqliteTaskStore(":memory:"));
  ASSERT_OK(store->Migrate());
  NewTask t;
  t.tenant_id = "t";
  t.requested_by = "u";
  t.export_type = "x";
  t.task_name = "x";
  t.parameters_json = "{}";
  ASSERT_OK_AND_ASSIGN(CreateResult r, store->CreateTask(t, {}));
  EXPECT_EQ(store->GetTask(r.task.id)->id, r.task.id);
}

TEST(StoreFactoriesTest, SqliteFactoryFailsForAnUnusablePath) {
  EXPECT_FALSE(OpenSqliteTaskStore("/nonexistent-dir/sub/a.db").ok());
}

#ifdef EC_TEST_WITH_POSTGRES
TEST(StoreFactoriesTest, PostgresFactoryReportsAnUnreachableServerAsUnavailable) {
  auto store = OpenPostgresTaskStore("postgresql://postgres@127.0.0.1:1/none?connect_timeout=2", 2);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable);
}
#endif

#ifdef EC_TEST_WITH_MYSQL
TEST(StoreFactoriesTest, MysqlFactoryReportsAnUnreachableServerAsUnavailable) {
  ASSERT_OK_AND_ASSIGN(int port, testing::FreeLoopbackPort());
  auto store = OpenMysqlTaskStore("mysql://root@127.0.0.1:" + std::to_string(port) + "/none", 2);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable) << store.status().ToString();
}

TEST(StoreFactoriesTest, MysqlFactoryRejectsABadUrlBeforeConnecting) {
  for (const char* url : {"postgresql://root@127.0.0.1/x", "mysql://root@127.0.0.1:3306",
                          "mysql://root@127.0.0.1:99999/x", "mysql://root@127.0.0.1/x?tls=1"}) {
    auto store = OpenMysqlTaskStore(url, 2);
    ASSERT_FALSE(store.ok()) << url;
    EXPECT_EQ(store.status().code(), StatusCode::kInvalidArgument) << store.status().ToString();
  }
}
#endif

// ---- the claim-miss table as a pure function --------------------------------------

TEST(ClassifyClaimMissTest, CoversEveryRowOfTheSeedTable) {
  ClaimFacts f;
  EXPECT_EQ(ClassifyClaimMiss(f, 1), ClaimMiss::kTaskMissing);
  f.found = true;
  f.dispatch_version = 2;
  EXPECT_EQ(ClassifyClaimMiss(f, 1), ClaimMiss::kNewerVersion);
  EXPECT_EQ(ClassifyClaimMiss(f, 3), ClaimMiss::kOlderVersion);
  for (TaskState s : {TaskState::kSucceeded, TaskState::kFailed, TaskState::kExpired,
                      TaskState::kCancelled, TaskState::kStale, TaskState::kInconsistent}) {
    f.status = s;
    EXPECT_EQ(ClassifyClaimMiss(f, 2), ClaimMiss::kFinished) << task::ToString(s);
  }
  f.status = TaskState::kRunning;
  f.lease_live = true;
  EXPECT_EQ(ClassifyClaimMiss(f, 2), ClaimMiss::kRunningLeaseLive);
  f.lease_live = false;
  EXPECT_EQ(ClassifyClaimMiss(f, 2), ClaimMiss::kRunningLeaseExpired);
  f.status = TaskState::kPending;
  f.in_backoff = true;
  EXPECT_EQ(ClassifyClaimMiss(f, 2), ClaimMiss::kPendingBackoff);
  f.in_backoff = false;
  EXPECT_EQ(ClassifyClaimMiss(f, 2), ClaimMiss::kLostRace);
}

}  // namespace
}  // namespace export_center::store

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
#ifdef EC_TEST_WITH_POSTGRES
  ::testing::AddGlobalTestEnvironment(new export_center::store::PostgresEnvironment());
#endif
#ifdef EC_TEST_WITH_MYSQL
  ::testing::AddGlobalTestEnvironment(new export_center::store::MariaDbEnvironment());
#endif
  return RUN_ALL_TESTS();
}
