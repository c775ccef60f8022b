// Plan advice (docs/sql-template-route.md#plan-advice) on real databases: a
// SQLite file and throwaway PostgreSQL and MariaDB servers (tests/support/),
// each with a customer table twice — once indexed on tenant_id only, once on
// (tenant_id, customer_code). The enrich lookup `tenant_id = ? AND
// customer_code IN (…)` gets advice naming the table, the predicate and the
// index on the first, none on the second. Plus the plan readers on plans
// written out, for the shapes a test database does not produce.

#include "source/sql/plan_advice.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/utf8.h"
#include "tests/support/replica_database.h"

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

// The rows of each kind, in its own dialect, and its statistics: none on
// SQLite (the planner without them, as the issue found it), ANALYZE on the
// servers.
Status Seed(testing::ReplicaDatabase& db, const std::string& kind) {
  const std::string n = std::to_string(kCustomers);
  std::vector<std::string> statements;
  if (kind == "sqlite") {
    statements =
        SeedStatements("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " +
                       n + ") SELECT i, i % 2 + 1, printf('C%06d', i), 'Customer ' || i FROM n");
  } else if (kind == "postgres") {
    statements = SeedStatements(
        "SELECT i, i % 2 + 1, 'C' || lpad(i::text, 6, '0'), 'Customer ' || i FROM "
        "generate_series(1, " +
        n + ") i");
    statements.push_back("ANALYZE");
  } else {
    statements = SeedStatements(
        "SELECT seq, seq % 2 + 1, CONCAT('C', LPAD(seq, 6, '0')), CONCAT('Customer ', seq) "
        "FROM seq_1_to_" +
        n);
    statements.push_back("ANALYZE TABLE customer_plain, customer_indexed");
  }
  std::string batch = "BEGIN;";
  for (const auto& s : statements) batch += s + ";";
  return db.Exec(batch + "COMMIT;");
}

class PlanAdviceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    const std::string kind = GetParam();
    auto* db = testing::SharedReplica(
        kind, "plan", [&](testing::ReplicaDatabase& d) { return Seed(d, kind); }, &why);
    EC_REQUIRE_REAL_SERVER(db, kind, why);
    db_ = db;
    datasource_ = db->Open();
  }

  // `name` quoted as this database quotes identifiers.
  std::string Q(const std::string& name) const {
    const char quote = GetParam() == "mariadb" ? '`' : '"';
    return quote + name + quote;
  }

  // The advice for `sql`; the plan read goes to *plan_text for failure messages.
  std::vector<task::PlanAdvice> AdviceFor(const std::string& sql, std::string* plan_text) {
    auto plan = datasource_->Explain(sql, kLookupParams, "", 5000);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    if (!plan.ok()) return {};
    *plan_text = plan->text;
    return ReadPlanAdvice(*plan, sql, kPageRows, "enrich group names");
  }

  // The statement that gives `table` fresh statistics, in this dialect.
  std::string Analyze(const std::string& table) const {
    return (GetParam() == "mariadb" ? "ANALYZE TABLE " : "ANALYZE ") + table + ";";
  }
  // A table of the test's own, as customer_plain: indexed on tenant_id alone.
  Status CopyIndexedOnTenant(const std::string& table) {
    return db_->Exec("DROP TABLE IF EXISTS " + table + "; CREATE TABLE " + table +
                     " AS SELECT * FROM customer_plain; CREATE INDEX " + table + "_tenant ON " +
                     table + " (tenant_id);" + Analyze(table));
  }

  testing::ReplicaDatabase* db_ = nullptr;
  std::shared_ptr<ReadOnlyDatasource> datasource_;
};

TEST_P(PlanAdviceTest, TenantIndexAloneGetsAdviceNamingTablePredicateAndIndex) {
  std::string plan;
  auto advice = AdviceFor(Lookup("customer_plain"), &plan);
  ASSERT_EQ(advice.size(), 1u) << plan;
  const task::PlanAdvice& a = advice[0];
  EXPECT_EQ(a.statement, "enrich group names");
  EXPECT_EQ(a.table, "customer_plain");
  EXPECT_NE(a.predicate.find(Q("tenant_id") + " = ?"), std::string::npos) << a.predicate;
  EXPECT_NE(a.predicate.find(Q("customer_code") + " IN (…)"), std::string::npos) << a.predicate;
  EXPECT_EQ(a.index_columns, (std::vector<std::string>{"tenant_id", "customer_code"}));
  EXPECT_EQ(a.suggested_index, "CREATE INDEX " + Q("customer_plain_tenant_id_customer_code") +
                                   " ON " + Q("customer_plain") + " (" + Q("tenant_id") + ", " +
                                   Q("customer_code") + ")");
  EXPECT_FALSE(a.plan.empty());
  if (GetParam() == "mariadb") {
    ASSERT_TRUE(a.estimated_rows.has_value());
    EXPECT_GT(*a.estimated_rows, kPageRows);
  }
  const std::string line = FormatPlanAdvice(a);
  EXPECT_NE(line.find("table \"customer_plain\""), std::string::npos) << line;
  EXPECT_NE(line.find(a.suggested_index), std::string::npos) << line;
}

