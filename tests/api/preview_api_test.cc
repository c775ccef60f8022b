// Route tests of POST /export-previews (docs/http-api.md#post-export-previews--preview):
// the real HTTP server (Boost.Beast) on 127.0.0.1 (port 0) driven by a real
// httplib::Client, with the real registry and token verifier. The data path
// is the injected PreviewFn, here one that records each task it is asked for
// and answers a fixed table, so these tests pin what the route itself owns:
// create's input checks before any data is read, the tenant and user from the
// token only, the exact envelope, max-rows and suggestions, the per-user 429.
// The data path end to end is tests/integration/preview_test.py.

#include "api/preview_api.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/export_api.h"
#include "common/mutex.h"
#include "http/beast/beast_http_server.h"
#include "identity/token_verifier.h"
#include "registry/registry.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;

const std::string kPreviews = "/api/platform/v1/files/export-previews";
constexpr char kSecret[] = "preview-test-hs256-secret-0123456789";
constexpr int kPerMinute = 3;

registry::RegistrySnapshot MakeSnapshot() {
  registry::RegistrySnapshot s;
  registry::ExportDefinition orders;
  orders.name = "ORDER_LIST";
  orders.title = "订单列表";
  orders.required_permission = "order:export";
  orders.max_rows = 100;
  orders.parameters = {{"status", "STRING", "", false, {"PAID", "DONE"}}};
  registry::ExportDefinition split = orders;
  split.name = "ORDER_SPLIT";
  split.rows_per_file = 50;
  registry::ExportDefinition merchant = orders;
  merchant.name = "MERCHANT_ORDERS";
  merchant.app_scope = task::AppCode::kMerchant;
  registry::ExportDefinition zh = orders;  // with a default language
  zh.name = "ORDER_ZH";
  zh.locale = "zh-CN";
  for (auto* d : {&orders, &split, &merchant, &zh}) s.definitions[d->name] = *d;
  return s;
}

class PreviewApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = std::make_unique<registry::Registry>(MakeSnapshot());
    auth_.jwt_hs256_secret = kSecret;
    auth_.download_url_secret = "preview-test-download-secret";
    ExportApi::Deps deps;
    deps.registry = registry_.get();
    deps.auth = auth_;
    deps.preview_options.per_user_per_minute = kPerMinute;
    deps.preview = [this](const task::Task& t, std::shared_ptr<const registry::RegistrySnapshot>) {
      MutexLock lock(&mu_);
      asked_.push_back(t);
      return StatusOr<task::PreviewTable>(table_);
    };
    api_ = std::make_unique<ExportApi>(std::move(deps));
    ASSERT_TRUE(api_->init_status().ok()) << api_->init_status().ToString();
    http::HttpServerOptions options;
    options.worker_threads = 2;
    server_ = http::NewBeastHttpServer(options, api_.get());
    ASSERT_TRUE(server_->Start().ok());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    table_.columns = {{"id", "订单ID", task::ColumnType::kInteger, 0, 2, ""},
                      {"note", "备注", task::ColumnType::kString, 0, 2, ""}};
    table_.rows = {{"1", "'=1+1"}, {"2", ""}};
    table_.row_count = 2;
    table_.row_count_exact = true;
  }

  void TearDown() override {
    if (server_) server_->Stop();
  }

  std::string Token(const std::string& user, const std::string& tenant,
                    task::AppCode app = task::AppCode::kPlatform,
                    std::vector<std::string> perms = {"order:export"}) {
    auto t = identity::MintToken(auth_, Principal{user, tenant, app, std::move(perms)},
                                 std::chrono::seconds(600));
    EXPECT_TRUE(t.ok());
    return *t;
  }

  json Preview(const std::string& token, const std::string& body,
               const std::string& content_type = "application/json") {
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    auto r = client_->Post(kPreviews.c_str(), headers, body, content_type.c_str());
    EXPECT_TRUE(r) << "request failed";
    if (!r) return json();
    EXPECT_EQ(r->status, 200) << r->body;
    return json::parse(r->body, nullptr, false);
  }

  size_t Asked() {
    MutexLock lock(&mu_);
    return asked_.size();
  }

  std::unique_ptr<registry::Registry> registry_;
  AuthOptions auth_;
  std::unique_ptr<ExportApi> api_;
  std::unique_ptr<http::HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
  task::PreviewTable table_;
  Mutex mu_;
  std::vector<task::Task> asked_ GUARDED_BY(mu_);
};

