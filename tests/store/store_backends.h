#pragma once
// The store's real backends for the contract suites of every role (tests/store/):
// SQLite on a temp file, and a real PostgreSQL server and a real MariaDB server,
// each started once for the whole binary (a fresh database per test). The
// suites share one binary so the servers start once; main() (in
// task_store_contract_test.cc) registers the environments.
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

#ifdef EC_TEST_WITH_POSTGRES
// One server for the whole binary, started on first use so a run filtered to
// SQLite never starts it; stopped by the Environment at the end.
class PostgresEnvironment : public ::testing::Environment {
 public:
  static testing::PostgresServer* Server(std::string* why) {
    std::lock_guard lock(mu_);
    if (!tried_) {
      tried_ = true;
      auto started = testing::PostgresServer::Start("postgres");
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
  static inline std::unique_ptr<testing::PostgresServer> server_;
  static inline std::string error_;
};
#endif

#ifdef EC_TEST_WITH_MYSQL
// Likewise one MariaDB server for the whole binary.
class MariaDbEnvironment : public ::testing::Environment {
 public:
  static testing::MariaDbServer* Server(std::string* why) {
    std::lock_guard lock(mu_);
    if (!tried_) {
      tried_ = true;
      auto started = testing::MariaDbServer::Start("contract");
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
  static inline std::unique_ptr<testing::MariaDbServer> server_;
  static inline std::string error_;
};
#endif

// A fresh, empty database of the named backend. `skip` is set (and nullptr
// returned) when the backend cannot run here.
class Backend {
 public:
  explicit Backend(std::string name) : name_(std::move(name)) {}
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
    testing::PostgresServer* server = PostgresEnvironment::Server(skip);
    if (server == nullptr) return nullptr;
    static std::atomic<int> counter{0};
    auto url = server->CreateDatabase("t" + std::to_string(++counter));
    EXPECT_TRUE(url.ok()) << url.status().ToString();
    if (!url.ok()) return nullptr;
    auto db = OpenPostgresDatabase(*url, 12);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::shared_ptr<Database>(std::move(db).value()) : nullptr;
#else
    *skip = "built without PostgreSQL";
    return nullptr;
#endif
  }

  std::shared_ptr<Database> OpenMysql(std::string* skip) {
#ifdef EC_TEST_WITH_MYSQL
    testing::MariaDbServer* server = MariaDbEnvironment::Server(skip);
    if (server == nullptr) return nullptr;
    static std::atomic<int> counter{0};
    auto url = server->CreateDatabase("t" + std::to_string(++counter));
    EXPECT_TRUE(url.ok()) << url.status().ToString();
    if (!url.ok()) return nullptr;
    MysqlDatabaseOptions options;
    options.pool_size = 12;
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
  std::string dir_;
  int files_ = 0;
};

}  // namespace export_center::store
