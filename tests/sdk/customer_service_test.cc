// Integration: the built customer-service binary, pulled through the
// center's ProviderBatchSource, must yield exactly the rows its own SQLite
// database holds for the tenant and filter.

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "http/httplib/httplib_http_client.h"
#include "sdk/provider_server.h"
#include "source/provider/provider_batch_source.h"

namespace export_center {
namespace {

using nlohmann::json;

constexpr char kToken[] = "integration-token";
constexpr char kPath[] = "/internal/exports/v1/CUSTOMER_LIST/batches";
constexpr int kSeed = 2000;

// One customer-service process for the whole suite: seeding and start-up
// happen once.
class CustomerService {
 public:
  CustomerService() {
    char tmpl[] = "/tmp/customer-service-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    db_path_ = dir_ + "/db/customers.db";
    std::ofstream(dir_ + "/config.yaml")
        << "customer-service:\n"
        << "  host: 127.0.0.1\n"
        << "  port: 0\n"
        << "  sqlite-path: " << db_path_ << "\n"
        << "  internal-token: " << kToken << "\n"
        << "  snapshot-secret: integration-secret-0123456789abcdef\n"
        << "  seed-customers: " << kSeed << "\n";
    Start();
  }

  ~CustomerService() { std::filesystem::remove_all(dir_); }

  // SIGTERM must end the service cleanly, with exit status 0.
  bool Stop() {
    if (pid_ <= 0) return false;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }

  int port() const { return port_; }
  const std::string& db_path() const { return db_path_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  void Start() {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
      std::string config = dir_ + "/config.yaml";
      execl(CUSTOMER_SERVICE_BINARY, "customer-service", "--config", config.c_str(), nullptr);
      _exit(127);
    }
    close(fds[1]);
    // The service prints its address once it accepts connections.
    FILE* out = fdopen(fds[0], "r");
    char line[256] = {0};
    ASSERT_NE(fgets(line, sizeof line, out), nullptr) << "customer-service exited early";
    std::cmatch m;
    ASSERT_TRUE(std::regex_search(line, m, std::regex(R"(listening on http://127\.0\.0\.1:(\d+))")))
        << line;
    port_ = std::stoi(m[1].str());
    fclose(out);
  }

  std::string dir_;
  std::string db_path_;
  pid_t pid_ = -1;
  int port_ = 0;
};

CustomerService* service = nullptr;

class Environment : public ::testing::Environment {
 public:
  void SetUp() override { service = new CustomerService(); }
  void TearDown() override {
    EXPECT_TRUE(service->Stop()) << "customer-service did not exit cleanly on SIGTERM";
    delete service;
    service = nullptr;
  }
};
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new Environment);

source::ProviderBatchOptions Options(const std::string& params, int batch_size = 97) {
  source::ProviderBatchOptions o;
  o.service = {"customer-service", service->base_url(), kToken, /*base_path=*/""};
  o.path = kPath;
  o.export_type = "CUSTOMER_LIST";
  o.task_id = 1900000000000000001LL;
  o.tenant_id = "1";
  o.requested_by = "1900000000000000009";
  o.parameters_json = params;
  o.batch_size = batch_size;
  o.client.connect_timeout_ms = 1000;
  o.client.read_timeout_ms = 5000;
  return o;
}

StatusOr<std::vector<task::Row>> PullAll(const source::ProviderBatchOptions& options,
                                         int* pages = nullptr) {
  auto source = source::NewProviderBatchSource(options, http::HttplibClientFactory());
  std::vector<task::Row> rows;
  for (int i = 0; i < 10000; ++i) {
    auto page = source->NextPage();
    if (!page.ok()) return page.status();
    if (pages) ++*pages;
    rows.insert(rows.end(), page->rows.begin(), page->rows.end());
    if (!page->has_more) return rows;
  }
  return Internal("no end");
}

// The expected rows, read straight from the service's SQLite file and
// converted the way the wire contract promises.
std::vector<task::Row> Expected(const std::string& where) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(service->db_path().c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::string sql =
      "SELECT id, customer_code, name, status, balance_cents, credit_limit, vip, registered_on, "
      "last_order_at, remarks FROM customer WHERE " +
      where + " ORDER BY id";
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  std::vector<task::Row> rows;
  auto text = [&](int c) {
    return std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, c)));
  };
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    task::Row r;
    r.emplace_back(sqlite3_column_int64(stmt, 0));
    r.emplace_back(text(1));
    r.emplace_back(text(2));
    r.emplace_back(text(3));
    r.emplace_back(*task::ParseDecimal(std::to_string(sqlite3_column_int64(stmt, 4)) + "e-2", 2));
    r.emplace_back(sqlite3_column_int64(stmt, 5));
    r.emplace_back(sqlite3_column_int64(stmt, 6) != 0);
    std::string d = text(7);
    r.emplace_back(*task::Date::FromYmd(std::stoi(d.substr(0, 4)), std::stoi(d.substr(5, 2)),
                                        std::stoi(d.substr(8, 2))));
    if (sqlite3_column_type(stmt, 8) == SQLITE_NULL) {
      r.emplace_back();
    } else {
      r.emplace_back(task::DateTime{sqlite3_column_int64(stmt, 8)});
    }
    if (sqlite3_column_type(stmt, 9) == SQLITE_NULL) {
      r.emplace_back();
    } else {
      r.emplace_back(text(9));
    }
    rows.push_back(std::move(r));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return rows;
}