TEST_P(PlanAdviceTest, IndexServingThePredicateGetsNone) {
  std::string plan;
  EXPECT_TRUE(AdviceFor(Lookup("customer_indexed"), &plan).empty()) << plan;
}

// The business follows the advice while the center runs: the next plan,
// asked on the same pooled connection, sees the new index (SQLite's EXPLAIN
// would otherwise plan with the schema the connection loaded before it).
TEST_P(PlanAdviceTest, AnIndexCreatedAfterAPlanIsSeenByTheNextPlan) {
  const std::string analyze = Analyze("customer_late");
  ASSERT_TRUE(CopyIndexedOnTenant("customer_late").ok());
  std::string plan;
  ASSERT_EQ(AdviceFor(Lookup("customer_late"), &plan).size(), 1u) << plan;
  ASSERT_TRUE(db_->Exec("CREATE INDEX customer_late_tenant_code ON customer_late (tenant_id, "
                        "customer_code);" +
                        analyze)
                  .ok());
  EXPECT_TRUE(AdviceFor(Lookup("customer_late"), &plan).empty()) << plan;
  EXPECT_TRUE(db_->Exec("DROP TABLE customer_late").ok());
}

// A page statement in an order no index serves: each page sorts the
// tenant's rows. The advice names an index on the equality and then the
// order in its own directions; with that index there is no sort and none.
TEST_P(PlanAdviceTest, APageSortedByTheDatabaseGetsAnIndexInTheOrdersDirections) {
  const std::string analyze = Analyze("customer_order");
  ASSERT_TRUE(CopyIndexedOnTenant("customer_order").ok());
  const std::string page =
      "SELECT * FROM (SELECT c.id AS id, c.name AS name FROM customer_order c WHERE c.tenant_id "
      "= ?) _t ORDER BY name DESC, id LIMIT ?";
  auto sorts = [&](std::string* text) {
    auto plan = datasource_->Explain(page, {1, kPageRows}, "", 5000);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    std::optional<task::PlanAdvice> found;
    if (!plan.ok()) return found;
    *text = plan->text;
    for (auto& a : ReadPlanAdvice(*plan, page, kPageRows, "page")) {
      if (a.predicate.find("ORDER BY") != std::string::npos) found = a;
    }
    return found;
  };
  std::string plan;
  auto advice = sorts(&plan);
  ASSERT_TRUE(advice.has_value()) << plan;
  EXPECT_EQ(advice->table, "customer_order");
  EXPECT_EQ(advice->predicate, Q("tenant_id") + " = ? ORDER BY " + Q("name") + " DESC, " + Q("id"));
  EXPECT_EQ(advice->index_columns, (std::vector<std::string>{"tenant_id", "name DESC", "id"}));
  EXPECT_EQ(advice->suggested_index, "CREATE INDEX " + Q("customer_order_tenant_id_name_DESC_id") +
                                         " ON " + Q("customer_order") + " (" + Q("tenant_id") +
                                         ", " + Q("name") + " DESC, " + Q("id") + ")");
  ASSERT_TRUE(db_->Exec(advice->suggested_index + ";" + analyze).ok());
  EXPECT_FALSE(sorts(&plan).has_value()) << plan;
  EXPECT_TRUE(db_->Exec("DROP TABLE customer_order").ok());
}

