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
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "source/sql/datasource/read_only_datasource.h"
#include "source/sql/datasource/sqlite/sqlite_datasource.h"
#include "tests/support/once_per_kind.h"
#ifdef EXPORT_CENTER_WITH_POSTGRES
#include <libpq-fe.h>

#include "source/sql/datasource/postgres/postgres_datasource.h"
#include "tests/support/postgres_server.h"
#endif
#ifdef EXPORT_CENTER_WITH_MYSQL
#include <mysql.h>

#include "mysql/mysql_client.h"
#include "source/sql/datasource/mysql/mysql_datasource.h"
#include "tests/support/mariadb_server.h"
#endif

namespace export_center::source {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A database whose `blocked_sql` waits (or runs) until something stops it.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::shared_ptr<ReadOnlyDatasource> Open(const DatasourceTimeouts& timeouts) = 0;
  // Another session takes the lock `blocked_sql` waits for; Release ends it.
  virtual Status Hold() = 0;
  virtual void Release() = 0;
  virtual std::string blocked_sql() const = 0;
  // How many statements reading the table the server runs now (its own
  // view); -1 where the database runs in this process (SQLite).
  virtual int Running() = 0;
};

class SqliteBackend : public Backend {
 public:
  static StatusOr<std::unique_ptr<Backend>> Start() {
    auto b = std::make_unique<SqliteBackend>();
    b->path_ = (std::filesystem::temp_directory_path() /
                ("ec-deadline-" + std::to_string(::getpid()) + ".db"))
                   .string();
    sqlite3* raw = nullptr;
    sqlite3_open(b->path_.c_str(), &raw);
    int rc = sqlite3_exec(raw, "CREATE TABLE IF NOT EXISTS deadline_t (id INTEGER PRIMARY KEY)",
                          nullptr, nullptr, nullptr);
    sqlite3_close(raw);
    if (rc != SQLITE_OK) return Internal("cannot create " + b->path_);
    return std::unique_ptr<Backend>(std::move(b));
  }
  ~SqliteBackend() override { std::filesystem::remove(path_); }
  std::shared_ptr<ReadOnlyDatasource> Open(const DatasourceTimeouts& timeouts) override {
    return NewSqliteDatasource(path_, timeouts);
  }
  Status Hold() override { return Status::Ok(); }
  void Release() override {}
  // Counts far beyond what a test waits for: only the deadline ends it.
  std::string blocked_sql() const override {
    return "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1e12)"
           " SELECT max(x) FROM c";
  }
  int Running() override { return -1; }

 private:
  std::string path_;
};

#ifdef EXPORT_CENTER_WITH_POSTGRES
class PostgresBackend : public Backend {
 public:
  static StatusOr<std::unique_ptr<Backend>> Start() {
    EC_ASSIGN_OR_RETURN(auto server, testing::PostgresServer::Start("deadline"));
    auto b = std::make_unique<PostgresBackend>();
    b->server_ = std::move(server);
    b->admin_.reset(PQconnectdb(b->server_->url().c_str()));
    EC_RETURN_IF_ERROR(b->Exec(b->admin_.get(), "CREATE TABLE deadline_t (id INT PRIMARY KEY)"));
    return std::unique_ptr<Backend>(std::move(b));
  }
  std::shared_ptr<ReadOnlyDatasource> Open(const DatasourceTimeouts& timeouts) override {
    return NewPostgresDatasource(server_->url(), timeouts);
  }
  Status Hold() override {
    holder_.reset(PQconnectdb(server_->url().c_str()));
    return Exec(holder_.get(), "BEGIN; LOCK TABLE deadline_t IN ACCESS EXCLUSIVE MODE");
  }
  void Release() override { holder_.reset(); }
  std::string blocked_sql() const override { return "SELECT id FROM deadline_t"; }
  int Running() override {
    PGresult* res = PQexec(admin_.get(),
                           "SELECT count(*) FROM pg_stat_activity WHERE state = 'active'"
                           " AND query = 'SELECT id FROM deadline_t'");
    int n = PQresultStatus(res) == PGRES_TUPLES_OK ? std::stoi(PQgetvalue(res, 0, 0)) : -2;
    PQclear(res);
    return n;
  }

 private:
  struct Finish {
    void operator()(PGconn* c) const { PQfinish(c); }
  };
  static Status Exec(PGconn* conn, const std::string& sql) {
    PGresult* res = PQexec(conn, sql.c_str());
    const bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    std::string error = PQerrorMessage(conn);
    PQclear(res);
    return ok ? Status::Ok() : Internal(error);
  }
  std::unique_ptr<testing::PostgresServer> server_;
  std::unique_ptr<PGconn, Finish> admin_;
  std::unique_ptr<PGconn, Finish> holder_;
};
#endif

