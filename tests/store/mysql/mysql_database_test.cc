// What the MySQL/MariaDB backend adds under the TaskStore contract, against a
// real MariaDB started once for this binary: the error mapping (a real
// deadlock, a real lock wait timeout, a killed connection), the retries of a
// transaction the server rolled back, CLIENT_FOUND_ROWS, the database clock,
// the session settings, the utf8mb4 binary schema and the migrations.
// The contract itself runs in tests/store/*_contract_test.cc (task_store_fixture.h).

#include "store/mysql/mysql_database.h"

#include <gtest/gtest.h>
#include <stdio.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "../store_backends.h"  // tests/store/
#include "mysql/mysql_client.h"
#include "store/dialect.h"
#include "store/migrations.h"
#include "store/mysql/mysql_error.h"
#include "store/mysql/mysql_task_store.h"
#include "store/sql_task_store.h"
#include "tests/support/mariadb_server.h"
#include "tests/support/server_process.h"

namespace export_center::store {
namespace {

using Clock = std::chrono::steady_clock;

// ---- error mapping: a table ------------------------------------------------------

TEST(MysqlErrorTest, MapsErrorCodesInOnePlace) {
  for (unsigned code : {1213u, 1205u, 1020u, 1040u, 1053u, 1203u, 1317u, 1412u, 1637u, 1927u, 1969u,
                        3024u, 2002u, 2003u, 2006u, 2013u, 2055u}) {
    EXPECT_EQ(MysqlStatusCode(code, "HY000"), StatusCode::kUnavailable) << code;
  }
  EXPECT_EQ(MysqlStatusCode(1213, "40001"), StatusCode::kUnavailable);
  EXPECT_EQ(MysqlStatusCode(1105, "08S01"), StatusCode::kUnavailable) << "SQLSTATE class 08";
  EXPECT_EQ(MysqlStatusCode(1062, "23000"), StatusCode::kConflict);
  EXPECT_EQ(MysqlStatusCode(1586, "23000"), StatusCode::kConflict);
  EXPECT_EQ(MysqlStatusCode(1406, "22001"), StatusCode::kInvalidArgument);
  EXPECT_EQ(MysqlStatusCode(2031, "HY000"), StatusCode::kInternal) << "API misuse is a bug";
  EXPECT_EQ(MysqlStatusCode(2034, "HY000"), StatusCode::kInternal);
  EXPECT_EQ(MysqlStatusCode(1064, "42000"), StatusCode::kInternal);
  EXPECT_EQ(MysqlStatusCode(1644, "45000"), StatusCode::kInternal);
  EXPECT_TRUE(IsRetryableLockConflict(1213));
  EXPECT_TRUE(IsRetryableLockConflict(1205));
  EXPECT_FALSE(IsRetryableLockConflict(2013)) << "a lost COMMIT may have committed";
  EXPECT_EQ(MysqlError(1213, "40001", "Deadlock found", "exec").message(),
            "mysql exec: [1213/40001] Deadlock found");
}

// ---- one server for the binary (store_backends.h) ---------------------------------------

class MysqlDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    server_ = MariaDbEnvironment::Get(&why);
    if (server_ == nullptr && testing::RealServersRequired()) {
      FAIL() << "MariaDB unavailable in CI: " << why;
    }
    if (server_ == nullptr) GTEST_SKIP() << "MariaDB: " << why;
    static std::atomic<int> counter{0};
    auto url = server_->CreateDatabase("d" + std::to_string(++counter));
    ASSERT_TRUE(url.ok()) << url.status().ToString();
    url_ = *url;
  }

  std::shared_ptr<Database> Open(MysqlDatabaseOptions options = {}) {
    auto db = OpenMysqlDatabase(url_, options);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::shared_ptr<Database>(std::move(db).value()) : nullptr;
  }

  // A table of two rows (1, 0) and (2, 0) for the lock tests.
  static void MakeRows(Database& db) {
    ASSERT_TRUE(db.Exec("CREATE TABLE r (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB").ok());
    ASSERT_TRUE(db.Exec("INSERT INTO r VALUES (1, 0), (2, 0)").ok());
  }