std::string Describe(const task::CellValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          return "null";
        else if constexpr (std::is_same_v<T, std::string>)
          return "'" + x + "'";
        else if constexpr (std::is_same_v<T, int64_t>)
          return std::to_string(x);
        else if constexpr (std::is_same_v<T, task::Decimal>)
          return "dec " + x.digits;
        else if constexpr (std::is_same_v<T, bool>)
          return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, task::Date>)
          return std::to_string(x.year()) + "-" + std::to_string(x.month()) + "-" +
                 std::to_string(x.day());
        else
          return "ms " + std::to_string(x.epoch_ms);
      },
      v);
}

void ExpectSameRows(const std::vector<task::Row>& got, const std::vector<task::Row>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].size(), want[i].size());
    for (size_t c = 0; c < got[i].size(); ++c) {
      ASSERT_EQ(Describe(got[i][c]), Describe(want[i][c])) << "row " << i << " column " << c;
    }
  }
}

json Admin(const std::string& method, const std::string& path, const std::string& body = "",
           const std::string& token = kToken, int* status = nullptr) {
  httplib::Client client("127.0.0.1", service->port());
  httplib::Headers headers = {{sdk::kTokenHeader, token}};
  auto res = method == "GET" ? client.Get(path.c_str(), headers)
                             : client.Post(path.c_str(), headers, body, "application/json");
  if (status) *status = res ? res->status : 0;
  return res ? json::parse(res->body, nullptr, false) : json();
}

TEST(CustomerService, KeywordExportMatchesTheDatabase) {
  int pages = 0;
  auto rows = PullAll(Options(R"({"keyword":"柏悦"})", 7), &pages);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  auto want =
      Expected("tenant_id = '1' AND (instr(name, '柏悦') > 0 OR instr(customer_code, '柏悦') > 0)");
  ASSERT_GT(want.size(), 10u);
  EXPECT_GT(pages, 2);
  ExpectSameRows(*rows, want);
}

TEST(CustomerService, WholeTenantWithStatusMatchesTheDatabase) {
  auto rows = PullAll(Options(R"({"status":"FROZEN","tenantId":"2"})", 500));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  // The tenant comes from the request; a tenantId parameter changes nothing.
  auto want = Expected("tenant_id = '1' AND status = 'FROZEN'");
  ASSERT_GT(want.size(), 20u);
  ExpectSameRows(*rows, want);
}

TEST(CustomerService, AllTenantRowsIncludingHostileAndBigValues) {
  auto rows = PullAll(Options("{}", 500));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  auto want = Expected("tenant_id = '1'");
  EXPECT_EQ(want.size(), static_cast<size_t>(kSeed * 3 / 5));
  ExpectSameRows(*rows, want);
  bool saw_formula = false, saw_big = false, saw_trap = false;
  for (const auto& r : *rows) {
    if (auto* s = std::get_if<std::string>(&r[9]); s && !s->empty() && (*s)[0] == '=')
      saw_formula = true;
    if (std::get<int64_t>(r[5]) == 9007199254740993LL) saw_big = true;
    if (std::get<task::Decimal>(r[4]).digits == "68141.10") saw_trap = true;
  }
  EXPECT_TRUE(saw_formula);
  EXPECT_TRUE(saw_big);
  EXPECT_TRUE(saw_trap);
}

