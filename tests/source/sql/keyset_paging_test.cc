// Keyset paging of the sql-template route (docs/sql-template-route.md#paging)
// on the three datasources, each a real database: a SQLite file, a throwaway
// PostgreSQL and a throwaway MariaDB on loopback.
//
// The table has many duplicate sort values and NULLs. For each ORDER BY the
// export paged by key (ties broken by the primary key) must return exactly
// the rows, in exactly the order, of the same export paged by OFFSET with
// the key spelt out in the ORDER BY — and of one direct query. A key that is
// not unique after all must not lose a row.

#include "source/sql/keyset_paging.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
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
constexpr char kToken[] = "test-internal-token-0123456789";
constexpr int kRows = 600;

// ---- the predicate text ----------------------------------------------------------

std::string After(std::vector<OrderTerm> order, std::vector<bool> nullable, OrderingTraits traits,
                  std::vector<json> boundary, std::vector<json>* params = nullptr) {
  KeysetQuery q("SELECT * FROM t", std::move(order), std::move(nullable), traits);
  auto page = q.From(boundary);
  if (params) *params = page.params;
  const std::string& sql = *page.sql;
  size_t where = sql.find(" WHERE ") + 7;
  return sql.substr(where, sql.find(" ORDER BY ") - where);
}

TEST(KeysetQueryTest, OneDirectionWithoutNullsIsARowValueRange) {
  std::vector<json> params;
  EXPECT_EQ(After({{"a", false}, {"id", false}}, {false, false}, {}, {3, 9}, &params),
            "(a, id) >= (?, ?)");
  EXPECT_EQ(params, (std::vector<json>{3, 9}));
  EXPECT_EQ(After({{"a", true}, {"id", true}}, {false, false}, {}, {3, 9}), "(a, id) <= (?, ?)");
}

TEST(KeysetQueryTest, MixedDirectionsOrNoRowValuesAreWrittenOutWithALeadingRange) {
  std::vector<json> params;
  EXPECT_EQ(After({{"a", true}, {"id", false}}, {false, false}, {}, {3, 9}, &params),
            "a <= ? AND (a < ? OR (a = ? AND id >= ?))");
  EXPECT_EQ(params, (std::vector<json>{3, 3, 3, 9}));
  EXPECT_EQ(After({{"a", false}, {"b", false}, {"id", false}}, {false, false, false},
                  {true, /*row_value_ranges=*/false}, {1, "x", 2}),
            "a >= ? AND (a > ? OR (a = ? AND (b > ? OR (b = ? AND id >= ?))))");
  EXPECT_EQ(After({{"id", false}}, {false}, {}, {5}), "id >= ?");
}

TEST(KeysetQueryTest, NullsSortWhereTheDatabaseSortsThem) {
  // PostgreSQL: NULL after every value ascending, so a nullable ASC term
  // keeps NULL rows after any value; at a NULL boundary only NULLs remain.
  OrderingTraits postgres{false, true};
  EXPECT_EQ(After({{"a", false}, {"id", false}}, {true, false}, postgres, {3, 9}),
            "(a >= ? OR a IS NULL) AND ((a > ? OR a IS NULL) OR (a = ? AND id >= ?))");
  std::vector<json> params;
  EXPECT_EQ(After({{"a", false}, {"id", false}}, {true, false}, postgres, {nullptr, 9}, &params),
            "a IS NULL AND (1 = 0 OR (a IS NULL AND id >= ?))");
  EXPECT_EQ(params, (std::vector<json>{9}));
  // SQLite/MariaDB: NULL first ascending; after a NULL boundary every value follows.
  OrderingTraits sqlite{true, true};
  EXPECT_EQ(After({{"a", false}, {"id", false}}, {true, false}, sqlite, {nullptr, 9}),
            "1 = 1 AND (a IS NOT NULL OR (a IS NULL AND id >= ?))");
  EXPECT_EQ(After({{"a", true}, {"id", false}}, {true, false}, sqlite, {3, 9}),
            "(a <= ? OR a IS NULL) AND ((a < ? OR a IS NULL) OR (a = ? AND id >= ?))");
}

TEST(KeysetQueryTest, TheKeyBreaksTiesAndTextIsBuiltOncePerNullPattern) {
  auto order = TotalOrder(ParseOrderBy("grp DESC, ID"), {"id", "tenant"});
  EXPECT_EQ(FormatOrderBy(order), "grp DESC, ID, tenant");
  KeysetQuery q("SELECT 1", order, {false, false, false}, {});
  const std::string* first = q.From({1, 2, "a"}).sql;
  EXPECT_EQ(q.From({5, 6, "b"}).sql, first);
  EXPECT_NE(q.From({nullptr, 6, "b"}).sql, first);
  EXPECT_EQ(q.first_page(), "SELECT * FROM (SELECT 1) _t ORDER BY grp DESC, ID, tenant LIMIT ?");
}

// ---- the same export on three real databases ---------------------------------------

