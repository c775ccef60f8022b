// SqlTemplateSource against a real SQLite datasource (and a real PostgreSQL
// replica when the server binaries are installed), with the contract served
// by the SDK's RegisterSqlScenarios on loopback.

#include "source/sql/sql_template_source.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/utf8.h"
#include "http/httplib/httplib_http_client.h"
#include "registry/registry.h"
#include "sdk/sql_scenario.h"
#include "source/sql/datasource/sqlite/sqlite_datasource.h"
#ifdef EXPORT_CENTER_WITH_POSTGRES
#include <libpq-fe.h>

#include "source/sql/datasource/postgres/postgres_datasource.h"
#include "tests/support/postgres_server.h"
#endif

namespace export_center::source {
namespace {

using nlohmann::json;
constexpr char kToken[] = "test-internal-token-0123456789";
constexpr int kOrders = 1234;

// Deterministic orders for tenants t1 (even ids) and t2 (odd ids).
std::string SeedSql(int n) {
  std::string sql =
      "CREATE TABLE orders (id INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL, order_no TEXT NOT "
      "NULL, customer_code TEXT NOT NULL, status TEXT NOT NULL, amount NUMERIC(12,2) NOT NULL, "
      "paid BOOLEAN NOT NULL, order_date DATE NOT NULL, created_at TIMESTAMP NULL);"
      "CREATE TABLE customer_names (customer_code TEXT PRIMARY KEY, customer_name TEXT);";
  for (int i = 1; i <= n; ++i) {
    char row[400];
    std::snprintf(row, sizeof row,
                  "INSERT INTO orders VALUES (%d, 't%d', 'SO%06d', 'C%03d', '%s', %d.%02d, %s, "
                  "'2024-%02d-%02d', %s);",
                  i, i % 2 + 1, i, i % 50, i % 3 == 0 ? "PAID" : "NEW", i * 7, i % 100,
                  i % 3 == 0 ? "TRUE" : "FALSE", i % 12 + 1, i % 28 + 1,
                  i % 10 == 0 ? "NULL"
                              : ("'2024-03-0" + std::to_string(i % 9 + 1) + " 10:1" +
                                 std::to_string(i % 10) + ":00'")
                                    .c_str());
    sql += row;
  }
  for (int c = 0; c < 50; c += 2) {
    sql += "INSERT INTO customer_names VALUES ('C" + std::string(c < 10 ? "00" : "0") +
           std::to_string(c) + "', 'Customer " + std::to_string(c) + "');";
  }
  return sql;
}

const char* kTemplate = R"(<script>
SELECT id, order_no, customer_code, status, amount, paid, order_date, created_at
FROM orders
<where>
  tenant_id = #{tenantId}
  <if test="status != null and status != ''">AND status = #{status}</if>
  <if test="minId != null">AND id &gt;= #{minId}</if>
</where>
</script>)";

// Passes every query on and remembers it: tests check what reached the database.
class RecordingDatasource : public ReadOnlyDatasource {
 public:
  explicit RecordingDatasource(std::shared_ptr<ReadOnlyDatasource> inner)
      : inner_(std::move(inner)) {}
  std::string_view kind() const override { return inner_->kind(); }
  StatusOr<ResultSet> Query(std::string_view sql, const std::vector<json>& params,
                            std::string_view schema) override {
    {
      std::lock_guard lock(mu_);
      queries_.emplace_back(sql);
    }
    if (before_query) before_query(sql);
    return inner_->Query(sql, params, schema);
  }
  StatusOr<QueryDescription> Describe(std::string_view sql, const std::vector<json>& params,
                                      std::string_view schema) override {
    return inner_->Describe(sql, params, schema);
  }
  OrderingTraits ordering() const override { return inner_->ordering(); }
  StatusOr<QueryPlan> Explain(std::string_view sql, const std::vector<json>& params,
                              std::string_view schema, int timeout_ms) override {
    {
      std::lock_guard lock(mu_);
      explains_.emplace_back(sql);
    }
    return inner_->Explain(sql, params, schema, timeout_ms);
  }
  std::unique_ptr<CommitWatch> WatchCommits(std::string_view schema) override {
    return inner_->WatchCommits(schema);
  }
  std::vector<std::string> queries() const {
    std::lock_guard lock(mu_);
    return queries_;
  }
  std::vector<std::string> explains() const {
    std::lock_guard lock(mu_);
    return explains_;
  }
  // Runs on the querying thread before each statement; set before use.
  std::function<void(std::string_view)> before_query;

 private:
  std::shared_ptr<ReadOnlyDatasource> inner_;
  mutable std::mutex mu_;
  std::vector<std::string> queries_;
  std::vector<std::string> explains_;
};

// A scenario whose answers each test may bend.
struct TestScenario : sdk::SqlScenario {
  std::mutex mu;
  int64_t version = 1;
  int64_t count_delta = 0;  // list count = real count + delta
  int delta_calls = -1;     // how many CountForList answers carry the delta; -1: all
  std::atomic<int> count_calls{0};
  bool support_count = true;
  std::string order_by = "id";
  std::function<void(sdk::SqlTemplateResult*)> tweak;
  std::function<sdk::Result<std::vector<json>>(const sdk::SqlEnrichRequest&)> enrich;
  std::function<int64_t(const json&)> real_count;
  std::atomic<int> enrich_calls{0};