  static int64_t Value(Database& db, int id) {
    auto rows = db.Query("SELECT v FROM r WHERE id = ?", {id});
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() && !rows->empty() ? rows->at(0).Int(0) : -1;
  }

  testing::MariaDbServer* server_ = nullptr;
  std::string url_;
};

// ---- session ------------------------------------------------------------------------

TEST_F(MysqlDatabaseTest, EverySessionIsUtcReadCommittedStrictAndUtf8mb4) {
  auto db = Open();
  ASSERT_NE(db, nullptr);
  auto rows = db->Query(
      "SELECT @@session.time_zone, @@session.tx_isolation, @@session.sql_mode,"
      " @@session.innodb_lock_wait_timeout, @@session.character_set_client,"
      " @@session.character_set_results, @@session.autocommit");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  const Row& r = rows->at(0);
  EXPECT_EQ(r.Text(0), "+00:00");
  EXPECT_EQ(r.Text(1), "READ-COMMITTED");
  EXPECT_NE(r.Text(2).find("STRICT_TRANS_TABLES"), std::string::npos) << r.Text(2);
  EXPECT_EQ(r.Int(3), 5);
  EXPECT_EQ(r.Text(4), "utf8mb4");
  EXPECT_EQ(r.Text(5), "utf8mb4");
  EXPECT_EQ(r.Int(6), 1);
}

TEST_F(MysqlDatabaseTest, ReadTransactionsSeeOneSnapshotAndWriteTransactionsReadCommitted) {
  auto db = Open();
  ASSERT_NE(db, nullptr);
  MakeRows(*db);
  // A read transaction cannot write.
  Status refused = db->WithTransaction(TxMode::kRead, [](Connection& c) {
    return c.Exec("UPDATE r SET v = 1 WHERE id = 1").status();
  });
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(Value(*db, 1), 0);
  // A read transaction keeps its snapshot while another session commits.
  ASSERT_OK(db->WithTransaction(TxMode::kRead, [&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(Rows before, c.Query("SELECT v FROM r WHERE id = ?", {2}));
    EXPECT_TRUE(db->Exec("UPDATE r SET v = 9 WHERE id = 2").ok());
    EC_ASSIGN_OR_RETURN(Rows after, c.Query("SELECT v FROM r WHERE id = ?", {2}));
    EXPECT_EQ(before.at(0).Int(0), 0);
    EXPECT_EQ(after.at(0).Int(0), 0) << "repeatable read";
    return Status::Ok();
  }));
  // A write transaction sees what others committed since it began.
  ASSERT_OK(db->WithTransaction(TxMode::kWrite, [&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(Rows before, c.Query("SELECT v FROM r WHERE id = ?", {2}));
    EXPECT_TRUE(db->Exec("UPDATE r SET v = 10 WHERE id = 2").ok());
    EC_ASSIGN_OR_RETURN(Rows after, c.Query("SELECT v FROM r WHERE id = ?", {2}));
    EXPECT_EQ(before.at(0).Int(0), 9);
    EXPECT_EQ(after.at(0).Int(0), 10) << "read committed";
    return Status::Ok();
  }));
}

// ---- found rows ------------------------------------------------------------------------

TEST_F(MysqlDatabaseTest, AnUpdateCountsTheRowsItMatchedNotTheRowsItChanged) {
  auto db = Open();
  ASSERT_NE(db, nullptr);
  MakeRows(*db);
  // The same value again: MySQL changes nothing, but the row matched.
  EXPECT_EQ(*db->Exec("UPDATE r SET v = 0 WHERE id = 1"), 1) << "text protocol";
  EXPECT_EQ(*db->Exec("UPDATE r SET v = ? WHERE id = ?", {0, 1}), 1) << "prepared statement";
  EXPECT_EQ(*db->Exec("UPDATE r SET v = ? WHERE id = ?", {0, 3}), 0) << "no such row";
  // Without CLIENT_FOUND_ROWS the server reports 0: the flag is what the test sees.
  auto url = mysql::ParseUrl(url_);
  ASSERT_TRUE(url.ok());
  auto [raw, error] = mysql::Connect(*url, {});
  ASSERT_NE(raw, nullptr) << error.ToString();
  mysql::Answer answer;
  ASSERT_FALSE(mysql::Query(raw.get(), "UPDATE r SET v = 0 WHERE id = 1", &answer).failed());
  EXPECT_EQ(answer.affected_rows, 0u);
}

