#pragma once
// The shared fixture of the TaskStore contract (task_store.h): one migrated
// store on a fresh database of every backend — SQLite on a temp file, and a
// real PostgreSQL server and a real MariaDB server, each started once for the
// contract binary (store_backends.h). Each role's suites are in their own file
// beside this one (*_contract_test.cc), all linked into that one binary.
//
// The role files include the store's headers through this one only, so a
// moved header is one line to change here.
//
// Time never passes by sleeping: tests move a clock by rewriting a stored
// timestamp through the Database, e.g. lease_until - 301000 makes a 300 s
// lease expire, so every comparison still happens inside SQL.
//
// Not in an anonymous namespace: TaskStoreContractTest is one type for every
// role file's TEST_P (GoogleTest requires one fixture type per suite).

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/database.h"
#include "store/migrations.h"
#include "store/sql_task_store.h"
#include "store/sqlite/sqlite_task_store.h"
#include "store/task_store.h"
#ifdef EC_TEST_WITH_POSTGRES
#include "store/postgres/postgres_task_store.h"
#endif
#ifdef EC_TEST_WITH_MYSQL
#include "store/mysql/mysql_task_store.h"
#endif
#include "store_backends.h"  // beside this file
#include "task/command.h"

namespace export_center::store::contract {
using task::Task;
using task::TaskState;

inline constexpr int64_t kSecond = 1000;
inline constexpr int64_t kMinute = 60 * kSecond;
inline constexpr int64_t kDay = 24 * 60 * kMinute;
inline constexpr int64_t kHourMs = 60 * kMinute;

// A migrated store on a fresh database of each backend (BackendTest), with the
// helpers the role files share. Suites of one role derive from it.
class TaskStoreContractTest : public BackendTest {
 public:
  // A task request of `user` for `type`; public for the factories' plain tests.
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

 protected:
  void SetUp() override {
    BackendTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    store_ = NewSqlTaskStore(db_);
    ASSERT_OK(store_->Migrate());
  }

  void TearDown() override {
    store_.reset();
    BackendTest::TearDown();
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

  // A download of `t` by `user` through `via` (DIRECT, SIGNED_LINK).
  static DownloadRecord DownloadOf(const Task& t, const std::string& user, const std::string& via) {
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

  // A task whose file is encrypted (docs/configuration.md#password-protected-files-file-password).
  static WrappedFileKey SomeWrappedKey(const std::string& tag = "a") {
    return {"0123456789abcdef", "c2VhbGVkIGtleSBtYXRlcmlhbA==" + tag};
  }

  static NewTask EncryptedTask(const std::string& user = "alice",
                               const std::string& params = "{}") {
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

  std::unique_ptr<TaskStore> store_;
};

}  // namespace export_center::store::contract