  std::string QueryId() const override { return "ORDER_LIST"; }
  sdk::Result<sdk::SqlTemplateResult> GetSqlTemplate(const json& params) override {
    std::lock_guard lock(mu);
    sdk::SqlTemplateResult r;
    r.sql_template = kTemplate;
    using T = sdk::ColumnType;
    r.columns = {{{"id", "ID", T::kInteger}, false, true, false},
                 {{"order_no", "单号", T::kString}},
                 {{"customer_code", "客户", T::kString}},
                 {{"status", "状态", T::kString}},
                 {{"amount", "金额", T::kDecimal, 0, 2}},
                 {{"paid", "已付", T::kBoolean}},
                 {{"order_date", "日期", T::kDate}},
                 {{"created_at", "创建时间", T::kDateTime}}};
    r.order_by = order_by;
    r.tenant = params.value("tenantId", "");
    r.version = version;
    r.support_version = true;
    r.support_count_for_list = support_count;
    if (tweak) tweak(&r);
    return r;
  }
  sdk::Result<int64_t> CountForList(const json& params) override {
    const int call = count_calls++;
    const bool lagging = delta_calls < 0 || call < delta_calls;
    return real_count(params) + (lagging ? count_delta : 0);
  }
  sdk::Result<int64_t> GetVersion(const json&) override { return version; }
  sdk::Result<std::vector<json>> Enrich(const sdk::SqlEnrichRequest& request) override {
    ++enrich_calls;
    return enrich(request);
  }
};

class SqlTemplateSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "sql_source_" + std::to_string(getpid()) + ".db";
    std::filesystem::remove(path_);
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db_), SQLITE_OK);
    // The business's writer, as any writer of a file others read: it waits
    // for the statements in flight (a page read ahead and a lookup, while a
    // test changes rows between pages) instead of failing SQLITE_BUSY.
    sqlite3_busy_timeout(db_, 5000);
    Exec("BEGIN;" + SeedSql(kOrders) + "COMMIT;");
    scenario_ = std::make_shared<TestScenario>();
    scenario_->real_count = [this](const json& p) { return CountDirect(p); };
    sdk::RegisterSqlScenarios(server_, kToken, {scenario_});
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    recorder_ = std::make_shared<RecordingDatasource>(NewSqliteDatasource(path_));
    datasource_ = recorder_;
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
    sqlite3_close(db_);
    std::filesystem::remove(path_);
  }

  void Exec(const std::string& sql) {
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << err;
  }
  int64_t CountDirect(const json& p) {
    std::string sql = "SELECT COUNT(*) FROM orders WHERE tenant_id = '" +
                      p.value("tenantId", std::string()) + "'";
    if (p.contains("status")) sql += " AND status = '" + p["status"].get<std::string>() + "'";
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr);
    sqlite3_step(st);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
  }

  SqlTemplateSourceOptions Options(json params = json::object()) {
    SqlTemplateSourceOptions o;
    o.export_type = "ORDER_LIST";
    o.query_id = "ORDER_LIST";
    o.registered_query_ids = {"ORDER_LIST"};
    o.task_id = 42;
    o.tenant_id = "t1";
    o.requested_by = "u1";
    o.parameters_json = params.dump();
    o.contract_version = "1";
    o.batch_size = 100;
    o.count_recheck_backoff_ms = 10;
    o.timezone = "Asia/Shanghai";
    return o;
  }
  std::unique_ptr<RowSource> Make(const SqlTemplateSourceOptions& o, std::string token = kToken,
                                  std::string query_id = "ORDER_LIST") {
    SqlContractClientOptions c;
    c.service = {"orders", "http://127.0.0.1:" + std::to_string(port_), std::move(token),
                 /*base_path=*/""};
    c.query_id = std::move(query_id);
    c.client.read_timeout_ms = 5000;
    return NewSqlTemplateSource(o, NewHttpSqlContractClient(c, http::HttplibClientFactory()),
                                datasource_);
  }
  // Pulls every page; returns the first error.
  StatusOr<std::vector<task::Row>> Drain(RowSource& source, std::function<void(int)> between = {}) {
    std::vector<task::Row> rows;
    for (int page_no = 0;; ++page_no) {
      EC_ASSIGN_OR_RETURN(Page page, source.NextPage());
      for (auto& r : page.rows) rows.push_back(std::move(r));
      if (!page.has_more) return rows;
      if (between) between(page_no);
    }
  }

  std::string path_;
  sqlite3* db_ = nullptr;
  std::shared_ptr<TestScenario> scenario_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::shared_ptr<RecordingDatasource> recorder_;
  std::shared_ptr<ReadOnlyDatasource> datasource_;
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

TEST_F(SqlTemplateSourceTest, ExportsEveryRowTypedAndInOrder) {
  auto source = Make(Options());
  auto rows = Drain(*source);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), static_cast<size_t>(kOrders / 2));
  ASSERT_EQ(source->columns().size(), 8u);
  // Compare every cell with a direct query.
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db_,
                     "SELECT id, order_no, customer_code, status, printf('%.2f', amount), paid, "
                     "order_date, created_at FROM orders WHERE tenant_id='t1' ORDER BY id",
                     -1, &st, nullptr);
  size_t i = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const auto& row = (*rows)[i++];
    EXPECT_EQ(CellText(row[0]), std::to_string(sqlite3_column_int64(st, 0)));
    for (int c : {1, 2, 3, 4, 6}) {
      EXPECT_EQ(CellText(row[c]), reinterpret_cast<const char*>(sqlite3_column_text(st, c)));
    }
    EXPECT_EQ(CellText(row[5]), sqlite3_column_int(st, 5) ? "true" : "false");
    if (sqlite3_column_type(st, 7) == SQLITE_NULL) {
      EXPECT_EQ(CellText(row[7]), "<null>");
    } else {
      EXPECT_TRUE(std::holds_alternative<task::DateTime>(row[7]));
    }
  }
  sqlite3_finalize(st);
  EXPECT_EQ(i, rows->size());
}

// A replica may hold a day that does not exist (SQLite keeps '2023-02-31' as
// written): the route refuses it as a bad value with its row, column and
// value, as the provider route does, before any writer sees it.
TEST_F(SqlTemplateSourceTest, ADayThatDoesNotExistIsABadCellOfItsRow) {
  Exec(
      "UPDATE orders SET order_date = '2023-02-31' WHERE id = "
      "(SELECT MIN(id) FROM orders WHERE tenant_id = 't1')");
  auto source = Make(Options());
  auto rows = Drain(*source);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kInvalidArgument);
  const std::string& message = rows.status().message();
  EXPECT_EQ(message.rfind("row 1", 0), 0u) << message;
  EXPECT_NE(message.find("order_date"), std::string::npos) << message;
  EXPECT_NE(message.find("\"2023-02-31\""), std::string::npos) << message;
}

TEST_F(SqlTemplateSourceTest, FiltersAndServerSideTenantWins) {
  // A user-supplied tenantId must not widen the query to another tenant.
  auto source = Make(Options({{"status", "PAID"}, {"tenantId", "t2"}}));
  auto rows = Drain(*source);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(static_cast<int64_t>(rows->size()),
            CountDirect({{"tenantId", "t1"}, {"status", "PAID"}}));
  for (const auto& r : *rows) {
    EXPECT_EQ(CellText(r[3]), "PAID");
    EXPECT_EQ(std::get<int64_t>(r[0]) % 2, 0);  // the seed gives t1 the even ids
  }
}

TEST_F(SqlTemplateSourceTest, DescendingOrderByIsHonoured) {
  scenario_->order_by = "id DESC";
  auto rows = Drain(*Make(Options()));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_GT(std::get<int64_t>(rows->front()[0]), std::get<int64_t>(rows->back()[0]));
}

TEST_F(SqlTemplateSourceTest, OrderByOutsideTheResultIsRejected) {
  scenario_->order_by = "tenant_id";
  auto page = Make(Options())->NextPage();
  EXPECT_EQ(page.status().code(), StatusCode::kInvalidArgument) << page.status().ToString();
}

TEST_F(SqlTemplateSourceTest, VersionBumpedSinceCreateIsStale) {
  scenario_->version = 2;
  auto source = Make(Options());
  auto page = source->NextPage();
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(source->facts().terminal_state, task::TaskState::kStale);
}