TEST_F(PreviewApiTest, AnswersTheEnvelopeExactly) {
  json r = Preview(Token("u1", "t1"), R"({"exportType":"ORDER_LIST","format":"CSV"})");
  EXPECT_EQ(r, json::parse(R"({"code":"200","message":"success","data":{
      "exportType":"ORDER_LIST",
      "columns":[{"key":"id","title":"订单ID","titlePath":["订单ID"],"type":"INTEGER"},
                 {"key":"note","title":"备注","titlePath":["备注"],"type":"STRING"}],
      "headerRows":1,"locale":"",
      "rows":[["1","'=1+1"],["2",""]],
      "rowCount":{"value":"2","exact":true},
      "maxRows":"100","exceedsMaxRows":false,"suggestions":[],"planAdvice":[],
      "columnPolicy":{"masked":0,"omitted":0,"columns":[]}}})"));
}

// docs/http-api.md#post-export-previews--preview: each column's title path,
// top first, and the header rows of the file, so the page draws the same
// grouping (docs/xlsx.md#grouped-headers).
TEST_F(PreviewApiTest, CarriesEachColumnsTitlePathAndTheHeaderRows) {
  table_.columns = {{"no", "单号", task::ColumnType::kString, 0, 2, ""},
                    {"phone", "电话", task::ColumnType::kString, 0, 2, ""},
                    {"yuan", "元", task::ColumnType::kDecimal, 0, 2, ""}};
  table_.columns[1].title_groups = {"收货信息"};
  table_.columns[2].title_groups = {"金额", "含税"};
  table_.rows = {{"A1", "138", "1.00"}};
  json r = Preview(Token("u1", "t1"), R"({"exportType":"ORDER_LIST"})");
  const json& data = r["data"];
  EXPECT_EQ(data["headerRows"], 3);
  EXPECT_EQ(data["columns"][0]["titlePath"], json::parse(R"(["单号"])"));
  EXPECT_EQ(data["columns"][1]["titlePath"], json::parse(R"(["收货信息","电话"])"));
  EXPECT_EQ(data["columns"][2]["titlePath"], json::parse(R"(["金额","含税","元"])"));
  EXPECT_EQ(data["columns"][2]["title"], "元");
}

// The preview takes `locale` as create does (docs/http-api.md#the-requesters-language):
// the body's, else Accept-Language's first tag, else the definition's; the
// reader is handed the task with it, and the answer says which it was.
TEST_F(PreviewApiTest, TakesTheLocaleLikeCreate) {
  const std::string token = Token("u1", "t1");
  EXPECT_EQ(Preview(token, R"({"exportType":"ORDER_ZH","locale":"en-GB"})")["data"]["locale"],
            "en-GB");
  {
    httplib::Headers headers = {{"Authorization", "Bearer " + token},
                                {"Accept-Language", "fr-CA, fr;q=0.9, en;q=0.5"}};
    auto r = client_->Post(kPreviews.c_str(), headers, R"({"exportType":"ORDER_ZH"})",
                           "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(json::parse(r->body)["data"]["locale"], "fr-CA") << r->body;
  }
  EXPECT_EQ(Preview(token, R"({"exportType":"ORDER_ZH"})")["data"]["locale"], "zh-CN");
  {
    MutexLock lock(&mu_);
    ASSERT_EQ(asked_.size(), 3u);
    EXPECT_EQ(asked_[0].locale, "en-GB");
    EXPECT_EQ(asked_[1].locale, "fr-CA");
    EXPECT_EQ(asked_[2].locale, "zh-CN");
  }
  json bad = Preview(token, R"({"exportType":"ORDER_ZH","locale":"zh_CN"})");
  EXPECT_EQ(bad["code"], "400");
  EXPECT_NE(bad["message"].get<std::string>().find("locale"), std::string::npos) << bad;
  EXPECT_EQ(Asked(), 3u);
}

// docs/sql-template-route.md#plan-advice: what the source's plans said,
// shown before anything is queued.
TEST_F(PreviewApiTest, ShowsThePlanAdviceOfTheSource) {
  task::PlanAdvice advice;
  advice.statement = "enrich group names";
  advice.table = "customer";
  advice.plan = "access ref on c using customer_tenant";
  advice.predicate = "tenant_id = ? AND customer_code IN (…)";
  advice.index_columns = {"tenant_id", "customer_code"};
  advice.suggested_index =
      "CREATE INDEX customer_tenant_id_customer_code ON customer (tenant_id, customer_code)";
  advice.estimated_rows = 500000;
  table_.plan_advice = {advice};
  json r = Preview(Token("u1", "t1"), R"({"exportType":"ORDER_LIST"})")["data"];
  EXPECT_EQ(r["planAdvice"], json::parse(R"J([{"statement":"enrich group names",
      "table":"customer","plan":"access ref on c using customer_tenant",
      "predicate":"tenant_id = ? AND customer_code IN (…)",
      "indexColumns":["tenant_id","customer_code"],
      "suggestedIndex":"CREATE INDEX customer_tenant_id_customer_code ON customer (tenant_id, customer_code)",
      "estimatedRows":"500000"}])J"));
}

