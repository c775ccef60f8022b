// SqlTemplateSource paging ORDER_LIST-shaped data from real replicas: a
// throwaway PostgreSQL (tests/support/postgres_server.h) and a throwaway
// MariaDB (tests/support/mariadb_server.h), both on loopback. Every cell of
// the export — enriched by SQL on the same replica — is compared with a
// direct query through the database's own client; exact decimals wider than
// a double, dates and naive timestamps must survive. The contract names a
// schema, so the schema switch (SET search_path / USE) is exercised too.
// A backend whose server binaries are missing fails where the test command
// installs them (EC_REQUIRE_REAL_SERVER).

#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "http/httplib/httplib_http_client.h"
#include "sdk/sql_scenario.h"
#include "source/sql/sql_template_source.h"
#include "tests/support/replica_database.h"

namespace export_center::source {
namespace {

using nlohmann::json;
using Table = std::vector<std::vector<std::string>>;
constexpr char kToken[] = "test-internal-token-0123456789";
constexpr int kOrders = 1234;
constexpr char kSchema[] = "shop_1";

// For the pooled-connection test: the statement naming the server session,
// one that changes session state through a SELECT, one that reads it back
// (and what a fresh session answers), the current database/search path
// without a schema, and the statement that kills a session.
struct SessionProbe {
  std::string session_id;
  std::string change;
  std::string read;
  std::string fresh;
  std::string where;
  std::string where_default;
  std::function<std::string(const std::string& id)> kill;
};

// What the test knows of each kind's dialect.
struct Dialect {
  std::string create_schema;
  std::string bool_type;
  std::string timestamp_type;
  // Expected cells: id, order_no, customer_code, customer_name, status,
  // amount, paid, order_date, created_at ("ms:<epoch ms>" or "<null>").
  std::function<std::string(const std::string& tenant)> expected_sql;
  SessionProbe probe;
};

Dialect PostgresDialect() {
  return {
      "CREATE SCHEMA shop_1",
      "BOOLEAN",
      "TIMESTAMP",
      [](const std::string& tenant) {
        return "SELECT o.id::text, order_no, o.customer_code, COALESCE(n.customer_name, "
               "'<null>'), status, amount::text, CASE WHEN paid THEN 'true' ELSE 'false' END, "
               "to_char(order_date, 'YYYY-MM-DD'), COALESCE('ms:' || ((EXTRACT(EPOCH FROM "
               "created_at) * 1000)::bigint - 28800000)::text, '<null>') FROM orders o LEFT "
               "JOIN customer_names n ON n.customer_code = o.customer_code WHERE tenant_id = '" +
               tenant + "' ORDER BY o.id";
      },
      {"SELECT pg_backend_pid()::text", "SELECT set_config('statement_timeout', '1234', false)",
       "SELECT current_setting('statement_timeout')",
       "2min",  // the datasource's own statement timeout, set again after the reset
       "SELECT current_setting('search_path')", "\"$user\", public",
       [](const std::string& id) { return "SELECT pg_terminate_backend(" + id + ")"; }}};
}

Dialect MariaDbDialect() {
  return {"CREATE DATABASE shop_1 CHARACTER SET utf8mb4",
          "TINYINT(1)",
          "DATETIME",
          [](const std::string& tenant) {
            return "SELECT CAST(o.id AS CHAR), order_no, o.customer_code, "
                   "COALESCE(n.customer_name, '<null>'), status, CAST(amount AS CHAR), IF(paid, "
                   "'true', 'false'), DATE_FORMAT(order_date, '%Y-%m-%d'), COALESCE(CONCAT('ms:', "
                   "TIMESTAMPDIFF(SECOND, '1970-01-01 00:00:00', created_at) * 1000 - 28800000), "
                   "'<null>') FROM orders o LEFT JOIN customer_names n ON n.customer_code = "
                   "o.customer_code WHERE tenant_id = '" +
                   tenant + "' ORDER BY o.id";
          },
          {"SELECT CAST(CONNECTION_ID() AS CHAR)", "SELECT @leak := 'left over'",
           "SELECT COALESCE(@leak, 'none')", "none", "SELECT DATABASE()", "replica",
           [](const std::string& id) { return "KILL " + id; }}};
}

Dialect DialectFor(const std::string& kind) {
  return kind == "postgres" ? PostgresDialect() : MariaDbDialect();
}

// A started replica (tests/support/replica_database.h) seen through its
// dialect: statements run in kSchema.
class Replica {
 public:
  Replica(testing::ReplicaDatabase* db, Dialect dialect) : db_(db), dialect_(std::move(dialect)) {}
  std::shared_ptr<ReadOnlyDatasource> datasource() { return db_->Open(); }
  Status Exec(const std::string& sql) { return db_->Exec(sql, kSchema); }
  StatusOr<Table> Direct(const std::string& sql) { return db_->Query(sql, kSchema); }
  const std::string& BoolType() const { return dialect_.bool_type; }
  const std::string& TimestampType() const { return dialect_.timestamp_type; }
  std::string ExpectedSql(const std::string& tenant) const { return dialect_.expected_sql(tenant); }
  const SessionProbe& Probe() const { return dialect_.probe; }