// The derived count waits here for the list count to arrive: run one after
// the other, it would wait in vain (docs/sql-template-route.md#consistency-checks).
TEST_F(SqlTemplateSourceTest, PreflightCountsRunAtOnce) {
  std::atomic<bool> first_count{true};
  std::atomic<bool> list_count_arrived_during_ours{false};
  recorder_->before_query = [&](std::string_view sql) {
    if (sql.find("COUNT(*)") == std::string_view::npos || !first_count.exchange(false)) return;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (scenario_->count_calls == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    list_count_arrived_during_ours = scenario_->count_calls > 0;
  };
  auto rows = Drain(*Make(Options()));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->size(), static_cast<size_t>(kOrders / 2));
  EXPECT_TRUE(list_count_arrived_during_ours);
  EXPECT_EQ(scenario_->count_calls, 1);
}

TEST_F(SqlTemplateSourceTest, CountMismatchStrictIsInconsistentLenientContinues) {
  scenario_->count_delta = 1;
  auto strict = Make(Options());
  EXPECT_FALSE(strict->NextPage().ok());
  EXPECT_EQ(strict->facts().terminal_state, task::TaskState::kInconsistent);

  auto o = Options();
  o.strict = false;
  auto lenient = Make(o);
  auto rows = Drain(*lenient);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->size(), static_cast<size_t>(kOrders / 2));

  // Replica lag: the first list count is off, the re-check agrees — strict
  // mode exports everything.
  scenario_->count_calls = 0;
  scenario_->delta_calls = 1;
  auto cleared = Make(Options());
  auto all = Drain(*cleared);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->size(), static_cast<size_t>(kOrders / 2));
  EXPECT_FALSE(cleared->facts().terminal_state.has_value());
  EXPECT_GE(scenario_->count_calls.load(), 2) << "the count was checked again";
}

TEST_F(SqlTemplateSourceTest, RowInsertedMidExportStrictIsInconsistent) {
  auto source = Make(Options());
  auto rows = Drain(*source, [this](int page_no) {
    if (page_no == 1) {
      Exec(
          "INSERT INTO orders VALUES (100000, 't1', 'SO-NEW', 'C001', 'NEW', 1.00, 0, "
          "'2024-01-01', NULL)");
    }
  });
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(source->facts().terminal_state, task::TaskState::kInconsistent);
  EXPECT_NE(rows.status().message().find("changed during the export"), std::string::npos);
}

// A row added behind the last page's key: the seek never sees it and the
// exported total matches, but counting again after the last page tells.
TEST_F(SqlTemplateSourceTest, RowInsertedBehindTheKeyMidExportStrictIsInconsistent) {
  auto source = Make(Options());
  auto rows = Drain(*source, [this](int page_no) {
    if (page_no == 1) {
      Exec(
          "INSERT INTO orders VALUES (0, 't1', 'SO-BEHIND', 'C001', 'NEW', 1.00, 0, "
          "'2024-01-01', NULL)");
    }
  });
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(source->facts().terminal_state, task::TaskState::kInconsistent);
  EXPECT_NE(rows.status().message().find("before the export"), std::string::npos)
      << rows.status().ToString();
}

size_t DerivedCounts(const std::vector<std::string>& queries) {
  return static_cast<size_t>(std::count_if(queries.begin(), queries.end(), [](const auto& q) {
    return q.find("COUNT(*)") != std::string::npos;
  }));
}

// Nothing committed between the first count and the last page: the count
// after it would walk the same rows again, so it is not run. A commit in
// between — even one no exported row shows — and it is.
TEST_F(SqlTemplateSourceTest, FinalCountRunsOnlyWhenSomethingWasCommitted) {
  auto quiet = Drain(*Make(Options()));
  ASSERT_TRUE(quiet.ok()) << quiet.status().ToString();
  EXPECT_EQ(DerivedCounts(recorder_->queries()), 1u) << "only the pre-flight count";

  const size_t before = recorder_->queries().size();
  auto source = Make(Options());
  auto busy = Drain(*source, [this](int page_no) {
    if (page_no == 1)
      Exec(
          "UPDATE customer_names SET customer_name = customer_name || '!' WHERE customer_code = "
          "'C000'");
  });
  ASSERT_TRUE(busy.ok()) << busy.status().ToString();
  EXPECT_EQ(busy->size(), static_cast<size_t>(kOrders / 2));
  EXPECT_FALSE(source->facts().terminal_state.has_value());
  const auto all = recorder_->queries();
  EXPECT_EQ(DerivedCounts({all.begin() + static_cast<std::ptrdiff_t>(before), all.end()}), 2u)
      << "counted again after the last page";
}

// SQLite's watch (PRAGMA data_version on a connection of its own) sees what
// another connection commits to the file, and nothing else.
TEST_F(SqlTemplateSourceTest, SqliteCommitWatchSeesCommitsOfOtherConnections) {
  auto watch = datasource_->WatchCommits("");
  ASSERT_NE(watch, nullptr);
  ASSERT_TRUE(datasource_->Query("SELECT COUNT(*) FROM orders", {}, "").ok());
  EXPECT_TRUE(watch->NothingCommitted()) << "reads commit nothing";
  Exec("BEGIN; UPDATE orders SET status = 'GONE' WHERE id = 1; ROLLBACK;");
  EXPECT_TRUE(watch->NothingCommitted()) << "a rolled-back write commits nothing";
  Exec("UPDATE orders SET status = 'CHANGED' WHERE id = 1");
  EXPECT_FALSE(watch->NothingCommitted());
  EXPECT_FALSE(watch->NothingCommitted()) << "and stays so";
  EXPECT_EQ(datasource_->WatchCommits("other_schema"), nullptr);
}

TEST_F(SqlTemplateSourceTest, MaxRowsIsEnforcedBeforeTheFirstPage) {
  auto o = Options();
  o.max_rows = 10;
  auto page = Make(o)->NextPage();
  EXPECT_EQ(page.status().code(), StatusCode::kLimitExceeded);
}

TEST_F(SqlTemplateSourceTest, ContractErrorsAreClassified) {
  EXPECT_EQ(Make(Options(), "wrong-token")->NextPage().status().code(),
            StatusCode::kPermissionDenied);
  auto o = Options();
  o.registered_query_ids.insert("NOPE");
  o.query_id = "NOPE";
  EXPECT_EQ(Make(o, kToken, "NOPE")->NextPage().status().code(), StatusCode::kNotFound);
  scenario_->tweak = [](sdk::SqlTemplateResult*) { throw std::runtime_error("db down"); };
  EXPECT_EQ(Make(Options())->NextPage().status().code(), StatusCode::kUnavailable);
}

TEST_F(SqlTemplateSourceTest, DisabledQueryIdIsRejected) {
  auto o = Options();
  o.registered_query_ids.clear();
  auto page = Make(o)->NextPage();
  EXPECT_EQ(page.status().code(), StatusCode::kPermissionDenied) << page.status().ToString();
  EXPECT_NE(page.status().message().find("ORDER_LIST"), std::string::npos);
}

