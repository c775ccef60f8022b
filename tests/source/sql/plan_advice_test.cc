// Plan advice (docs/sql-template-route.md#plan-advice) on real databases: a
// SQLite file and throwaway PostgreSQL and MariaDB servers (tests/support/),
// each with a customer table twice — once indexed on tenant_id only, once on
// (tenant_id, customer_code). The enrich lookup `tenant_id = ? AND
// customer_code IN (…)` gets advice naming the table, the predicate and the
// index on the first, none on the second. Plus the plan readers on plans
// written out, for the shapes a test database does not produce.

#include "source/sql/plan_advice.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "source/sql/datasource/sqlite/sqlite_datasource.h"
#include "tests/support/once_per_kind.h"
#ifdef EXPORT_CENTER_WITH_POSTGRES
#include <libpq-fe.h>

#include "source/sql/datasource/postgres/postgres_datasource.h"
#include "tests/support/postgres_server.h"
#endif
#ifdef EXPORT_CENTER_WITH_MYSQL
#include "source/sql/datasource/mysql/mysql_datasource.h"
#include "tests/support/mariadb_server.h"
#endif

namespace export_center::source {
namespace {

using nlohmann::json;
constexpr int kCustomers = 20000;  // two tenants: a page is far smaller than one's range
constexpr int kPageRows = 100;

std::string Lookup(const std::string& table) {
  return "SELECT customer_code, name FROM " + table +
         " c WHERE c.tenant_id = ? AND c.customer_code IN (?, ?, ?)";
}
const std::vector<json> kLookupParams = {1, "C000010", "C000012", "C000014"};

// The schema both tables share, the rows, and the two indexes.
std::vector<std::string> SeedStatements(const std::string& rows_from) {
  std::vector<std::string> out;
  for (const char* table : {"customer_plain", "customer_indexed"}) {
    out.push_back(std::string("CREATE TABLE ") + table +
                  " (id INT PRIMARY KEY, tenant_id INT NOT NULL, customer_code VARCHAR(20) NOT "
                  "NULL, name VARCHAR(40) NOT NULL)");
    out.push_back(std::string("INSERT INTO ") + table + " " + rows_from);
  }
  out.push_back("CREATE INDEX customer_plain_tenant ON customer_plain (tenant_id)");
  out.push_back(
      "CREATE INDEX customer_indexed_tenant_code ON customer_indexed (tenant_id, customer_code)");
  return out;
}

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::shared_ptr<ReadOnlyDatasource> datasource() = 0;
};

class SqliteBackend : public Backend {
 public:
  static StatusOr<std::unique_ptr<Backend>> Start() {
    auto b = std::make_unique<SqliteBackend>();
    b->path_ =
        (std::filesystem::temp_directory_path() / ("ec-plan-" + std::to_string(::getpid()) + ".db"))
            .string();
    std::filesystem::remove(b->path_);
    sqlite3* db = nullptr;
    sqlite3_open(b->path_.c_str(), &db);
    // No ANALYZE: the planner without statistics, as the issue found it.
    std::string sql = "BEGIN;";
    for (const auto& s : SeedStatements(
             "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " +
             std::to_string(kCustomers) +
             ") SELECT i, i % 2 + 1, printf('C%06d', i), 'Customer ' || i FROM n")) {
      sql += s + ";";
    }
    char* err = nullptr;
    int rc = sqlite3_exec(db, (sql + "COMMIT;").c_str(), nullptr, nullptr, &err);
    std::string error = err ? err : "";
    sqlite3_free(err);
    sqlite3_close(db);
    if (rc != SQLITE_OK) return Internal("seeding sqlite: " + error);
    b->datasource_ = NewSqliteDatasource(b->path_);
    return std::unique_ptr<Backend>(std::move(b));
  }
  ~SqliteBackend() override { std::filesystem::remove(path_); }
  std::shared_ptr<ReadOnlyDatasource> datasource() override { return datasource_; }

 private:
  std::string path_;
  std::shared_ptr<ReadOnlyDatasource> datasource_;
};

#ifdef EXPORT_CENTER_WITH_POSTGRES
class PostgresBackend : public Backend {
 public:
  static StatusOr<std::unique_ptr<Backend>> Start() {
    EC_ASSIGN_OR_RETURN(auto server, testing::PostgresServer::Start("plan"));
    auto b = std::make_unique<PostgresBackend>();
    b->server_ = std::move(server);
    PGconn* conn = PQconnectdb(b->server_->url().c_str());
    auto statements = SeedStatements(
        "SELECT i, i % 2 + 1, 'C' || lpad(i::text, 6, '0'), 'Customer ' || i FROM "
        "generate_series(1, " +
        std::to_string(kCustomers) + ") i");
    statements.push_back("ANALYZE");
    Status seeded = Status::Ok();
    for (const auto& s : statements) {
      PGresult* res = PQexec(conn, s.c_str());
      if (PQresultStatus(res) != PGRES_COMMAND_OK && seeded.ok()) {
        seeded = Internal(s + ": " + PQerrorMessage(conn));
      }
      PQclear(res);
    }
    PQfinish(conn);
    EC_RETURN_IF_ERROR(seeded);
    b->datasource_ = NewPostgresDatasource(b->server_->url());
    return std::unique_ptr<Backend>(std::move(b));
  }
  std::shared_ptr<ReadOnlyDatasource> datasource() override { return datasource_; }