TEST_F(MysqlDatabaseTest, ALeaseRenewedWithinTheSameMillisecondIsStillRenewed) {
  // One connection whose clock is frozen: every {NOW} is the same instant, so
  // the renewal writes exactly the values the claim wrote. Counting changed
  // rows, that would read as a lost lease.
  MysqlDatabaseOptions options;
  options.pool_size = 1;
  auto db = Open(options);
  ASSERT_NE(db, nullptr);
  auto store = NewSqlTaskStore(db);
  ASSERT_OK(store->Migrate());
  ASSERT_TRUE(db->Exec("SET timestamp = 1700000000.123").ok());
  ASSERT_EQ(*store->DatabaseNowMs(), 1700000000123) << "the server's clock, exact to the ms";
  NewTask t;
  t.tenant_id = "t1";
  t.requested_by = "alice";
  t.export_type = "orders";
  t.task_name = "orders";
  t.parameters_json = "{}";
  auto created = store->CreateTask(t, {});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ClaimRequest claim;
  claim.task_id = created->task.id;
  claim.dispatch_version = 1;
  claim.instance = "w1";
  claim.lease_seconds = 300;
  auto claimed = store->ClaimTask(claim);
  ASSERT_TRUE(claimed.ok() && claimed->claimed) << claimed.status().ToString();
  EXPECT_EQ(claimed->task->lease.until, 1700000000123 + 300'000);
  auto renewed = store->RenewLease({created->task.id, 1, "w1"}, 300);
  ASSERT_TRUE(renewed.ok()) << renewed.status().ToString();
  EXPECT_EQ(*renewed, RenewOutcome::kRenewed);
  auto progress = store->UpdateProgress({created->task.id, 1, "w1"}, 0, std::nullopt);
  ASSERT_TRUE(progress.ok()) << progress.status().ToString();
}

// ---- the database clock --------------------------------------------------------------------

TEST_F(MysqlDatabaseTest, TheClockIsTheServersEpochMillisecondsWhateverItsTimeZone) {
  ASSERT_OK(server_->Exec("SET GLOBAL time_zone = '+05:00'"));
  auto db = Open();
  ASSERT_OK(server_->Exec("SET GLOBAL time_zone = 'SYSTEM'"));
  ASSERT_NE(db, nullptr);
  const Dialect& d = db->dialect();
  EXPECT_EQ(d.name, "mysql");
  auto rows = db->Query(d.Expand("SELECT {NOW}, SLEEP(0.05), {NOW}, @@global.time_zone"));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  const int64_t local = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  EXPECT_EQ(rows->at(0).Int(0), rows->at(0).Int(2)) << "one instant per statement";
  EXPECT_NEAR(static_cast<double>(rows->at(0).Int(0)), static_cast<double>(local), 5000.0)
      << "a +05:00 server zone does not shift the epoch";
  // Frozen at a known instant, the expression gives exactly that instant.
  ASSERT_OK(db->WithConnection([&](Connection& c) -> Status {
    EC_RETURN_IF_ERROR(c.Exec("SET time_zone = '-08:00', timestamp = 1234567890.987").status());
    EC_ASSIGN_OR_RETURN(Rows frozen, c.Query(d.Expand("SELECT {NOW}")));
    EXPECT_EQ(frozen.at(0).Int(0), 1234567890987);
    return c.Exec("SET time_zone = '+00:00', timestamp = DEFAULT").status();
  }));
}

// Loads one zone of the system's tz database into the server's time zone
// tables (a fresh server has none).
Status LoadTimeZone(testing::MariaDbServer& server, const std::string& zone) {
  const std::string command =
      "/usr/bin/mariadb-tzinfo-to-sql /usr/share/zoneinfo/" + zone + " " + zone + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return Internal("cannot run mariadb-tzinfo-to-sql");
  std::string sql;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) sql.append(buf, n);
  if (pclose(pipe) != 0) return Internal("mariadb-tzinfo-to-sql failed: " + sql);
  return server.Exec(sql, "mysql");
}