TEST_P(PlanAdviceTest, AnUnreadableStatementFailsTheExplainNotTheCaller) {
  auto plan = datasource_->Explain("SELECT nope FROM missing_table", {}, "", 5000);
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
  EXPECT_EQ(advice[0].predicate, "\"status\" = ? AND \"id\" > ?");
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

TEST(ReadPlanAdvice, ALongNonAsciiIndexNameIsCutBetweenCodePoints) {
  // 20 three-byte characters: the 60-byte cut of the suggested name falls
  // inside one of the column's characters unless it is made at a boundary.
  std::string table = "订单";
  std::string column;
  for (int i = 0; i < 20; ++i) column += "状";
  json plan = json::array({{{"Plan",
                             {{"Node Type", "Seq Scan"},
                              {"Relation Name", table},
                              {"Alias", table},
                              {"Total Cost", 9000.0},
                              {"Filter", "(" + column + " = 'x'::text)"}}}}});
  auto advice = ReadPlanAdvice({"postgres", plan.dump()}, "", 100, "page");
  ASSERT_EQ(advice.size(), 1u);
  const std::string& ddl = advice[0].suggested_index;
  EXPECT_TRUE(utf8::IsValid(ddl)) << ddl;
  size_t name_start = ddl.find("INDEX ") + 6;
  std::string name = ddl.substr(name_start, ddl.find(' ', name_start) - name_start);
  EXPECT_LE(name.size(), 62u);  // 60 and its quotes
  EXPECT_EQ(name.rfind("\"" + table + "_", 0), 0u) << name;
}

// The sample's own cliff: `order_date DESC, id` on an index in ascending
// order — SQLite sorts each date's ties on every page.
TEST(ReadPlanAdvice, SqliteSortedPageGetsAnIndexInTheOrdersDirections) {
  QueryPlan plan{"sqlite",
                 "3\t0\tSEARCH o USING INDEX orders_tenant_date (tenant_id=?)\n"
                 "13\t0\tUSE TEMP B-TREE FOR RIGHT PART OF ORDER BY\n"};
  const std::string sql =
      "SELECT * FROM (SELECT o.id AS id, o.order_date AS order_date, printf('%d', o.amount) AS "
      "amount FROM orders o WHERE o.tenant_id = ?) _t ORDER BY order_date DESC, id LIMIT ?";
  auto advice = ReadPlanAdvice(plan, sql, 1000, "page");
  ASSERT_EQ(advice.size(), 1u);  // the SEARCH serves every equality: the sort alone
  EXPECT_EQ(advice[0].plan, "USE TEMP B-TREE FOR RIGHT PART OF ORDER BY");
  EXPECT_EQ(advice[0].predicate, "\"tenant_id\" = ? ORDER BY \"order_date\" DESC, \"id\"");
  EXPECT_EQ(advice[0].index_columns,
            (std::vector<std::string>{"tenant_id", "order_date DESC", "id"}));
  EXPECT_EQ(advice[0].suggested_index,
            "CREATE INDEX \"orders_tenant_id_order_date_DESC_id\" ON \"orders\" (\"tenant_id\", "
            "\"order_date\" DESC, \"id\")");
}

// No index holds an expression's value or a position: no index to name.
TEST(ReadPlanAdvice, ASortByAnExpressionOrAPositionNamesNoIndex) {
  QueryPlan plan{"sqlite", "2\t0\tSCAN o\n9\t0\tUSE TEMP B-TREE FOR ORDER BY\n"};
  const std::string inner =
      "SELECT o.id AS id, printf('%d', o.amount) AS amount FROM orders o WHERE o.tenant_id = ?";
  for (const std::string order : {"amount", "2, id", "id NULLS LAST"}) {
    auto advice = ReadPlanAdvice(
        plan, "SELECT * FROM (" + inner + ") _t ORDER BY " + order + " LIMIT ?", 1000, "page");
    for (const auto& a : advice) {
      EXPECT_EQ(a.predicate.find("ORDER BY"), std::string::npos) << order << ": " << a.predicate;
    }
  }
}

TEST(ReadPlanAdvice, PostgresAndMariadbSortsAreSeen) {
  const std::string sql =
      "SELECT * FROM (SELECT o.id AS id, o.order_date AS order_date FROM orders o WHERE "
      "o.tenant_id = ? AND o.status = ?) _t ORDER BY order_date DESC, id LIMIT ?";
  const std::vector<std::string> index{"tenant_id", "status", "order_date DESC", "id"};
  QueryPlan postgres{"postgres", R"json([{"Plan": {"Node Type": "Limit", "Plans": [
      {"Node Type": "Incremental Sort", "Sort Key": ["o.order_date DESC", "o.id"], "Plans": [
        {"Node Type": "Index Scan", "Relation Name": "orders", "Alias": "o",
         "Index Name": "orders_tenant_date", "Index Cond": "((tenant_id)::text = '1'::text)",
         "Filter": "((status)::text = 'PAID'::text)"}]}]}}])json"};
  QueryPlan mariadb{"mysql", R"json({"query_block": {"select_id": 1, "filesort": {
      "sort_key": "o.order_date desc, o.`id`", "temporary_table": {"table": {
        "table_name": "o", "access_type": "ref", "key": "orders_tenant_date",
        "used_key_parts": ["tenant_id"], "rows": 500,
        "attached_condition": "o.tenant_id = '1' and o.`status` = 'PAID'"}}}}})json"};
  for (const QueryPlan* plan : {&postgres, &mariadb}) {
    std::optional<task::PlanAdvice> sort;
    for (auto& a : ReadPlanAdvice(*plan, sql, 1000, "page")) {
      if (a.predicate.find("ORDER BY") != std::string::npos) sort = a;
    }
    ASSERT_TRUE(sort.has_value()) << plan->kind;
    EXPECT_EQ(sort->plan, plan == &postgres ? "Incremental Sort" : "filesort");
    EXPECT_EQ(sort->index_columns, index) << plan->kind;
  }
}