 private:
  std::unique_ptr<testing::PostgresServer> server_;
  std::shared_ptr<ReadOnlyDatasource> datasource_;
};
#endif

#ifdef EXPORT_CENTER_WITH_MYSQL
class MariaDbBackend : public Backend {
 public:
  static StatusOr<std::unique_ptr<Backend>> Start() {
    EC_ASSIGN_OR_RETURN(auto server, testing::MariaDbServer::Start("plan"));
    auto b = std::make_unique<MariaDbBackend>();
    b->server_ = std::move(server);
    auto statements = SeedStatements(
        "SELECT seq, seq % 2 + 1, CONCAT('C', LPAD(seq, 6, '0')), CONCAT('Customer ', seq) "
        "FROM seq_1_to_" +
        std::to_string(kCustomers));
    statements.push_back("ANALYZE TABLE customer_plain, customer_indexed");
    for (const auto& s : statements) EC_RETURN_IF_ERROR(b->server_->Exec(s));
    EC_ASSIGN_OR_RETURN(auto ds, NewMysqlDatasource(b->server_->url()));
    b->datasource_ = std::move(ds);
    return std::unique_ptr<Backend>(std::move(b));
  }
  std::shared_ptr<ReadOnlyDatasource> datasource() override { return datasource_; }

 private:
  std::unique_ptr<testing::MariaDbServer> server_;
  std::shared_ptr<ReadOnlyDatasource> datasource_;
};
#endif

class PlanAdviceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    static testing::OncePerKind<Backend> backends;
    std::string why;
    const std::string kind = GetParam();
    backend_ = backends.Get(
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
        &why);
    EC_REQUIRE_REAL_SERVER(backend_, kind, why);
  }

  // The advice for `sql`; the plan read goes to *plan_text for failure messages.
  std::vector<task::PlanAdvice> AdviceFor(const std::string& sql, std::string* plan_text) {
    auto plan = backend_->datasource()->Explain(sql, kLookupParams, "", 5000);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    if (!plan.ok()) return {};
    *plan_text = plan->text;
    return ReadPlanAdvice(*plan, sql, kPageRows, "enrich group names");
  }

  Backend* backend_ = nullptr;
};

TEST_P(PlanAdviceTest, TenantIndexAloneGetsAdviceNamingTablePredicateAndIndex) {
  std::string plan;
  auto advice = AdviceFor(Lookup("customer_plain"), &plan);
  ASSERT_EQ(advice.size(), 1u) << plan;
  const task::PlanAdvice& a = advice[0];
  EXPECT_EQ(a.statement, "enrich group names");
  EXPECT_EQ(a.table, "customer_plain");
  EXPECT_NE(a.predicate.find("tenant_id = ?"), std::string::npos) << a.predicate;
  EXPECT_NE(a.predicate.find("customer_code IN (…)"), std::string::npos) << a.predicate;
  EXPECT_EQ(a.index_columns, (std::vector<std::string>{"tenant_id", "customer_code"}));
  EXPECT_EQ(a.suggested_index,
            "CREATE INDEX customer_plain_tenant_id_customer_code ON customer_plain (tenant_id, "
            "customer_code)");
  EXPECT_FALSE(a.plan.empty());
  if (GetParam() == "mariadb") {
    ASSERT_TRUE(a.estimated_rows.has_value());
    EXPECT_GT(*a.estimated_rows, kPageRows);
  }
  const std::string line = FormatPlanAdvice(a);
  EXPECT_NE(line.find("customer_plain"), std::string::npos) << line;
  EXPECT_NE(line.find(a.suggested_index), std::string::npos) << line;
}

TEST_P(PlanAdviceTest, IndexServingThePredicateGetsNone) {
  std::string plan;
  EXPECT_TRUE(AdviceFor(Lookup("customer_indexed"), &plan).empty()) << plan;
}

TEST_P(PlanAdviceTest, AnUnreadableStatementFailsTheExplainNotTheCaller) {
  auto plan = backend_->datasource()->Explain("SELECT nope FROM missing_table", {}, "", 5000);
  EXPECT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument) << plan.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(Databases, PlanAdviceTest,
                         ::testing::Values("sqlite", "postgres", "mariadb"),
                         [](const auto& info) { return info.param; });

// --- the readers on written-out plans -----------------------------------------