TEST_F(MysqlDatabaseTest, TheClockIsExactInTheHourADaylightSavingZoneRepeats) {
  ASSERT_OK(LoadTimeZone(*server_, "Europe/Berlin"));
  ASSERT_OK(server_->Exec("SET GLOBAL time_zone = 'Europe/Berlin'"));
  MysqlDatabaseOptions options;
  options.pool_size = 1;
  auto db = Open(options);
  ASSERT_OK(server_->Exec("SET GLOBAL time_zone = 'SYSTEM'"));
  ASSERT_NE(db, nullptr);
  const std::string now = db->dialect().Expand("SELECT {NOW}");
  // 2023-10-29 01:30:00.250 UTC is 02:30 CET, the second 02:30 of that night
  // in Berlin.
  constexpr int64_t kInstant = 1698543000250;
  ASSERT_TRUE(db->Exec("SET timestamp = 1698543000.250").ok());
  EXPECT_EQ(db->Query(now)->at(0).Int(0), kInstant) << "the store's sessions run in UTC";
  // A session left in the server's zone would read the first 02:30: an hour
  // early, and every lease taken in that hour would be an hour short.
  ASSERT_TRUE(db->Exec("SET time_zone = 'Europe/Berlin'").ok());
  EXPECT_EQ(db->Query(now)->at(0).Int(0), kInstant - 3'600'000);
  ASSERT_TRUE(db->Exec("SET time_zone = '+00:00', timestamp = DEFAULT").ok());
}

// ---- lock conflicts --------------------------------------------------------------------------

TEST_F(MysqlDatabaseTest, ADeadlockIsUnavailable) {
  auto db = Open();
  ASSERT_NE(db, nullptr);
  MakeRows(*db);
  // Two sessions lock rows 1 and 2 in opposite orders; InnoDB rolls one back.
  std::latch both_locked(2);
  auto session = [&](int first, int second, Status* out) {
    *out = db->WithConnection([&](Connection& c) -> Status {
      EC_RETURN_IF_ERROR(c.Exec("START TRANSACTION").status());
      Status s = c.Exec("UPDATE r SET v = v + 1 WHERE id = ?", {first}).status();
      both_locked.arrive_and_wait();
      if (s.ok()) s = c.Exec("UPDATE r SET v = v + 1 WHERE id = ?", {second}).status();
      if (!s.ok()) {
        // The server rolled the transaction back: a caller that went on would
        // write outside any transaction, so the connection refuses until ROLLBACK.
        Status after = c.Exec("UPDATE r SET v = v + 100 WHERE id = ?", {first}).status();
        EXPECT_EQ(after.code(), StatusCode::kUnavailable) << after.ToString();
      }
      (void)c.Exec(s.ok() ? "COMMIT" : "ROLLBACK");
      return s;
    });
  };
  Status a, b;
  std::thread ta(session, 1, 2, &a);
  std::thread tb(session, 2, 1, &b);
  ta.join();
  tb.join();
  EXPECT_NE(a.ok(), b.ok()) << a.ToString() << " / " << b.ToString();
  const Status& lost = a.ok() ? b : a;
  EXPECT_EQ(lost.code(), StatusCode::kUnavailable) << lost.ToString();
  EXPECT_NE(lost.message().find("[1213/40001]"), std::string::npos) << lost.ToString();
  EXPECT_EQ(Value(*db, 1), 1);
  EXPECT_EQ(Value(*db, 2), 1);
}

TEST_F(MysqlDatabaseTest, ATransactionRolledBackByADeadlockRunsAgainAndBothCommit) {
  auto db = Open();
  ASSERT_NE(db, nullptr);
  MakeRows(*db);
  std::latch both_locked(2);
  std::atomic<int> runs{0};
  auto transaction = [&](int first, int second, int add, Status* out) {
    bool waited = false;
    *out = db->WithTransaction(TxMode::kWrite, [&](Connection& c) -> Status {
      ++runs;
      EC_RETURN_IF_ERROR(c.Exec("UPDATE r SET v = v + ? WHERE id = ?", {add, first}).status());
      if (!waited) {
        waited = true;
        both_locked.arrive_and_wait();
      }
      return c.Exec("UPDATE r SET v = v + ? WHERE id = ?", {add, second}).status();
    });
  };
  Status a, b;
  std::thread ta(transaction, 1, 2, 1, &a);
  std::thread tb(transaction, 2, 1, 10, &b);
  ta.join();
  tb.join();
  ASSERT_OK(a);
  ASSERT_OK(b);
  EXPECT_EQ(runs, 3) << "the deadlock's victim ran once more";
  EXPECT_EQ(Value(*db, 1), 11);
  EXPECT_EQ(Value(*db, 2), 11);
}

