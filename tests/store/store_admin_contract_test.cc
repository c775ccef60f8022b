// The StoreAdmin part of the TaskStore contract (task_store.h) on every
// backend: migrations and the schema versions, the guard row, the database
// clock, the id nodes and the gauges; and the store factories.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/ids.h"
#include "task_store_fixture.h"  // beside this file

namespace export_center::store::contract {
namespace {

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

// ---- ids ------------------------------------------------------------------------

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

// ---- factories ----------------------------------------------------------------------

TEST(StoreFactoriesTest, SqliteFactoryOpensAFileAndSharesItsDatabase) {
  char tmpl[] = "/tmp/ec-store-factory-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  {
    ASSERT_OK_AND_ASSIGN(SqliteStoreWithDatabase s,
                         OpenSqliteTaskStoreWithDatabase(std::string(tmpl) + "/a.db"));
    ASSERT_OK(s.store->Migrate());
    ASSERT_OK(s.store->CheckGuardRow());
    const NewTask t = TaskStoreContractTest::MakeTask("u", "x", "{}", "t");
    ASSERT_OK(s.store->CreateTask(t, {}).status());
    EXPECT_EQ(s.db->Query("SELECT COUNT(*) FROM export_task")->at(0).Int(0), 1);
    ASSERT_OK(OpenSqliteTaskStore(std::string(tmpl) + "/a.db").status());
  }
  std::filesystem::remove_all(tmpl);
}

TEST(StoreFactoriesTest, SqliteInMemoryStoreWorksOnOneConnection) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TaskStore> store, OpenSqliteTaskStore(":memory:"));
  ASSERT_OK(store->Migrate());
  const NewTask t = TaskStoreContractTest::MakeTask("u", "x", "{}", "t");
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

}  // namespace
}  // namespace export_center::store::contract