TEST(ReadPlanAdvice, SqliteFullScanOfAnAliasedTable) {
  QueryPlan plan{"sqlite", "2\t0\tSCAN o\n"};
  auto advice = ReadPlanAdvice(
      plan, "SELECT * FROM orders AS o WHERE o.status = ? AND o.id > ? ORDER BY o.id", 100, "page");
  ASSERT_EQ(advice.size(), 1u);
  EXPECT_EQ(advice[0].table, "orders");
  EXPECT_EQ(advice[0].index_columns, (std::vector<std::string>{"status", "id"}));
  EXPECT_EQ(advice[0].predicate, "status = ? AND id > ?");
}

TEST(ReadPlanAdvice, SqlitePrimaryKeyLookupsAndSubqueriesNeedNoIndex) {
  QueryPlan plan{"sqlite",
                 "2\t0\tSEARCH c USING INTEGER PRIMARY KEY (rowid=?)\n3\t0\tSCAN _t\n"
                 "4\t0\tSCAN CONSTANT ROW\n"};
  EXPECT_TRUE(ReadPlanAdvice(plan,
                             "SELECT * FROM (SELECT * FROM customer c WHERE c.tenant_id = ? AND "
                             "c.id IN (?, ?)) _t WHERE name = ?",
                             100, "page")
                  .empty());
}

TEST(ReadPlanAdvice, SqliteAutomaticIndexIsBuiltOnEveryRun) {
  QueryPlan plan{"sqlite",
                 "3\t0\tSCAN o\n5\t0\tSEARCH c USING AUTOMATIC COVERING INDEX (customer_code=?)\n"};
  auto advice = ReadPlanAdvice(plan,
                               "SELECT o.id, c.name FROM orders o LEFT JOIN customer c ON "
                               "c.customer_code = o.customer_code",
                               100, "page");
  ASSERT_EQ(advice.size(), 1u);
  EXPECT_EQ(advice[0].table, "customer");
  EXPECT_EQ(advice[0].index_columns, (std::vector<std::string>{"customer_code"}));
}

TEST(ReadPlanAdvice, PostgresIndexScanWithAnEqualityLeftInTheFilter) {
  json plan = json::array(
      {{{"Plan",
         {{"Node Type", "Limit"},
          {"Plans", json::array({{{"Node Type", "Index Scan"},
                                  {"Relation Name", "orders"},
                                  {"Alias", "o"},
                                  {"Index Name", "orders_tenant"},
                                  {"Index Cond", "(tenant_id = 1)"},
                                  {"Filter", "((o.status)::text = 'PAID'::text)"}}})}}}}});
  auto advice = ReadPlanAdvice({"postgres", plan.dump()}, "", 100, "page");
  ASSERT_EQ(advice.size(), 1u);
  EXPECT_EQ(advice[0].table, "orders");
  EXPECT_EQ(advice[0].index_columns, (std::vector<std::string>{"tenant_id", "status"}));
}

TEST(ReadPlanAdvice, PostgresSeqScanOfATableSmallerThanAPageIsRight) {
  json small = json::array({{{"Plan",
                              {{"Node Type", "Seq Scan"},
                               {"Relation Name", "customer_names"},
                               {"Alias", "customer_names"},
                               {"Total Cost", 1.31},
                               {"Filter", "(customer_code = ANY ('{C1,C2}'::text[]))"}}}}});
  EXPECT_TRUE(ReadPlanAdvice({"postgres", small.dump()}, "", 100, "page").empty());
  small[0]["Plan"]["Total Cost"] = 412.0;  // far more rows than a page
  EXPECT_EQ(ReadPlanAdvice({"postgres", small.dump()}, "", 100, "page").size(), 1u);
}

TEST(ReadPlanAdvice, MysqlSmallTablesAndKeyLookupsAreNoCliff) {
  json plan = {{"query_block",
                {{"nested_loop", json::array({{{"table",
                                                {{"table_name", "s"},
                                                 {"access_type", "ALL"},
                                                 {"rows", 12},
                                                 {"attached_condition", "s.code = 'X'"}}}},
                                              {{"table",
                                                {{"table_name", "c"},
                                                 {"access_type", "eq_ref"},
                                                 {"rows", 1},
                                                 {"used_key_parts", json::array({"id"})}}}}})}}}};
  EXPECT_TRUE(
      ReadPlanAdvice({"mysql", plan.dump()}, "SELECT * FROM status s JOIN customer c", 100, "page")
          .empty());
}

TEST(ReadPlanAdvice, GarbageGivesNoAdvice) {
  for (const char* kind : {"sqlite", "postgres", "mysql", "other"}) {
    EXPECT_TRUE(ReadPlanAdvice({kind, "\t\t(SCAN ((= IN \"\n{["}, "FROM (", 1, "page").empty());
  }
}

}  // namespace
}  // namespace export_center::source