// Holds the row lock of r.id = 1 in its own session until released.
class RowLockHolder {
 public:
  RowLockHolder(Database& db, std::chrono::milliseconds hold) {
    thread_ = std::thread([&db, hold, this] {
      status_ = db.WithConnection([&](Connection& c) -> Status {
        EC_RETURN_IF_ERROR(c.Exec("START TRANSACTION").status());
        Status s = c.Query("SELECT v FROM r WHERE id = ? FOR UPDATE", {1}).status();
        locked_.count_down();
        std::this_thread::sleep_for(hold);
        (void)c.Exec("COMMIT");
        return s;
      });
    });
    locked_.wait();
  }
  ~RowLockHolder() { thread_.join(); }
  const Status& status() const { return status_; }

 private:
  std::latch locked_{1};
  Status status_;
  std::thread thread_;
};

TEST_F(MysqlDatabaseTest, ALockWaitTimeoutIsUnavailable) {
  MysqlDatabaseOptions options;
  options.lock_wait_timeout_seconds = 1;
  options.lock_conflict_retries = 0;
  auto db = Open(options);
  ASSERT_NE(db, nullptr);
  MakeRows(*db);
  RowLockHolder holder(*db, std::chrono::milliseconds(2500));
  const auto start = Clock::now();
  auto n = db->Exec("UPDATE r SET v = 7 WHERE id = ?", {1});
  const auto waited = Clock::now() - start;
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kUnavailable) << n.status().ToString();
  EXPECT_NE(n.status().message().find("[1205/"), std::string::npos) << n.status().ToString();
  EXPECT_GE(waited, std::chrono::milliseconds(900));
}

TEST_F(MysqlDatabaseTest, AStatementAndATransactionOutlastALockWaitTimeoutByRunningAgain) {
  MysqlDatabaseOptions options;
  options.lock_wait_timeout_seconds = 1;
  options.lock_conflict_retries = 2;
  auto db = Open(options);
  ASSERT_NE(db, nullptr);
  MakeRows(*db);
  {
    // Held 1.5 s, so the first 1 s wait must time out: only a second attempt
    // can succeed.
    RowLockHolder holder(*db, std::chrono::milliseconds(1500));
    const auto start = Clock::now();
    auto n = db->Exec("UPDATE r SET v = 7 WHERE id = ?", {1});
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_EQ(*n, 1);
    EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(1400));
  }
  {
    RowLockHolder holder(*db, std::chrono::milliseconds(1500));
    int runs = 0;
    ASSERT_OK(db->WithTransaction(TxMode::kWrite, [&](Connection& c) -> Status {
      ++runs;
      EC_RETURN_IF_ERROR(c.Exec("UPDATE r SET v = v + 1 WHERE id = ?", {2}).status());
      return c.Exec("UPDATE r SET v = v + 1 WHERE id = ?", {1}).status();
    }));
    EXPECT_EQ(runs, 2);
  }
  EXPECT_EQ(Value(*db, 1), 8);
  EXPECT_EQ(Value(*db, 2), 1) << "the first run's update of row 2 was rolled back";
}

// ---- connections ---------------------------------------------------------------------------

TEST_F(MysqlDatabaseTest, AKilledConnectionIsUnavailableAndReplaced) {
  MysqlDatabaseOptions options;
  options.pool_size = 1;
  auto db = Open(options);
  ASSERT_NE(db, nullptr);
  auto id = db->Query("SELECT CONNECTION_ID()");
  ASSERT_TRUE(id.ok());
  ASSERT_OK(server_->Exec("KILL " + id->at(0).Text(0)));
  auto lost = db->Query("SELECT 1");
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.status().code(), StatusCode::kUnavailable) << lost.status().ToString();
  auto next = db->Query("SELECT CONNECTION_ID()");
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_NE(next->at(0).Text(0), id->at(0).Text(0));
}