// docs/task-lifecycle.md#when-definition-values-take-effect: disabling a type
// stops new tasks, not the ones already queued.
TEST_F(SqlTemplateSourceTest, QueuedTaskOfADisabledTypeStillRuns) {
  registry::RegistrySnapshot snapshot;
  registry::ExportDefinition def;
  def.name = "ORDER_LIST";
  def.source = registry::SourceKind::kSqlTemplate;
  def.query_id = "ORDER_LIST";
  def.enabled = false;
  snapshot.definitions[def.name] = def;
  registry::ExportDefinition provider_def;
  provider_def.name = "OTHER";
  provider_def.query_id = "NOT_SQL";
  snapshot.definitions[provider_def.name] = provider_def;
  EXPECT_EQ(RegisteredQueryIds(snapshot), std::set<std::string>{"ORDER_LIST"});
  auto o = Options();
  o.registered_query_ids = RegisteredQueryIds(snapshot);
  auto rows = Drain(*Make(o));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->size(), static_cast<size_t>(kOrders / 2));
}

// docs/task-lifecycle.md#stale-and-inconsistent: no version recorded at
// create → pinned before the first page, so STALE is never skipped.
TEST_F(SqlTemplateSourceTest, UnrecordedContractVersionIsPinnedBeforeTheFirstPage) {
  auto o = Options();
  o.contract_version.reset();
  std::vector<std::string> pinned;
  o.pin_contract_version = [&](const std::string& version) -> StatusOr<std::string> {
    pinned.push_back(version);
    return version;
  };
  auto first = Make(o);
  auto page = first->NextPage();
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(pinned, std::vector<std::string>{"1"});

  // Another attempt pinned "1" already; the contract is at 2 now.
  scenario_->version = 2;
  o.pin_contract_version = [](const std::string&) -> StatusOr<std::string> {
    return std::string("1");
  };
  auto later = Make(o);
  EXPECT_FALSE(later->NextPage().ok());
  EXPECT_EQ(later->facts().terminal_state, task::TaskState::kStale);

  // Nowhere to pin: refused, not skipped.
  o.pin_contract_version = nullptr;
  auto unpinnable = Make(o);
  EXPECT_EQ(unpinnable->NextPage().status().code(), StatusCode::kInternal);
}

TEST_F(SqlTemplateSourceTest, UnsafeTemplateIsRejected) {
  scenario_->tweak = [](sdk::SqlTemplateResult* r) {
    r->sql_template = "SELECT id FROM orders WHERE tenant_id = #{tenantId} FOR UPDATE";
  };
  auto page = Make(Options())->NextPage();
  EXPECT_EQ(page.status().code(), StatusCode::kInvalidArgument) << page.status().ToString();
}

// Adds an enriched column `customer_name` keyed by customer_code.
void AddEnrichedColumn(sdk::SqlTemplateResult* r, bool critical, bool key_on_code) {
  for (auto& c : r->columns)
    c.key_column = key_on_code ? c.column.key == "customer_code" : c.key_column;
  r->columns.push_back(
      {{"customer_name", "客户名", sdk::ColumnType::kString}, true, false, critical});
  r->need_enrich = true;
}

TEST_F(SqlTemplateSourceTest, CallbackEnrichmentAlignsByIndex) {
  scenario_->tweak = [](sdk::SqlTemplateResult* r) { AddEnrichedColumn(r, false, true); };
  std::mutex mu;
  std::vector<std::string> asked;
  scenario_->enrich = [&](const sdk::SqlEnrichRequest& req) -> sdk::Result<std::vector<json>> {
    std::vector<json> out;
    std::lock_guard lock(mu);
    for (const auto& k : req.keys) {
      asked.push_back(k.get<std::string>());
      out.push_back({{"customer_name", "name of " + k.get<std::string>()}});
    }
    return out;
  };
  auto source = Make(Options());
  auto rows = Drain(*source);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  for (const auto& r : *rows) EXPECT_EQ(CellText(r[8]), "name of " + CellText(r[2]));
  // The seven pages repeat the 25 customer codes of tenant t1: one call
  // with each key once, the later pages answered from the attempt's cache.
  EXPECT_EQ(scenario_->enrich_calls.load(), 1);
  std::set<std::string> distinct(asked.begin(), asked.end());
  EXPECT_EQ(asked.size(), 25u);
  EXPECT_EQ(distinct.size(), asked.size());
}

// Keys that never repeat (one per row): after five pages the attempt stops
// keeping answers across pages, and every row is still enriched right.
TEST_F(SqlTemplateSourceTest, CallbackEnrichmentWithKeysThatNeverRepeat) {
  scenario_->tweak = [](sdk::SqlTemplateResult* r) {
    AddEnrichedColumn(r, false, false);
    for (auto& c : r->columns) c.key_column = c.column.key == "order_no";
  };
  std::atomic<int> keys{0};
  scenario_->enrich = [&](const sdk::SqlEnrichRequest& req) -> sdk::Result<std::vector<json>> {
    std::vector<json> out;
    keys += static_cast<int>(req.keys.size());
    for (const auto& k : req.keys)
      out.push_back({{"customer_name", "for " + k.get<std::string>()}});
    return out;
  };
  auto rows = Drain(*Make(Options()));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), static_cast<size_t>(kOrders / 2));
  for (const auto& r : *rows) EXPECT_EQ(CellText(r[8]), "for " + CellText(r[1]));
  EXPECT_EQ(keys.load(), kOrders / 2) << "each key asked once";
  EXPECT_EQ(scenario_->enrich_calls.load(), (kOrders / 2 + 99) / 100) << "one call per page";
}