 private:
  testing::ReplicaDatabase* db_;
  Dialect dialect_;
};

// Orders for tenants t1 (even ids) and t2 (odd ids); amounts have 18 integer
// digits, more than a double holds exactly.
std::string SeedSql(const Replica& r, int n) {
  std::string sql =
      "CREATE TABLE orders (id BIGINT PRIMARY KEY, tenant_id VARCHAR(8) NOT NULL, order_no "
      "VARCHAR(20) NOT NULL, customer_code VARCHAR(8) NOT NULL, status VARCHAR(10) NOT NULL, "
      "amount DECIMAL(22,2) NOT NULL, paid " +
      r.BoolType() +
      " NOT NULL, order_date DATE NOT "
      "NULL, created_at " +
      r.TimestampType() +
      " NULL);"
      "CREATE TABLE customer_names (customer_code VARCHAR(8) PRIMARY KEY, customer_name "
      "VARCHAR(40));";
  for (int i = 1; i <= n; ++i) {
    char row[400];
    std::string created = i % 10 == 0 ? "NULL"
                                      : "'2024-03-0" + std::to_string(i % 9 + 1) + " 1" +
                                            std::to_string(i % 10) + ":0" + std::to_string(i % 7) +
                                            ":5" + std::to_string(i % 9) + "'";
    std::snprintf(row, sizeof row,
                  "INSERT INTO orders VALUES (%d, 't%d', 'SO%06d', 'C%03d', '%s', %d%014d.%02d, "
                  "%s, '2024-%02d-%02d', %s);",
                  i, i % 2 + 1, i, i % 50, i % 3 == 0 ? "PAID" : "NEW", i, i * 7, i % 100,
                  i % 3 == 0 ? "TRUE" : "FALSE", i % 12 + 1, i % 28 + 1, created.c_str());
    sql += row;
  }
  for (int c = 0; c < 50; ++c) {
    if (c % 3 == 0) continue;  // some keys stay without a name in both tenants
    char row[120];
    std::snprintf(row, sizeof row, "INSERT INTO customer_names VALUES ('C%03d', '客户 %d');", c, c);
    sql += row;
  }
  return sql;
}

constexpr char kTemplate[] = R"SQL(<script>
SELECT id, order_no, customer_code, status, amount, paid, order_date, created_at
FROM orders
<where>
  tenant_id = #{tenantId}
  <if test="status != null and status != ''">AND status = #{status}</if>
</where>
</script>)SQL";

constexpr char kEnrichSql[] = R"SQL(<script>
SELECT customer_code, customer_name FROM customer_names WHERE customer_code IN
<foreach collection="keys" item="k" open="(" separator="," close=")">#{k}</foreach>
</script>)SQL";

struct ReplicaScenario : sdk::SqlScenario {
  std::function<int64_t(const json&)> count;
  std::string QueryId() const override { return "ORDER_LIST"; }
  sdk::Result<sdk::SqlTemplateResult> GetSqlTemplate(const json& params) override {
    sdk::SqlTemplateResult r;
    r.sql_template = kTemplate;
    using T = sdk::ColumnType;
    r.columns = {{{"id", "ID", T::kInteger}},
                 {{"order_no", "单号", T::kString}},
                 {{"customer_code", "客户", T::kString}},
                 {{"customer_name", "客户名称", T::kString}, true, false, false},
                 {{"status", "状态", T::kString}},
                 {{"amount", "金额", T::kDecimal, 0, 2}},
                 {{"paid", "已付", T::kBoolean}},
                 {{"order_date", "日期", T::kDate}},
                 {{"created_at", "创建时间", T::kDateTime}}};
    r.order_by = "id";
    r.tenant = params.value("tenantId", "");
    r.schema = kSchema;
    r.version = 1;
    r.support_version = true;
    r.support_count_for_list = true;
    r.enrich_sqls = {{"customer", "customer_code", kEnrichSql, {"customer_name"}}};
    return r;
  }
  sdk::Result<int64_t> CountForList(const json& p) override { return count(p); }
  sdk::Result<int64_t> GetVersion(const json&) override { return 1; }
  sdk::Result<std::vector<json>> Enrich(const sdk::SqlEnrichRequest&) override {
    return sdk::ProviderError{500, "not used"};
  }
};

