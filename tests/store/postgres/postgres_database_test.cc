#include "store/postgres/postgres_database.h"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <memory>
#include <string>
#include <thread>

#include "store/postgres/postgres_error.h"
#include "tests/support/postgres_server.h"
#include "tests/support/server_process.h"

namespace export_center::store {
namespace {

TEST(PostgresErrorTest, MapsSqlStatesInOnePlace) {
  EXPECT_EQ(PostgresStatusCode("40001"), StatusCode::kUnavailable);
  EXPECT_EQ(PostgresStatusCode("40P01"), StatusCode::kUnavailable);
  EXPECT_EQ(PostgresStatusCode("08006"), StatusCode::kUnavailable);
  EXPECT_EQ(PostgresStatusCode("57P01"), StatusCode::kUnavailable);
  EXPECT_EQ(PostgresStatusCode("53300"), StatusCode::kUnavailable);
  EXPECT_EQ(PostgresStatusCode(""), StatusCode::kUnavailable);
  EXPECT_EQ(PostgresStatusCode("23505"), StatusCode::kConflict);
  EXPECT_EQ(PostgresStatusCode("22001"), StatusCode::kInvalidArgument);
  EXPECT_EQ(PostgresStatusCode("42P01"), StatusCode::kInternal);
  Status s = PostgresError("23505", "duplicate key\n", "exec");
  EXPECT_EQ(s.message(), "postgres exec: [23505] duplicate key");
}

// ---- a real server: what the backend adds to WithTransaction ------------------------

class PostgresDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started = testing::PostgresServer::Start("postgres_database_test");
    if (!started.ok() && testing::RealServersRequired()) {
      FAIL() << "PostgreSQL unavailable in CI: " << started.status().ToString();
    }
    if (!started.ok()) GTEST_SKIP() << "PostgreSQL: " << started.status().ToString();
    server_ = std::move(started).value();
    auto db = OpenPostgresDatabase(server_->url(), 4, SessionTimeouts{});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    ASSERT_TRUE(db_->Exec("CREATE TABLE r (id INT PRIMARY KEY, v INT NOT NULL)").ok());
    ASSERT_TRUE(db_->Exec("INSERT INTO r VALUES (1, 0), (2, 0)").ok());
  }

  int64_t Value(int id) {
    auto rows = db_->Query("SELECT v FROM r WHERE id = ?", {id});
    return rows.ok() && !rows->empty() ? rows->at(0).Int(0) : -1;
  }

  std::unique_ptr<testing::PostgresServer> server_;
  std::unique_ptr<Database> db_;
};

// Two transactions lock rows 1 and 2 in opposite orders; the server rolls one
// back (40P01) and the backend runs it again, as the Database contract allows:
// both commit, the victim's function ran twice. Under load a migration's DDL
// and a running instance's writes meet the same way (the rolling upgrade).
TEST_F(PostgresDatabaseTest, ATransactionRolledBackByADeadlockRunsAgainAndBothCommit) {
  std::latch both_locked(2);
  std::atomic<int> runs{0};
  auto transaction = [&](int first, int second, int add, Status* out) {
    bool waited = false;
    *out = db_->WithTransaction(TxMode::kWrite, [&](Connection& c) -> Status {
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
  EXPECT_TRUE(a.ok()) << a.ToString();
  EXPECT_TRUE(b.ok()) << b.ToString();
  EXPECT_EQ(runs, 3) << "the deadlock's victim ran once more";
  EXPECT_EQ(Value(1), 11);
  EXPECT_EQ(Value(2), 11);
}

// A failure that is not a lock conflict is returned at once, never run again.
TEST_F(PostgresDatabaseTest, AnyOtherFailureIsReturnedWithoutRunningAgain) {
  int runs = 0;
  Status s = db_->WithTransaction(TxMode::kWrite, [&](Connection& c) -> Status {
    ++runs;
    EC_RETURN_IF_ERROR(c.Exec("UPDATE r SET v = v + 1 WHERE id = 1").status());
    return c.Exec("INSERT INTO r VALUES (1, 0)").status();  // 23505
  });
  EXPECT_EQ(s.code(), StatusCode::kConflict) << s.ToString();
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(Value(1), 0) << "rolled back";
}

}  // namespace
}  // namespace export_center::store