TEST_F(SqlTemplateSourceTest, CallbackLengthMismatchBlanksNonCriticalAndFailsCritical) {
  auto short_answer = [](const sdk::SqlEnrichRequest& req) -> sdk::Result<std::vector<json>> {
    return std::vector<json>(req.keys.size() - 1, json{{"customer_name", "x"}});
  };
  scenario_->enrich = short_answer;
  scenario_->tweak = [](sdk::SqlTemplateResult* r) { AddEnrichedColumn(r, false, true); };
  auto rows = Drain(*Make(Options()));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  for (const auto& r : *rows) EXPECT_EQ(CellText(r[8]), "<null>");

  scenario_->tweak = [](sdk::SqlTemplateResult* r) { AddEnrichedColumn(r, true, true); };
  auto critical = Drain(*Make(Options()));
  ASSERT_FALSE(critical.ok());
  EXPECT_EQ(critical.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(critical.status().message().find("critical column customer_name"), std::string::npos);
}

TEST_F(SqlTemplateSourceTest, SqlEnrichmentJoinsByKey) {
  scenario_->tweak = [](sdk::SqlTemplateResult* r) {
    AddEnrichedColumn(r, false, false);
    r->need_enrich = false;
    r->enrich_sqls = {{"names",
                       "customer_code",
                       "<script>SELECT customer_code, customer_name FROM customer_names WHERE "
                       "customer_code IN <foreach collection=\"keys\" item=\"k\" open=\"(\" "
                       "separator=\",\" close=\")\">#{k}</foreach></script>",
                       {"customer_name"}}};
  };
  scenario_->enrich = [](const sdk::SqlEnrichRequest&) -> sdk::Result<std::vector<json>> {
    return sdk::ProviderError{500, "callback must not be used in SQL mode"};
  };
  auto rows = Drain(*Make(Options()));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  int named = 0;
  for (const auto& r : *rows) {
    int code = std::stoi(CellText(r[2]).substr(1));
    if (code % 2 == 0) {
      EXPECT_EQ(CellText(r[8]), "Customer " + std::to_string(code));
      ++named;
    } else {
      EXPECT_EQ(CellText(r[8]), "<null>");  // no match: blank, like a LEFT JOIN
    }
  }
  EXPECT_GT(named, 0);
  EXPECT_EQ(scenario_->enrich_calls.load(), 0);
  // Every page repeats the first page's keys: the enrich SQL ran once.
  auto queries = recorder_->queries();
  EXPECT_EQ(std::count_if(
                queries.begin(), queries.end(),
                [](const std::string& q) { return q.find("customer_names") != std::string::npos; }),
            1);
}

// An enrich SQL keyed by order_no — every row its own key — that names
// the orders whose id is not a multiple of 7.
void EnrichEveryOrderNo(sdk::SqlTemplateResult* r) {
  AddEnrichedColumn(r, false, false);
  r->need_enrich = false;
  r->enrich_sqls = {{"names",
                     "order_no",
                     "<script>SELECT order_no, 'N-' || order_no AS customer_name FROM orders "
                     "WHERE id % 7 &lt;&gt; 0 AND order_no IN <foreach collection=\"keys\" "
                     "item=\"k\" open=\"(\" separator=\",\" close=\")\">#{k}</foreach>"
                     "</script>",
                     {"customer_name"}}};
}

bool IsEveryOrderNoLookup(std::string_view sql) { return sql.find("'N-'") != sql.npos; }

size_t OrderNoLookups(const RecordingDatasource& recorder) {
  auto queries = recorder.queries();
  return std::count_if(queries.begin(), queries.end(), IsEveryOrderNoLookup);
}

void ExpectEveryOrderNamedOrBlank(const std::vector<task::Row>& rows) {
  ASSERT_EQ(rows.size(), static_cast<size_t>(kOrders / 2));
  for (const auto& r : rows) {
    const int64_t id = std::get<int64_t>(r[0]);
    EXPECT_EQ(CellText(r[8]), id % 7 != 0 ? "N-" + CellText(r[1]) : "<null>") << "id " << id;
  }
}

// docs/sql-template-route.md#plan-advice: orders has no index but its
// primary key, so the page statement scans it for the tenant and the
// enrich SQL scans it for the order numbers: advice for both, found before
// the first page's lookups, each statement planned once per attempt. With
// the indexes the advice names, none — and the rows are the same.
TEST_F(SqlTemplateSourceTest, PlanAdviceNamesTheIndexesThePagesAndLookupsMiss) {
  scenario_->tweak = EnrichEveryOrderNo;
  auto source = Make(Options());
  auto first = source->NextPage();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  // Both with the first page (its facts), and the same read back.
  ASSERT_TRUE(first->facts.has_value());
  auto advice = first->facts->plan_advice;
  EXPECT_EQ(source->facts().plan_advice.size(), 2u);
  ASSERT_EQ(advice.size(), 2u);
  EXPECT_EQ(advice[0].statement, "page");
  EXPECT_EQ(advice[0].table, "orders");
  EXPECT_EQ(advice[0].index_columns, (std::vector<std::string>{"tenant_id"}));
  EXPECT_EQ(advice[1].statement, "enrich group names");
  EXPECT_EQ(advice[1].table, "orders");
  EXPECT_EQ(advice[1].index_columns, (std::vector<std::string>{"order_no"}));
  EXPECT_NE(advice[1].predicate.find("\"order_no\" IN (…)"), std::string::npos)
      << advice[1].predicate;
  auto rest = Drain(*source);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(recorder_->explains().size(), 2u);  // one per statement, not one per page

  Exec(
      "CREATE INDEX orders_tenant ON orders (tenant_id); CREATE INDEX orders_no ON orders "
      "(order_no)");
  auto indexed = Make(Options());
  auto rows = Drain(*indexed);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_TRUE(indexed->facts().plan_advice.empty());
  ExpectEveryOrderNamedOrBlank(*rows);
}

// An EXCEL_TEMPLATE contract's template comes with the first page (the
// writer opens with it then) and with no later page; a METADATA contract
// supplies none.
TEST_F(SqlTemplateSourceTest, TheContractsTemplateComesWithTheFirstPage) {
  scenario_->tweak = [](sdk::SqlTemplateResult* r) {
    r->template_type = "EXCEL_TEMPLATE";
    r->excel_template = "PK template bytes";
  };
  auto source = Make(Options());
  auto first = source->NextPage();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(first->has_more);
  ASSERT_TRUE(first->facts.has_value());
  ASSERT_NE(first->facts->excel_template, nullptr);
  EXPECT_EQ(*first->facts->excel_template, "PK template bytes");
  EXPECT_FALSE(first->facts->DecidesFailure());
  auto second = source->NextPage();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_FALSE(second->facts.has_value());
  ASSERT_NE(source->facts().excel_template, nullptr);

  scenario_->tweak = nullptr;
  auto plain = Make(Options())->NextPage();
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  ASSERT_TRUE(plain->facts.has_value());
  EXPECT_EQ(plain->facts->excel_template, nullptr);
}

// A datasource whose plans fail: the export runs as without advice.
TEST_F(SqlTemplateSourceTest, AFailingPlanNeverStopsTheExport) {
  scenario_->tweak = EnrichEveryOrderNo;
  class NoPlans : public RecordingDatasource {
   public:
    using RecordingDatasource::RecordingDatasource;
    StatusOr<QueryPlan> Explain(std::string_view, const std::vector<json>&, std::string_view,
                                int) override {
      return DeadlineExceeded("planning ran past its deadline");
    }
  };
  datasource_ = std::make_shared<NoPlans>(NewSqliteDatasource(path_));
  auto source = Make(Options());
  auto rows = Drain(*source);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ExpectEveryOrderNamedOrBlank(*rows);
  EXPECT_TRUE(source->facts().plan_advice.empty());
}

// Holds every EnrichEveryOrderNo lookup until Release(): another export's
// lookup in flight.
class HeldLookupDatasource : public ReadOnlyDatasource {
 public:
  explicit HeldLookupDatasource(std::shared_ptr<ReadOnlyDatasource> inner)
      : inner_(std::move(inner)) {}
  std::string_view kind() const override { return inner_->kind(); }
  StatusOr<ResultSet> Query(std::string_view sql, const std::vector<json>& params,
                            std::string_view schema) override {
    if (IsEveryOrderNoLookup(sql)) {
      std::unique_lock lock(mu_);
      held_ = true;
      cv_.notify_all();
      cv_.wait(lock, [&] { return released_; });
    }
    return inner_->Query(sql, params, schema);
  }
  StatusOr<QueryDescription> Describe(std::string_view sql, const std::vector<json>& params,
                                      std::string_view schema) override {
    return inner_->Describe(sql, params, schema);
  }
  OrderingTraits ordering() const override { return inner_->ordering(); }
  void WaitUntilHeld() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return held_; });
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::shared_ptr<ReadOnlyDatasource> inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false;
  bool released_ = false;
};