// Ids 1..kRows, tenant t1 for most, t2 for every ninth. grp has 11 values,
// name 13 values and NULLs, amount 17 values: every order has ties. code is
// the id but for one pair: ids 49 and 50 share code 49, the 44th and 45th
// rows of tenant t1.
std::string SeedSql() {
  std::string sql =
      "CREATE TABLE items (id BIGINT PRIMARY KEY, tenant_id VARCHAR(8) NOT NULL, grp INTEGER "
      "NOT NULL, name VARCHAR(20) NULL, amount DECIMAL(10,2) NOT NULL, code INTEGER NOT NULL);";
  for (int i = 1; i <= kRows; ++i) {
    std::string name = i % 6 == 0 ? "NULL" : "'n" + std::to_string(i % 13) + "'";
    sql += "INSERT INTO items VALUES (" + std::to_string(i) + ", '" + (i % 9 ? "t1" : "t2") +
           "', " + std::to_string((i * 7) % 11) + ", " + name + ", " + std::to_string(i % 17) +
           ".50, " + std::to_string(i == 50 ? 49 : i) + ");";
  }
  return sql;
}

// Records every statement; can hide the primary key, so that the very same
// export pages by OFFSET.
class Recorder : public ReadOnlyDatasource {
 public:
  Recorder(std::shared_ptr<ReadOnlyDatasource> inner, bool hide_key)
      : inner_(std::move(inner)), hide_key_(hide_key) {}
  std::string_view kind() const override { return inner_->kind(); }
  StatusOr<ResultSet> Query(std::string_view sql, const std::vector<json>& params,
                            std::string_view schema) override {
    {
      std::lock_guard lock(mu_);
      queries_.emplace_back(sql);
    }
    return inner_->Query(sql, params, schema);
  }
  StatusOr<QueryDescription> Describe(std::string_view sql, const std::vector<json>& params,
                                      std::string_view schema) override {
    auto d = inner_->Describe(sql, params, schema);
    if (d.ok() && hide_key_) d->primary_key.clear();
    return d;
  }
  OrderingTraits ordering() const override { return inner_->ordering(); }
  // The page statements (the ones with a LIMIT).
  std::vector<std::string> pages() const {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const auto& q : queries_) {
      if (q.find(" LIMIT ") != std::string::npos) out.push_back(q);
    }
    return out;
  }

 private:
  std::shared_ptr<ReadOnlyDatasource> inner_;
  bool hide_key_;
  mutable std::mutex mu_;
  std::vector<std::string> queries_;
};

struct ItemsScenario : sdk::SqlScenario {
  std::mutex mu;
  std::string order_by;
  std::vector<std::string> unique_key;
  std::function<int64_t()> count;
  std::string QueryId() const override { return "ITEMS"; }
  sdk::Result<sdk::SqlTemplateResult> GetSqlTemplate(const json& params) override {
    std::lock_guard lock(mu);
    sdk::SqlTemplateResult r;
    r.sql_template = "SELECT id, grp, name, amount, code FROM items WHERE tenant_id = #{tenantId}";
    using T = sdk::ColumnType;
    r.columns = {{{"id", "ID", T::kInteger, 0, 0, ""}},
                 {{"grp", "组", T::kInteger, 0, 0, ""}},
                 {{"name", "名称", T::kString, 0, 0, ""}},
                 {{"amount", "金额", T::kDecimal, 0, 2, ""}},
                 {{"code", "编码", T::kInteger, 0, 0, ""}}};
    r.order_by = order_by;
    r.unique_key = unique_key;
    r.tenant = params.value("tenantId", "");
    r.support_count_for_list = true;
    return r;
  }
  sdk::Result<int64_t> CountForList(const json&) override { return count(); }
};

class KeysetPagingTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    // One database per kind for the whole binary, seeded once.
    db_ = testing::SharedReplica(
        GetParam(), "keyset",
        [](testing::ReplicaDatabase& db) { return db.Exec("BEGIN;" + SeedSql() + "COMMIT;"); },
        &why);
    EC_REQUIRE_REAL_SERVER(db_, GetParam(), why);
    scenario_ = std::make_shared<ItemsScenario>();
    scenario_->count = [this] { return static_cast<int64_t>(Direct("id").size()); };
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

  // The ids of tenant t1 in `order`, from one direct query.
  std::vector<int64_t> Direct(const std::string& order) {
    auto rs =
        db_->Open()->Query("SELECT id FROM items WHERE tenant_id = 't1' ORDER BY " + order, {}, "");
    EXPECT_TRUE(rs.ok()) << rs.status().ToString();
    std::vector<int64_t> ids;
    for (const auto& row : rs.ok() ? rs->rows : decltype(rs->rows){})
      ids.push_back(std::stoll(*row[0]));
    return ids;
  }

  // Every id the export writes, in order.
  std::vector<int64_t> Export(const std::string& order_by, int batch,
                              std::shared_ptr<Recorder> recorder) {
    {
      std::lock_guard lock(scenario_->mu);
      scenario_->order_by = order_by;
    }
    SqlTemplateSourceOptions o;
    o.export_type = o.query_id = "ITEMS";
    o.registered_query_ids = {"ITEMS"};
    o.task_id = 9;
    o.tenant_id = "t1";
    o.requested_by = "u1";
    o.batch_size = batch;
    o.count_recheck_backoff_ms = 10;
    SqlContractClientOptions c;
    c.service = {"items", "http://127.0.0.1:" + std::to_string(port_), kToken, /*base_path=*/""};
    c.query_id = "ITEMS";
    auto source = NewSqlTemplateSource(o, NewHttpSqlContractClient(c, http::HttplibClientFactory()),
                                       recorder);
    std::vector<int64_t> ids;
    while (true) {
      auto page = source->NextPage();
      EXPECT_TRUE(page.ok()) << page.status().ToString();
      if (!page.ok()) return ids;
      EXPECT_LE(page->rows.size(), static_cast<size_t>(batch) + 1);
      for (const auto& row : page->rows) ids.push_back(std::get<int64_t>(row[0]));
      if (!page->has_more) return ids;
    }
  }

  testing::ReplicaDatabase* db_ = nullptr;
  std::shared_ptr<ItemsScenario> scenario_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