#ifdef EXPORT_CENTER_WITH_MYSQL
class MariaDbBackend : public Backend {
 public:
  static StatusOr<std::unique_ptr<Backend>> Start() {
    EC_ASSIGN_OR_RETURN(auto server, testing::MariaDbServer::Start("deadline"));
    auto b = std::make_unique<MariaDbBackend>();
    b->server_ = std::move(server);
    EC_RETURN_IF_ERROR(b->server_->Exec("CREATE TABLE deadline_t (id INT PRIMARY KEY)"));
    EC_ASSIGN_OR_RETURN(b->admin_, b->Connect());
    return std::unique_ptr<Backend>(std::move(b));
  }
  std::shared_ptr<ReadOnlyDatasource> Open(const DatasourceTimeouts& timeouts) override {
    auto ds = NewMysqlDatasource(server_->url(), timeouts);
    return ds.ok() ? std::shared_ptr<ReadOnlyDatasource>(std::move(ds).value()) : nullptr;
  }
  Status Hold() override {
    EC_ASSIGN_OR_RETURN(holder_, Connect());
    mysql::Answer ignored;
    mysql::Error e = mysql::Query(holder_.get(), "LOCK TABLES deadline_t WRITE", &ignored);
    return e.failed() ? Internal(e.ToString()) : Status::Ok();
  }
  void Release() override { holder_.reset(); }
  std::string blocked_sql() const override { return "SELECT id FROM deadline_t"; }
  int Running() override {
    mysql::Answer answer;
    mysql::Error e = mysql::Query(admin_.get(),
                                  "SELECT COUNT(*) FROM information_schema.PROCESSLIST"
                                  " WHERE INFO = 'SELECT id FROM deadline_t'",
                                  &answer);
    if (e.failed() || answer.rows.empty() || !answer.rows[0][0]) return -2;
    return std::stoi(*answer.rows[0][0]);
  }

 private:
  StatusOr<mysql::ConnPtr> Connect() {
    EC_ASSIGN_OR_RETURN(mysql::Url url, mysql::ParseUrl(server_->url()));
    auto [conn, error] = mysql::Connect(url, {});
    if (!conn) return Unavailable(error.ToString());
    return std::move(conn);
  }
  std::unique_ptr<testing::MariaDbServer> server_;
  mysql::ConnPtr admin_;
  mysql::ConnPtr holder_;
};
#endif

class DatasourceDeadlineTest : public ::testing::TestWithParam<std::string> {
 protected:
  static Backend* Get(const std::string& kind, std::string* why) {
    static testing::OncePerKind<Backend> servers;
    return servers.Get(
        kind,
        [&]() -> StatusOr<std::unique_ptr<Backend>> {
          StatusOr<std::unique_ptr<Backend>> b = Unavailable(kind + " is not built in");
          if (kind == "sqlite") b = SqliteBackend::Start();
#ifdef EXPORT_CENTER_WITH_POSTGRES
          if (kind == "postgres") b = PostgresBackend::Start();
#endif
#ifdef EXPORT_CENTER_WITH_MYSQL
          if (kind == "mariadb") b = MariaDbBackend::Start();
#endif
          return b;
        },
        why);
  }

  void SetUp() override {
    std::string why;
    backend_ = Get(GetParam(), &why);
    EC_REQUIRE_REAL_SERVER(backend_, GetParam(), why);
  }
  void TearDown() override {
    if (backend_ != nullptr) backend_->Release();
  }

  // Waits up to `limit` for the server to run `n` statements on the table;
  // true at once where the server cannot be asked (SQLite).
  bool WaitRunning(int n, std::chrono::milliseconds limit) {
    const auto until = Clock::now() + limit;
    while (true) {
      const int running = backend_->Running();
      if (running == -1 || running == n) return true;
      if (Clock::now() > until) return false;
      std::this_thread::sleep_for(20ms);
    }
  }

  Backend* backend_ = nullptr;
};

TEST_P(DatasourceDeadlineTest, AStatementPastItsTimeoutIsCancelledByTheDatabase) {
  DatasourceTimeouts timeouts;
  timeouts.statement_timeout_ms = 700;
  auto ds = backend_->Open(timeouts);
  ASSERT_NE(ds, nullptr);
  // One statement first, so the blocked one runs on a pooled connection
  // whose session was reset: the timeout must survive the reset.
  ASSERT_TRUE(ds->Query("SELECT 1", {}, "").ok());
  ASSERT_TRUE(backend_->Hold().ok());

  const auto start = Clock::now();
  auto blocked = ds->Query(backend_->blocked_sql(), {}, "");
  const double took = SecondsSince(start);
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.status().code(), StatusCode::kDeadlineExceeded) << blocked.status().ToString();
  EXPECT_TRUE(blocked.status().IsTransient());  // the attempt is retried
  EXPECT_GE(took, 0.6);
  EXPECT_LT(took, 2.5) << blocked.status().ToString();
  EXPECT_TRUE(WaitRunning(0, 2000ms)) << "the server still runs the statement";

  // The connection is usable again once the lock is gone.
  backend_->Release();
  auto after = ds->Query("SELECT 1", {}, "");
  EXPECT_TRUE(after.ok()) << after.status().ToString();
}

TEST_P(DatasourceDeadlineTest, InterruptCancelsTheRunningStatementAndRefusesLaterOnes) {
  DatasourceTimeouts timeouts;
  timeouts.statement_timeout_ms = 60000;  // far beyond the test: only the cancel can end it
  auto ds = backend_->Open(timeouts);
  ASSERT_NE(ds, nullptr);
  ASSERT_TRUE(backend_->Hold().ok());

  auto running =
      std::async(std::launch::async, [&] { return ds->Query(backend_->blocked_sql(), {}, ""); });
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
  backend_->Release();
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