// A page of many keys asks them in two statements at once (two halves);
// every row still gets its own key's value, and a key either half misses
// stays blank.
TEST_F(SqlTemplateSourceTest, SqlEnrichmentOfManyKeysAsksTwoHalvesAndMissesNothing) {
  scenario_->tweak = EnrichEveryOrderNo;
  SqlTemplateSourceOptions options = Options();
  options.batch_size = 250;  // 250 keys a page
  auto rows = Drain(*Make(options));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ExpectEveryOrderNamedOrBlank(*rows);
  // 617 rows: pages of 250, 250 (two halves each) and 117 keys (one statement).
  EXPECT_EQ(OrderNoLookups(*recorder_), 2u + 2u + 1u);
}

// While another export's lookup runs, the cores are taken: a page asks its
// keys in one statement, and still misses nothing.
TEST_F(SqlTemplateSourceTest, SqlEnrichmentAsksInOneStatementWhileAnotherLookupRuns) {
  scenario_->tweak = EnrichEveryOrderNo;
  SqlTemplateSourceOptions options = Options();
  options.batch_size = 250;
  auto held = std::make_shared<HeldLookupDatasource>(NewSqliteDatasource(path_));
  datasource_ = held;
  std::unique_ptr<RowSource> other = Make(options);
  datasource_ = recorder_;
  StatusOr<std::vector<task::Row>> other_rows = Internal("not run");
  std::thread other_export([&] { other_rows = Drain(*other); });
  held->WaitUntilHeld();
  auto rows = Drain(*Make(options));
  held->Release();
  other_export.join();
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ExpectEveryOrderNamedOrBlank(*rows);
  EXPECT_EQ(OrderNoLookups(*recorder_), 3u);  // one statement a page
  ASSERT_TRUE(other_rows.ok()) << other_rows.status().ToString();
  ExpectEveryOrderNamedOrBlank(*other_rows);
}

TEST_F(SqlTemplateSourceTest, SqlEnrichmentFailuresPerCriticality) {
  auto broken = [](bool critical) {
    return [critical](sdk::SqlTemplateResult* r) {
      AddEnrichedColumn(r, critical, false);
      r->enrich_sqls = {{"names",
                         "customer_code",
                         "SELECT customer_code, nope FROM customer_names",
                         {"customer_name"}}};
    };
  };
  scenario_->tweak = broken(false);
  auto rows = Drain(*Make(Options()));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  for (const auto& r : *rows) EXPECT_EQ(CellText(r[8]), "<null>");
  scenario_->tweak = broken(true);
  EXPECT_FALSE(Drain(*Make(Options())).ok());
}

TEST_F(SqlTemplateSourceTest, EnrichedColumnNoGroupCoversIsAConfigurationError) {
  scenario_->tweak = [](sdk::SqlTemplateResult* r) {
    AddEnrichedColumn(r, false, false);
    r->columns.push_back({{"region", "区域", sdk::ColumnType::kString}, true, false, false});
    r->enrich_sqls = {{"names",
                       "customer_code",
                       "SELECT customer_code, customer_name FROM customer_names",
                       {"customer_name"}}};
  };
  auto page = Make(Options())->NextPage();
  ASSERT_FALSE(page.ok());
  EXPECT_NE(page.status().message().find("region is covered by no enrichSqls group"),
            std::string::npos)
      << page.status().ToString();
}

// ---- what ${} may read (docs/sql-template.md#what--may-read) ---------------

std::vector<registry::ParameterSpec> OrderParameterSpecs() {
  registry::ParameterSpec status{"status", "STRING", "状态", false, {"NEW", "PAID"}};
  registry::ParameterSpec keyword{"keyword", "STRING", "关键字", false, {}};
  registry::ParameterSpec min_id{"minId", "INTEGER", "最小ID", false, {}};
  return {status, keyword, min_id};
}

// The classic legacy list query: a user's keyword spliced into LIKE.
void SpliceKeyword(sdk::SqlTemplateResult* r) {
  r->sql_template = R"(<script>
SELECT id, order_no, customer_code, status, amount, paid, order_date, created_at FROM orders
<where>
  tenant_id = #{tenantId}
  <if test="keyword != null">AND order_no LIKE '%${keyword}%'</if>
</where>
</script>)";
}

TEST_F(SqlTemplateSourceTest, DollarOverAFreeTextParameterFailsPermanentlyBeforeAnySql) {
  scenario_->tweak = SpliceKeyword;
  auto o = Options({{"keyword",
                     "x' UNION SELECT id, order_no, customer_code, status, amount, "
                     "paid, order_date, created_at FROM orders WHERE '1' LIKE '1"}});
  o.parameter_specs = OrderParameterSpecs();
  auto source = Make(o);
  auto page = source->NextPage();
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(page.status().IsTransient());
  EXPECT_EQ(source->facts().failure_code, std::optional<std::string>(kUnsafeTemplateCode));
  EXPECT_EQ(source->facts().terminal_state, std::nullopt);
  EXPECT_NE(page.status().message().find("${keyword}"), std::string::npos)
      << page.status().ToString();
  EXPECT_EQ(page.status().message().find("UNION"), std::string::npos) << "no user text echoed";
  EXPECT_TRUE(recorder_->queries().empty()) << "the datasource saw: " << recorder_->queries()[0];

  // Leaving the keyword empty does not make the contract usable.
  auto o2 = Options();
  o2.parameter_specs = OrderParameterSpecs();
  auto unfilled = Make(o2);
  EXPECT_FALSE(unfilled->NextPage().ok());
  EXPECT_EQ(unfilled->facts().failure_code, std::optional<std::string>(kUnsafeTemplateCode));
  EXPECT_TRUE(recorder_->queries().empty());
}

TEST_F(SqlTemplateSourceTest, DollarOverAnAllowedListParameterExports) {
  scenario_->tweak = [](sdk::SqlTemplateResult* r) {
    r->sql_template = R"(<script>
SELECT id, order_no, customer_code, status, amount, paid, order_date, created_at FROM orders
<where>
  tenant_id = #{tenantId}
  <if test="status != null">AND status = '${status}'</if>
  <if test="minId != null">AND id &gt;= ${minId}</if>
  <if test="keyword != null">AND order_no LIKE #{keyword}</if>
</where>
</script>)";
  };
  scenario_->support_count = false;  // CountDirect knows no minId; the rows are counted here
  auto o = Options({{"status", "PAID"}, {"minId", 100}, {"keyword", "SO%"}});
  o.parameter_specs = OrderParameterSpecs();
  auto source = Make(o);
  auto rows = Drain(*source);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(source->facts().failure_code, std::nullopt);
  ASSERT_FALSE(recorder_->queries().empty());
  const std::string first = recorder_->queries()[0];
  EXPECT_NE(first.find("status = 'PAID'"), std::string::npos) << first;
  EXPECT_NE(first.find("id >= 100"), std::string::npos) << first;
  int64_t want = 0;
  for (int i = 100; i <= kOrders; ++i) want += (i % 2 == 0 && i % 3 == 0) ? 1 : 0;
  EXPECT_EQ(static_cast<int64_t>(rows->size()), want);
  for (const auto& r : *rows) EXPECT_EQ(CellText(r[3]), "PAID");
}