// Every identifier advice prints is quoted the database's way, its quote
// doubled: a name is the business database's bytes, and the DDL is pasted.
TEST(ReadPlanAdvice, EveryIdentifierPrintedIsQuoted) {
  json pg = json::array({{{"Plan",
                           {{"Node Type", "Seq Scan"},
                            {"Relation Name", "we\"ird tbl"},
                            {"Alias", "w"},
                            {"Total Cost", 9000.0},
                            {"Filter", "((\"Mixed Case\")::text = 'x'::text)"}}}}});
  auto advice = ReadPlanAdvice({"postgres", pg.dump()}, "", 100, "page");
  ASSERT_EQ(advice.size(), 1u);
  EXPECT_EQ(advice[0].table, "we\"ird tbl");
  EXPECT_EQ(advice[0].index_columns, (std::vector<std::string>{"Mixed Case"}));
  EXPECT_EQ(advice[0].predicate, "\"Mixed Case\" = ?");
  EXPECT_EQ(advice[0].suggested_index,
            "CREATE INDEX \"we_ird_tbl_Mixed_Case\" ON \"we\"\"ird tbl\" (\"Mixed Case\")");
  const std::string line = FormatPlanAdvice(advice[0]);
  EXPECT_NE(line.find("table \"we\"\"ird tbl\" is read"), std::string::npos) << line;

  // MariaDB: backticks, a backtick in a name doubled.
  json mysql = {{"query_block",
                 {{"table",
                   {{"table_name", "o"},
                    {"access_type", "ALL"},
                    {"rows", 5000},
                    {"attached_condition", "o.`we``ird` = 'x'"}}}}}};
  advice = ReadPlanAdvice({"mysql", mysql.dump()}, "SELECT * FROM `ord``ers` o", 100, "page");
  ASSERT_EQ(advice.size(), 1u);
  EXPECT_EQ(advice[0].suggested_index, "CREATE INDEX `ord_ers_we_ird` ON `ord``ers` (`we``ird`)");
  EXPECT_EQ(advice[0].predicate, "`we``ird` = ?");

  // PostgreSQL reads an unquoted name as its lower case: so does the advice.
  QueryPlan sorted{"postgres", R"json([{"Plan": {"Node Type": "Sort", "Plans": [
      {"Node Type": "Index Scan", "Relation name": "orders"}]}}])json"};
  advice = ReadPlanAdvice(sorted,
                          "SELECT * FROM (SELECT o.Id AS id FROM Orders o WHERE o.TenantId = ?) _t "
                          "ORDER BY id LIMIT ?",
                          100, "page");
  ASSERT_EQ(advice.size(), 1u);
  EXPECT_EQ(advice[0].suggested_index,
            "CREATE INDEX \"orders_tenantid_id\" ON \"orders\" (\"tenantid\", \"id\")");
}

// MySQL's string literals take backslash escapes: 'it\'s' is one literal, so
// what follows it is read as the predicate it is, not as a string.
TEST(ReadPlanAdvice, MysqlBackslashEscapesInLiteralsAreRead) {
  json mysql = {
      {"query_block",
       {{"table",
         {{"table_name", "o"},
          {"access_type", "ALL"},
          {"rows", 5000},
          {"attached_condition",
           "o.note = 'it\\'s = \\\\' and o.`status` = \"PA\\\"ID\" and o.tenant_id = '1'"}}}}}};
  auto advice = ReadPlanAdvice({"mysql", mysql.dump()},
                               "SELECT * FROM orders o WHERE o.note = 'it\\'s' AND o.status = ?",
                               100, "page");
  ASSERT_EQ(advice.size(), 1u);
  EXPECT_EQ(advice[0].index_columns, (std::vector<std::string>{"note", "status", "tenant_id"}));
  EXPECT_EQ(advice[0].predicate, "`note` = ? AND `status` = ? AND `tenant_id` = ?");
}

TEST(ReadPlanAdvice, GarbageGivesNoAdvice) {
  for (const char* kind : {"sqlite", "postgres", "mysql", "other"}) {
    EXPECT_TRUE(ReadPlanAdvice({kind, "\t\t(SCAN ((= IN \"\n{["}, "FROM (", 1, "page").empty());
  }
}

}  // namespace
}  // namespace export_center::source