TEST_F(MysqlDatabaseTest, ConstraintAndStatementErrorsMapLikeTheOtherBackends) {
  auto db = Open();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Exec("CREATE TABLE k (id INT PRIMARY KEY, name VARCHAR(8) NOT NULL)").ok());
  ASSERT_TRUE(db->Exec("INSERT INTO k VALUES (?, ?)", {1, "a"}).ok());
  EXPECT_EQ(db->Exec("INSERT INTO k VALUES (?, ?)", {1, "b"}).status().code(),
            StatusCode::kConflict);
  EXPECT_EQ(db->Exec("INSERT INTO k VALUES (?, ?)", {2, "much too long"}).status().code(),
            StatusCode::kInvalidArgument)
      << "strict mode: no silent truncation";
  EXPECT_EQ(db->Exec("INSERT INTO k VALUES (?, NULL)", {3}).status().code(), StatusCode::kInternal);
  EXPECT_EQ(db->Exec("SELEKT 1").status().code(), StatusCode::kInternal);
  EXPECT_EQ(db->Query("SELECT ?", {1, 2}).status().code(), StatusCode::kInternal)
      << "parameter count mismatch";
  EXPECT_EQ(*db->Exec("INSERT IGNORE INTO k VALUES (?, ?)", {1, "c"}), 0);
}

TEST_F(MysqlDatabaseTest, OpeningChecksTheUrlAndTheServer) {
  auto no_db = OpenMysqlDatabase("mysql://root@127.0.0.1:" + std::to_string(server_->port()));
  ASSERT_FALSE(no_db.ok());
  EXPECT_EQ(no_db.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_db.status().message().find("names no database"), std::string::npos);
  auto missing = OpenMysqlDatabase(server_->UrlFor("no_such_database"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kUnavailable) << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("1049"), std::string::npos)
      << missing.status().ToString();
  auto denied = OpenMysqlDatabase(
      "mysql://nobody:wrong@127.0.0.1:" + std::to_string(server_->port()) + "/mysql");
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().message().find("wrong"), std::string::npos) << "no password";
}

// ---- schema ----------------------------------------------------------------------------------

TEST_F(MysqlDatabaseTest, TablesAreInnoDbUtf8mb4WithABinaryNoPadCollation) {
  auto db = Open();
  ASSERT_NE(db, nullptr);
  ASSERT_OK(Migrate(*db));
  auto tables = db->Query(
      "SELECT table_name, engine, table_collation FROM information_schema.tables"
      " WHERE table_schema = DATABASE() ORDER BY table_name");
  ASSERT_TRUE(tables.ok()) << tables.status().ToString();
  // task, outbox, guard, schema version, id node, notification, download audit, event,
  // bulk action, subscription, subscription run, mail, mail key.
  ASSERT_EQ(tables->size(), 13u);
  for (const Row& t : *tables) {
    EXPECT_EQ(t.Text(1), "InnoDB") << t.Text(0);
    EXPECT_EQ(t.Text(2), "utf8mb4_nopad_bin") << t.Text(0);
  }
  auto text = db->Query(
      "SELECT data_type FROM information_schema.columns WHERE table_schema = DATABASE()"
      " AND table_name = 'export_task' AND column_name = 'parameters_json'");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->at(0).Text(0), "mediumtext") << "TEXT would stop at 64 KiB";
}

TEST_F(MysqlDatabaseTest, IdsCompareByteForByteAndTextKeepsEveryCharacter) {
  auto opened = OpenMysqlTaskStoreWithDatabase(url_, 4);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  TaskStore& store = *opened->store;
  ASSERT_OK(store.Migrate());
  auto create = [&](const std::string& tenant, const std::string& user, const std::string& name) {
    NewTask t;
    t.tenant_id = tenant;
    t.requested_by = user;
    t.export_type = "orders";
    t.task_name = name;
    t.parameters_json = R"({"q":"Grüße 📦"})";
    t.params_hash = "h";
    auto r = store.CreateTask(t, {60, 100, 100});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : CreateResult{};
  };
  CreateResult first = create("t1", "alice", "Bestellungen 📦 导出");
  EXPECT_FALSE(create("T1", "alice", "x").deduplicated) << "tenant ids differ in case";
  EXPECT_FALSE(create("t1", "ALICE", "x").deduplicated) << "user ids differ in case";
  EXPECT_FALSE(create("t1", "alice ", "x").deduplicated) << "a trailing space is a character";
  EXPECT_TRUE(create("t1", "alice", "x").deduplicated);
  TaskStore::ListQuery q;
  q.tenant_id = "t1";
  q.requested_by = "alice";
  auto page = store.ListTasks(q);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->total, 1);
  EXPECT_EQ(page->records.at(0).task_name, "Bestellungen 📦 导出");
  EXPECT_EQ(page->records.at(0).parameters_json, R"({"q":"Grüße 📦"})");
  EXPECT_EQ(page->records.at(0).id, first.task.id);
}