// docs/sql-template-route.md#declared-parameters: the service's paramSchema
// against the definition's parameters, at the contract call, before any SQL.
json DeclaredParameters(std::vector<std::pair<std::string, std::string>> name_type) {
  json list = json::array();
  for (const auto& [name, type] : name_type) list.push_back({{"name", name}, {"type", type}});
  return {{"parameters", list}};
}

TEST_F(SqlTemplateSourceTest, DeclaredParametersThatAgreeOrThatTheDefinitionLacksExport) {
  // A parameter the definition lacks is advice: a service may ship a new
  // optional parameter before the center's definition names it; nobody can
  // give it, so it reads as absent.
  for (const json& schema :
       {DeclaredParameters({{"status", "STRING"}, {"minId", "INTEGER"}}),
        DeclaredParameters({{"status", "STRING"}, {"orderNoPrefix", "STRING"}})}) {
    scenario_->tweak = [schema](sdk::SqlTemplateResult* r) { r->param_schema = schema; };
    auto o = Options({{"status", "PAID"}});
    o.parameter_specs = OrderParameterSpecs();
    auto rows = Drain(*Make(o));
    ASSERT_TRUE(rows.ok()) << schema.dump() << ": " << rows.status().ToString();
    EXPECT_FALSE(rows->empty()) << schema.dump();
  }
}

TEST_F(SqlTemplateSourceTest, ParameterTypesThatDisagreeFailTheContractCallBeforeAnySql) {
  scenario_->tweak = [](sdk::SqlTemplateResult* r) {
    r->param_schema = DeclaredParameters({{"minId", "STRING"}, {"keyword", "string"}});
  };
  auto o = Options();
  o.parameter_specs = OrderParameterSpecs();
  auto page = Make(o)->NextPage();
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(page.status().IsTransient());
  EXPECT_TRUE(recorder_->queries().empty()) << "the datasource saw: " << recorder_->queries()[0];
  EXPECT_EQ(page.status().message(),
            "contract paramSchema disagrees with the definition's parameters: parameter minId is "
            "STRING to the service but INTEGER in the definition");
}

TEST_F(SqlTemplateSourceTest, MalformedParamSchemaIsAContractError) {
  scenario_->tweak = [](sdk::SqlTemplateResult* r) {
    r->param_schema = {{"parameters", json::array({{{"type", "DATE"}}})}};
  };
  auto page = Make(Options())->NextPage();
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(page.status().message(), "contract: paramSchema.parameters[0] has no name");
}

TEST_F(SqlTemplateSourceTest, NumberTypedAsTextIsNotANumber) {
  // INTEGER parameters may arrive as digit strings; only a JSON number is
  // trusted in ${}.
  scenario_->tweak = [](sdk::SqlTemplateResult* r) {
    r->sql_template =
        "SELECT id, order_no, customer_code, status, amount, paid, order_date, created_at "
        "FROM orders WHERE tenant_id = #{tenantId} AND id >= ${minId}";
  };
  auto o = Options({{"minId", "100"}});
  o.parameter_specs = OrderParameterSpecs();
  auto source = Make(o);
  EXPECT_FALSE(source->NextPage().ok());
  EXPECT_EQ(source->facts().failure_code, std::optional<std::string>(kUnsafeTemplateCode));
  EXPECT_TRUE(recorder_->queries().empty());
}

TEST_F(SqlTemplateSourceTest, EnrichSqlMayNotSpliceThePageKeys) {
  // Key values are business data that users typed elsewhere.
  scenario_->tweak = [](sdk::SqlTemplateResult* r) {
    AddEnrichedColumn(r, false, false);
    r->need_enrich = false;
    r->enrich_sqls = {{"names",
                       "customer_code",
                       "<script>SELECT customer_code, customer_name FROM customer_names WHERE "
                       "customer_code IN <foreach collection=\"keys\" item=\"k\" open=\"(\" "
                       "separator=\",\" close=\")\">'${k}'</foreach></script>",
                       {"customer_name"}}};
  };
  auto source = Make(Options());
  auto page = source->NextPage();
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(source->facts().failure_code, std::optional<std::string>(kUnsafeTemplateCode));
  EXPECT_NE(page.status().message().find("enrich group names"), std::string::npos)
      << page.status().ToString();
  EXPECT_NE(page.status().message().find("${k}"), std::string::npos) << page.status().ToString();
  EXPECT_TRUE(recorder_->queries().empty());
}

// The page statements a recorder saw (the counts have no LIMIT).
size_t PageStatements(const RecordingDatasource& recorder) {
  size_t n = 0;
  for (const auto& q : recorder.queries()) n += q.find("LIMIT") != std::string::npos;
  return n;
}

