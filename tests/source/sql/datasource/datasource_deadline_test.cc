// Deadlines of the read-only datasources on real databases
// (docs/sql-template-route.md#deadlines): a throwaway PostgreSQL and MariaDB
// (tests/support/) whose table another session holds locked — PostgreSQL
// `LOCK TABLE … IN ACCESS EXCLUSIVE MODE`, MariaDB `LOCK TABLES … WRITE`,
// both of which block a plain read — and a SQLite file with a statement that
// runs long (readers never wait there). For each:
// - a statement past statement-timeout-ms fails with DeadlineExceeded near
//   the timeout, and the server runs it no more (pg_stat_activity / the
//   PROCESSLIST);
// - Interrupt cancels a statement that would wait far longer, from another
//   thread: the Query answers the interrupt's reason at once, the server
//   runs it no more, and later statements are refused without a round trip.

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "source/sql/datasource/read_only_datasource.h"
#include "tests/support/replica_database.h"

namespace export_center::source {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// How each kind makes a plain read wait: another session takes the lock
// `blocked` waits for (`hold`), or, on SQLite where readers never wait, a
// statement runs far beyond what a test waits for; `running` counts the
// blocked statements the server runs now.
struct Blocking {
  std::string hold;
  std::string blocked;
  std::string running;
};

Blocking BlockingFor(const std::string& kind) {
  if (kind == "postgres") {
    return {"BEGIN; LOCK TABLE deadline_t IN ACCESS EXCLUSIVE MODE", "SELECT id FROM deadline_t",
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active'"
            " AND query = 'SELECT id FROM deadline_t'"};
  }
  if (kind == "mariadb") {
    return {"LOCK TABLES deadline_t WRITE", "SELECT id FROM deadline_t",
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST"
            " WHERE INFO = 'SELECT id FROM deadline_t'"};
  }
  return {"",
          "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1e12)"
          " SELECT max(x) FROM c",
          ""};
}

class DatasourceDeadlineTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    db_ = testing::SharedReplica(
        GetParam(), "deadline",
        [](testing::ReplicaDatabase& db) {
          return db.Exec("CREATE TABLE deadline_t (id INT PRIMARY KEY)");
        },
        &why);
    EC_REQUIRE_REAL_SERVER(db_, GetParam(), why);
    blocking_ = BlockingFor(GetParam());
  }
  void TearDown() override { Release(); }

  std::shared_ptr<ReadOnlyDatasource> Open(const DatasourceTimeouts& timeouts) {
    return db_->Open(timeouts);
  }
  const std::string& blocked_sql() const { return blocking_.blocked; }
  Status Hold() {
    if (blocking_.hold.empty()) return Status::Ok();
    EC_ASSIGN_OR_RETURN(holder_, db_->OpenSession());
    return holder_->Exec(blocking_.hold);
  }
  void Release() { holder_.reset(); }
  // -1 where the database runs in this process (SQLite) and cannot be asked.
  int Running() {
    if (blocking_.running.empty()) return -1;
    auto rows = db_->Query(blocking_.running);
    return rows.ok() && !rows->empty() ? std::stoi((*rows)[0][0]) : -2;
  }

  // Waits up to `limit` for the server to run `n` statements on the table;
  // true at once where the server cannot be asked (SQLite).
  bool WaitRunning(int n, std::chrono::milliseconds limit) {
    const auto until = Clock::now() + limit;
    while (true) {
      const int running = Running();
      if (running == -1 || running == n) return true;
      if (Clock::now() > until) return false;
      std::this_thread::sleep_for(20ms);
    }
  }

  testing::ReplicaDatabase* db_ = nullptr;
  Blocking blocking_;
  std::unique_ptr<testing::ReplicaSession> holder_;
};

TEST_P(DatasourceDeadlineTest, AStatementPastItsTimeoutIsCancelledByTheDatabase) {
  DatasourceTimeouts timeouts;
  timeouts.statement_timeout_ms = 700;
  auto ds = Open(timeouts);
  ASSERT_NE(ds, nullptr);
  // One statement first, so the blocked one runs on a pooled connection
  // whose session was reset: the timeout must survive the reset.
  ASSERT_TRUE(ds->Query("SELECT 1", {}, "").ok());
  ASSERT_TRUE(Hold().ok());

  const auto start = Clock::now();
  auto blocked = ds->Query(blocked_sql(), {}, "");
  const double took = SecondsSince(start);
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.status().code(), StatusCode::kDeadlineExceeded) << blocked.status().ToString();
  EXPECT_TRUE(blocked.status().IsTransient());  // the attempt is retried
  EXPECT_GE(took, 0.6);
  EXPECT_LT(took, 2.5) << blocked.status().ToString();
  EXPECT_TRUE(WaitRunning(0, 2000ms)) << "the server still runs the statement";

  // The connection is usable again once the lock is gone.
  Release();
  auto after = ds->Query("SELECT 1", {}, "");
  EXPECT_TRUE(after.ok()) << after.status().ToString();
}

TEST_P(DatasourceDeadlineTest, InterruptCancelsTheRunningStatementAndRefusesLaterOnes) {
  DatasourceTimeouts timeouts;
  timeouts.statement_timeout_ms = 60000;  // far beyond the test: only the cancel can end it
  auto ds = Open(timeouts);
  ASSERT_NE(ds, nullptr);
  ASSERT_TRUE(Hold().ok());

  auto running = std::async(std::launch::async, [&] { return ds->Query(blocked_sql(), {}, ""); });
  ASSERT_TRUE(WaitRunning(1, 5000ms)) << "the statement never reached the server";
  std::this_thread::sleep_for(300ms);  // inside the lock wait (or the long count)
  ASSERT_EQ(running.wait_for(0ms), std::future_status::timeout) << "the statement did not wait";

  const auto start = Clock::now();
  ds->Interrupt(Cancelled("attempt aborted: the lease was lost"));
  ASSERT_EQ(running.wait_for(3s), std::future_status::ready) << "Interrupt did not cancel";
  auto cancelled = running.get();
  EXPECT_LT(SecondsSince(start), 3.0);
  ASSERT_FALSE(cancelled.ok());
  EXPECT_EQ(cancelled.status().code(), StatusCode::kCancelled) << cancelled.status().ToString();
  EXPECT_EQ(cancelled.status().message(), "attempt aborted: the lease was lost");
  EXPECT_TRUE(WaitRunning(0, 2000ms)) << "the server still runs the statement";

  // Nothing new starts on an interrupted datasource.
  Release();
  const auto later_start = Clock::now();
  auto later = ds->Query("SELECT 1", {}, "");
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.status().message(), "attempt aborted: the lease was lost");
  auto described = ds->Describe("SELECT 1", {}, "");
  EXPECT_FALSE(described.ok());
  EXPECT_LT(SecondsSince(later_start), 1.0);
}

INSTANTIATE_TEST_SUITE_P(Backends, DatasourceDeadlineTest,
                         ::testing::Values("sqlite", "postgres", "mariadb"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace export_center::source