TEST_F(PreviewApiTest, TenantUserAndAppComeFromTheTokenOnly) {
  json r =
      Preview(Token("u1", "t9"), R"({"exportType":"ORDER_LIST","parameters":{"status":"PAID"}})");
  ASSERT_EQ(r["code"], "200") << r;
  MutexLock lock(&mu_);
  ASSERT_EQ(asked_.size(), 1u);
  EXPECT_EQ(asked_[0].tenant_id, "t9");
  EXPECT_EQ(asked_[0].requested_by, "u1");
  EXPECT_EQ(asked_[0].app_code, task::AppCode::kPlatform);
  EXPECT_EQ(asked_[0].parameters_json, R"({"status":"PAID"})");
  EXPECT_EQ(asked_[0].format, task::FileFormat::kXlsx);
  EXPECT_GT(asked_[0].id, 0);  // the contracts need a task id
}

TEST_F(PreviewApiTest, CreatesInputChecksRunBeforeAnyDataIsRead) {
  const std::string token = Token("u1", "t1");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"exportType":"ORDER_LIST","tenantId":"t2"})", "400"},
      {R"({"exportType":"ORDER_LIST","parameters":{"tenantId":"t2"}})", "400"},
      {R"({"exportType":"ORDER_LIST","parameters":{"status":"NEW"}})", "400"},
      {R"({"exportType":"NOPE"})", "400"},
      {R"({"exportType":"ORDER_LIST","format":"PDF"})", "400"},
      {R"({"exportType":"ORDER_LIST","taskName":" "})", "400"},
      {R"({"exportType":"ORDER_LIST",)", "400"},
      {R"({"exportType":"MERCHANT_ORDERS"})", "403"},
  };
  for (const auto& [body, code] : cases) {
    EXPECT_EQ(Preview(token, body)["code"], code) << body;
  }
  EXPECT_EQ(Preview(token, R"({"exportType":"ORDER_LIST"})", "text/plain")["code"], "400");
  EXPECT_EQ(Preview(Token("u1", "t1", task::AppCode::kPlatform, {}),
                    R"({"exportType":"ORDER_LIST"})")["code"],
            "403");
  EXPECT_EQ(Preview("", R"({"exportType":"ORDER_LIST"})")["code"], "401");
  EXPECT_EQ(Asked(), 0u);
}

TEST_F(PreviewApiTest, OverMaxRowsSuggestsWhatTheTypeAllows) {
  table_.row_count = 101;
  table_.row_count_exact = false;  // "at least 101" is over 100 too
  json r = Preview(Token("u1", "t1"), R"({"exportType":"ORDER_LIST"})")["data"];
  EXPECT_TRUE(r["exceedsMaxRows"]);
  EXPECT_EQ(r["rowCount"], json::parse(R"({"value":"101","exact":false})"));
  EXPECT_EQ(r["suggestions"], json::parse(R"(["CSV"])"));
  r = Preview(Token("u1", "t1"), R"({"exportType":"ORDER_SPLIT"})")["data"];
  EXPECT_EQ(r["suggestions"], json::parse(R"(["CSV","SPLIT"])"));
  r = Preview(Token("u1", "t1"), R"({"exportType":"ORDER_SPLIT","format":"CSV"})")["data"];
  EXPECT_EQ(r["suggestions"], json::parse(R"(["SPLIT"])"));
}

TEST_F(PreviewApiTest, RateLimitIsPerUserOfATenant) {
  const std::string body = R"({"exportType":"ORDER_LIST"})";
  for (int i = 0; i < kPerMinute; ++i) EXPECT_EQ(Preview(Token("u1", "t1"), body)["code"], "200");
  json over = Preview(Token("u1", "t1"), body);
  EXPECT_EQ(over["code"], "429");
  EXPECT_EQ(over["message"],
            "too many previews: at most 3 a minute; please wait a moment and try again");
  EXPECT_EQ(Preview(Token("u2", "t1"), body)["code"], "200");
  EXPECT_EQ(Preview(Token("u1", "t2"), body)["code"], "200");  // same user id, other tenant
  EXPECT_EQ(Asked(), static_cast<size_t>(kPerMinute + 2));
}

TEST(PreviewRateLimiter, WindowTurnsAfterAMinute) {
  PreviewRateLimiter limiter(2);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(limiter.Admit("a", t0));
  EXPECT_TRUE(limiter.Admit("a", t0 + std::chrono::seconds(1)));
  EXPECT_FALSE(limiter.Admit("a", t0 + std::chrono::seconds(59)));
  EXPECT_TRUE(limiter.Admit("b", t0 + std::chrono::seconds(59)));
  EXPECT_TRUE(limiter.Admit("a", t0 + std::chrono::seconds(61)));
}

}  // namespace
}  // namespace export_center::api