TEST_P(KeysetPagingTest, KeysetReturnsExactlyTheOffsetResultWithTiesBrokenByTheKey) {
  for (const std::string order : {"grp", "grp DESC, amount", "grp, amount", "amount DESC, grp DESC",
                                  "name", "name DESC, grp", "id DESC"}) {
    for (int batch : {13, 50}) {
      SCOPED_TRACE(GetParam() + ": ORDER BY " + order + ", batch " + std::to_string(batch));
      auto by_key = std::make_shared<Recorder>(db_->Open(), /*hide_key=*/false);
      auto by_offset = std::make_shared<Recorder>(db_->Open(), /*hide_key=*/true);
      const std::string total = order == "id DESC" ? order : order + ", id";
      std::vector<int64_t> keyset = Export(order, batch, by_key);
      std::vector<int64_t> offset = Export(total, batch, by_offset);
      ASSERT_EQ(keyset.size(), static_cast<size_t>(kRows - kRows / 9));
      EXPECT_EQ(keyset, offset);
      EXPECT_EQ(keyset, Direct(total));
      // Each way paged as it says: seeks by key, one statement text for
      // every page after the first (no NULL boundaries in "grp" orders);
      // counted OFFSETs without the key.
      auto pages = by_key->pages();
      ASSERT_GE(pages.size(), 3u);
      for (const auto& sql : pages) EXPECT_EQ(sql.find("OFFSET"), std::string::npos) << sql;
      if (order.rfind("grp", 0) == 0) {
        EXPECT_EQ(std::count(pages.begin() + 1, pages.end(), pages[1]),
                  static_cast<long>(pages.size() - 1));
      }
      for (const auto& sql : by_offset->pages()) EXPECT_NE(sql.find("OFFSET"), std::string::npos);
    }
  }
}

// A declared key that is not unique: the duplicates show up inside one page
// (grp from the first page on; code within the page of rows 41-50), or as
// the twin of the row a page ended with (code, pages of 44 rows). Either
// way OFFSET pages take over and every row is exported exactly once.
TEST_P(KeysetPagingTest, AKeyThatIsNotUniqueLosesNoRow) {
  for (auto [key, batch] : {std::pair{"grp", 25}, std::pair{"code", 10}, std::pair{"code", 44}}) {
    SCOPED_TRACE(GetParam() + ": uniqueKey " + key + ", batch " + std::to_string(batch));
    {
      std::lock_guard lock(scenario_->mu);
      scenario_->unique_key = {key};
    }
    auto recorder = std::make_shared<Recorder>(db_->Open(), false);
    std::vector<int64_t> ids = Export(key, batch, recorder);
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(ids, Direct("id")) << "every row exactly once";
    auto pages = recorder->pages();
    EXPECT_EQ(pages[0].find("OFFSET"), std::string::npos) << "paged by key at first";
    EXPECT_NE(pages.back().find("OFFSET"), std::string::npos) << "fell back to OFFSET";
  }
}

TEST_P(KeysetPagingTest, ADeclaredUniqueKeyOutsideTheResultIsAContractError) {
  {
    std::lock_guard lock(scenario_->mu);
    scenario_->unique_key = {"tenant_id"};
    scenario_->order_by = "id";
  }
  SqlTemplateSourceOptions o;
  o.export_type = o.query_id = "ITEMS";
  o.registered_query_ids = {"ITEMS"};
  o.tenant_id = "t1";
  o.requested_by = "u1";
  SqlContractClientOptions c;
  c.service = {"items", "http://127.0.0.1:" + std::to_string(port_), kToken, /*base_path=*/""};
  c.query_id = "ITEMS";
  auto page = NewSqlTemplateSource(o, NewHttpSqlContractClient(c, http::HttplibClientFactory()),
                                   db_->Open())
                  ->NextPage();
  EXPECT_EQ(page.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(page.status().message().find("uniqueKey"), std::string::npos)
      << page.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(Datasources, KeysetPagingTest,
                         ::testing::Values("sqlite", "postgres", "mariadb"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace export_center::source
