#pragma once
// The store's real backends for the tests of tests/store/: SQLite on a temp
// file, and a real PostgreSQL server and a real MariaDB server, each started
// once for the whole binary (a fresh database per test). The contract suites
// of every role share one binary so the servers start once; its main() (in
// task_store_contract_main.cc) registers the environments.
//
// Not in an anonymous namespace: each server is one static per binary, shared
// by every suite's translation unit.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include "store/database.h"
#include "store/sqlite/sqlite_database.h"
#ifdef EC_TEST_WITH_POSTGRES
#include "store/postgres/postgres_database.h"
#include "tests/support/postgres_server.h"
#endif
#ifdef EC_TEST_WITH_MYSQL
#include "store/mysql/mysql_database.h"
#include "tests/support/mariadb_server.h"
#endif
#include "tests/support/server_process.h"

namespace export_center::store {

#define ASSERT_OK(expr)                           \
  do {                                            \
    const ::export_center::Status ec_s_ = (expr); \
    ASSERT_TRUE(ec_s_.ok()) << ec_s_.ToString();  \
  } while (0)

#define ASSERT_OK_AND_ASSIGN_IMPL(tmp, lhs, expr)   \
  auto tmp = (expr);                                \
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString(); \
  lhs = std::move(tmp).value()
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ASSERT_OK_AND_ASSIGN_IMPL(EC_CONCAT(ec_test_or_, __LINE__), lhs, expr)

// One server of a kind (testing::PostgresServer, testing::MariaDbServer) for the
// whole binary, started on first use so a run filtered to SQLite never starts
// it; a server that failed to start answers the same reason to every later
// caller. Registered (AddServerEnvironments), the Environment stops it at the
// end of the run; otherwise it stops when the binary exits.
template <class Server>
class ServerEnvironment : public ::testing::Environment {
 public:
  static Server* Get(std::string* why) {
    std::lock_guard lock(mu_);
    if (!tried_) {
      tried_ = true;
      auto started = Server::Start("store_test");
      if (started.ok()) {
        server_ = std::move(started).value();
      } else {
        error_ = started.status().ToString();
      }
    }
    *why = error_;
    return server_.get();
  }
  void TearDown() override {
    std::lock_guard lock(mu_);
    server_.reset();
  }

 private:
  static inline std::mutex mu_;
  static inline bool tried_ = false;
  static inline std::unique_ptr<Server> server_;
  static inline std::string error_;
};

#ifdef EC_TEST_WITH_POSTGRES
using PostgresEnvironment = ServerEnvironment<testing::PostgresServer>;
#endif
#ifdef EC_TEST_WITH_MYSQL
using MariaDbEnvironment = ServerEnvironment<testing::MariaDbServer>;
#endif

// For main(): the environments of the servers this binary is built with.
inline void AddServerEnvironments() {
#ifdef EC_TEST_WITH_POSTGRES
  ::testing::AddGlobalTestEnvironment(new PostgresEnvironment());
#endif
#ifdef EC_TEST_WITH_MYSQL
  ::testing::AddGlobalTestEnvironment(new MariaDbEnvironment());
#endif
}

// A fresh, empty database of the named backend. `skip` is set (and nullptr
// returned) when the backend cannot run here.
class Backend {
 public:
  // `pool_size`: the connections of a PostgreSQL or MariaDB database.
  explicit Backend(std::string name, int pool_size = 12)
      : name_(std::move(name)), pool_size_(pool_size) {}
  ~Backend() {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::shared_ptr<Database> OpenFresh(std::string* skip) {
    if (name_ == "sqlite") return OpenSqlite();
    if (name_ == "postgres") return OpenPostgres(skip);
    return OpenMysql(skip);
  }

 private:
  std::shared_ptr<Database> OpenPostgres(std::string* skip) {
#ifdef EC_TEST_WITH_POSTGRES
    testing::PostgresServer* server = PostgresEnvironment::Get(skip);
    if (server == nullptr) return nullptr;
    static std::atomic<int> counter{0};
    auto url = server->CreateDatabase("t" + std::to_string(++counter));
    EXPECT_TRUE(url.ok()) << url.status().ToString();
    if (!url.ok()) return nullptr;
    auto db = OpenPostgresDatabase(*url, pool_size_);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::shared_ptr<Database>(std::move(db).value()) : nullptr;
#else
    *skip = "built without PostgreSQL";
    return nullptr;
#endif
  }

  std::shared_ptr<Database> OpenMysql(std::string* skip) {
#ifdef EC_TEST_WITH_MYSQL
    testing::MariaDbServer* server = MariaDbEnvironment::Get(skip);
    if (server == nullptr) return nullptr;
    static std::atomic<int> counter{0};
    auto url = server->CreateDatabase("t" + std::to_string(++counter));
    EXPECT_TRUE(url.ok()) << url.status().ToString();
    if (!url.ok()) return nullptr;
    MysqlDatabaseOptions options;
    options.pool_size = pool_size_;
    auto db = OpenMysqlDatabase(*url, options);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::shared_ptr<Database>(std::move(db).value()) : nullptr;
#else
    *skip = "built without MySQL";
    return nullptr;
#endif
  }

  std::shared_ptr<Database> OpenSqlite() {
    if (dir_.empty()) {
      char tmpl[] = "/tmp/ec-store-test-XXXXXX";
      EXPECT_NE(mkdtemp(tmpl), nullptr);
      dir_ = tmpl;
    }
    auto db = OpenSqliteDatabase(dir_ + "/store" + std::to_string(++files_) + ".db");
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::shared_ptr<Database>(std::move(db).value()) : nullptr;
  }

  std::string name_;
  int pool_size_ = 12;
  std::string dir_;
  int files_ = 0;
};

// A test on a fresh, empty database of each backend (the parameter: "sqlite",
// "postgres" or "mysql"). A backend that cannot run here skips the test, or
// fails it where the test command installs every server.
class BackendTest : public ::testing::TestWithParam<std::string> {
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
  }
  void TearDown() override {
    db_.reset();
    backend_.reset();
  }

  std::unique_ptr<Backend> backend_;
  std::shared_ptr<Database> db_;
};

// Runs every TEST_P of `suite` on the three backends, named .../sqlite,
// .../postgres and .../mysql.
#define EC_INSTANTIATE_ON_EVERY_BACKEND(suite)                                                 \
  INSTANTIATE_TEST_SUITE_P(                                                                    \
      Backends, suite,                                                                         \
      ::testing::Values(std::string("sqlite"), std::string("postgres"), std::string("mysql")), \
      [](const ::testing::TestParamInfo<std::string>& info) { return info.param; })

}  // namespace export_center::store