// The next page's statement runs while the current page is enriched, and
// the rows still come whole and in order.
TEST_F(SqlTemplateSourceTest, NextPageStatementRunsWhileThePageIsEnriched) {
  scenario_->tweak = [](sdk::SqlTemplateResult* r) {
    AddEnrichedColumn(r, false, false);
    for (auto& c : r->columns) c.key_column = c.column.key == "order_no";
  };
  std::atomic<bool> overlapped{false};
  scenario_->enrich = [&](const sdk::SqlEnrichRequest& req) -> sdk::Result<std::vector<json>> {
    // Page 1: is page 2 being read meanwhile? Asked for 2 s, well inside the
    // client's 5 s timeout, so that a source without the read-ahead fails here.
    if (scenario_->enrich_calls.load() == 1) {
      for (int i = 0; i < 2000 && !overlapped; ++i) {
        overlapped = PageStatements(*recorder_) >= 2;
        if (!overlapped) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    std::vector<json> out;
    for (const auto& k : req.keys)
      out.push_back({{"customer_name", "for " + k.get<std::string>()}});
    return out;
  };
  auto rows = Drain(*Make(Options()));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_TRUE(overlapped.load()) << "page 2's statement waited for page 1's enrichment";
  ASSERT_EQ(rows->size(), static_cast<size_t>(kOrders / 2));
  for (size_t i = 0; i < rows->size(); ++i) {
    EXPECT_EQ(std::get<int64_t>((*rows)[i][0]), static_cast<int64_t>(2 * (i + 1)));
    EXPECT_EQ(CellText((*rows)[i][8]), "for " + CellText((*rows)[i][1]));
  }
}

// The next page's lookup runs before the caller asks for that page: while
// page 1 is converted and written, page 2's keys are already being looked
// up — and the cells still land on their own rows.
TEST_F(SqlTemplateSourceTest, NextPageIsLookedUpBeforeItIsAskedFor) {
  scenario_->tweak = [](sdk::SqlTemplateResult* r) {
    AddEnrichedColumn(r, false, false);
    for (auto& c : r->columns) c.key_column = c.column.key == "order_no";
  };
  scenario_->enrich = [](const sdk::SqlEnrichRequest& req) -> sdk::Result<std::vector<json>> {
    std::vector<json> out;
    for (const auto& k : req.keys)
      out.push_back({{"customer_name", "for " + k.get<std::string>()}});
    return out;
  };
  auto source = Make(Options());
  auto first = source->NextPage();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(first->has_more);
  for (int i = 0; i < 2000 && scenario_->enrich_calls.load() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GE(scenario_->enrich_calls.load(), 2) << "page 2's lookup waited for NextPage";
  auto rest = Drain(*source);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  std::vector<task::Row> rows = std::move(first->rows);
  for (auto& row : *rest) rows.push_back(std::move(row));
  ASSERT_EQ(rows.size(), static_cast<size_t>(kOrders / 2));
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(std::get<int64_t>(rows[i][0]), static_cast<int64_t>(2 * (i + 1)));
    EXPECT_EQ(CellText(rows[i][8]), "for " + CellText(rows[i][1]));
  }
}

// A caller that stops between pages (cancel, lease lost, size cap) leaves
// at most the page statement and the lookup already started, and nothing
// runs after the source is gone.
TEST_F(SqlTemplateSourceTest, StoppingBetweenPagesRunsAtMostTwoPagesAhead) {
  {
    auto source = Make(Options());
    for (int i = 0; i < 2; ++i) {
      auto page = source->NextPage();
      ASSERT_TRUE(page.ok()) << page.status().ToString();
      ASSERT_TRUE(page->has_more);
    }
  }
  const size_t ran = PageStatements(*recorder_);
  EXPECT_GE(ran, 2u);
  EXPECT_LE(ran, 4u) << "pages 1 and 2, and at most pages 3 (its lookup) and 4 read ahead";
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(PageStatements(*recorder_), ran);
}

// The page read ahead must not hide an error: a failing enrichment of page
// 1 fails the attempt, whatever page 2 brought.
TEST_F(SqlTemplateSourceTest, ErrorOfAPageIsNotHiddenByTheOneReadAhead) {
  scenario_->tweak = [](sdk::SqlTemplateResult* r) {
    AddEnrichedColumn(r, true, false);
    for (auto& c : r->columns) c.key_column = c.column.key == "order_no";
  };
  scenario_->enrich = [](const sdk::SqlEnrichRequest&) -> sdk::Result<std::vector<json>> {
    return std::vector<json>{};  // a short answer: a critical column fails
  };
  auto source = Make(Options());
  auto page = source->NextPage();
  ASSERT_FALSE(page.ok());
  EXPECT_NE(page.status().message().find("critical"), std::string::npos)
      << page.status().ToString();
}

TEST(ParseDatabaseValueTest, TypesSurviveFromText) {
  using task::ColumnType;
  auto parse = [](ColumnType type, const char* text, int scale = 2) {
    task::Column c;
    c.key = "c";
    c.type = type;
    c.scale = scale;
    auto v = ParseDatabaseValue(c, std::string(text), "Asia/Shanghai");
    return v.ok() ? CellText(*v) : "error";
  };
  EXPECT_EQ(parse(ColumnType::kDecimal, "68141.1"), "68141.10");
  EXPECT_EQ(parse(ColumnType::kDecimal, "-0.005"), "-0.01");
  EXPECT_EQ(parse(ColumnType::kInteger, "9007199254740993"), "9007199254740993");
  EXPECT_EQ(parse(ColumnType::kInteger, "12.00"), "12");
  EXPECT_EQ(parse(ColumnType::kInteger, "12.5"), "error");
  EXPECT_EQ(parse(ColumnType::kBoolean, "t"), "true");
  EXPECT_EQ(parse(ColumnType::kBoolean, "0"), "false");
  EXPECT_EQ(parse(ColumnType::kDate, "2024-02-29"), "2024-02-29");
  EXPECT_EQ(parse(ColumnType::kDate, "2024-02-29 00:00:00"), "2024-02-29");
  // Naive timestamps are read in the export's zone (UTC+8); offsets are exact.
  EXPECT_EQ(parse(ColumnType::kDateTime, "1970-01-01 08:00:00"), "ms:0");
  EXPECT_EQ(parse(ColumnType::kDateTime, "1970-01-01 00:00:01.5+00"), "ms:1500");
  EXPECT_EQ(parse(ColumnType::kDateTime, "1970-01-01T02:00:00+02:00"), "ms:0");
  EXPECT_EQ(parse(ColumnType::kDateTime, "1700000000000"), "ms:1700000000000");
  EXPECT_EQ(parse(ColumnType::kDateTime, "yesterday"), "error");
}

// docs/sql-template-route.md#execution: a replica's long Chinese date, or
// bytes that are not UTF-8, in a
// typed column: a failure whose message is valid UTF-8, names the column and
// quotes whole characters only; in a STRING column the bytes stay as they are
// (the writers and the preview turn them into U+FFFD).
TEST(ParseDatabaseValueTest, BadValueMessagesAreValidUtf8) {
  using task::ColumnType;
  std::string cjk;
  for (int i = 0; i < 6; ++i) cjk += "下单日期2026年12月1日";
  for (ColumnType type : {ColumnType::kDate, ColumnType::kDecimal, ColumnType::kInteger,
                          ColumnType::kDateTime, ColumnType::kBoolean}) {
    for (const std::string& text : {cjk, std::string("2026\xE5\xB9"), std::string("\xFF\xFE")}) {
      task::Column c;
      c.key = "order_date";
      c.type = type;
      c.scale = 2;
      auto v = ParseDatabaseValue(c, text, "Asia/Shanghai");
      ASSERT_FALSE(v.ok());
      const std::string& message = v.status().message();
      EXPECT_TRUE(utf8::IsValid(message)) << message;
      EXPECT_NE(message.find("order_date"), std::string::npos) << message;
      EXPECT_LT(message.size(), 200u) << message;
    }
  }
  task::Column s;
  s.key = "order_no";
  s.type = ColumnType::kString;
  auto v = ParseDatabaseValue(s, std::string("SO\xFFK"), "UTC");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(std::get<std::string>(*v), "SO\xFFK");
}

TEST(CheckSchemaNameTest, OnlyPlainNames) {
  EXPECT_TRUE(CheckSchemaName("").ok());
  EXPECT_TRUE(CheckSchemaName("biz_db$1").ok());
  EXPECT_FALSE(CheckSchemaName("a;DROP").ok());
  EXPECT_FALSE(CheckSchemaName("a b").ok());
  EXPECT_FALSE(CheckSchemaName("\"x\"").ok());
}

}  // namespace
}  // namespace export_center::source