// The MySQL 8 dialect (no CREATE INDEX IF NOT EXISTS) on this MariaDB: the
// same migrations through the existence check. Only the collation is
// MariaDB's, since MariaDB has no utf8mb4_0900_bin.
class DialectOverride final : public Database {
 public:
  DialectOverride(std::shared_ptr<Database> inner, Dialect d)
      : inner_(std::move(inner)), d_(std::move(d)) {}
  const Dialect& dialect() const override { return d_; }
  Status WithTransaction(TxMode mode, const std::function<Status(Connection&)>& fn) override {
    return inner_->WithTransaction(mode, fn);
  }
  Status WithConnection(const std::function<Status(Connection&)>& fn) override {
    return inner_->WithConnection(fn);
  }

 private:
  std::shared_ptr<Database> inner_;
  Dialect d_;
};

int64_t IndexCount(Database& db) {
  auto rows = db.Query(
      "SELECT COUNT(DISTINCT table_name, index_name) FROM information_schema.statistics"
      " WHERE table_schema = DATABASE() AND index_name <> 'PRIMARY'");
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  return rows.ok() ? rows->at(0).Int(0) : -1;
}

TEST_F(MysqlDatabaseTest, AMigrationCutShortIsFinishedByTheNextRunOnBothFlavours) {
  auto db = Open();
  ASSERT_NE(db, nullptr);
  Dialect mysql8 = MysqlDialect(MysqlFlavor::kMysql);
  ASSERT_FALSE(mysql8.index_exists_query.empty());
  mysql8.table_options = MysqlDialect(MysqlFlavor::kMariaDb).table_options;
  DialectOverride as_mysql8(db, mysql8);
  for (Database* flavour : {static_cast<Database*>(&as_mysql8), db.get()}) {
    SCOPED_TRACE(flavour == db.get() ? "MariaDB" : "MySQL 8");
    ASSERT_OK(Migrate(*flavour));
    // Secondary indexes: 9 of migration 1, 3 of the notification outbox, 1 for task
    // events, 2 of the download audit, 1 of the timeline, 2 of the bulk-action audit
    // (18), 4 of the subscriptions (migration 14), and 13 more of the history's list
    // shapes (migrations 17 and 18, which also replace ten by wider ones), 2 of the
    // mail outbox (migration 19), 4 of what runs deliver (migration 21: the runs' delivery,
    // the mail key's mail, the dead list's and the purge's order).
    EXPECT_EQ(IndexCount(*db), 41);
    // DDL commits by itself on MySQL: a crash can leave some statements of a
    // migration applied and its version row missing.
    ASSERT_TRUE(db->Exec("DROP INDEX idx_export_task_lease ON export_task").ok());
    ASSERT_TRUE(db->Exec("DELETE FROM export_schema_version").ok());
    EXPECT_EQ(IndexCount(*db), 40);
    ASSERT_OK(Migrate(*flavour));
    EXPECT_EQ(IndexCount(*db), 41);
    EXPECT_EQ(*CurrentSchemaVersion(*db), LatestSchemaVersion());
    ASSERT_OK(Migrate(*flavour));
    auto guard = db->Query("SELECT COUNT(*) FROM export_task_guard");
    ASSERT_TRUE(guard.ok());
    EXPECT_EQ(guard->at(0).Int(0), 1);
  }
}

}  // namespace
}  // namespace export_center::store

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  export_center::store::AddServerEnvironments();
  return RUN_ALL_TESTS();
}