// The seeded file carries planner statistics for every index, so a center
// pointed at it plans the enrich lookup by data (docs/sql-template-route.md#statistics).
TEST(CustomerService, SeededDatabaseHasStatisticsForEveryIndex) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(service->db_path().c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
            SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(
      sqlite3_prepare_v2(db, "SELECT idx, stat FROM sqlite_stat1 ORDER BY idx", -1, &stmt, nullptr),
      SQLITE_OK)
      << sqlite3_errmsg(db);
  std::map<std::string, std::string> stats;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    stats[reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))] =
        reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  for (const char* index : {"customer_tenant_id", "customer_code", "orders_tenant_date"}) {
    ASSERT_TRUE(stats.count(index)) << index << " has no statistics";
  }
  // The first number is the table's row count.
  EXPECT_EQ(stats["customer_code"].substr(0, stats["customer_code"].find(' ')),
            std::to_string(kSeed));
}

TEST(CustomerService, SnapshotExcludesRowsCreatedDuringTheExport) {
  auto source = source::NewProviderBatchSource(Options(R"({"keyword":"柏悦"})", 5),
                                               http::HttplibClientFactory());
  auto first = source->NextPage();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  sqlite3* db = nullptr;
  sqlite3_open(service->db_path().c_str(), &db);
  sqlite3_busy_timeout(db, 5000);
  ASSERT_EQ(sqlite3_exec(db,
                         "INSERT INTO customer VALUES (99999999999, '1', 'NEW1', '新柏悦物流', "
                         "'ACTIVE', 100, 1000, 0, '2026-08-03', NULL, NULL)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  std::vector<int64_t> ids;
  bool more = first->has_more;
  while (more) {
    auto page = source->NextPage();
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const auto& r : page->rows) ids.push_back(std::get<int64_t>(r[0]));
    more = page->has_more;
  }
  sqlite3_exec(db, "DELETE FROM customer WHERE id = 99999999999", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_FALSE(ids.empty());
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 99999999999LL), 0);
}

TEST(CustomerService, ForgedSnapshotTokenIsPermanent) {
  httplib::Client client("127.0.0.1", service->port());
  json body = {{"taskId", "5"},
               {"tenantId", "1"},
               {"appCode", "PLATFORM"},
               {"requestedBy", "9"},
               {"dispatchVersion", 1},
               {"parameters", json::object()},
               {"cursor", "10000000001"},
               {"snapshotToken", "v1.99999999999.deadbeef"},
               {"limit", 10}};
  auto res = client.Post(kPath, {{sdk::kTokenHeader, kToken}}, body.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(json::parse(res->body)["code"], "400");
}

TEST(CustomerService, WrongTokenAndMerchantArePermanent) {
  auto options = Options("{}");
  options.service.internal_token = "wrong";
  auto rows = PullAll(options);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kPermissionDenied);

  options = Options("{}");
  options.app_code = task::AppCode::kMerchant;
  rows = PullAll(options);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kPermissionDenied);

  rows = PullAll(Options(R"({"status":"DELETED"})"));
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kInvalidArgument);
}

TEST(CustomerService, InjectedFaultsAreTransient) {
  int status = 0;
  Admin("POST", "/admin/faults", R"({"fail503":1})", "wrong", &status);
  EXPECT_EQ(status, 401);
  int64_t before = Admin("GET", "/admin/stats")["data"]["batchCalls"];

  Admin("POST", "/admin/faults", R"({"fail503":1})", kToken, &status);
  ASSERT_EQ(status, 200);
  auto rows = PullAll(Options("{}", 500));
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kUnavailable);

  Admin("POST", "/admin/faults", R"({"hangMs":1500,"hangCount":1})");
  auto options = Options("{}", 500);
  options.client.read_timeout_ms = 300;
  rows = PullAll(options);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kUnavailable);

  // Faults are used up: the next attempt succeeds.
  rows = PullAll(Options("{}", 500));
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  json stats = Admin("GET", "/admin/stats")["data"];
  EXPECT_GE(stats["batchCalls"].get<int64_t>(), before + 4);
  EXPECT_EQ(stats["fail503Pending"], 0);
  EXPECT_EQ(stats["hangPending"], 0);
}

}  // namespace
}  // namespace export_center