std::string CellText(const task::CellValue& v) {
  struct V {
    std::string operator()(std::monostate) const { return "<null>"; }
    std::string operator()(const std::string& s) const { return s; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(const task::Decimal& d) const { return d.digits; }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(const task::Date& d) const {
      char buf[16];
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", d.year(), d.month(), d.day());
      return buf;
    }
    std::string operator()(const task::DateTime& t) const {
      return "ms:" + std::to_string(t.epoch_ms);
    }
  };
  return std::visit(V{}, v);
}

class SqlTemplateReplicaTest : public ::testing::TestWithParam<std::string> {
 protected:
  // One server per backend for the whole binary, seeded once.
  static testing::ReplicaDatabase* Get(const std::string& kind, std::string* why) {
    return testing::SharedReplica(
        kind, "replica",
        [&](testing::ReplicaDatabase& d) -> Status {
          Replica seeding(&d, DialectFor(kind));
          EC_RETURN_IF_ERROR(d.Exec(DialectFor(kind).create_schema));
          return seeding.Exec(SeedSql(seeding, kOrders));
        },
        why);
  }

  void SetUp() override {
    std::string why;
    testing::ReplicaDatabase* db = Get(GetParam(), &why);
    EC_REQUIRE_REAL_SERVER(db, GetParam() + " replica", why);
    replica_ = std::make_unique<Replica>(db, DialectFor(GetParam()));
    scenario_ = std::make_shared<ReplicaScenario>();
    scenario_->count = [this](const json& p) {
      auto t = replica_->Direct("SELECT COUNT(*) FROM orders WHERE tenant_id = '" +
                                p.value("tenantId", std::string()) + "'");
      return t.ok() && !t->empty() ? std::stoll((*t)[0][0]) : -1;
    };
    sdk::RegisterSqlScenarios(server_, kToken, {scenario_});
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void TearDown() override {
    if (!thread_.joinable()) return;
    server_.stop();
    thread_.join();
  }

  std::unique_ptr<RowSource> Make(const std::string& tenant) {
    SqlTemplateSourceOptions o;
    o.export_type = "ORDER_LIST";
    o.query_id = "ORDER_LIST";
    o.registered_query_ids = {"ORDER_LIST"};
    o.task_id = 7;
    o.tenant_id = tenant;
    o.requested_by = "u1";
    o.parameters_json = "{}";
    o.contract_version = "1";
    o.batch_size = 100;
    o.count_recheck_backoff_ms = 10;
    o.timezone = "Asia/Shanghai";
    o.strict = true;
    SqlContractClientOptions c;
    c.service = {"orders", "http://127.0.0.1:" + std::to_string(port_), kToken, /*base_path=*/""};
    c.query_id = "ORDER_LIST";
    c.client.read_timeout_ms = 5000;
    return NewSqlTemplateSource(o, NewHttpSqlContractClient(c, http::HttplibClientFactory()),
                                replica_->datasource());
  }

  std::unique_ptr<Replica> replica_;
  std::shared_ptr<ReplicaScenario> scenario_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

TEST_P(SqlTemplateReplicaTest, EveryCellMatchesADirectQuery) {
  for (const std::string tenant : {"t1", "t2"}) {
    auto source = Make(tenant);
    std::vector<task::Row> rows;
    int pages = 0;
    while (true) {
      auto page = source->NextPage();
      ASSERT_TRUE(page.ok()) << page.status().ToString();
      ++pages;
      for (auto& r : page->rows) rows.push_back(std::move(r));
      if (!page->has_more) break;
    }
    auto want = replica_->Direct(replica_->ExpectedSql(tenant));
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    ASSERT_EQ(rows.size(), want->size()) << tenant;
    ASSERT_EQ(pages, static_cast<int>(rows.size() / 100 + 1));
    size_t named = 0;
    for (size_t r = 0; r < rows.size(); ++r) {
      ASSERT_EQ(rows[r].size(), (*want)[r].size());
      for (size_t c = 0; c < rows[r].size(); ++c) {
        EXPECT_EQ(CellText(rows[r][c]), (*want)[r][c]) << tenant << " row " << r << " col " << c;
      }
      named += CellText(rows[r][3]) != "<null>";
    }
    EXPECT_GT(named, 0u) << tenant << ": no cell enriched by SQL";
    EXPECT_LT(named, rows.size()) << tenant << ": every key had a name";
  }
}

TEST_P(SqlTemplateReplicaTest, TypedValuesSurvive) {
  auto source = Make("t1");
  auto page = source->NextPage();
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  const task::Row& first = page->rows.at(0);  // id 2
  EXPECT_EQ(CellText(first[5]), "200000000000014.02");
  EXPECT_TRUE(std::holds_alternative<task::Decimal>(first[5]));
  EXPECT_TRUE(std::holds_alternative<bool>(first[6]));
  EXPECT_EQ(CellText(first[7]), "2024-03-03");
  ASSERT_TRUE(std::holds_alternative<task::DateTime>(first[8]));
  // 2024-03-03 12:02:52 in UTC+8.
  EXPECT_EQ(CellText(first[8]), "ms:1709438572000");
}

TEST_P(SqlTemplateReplicaTest, SessionIsReadOnlyAndSchemaNamesAreChecked) {
  auto ds = replica_->datasource();
  ASSERT_NE(ds, nullptr);
  auto write = ds->Query("INSERT INTO customer_names VALUES (?, ?)", {"X1", "x"}, kSchema);
  ASSERT_FALSE(write.ok());
  EXPECT_EQ(write.status().code(), StatusCode::kInvalidArgument) << write.status().ToString();
  auto bad = ds->Query("SELECT 1", {}, "shop_1; DROP TABLE orders");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  auto typed = ds->Query("SELECT COUNT(*) FROM orders WHERE id >= ? AND paid = ? AND status = ?",
                         {json(1000), json(true), json("PAID")}, kSchema);
  ASSERT_TRUE(typed.ok()) << typed.status().ToString();
  auto direct = replica_->Direct(
      "SELECT COUNT(*) FROM orders WHERE id >= 1000 AND paid = TRUE "
      "AND status = 'PAID'");
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(typed->rows.at(0).at(0).value_or("?"), (*direct)[0][0]);
}

// Statements share pooled connections (no connect per page), and each one
// starts from a clean session: whatever an earlier statement changed — a
// setting, a variable, the schema — is gone; the session is read-only again;
// a connection the server killed meanwhile is replaced.
TEST_P(SqlTemplateReplicaTest, PooledConnectionsAreReusedAndResetForEveryStatement) {
  auto ds = replica_->datasource();
  ASSERT_NE(ds, nullptr);
  const SessionProbe probe = replica_->Probe();
  auto One = [&](const std::string& sql, std::string_view schema = kSchema) -> std::string {
    auto rs = ds->Query(sql, {}, schema);
    EXPECT_TRUE(rs.ok()) << sql << ": " << rs.status().ToString();
    if (!rs.ok() || rs->rows.empty() || rs->rows[0].empty()) return "?";
    return rs->rows[0][0].value_or("<null>");
  };
  const std::string session = One(probe.session_id);
  EXPECT_EQ(One(probe.session_id), session) << "the connection was not reused";
  One(probe.change);
  EXPECT_EQ(One(probe.session_id), session);
  EXPECT_EQ(One(probe.read), probe.fresh) << "session state leaked into the next statement";
  EXPECT_EQ(One(probe.where, ""), probe.where_default) << "the schema leaked";
  auto write = ds->Query("INSERT INTO customer_names VALUES ('X2', 'x')", {}, kSchema);
  EXPECT_FALSE(write.ok()) << "a reused session must stay read-only";

  ASSERT_TRUE(replica_->Exec(probe.kill(session)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string replaced = One(probe.session_id);
  EXPECT_NE(replaced, session);
  EXPECT_NE(replaced, "?") << "a killed pooled connection must be replaced, not fail the page";
}

// Every statement's session — new or reset — is set up the same way:
// PostgreSQL in UTC (timestamptz text carries +00); MariaDB charging a ref
// scan what it costs, so that a keyset page seeks to its boundary
// (mysql_datasource.cc, TuneOptimizer).
TEST_P(SqlTemplateReplicaTest, EverySessionIsSetUpForExports) {
  auto ds = replica_->datasource();
  ASSERT_NE(ds, nullptr);
  const bool postgres = GetParam() == "postgres";
  const std::string sql = postgres ? "SELECT current_setting('TimeZone')"
                                   : "SELECT @@session.optimizer_adjust_secondary_key_costs";
  for (int i = 0; i < 2; ++i) {  // a new connection, then a reset one
    auto rs = ds->Query(sql, {}, kSchema);
    ASSERT_TRUE(rs.ok()) << rs.status().ToString();
    const std::string value = rs->rows.at(0).at(0).value_or("");
    if (postgres) {
      EXPECT_EQ(value, "UTC");
    } else {
      EXPECT_NE(value.find("disable_max_seek"), std::string::npos) << value;
    }
  }
  if (postgres) return;
  // One SET a checkout sets it all (a keyset export checks a connection out
  // per page): the server's count of SET statements, read on a connection
  // of the test's own, grows by one per statement the datasource runs —
  // past what the reading itself costs (its connection's own set-up).
  auto sets = [&] {
    auto rows = replica_->Direct("SHOW GLOBAL STATUS LIKE 'Com_set_option'");
    return rows.ok() && !rows->empty() ? std::stoll(rows->at(0).at(1)) : -1LL;
  };
  const long long first = sets();
  const long long before = sets();
  const long long reading = before - first;
  auto session = ds->Query(
      "SELECT @@session.tx_read_only, @@session.character_set_client, "
      "@@session.max_statement_time > 0, @@session.lock_wait_timeout",
      {}, kSchema);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const auto& row = session->rows.at(0);
  EXPECT_EQ(row.at(0).value_or(""), "1") << "read-only";
  EXPECT_EQ(row.at(1).value_or(""), "utf8mb4");
  EXPECT_EQ(row.at(2).value_or(""), "1") << "a statement time limit";
  EXPECT_NE(row.at(3).value_or(""), "31536000") << "the lock wait is bounded too";
  ASSERT_TRUE(ds->Query("SELECT 1", {}, kSchema).ok());
  const long long after = sets();
  ASSERT_GE(first, 0);
  EXPECT_EQ(after - before - reading, 2) << "two checkouts, one SET each";
}

// The watch behind the count after an export's last page (CommitWatch):
// PostgreSQL proves a quiet database quiet and sees a commit from another
// connection, even one that changes no value; MySQL and MariaDB offer none, so
// an export there always counts again.
TEST_P(SqlTemplateReplicaTest, CommitWatchSeesEveryCommit) {
  auto ds = replica_->datasource();
  ASSERT_NE(ds, nullptr);
  auto watch = ds->WatchCommits(kSchema);
  if (GetParam() == "mysql") {
    EXPECT_EQ(watch, nullptr);
    return;
  }
  ASSERT_NE(watch, nullptr);
  // Autovacuum may analyse the freshly loaded tables (a commit of its own)
  // while the test reads: a quiet moment is proven quiet within a few tries.
  bool proven_quiet = false;
  for (int attempt = 0; attempt < 5 && !proven_quiet; ++attempt) {
    if (attempt > 0) watch = ds->WatchCommits(kSchema);
    ASSERT_NE(watch, nullptr);
    ASSERT_TRUE(ds->Query("SELECT COUNT(*) FROM orders", {}, kSchema).ok());
    proven_quiet = watch->NothingCommitted();
  }
  EXPECT_TRUE(proven_quiet) << "reads commit nothing";
  ASSERT_TRUE(replica_
                  ->Exec("UPDATE customer_names SET customer_name = customer_name "
                         "WHERE customer_code = 'C001'")
                  .ok());
  EXPECT_FALSE(watch->NothingCommitted()) << "a row rewritten as it was is still a commit";
  EXPECT_FALSE(watch->NothingCommitted()) << "and stays so";
}

INSTANTIATE_TEST_SUITE_P(Replicas, SqlTemplateReplicaTest, ::testing::Values("postgres", "mysql"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace export_center::source
