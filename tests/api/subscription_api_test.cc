// The subscriptions' routes (docs/http-api.md#subscriptions) through the real
// HTTP server (Boost.Beast, port 0) and a real httplib client, over the
// SQLite store and subscription ledger: the answers' shapes and statuses
// (201, 202, 204, 409 in the envelope), errors naming the field, who sees a
// subscription, the owner's snapshot, the console rows.

#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/auth.h"
#include "api/export_api.h"
#include "http/beast/beast_http_server.h"
#include "identity/token_verifier.h"
#include "registry/registry.h"
#include "storage/local_export_storage.h"
#include "store/database.h"
#include "store/sql_subscription_ledger.h"
#include "store/sql_task_store.h"
#include "store/sqlite/sqlite_database.h"
#include "store/task_store.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;

const std::string kSubs = "/api/platform/v1/files/subscriptions";
const std::string kConsole = "/api/platform/v1/files/operator/subscriptions";
constexpr char kSecret[] = "subscription-test-hs256-secret-0123456789";

struct Reply {
  int http = 0;
  json body;
  std::string raw;
  std::string code() const { return body.is_object() ? body.value("code", "") : ""; }
  std::string message() const { return body.is_object() ? body.value("message", "") : ""; }
  const json& data() const { return body["data"]; }
};

registry::RegistrySnapshot Snapshot() {
  registry::RegistrySnapshot s;
  registry::ExportDefinition orders;
  orders.name = "ORDER_LIST";
  orders.title = "Orders";
  orders.required_permission = "export:orders";
  orders.timezone = "Asia/Shanghai";
  registry::ParameterSpec from;
  from.name = "from";
  from.type = "DATE";
  registry::ParameterSpec keyword;
  keyword.name = "keyword";
  orders.parameters = {from, keyword};
  s.definitions[orders.name] = orders;
  return s;
}

class SubscriptionApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ec-subscription-api-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto db = store::OpenSqliteDatabase(dir_ + "/tasks.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    store_ = store::NewSqlTaskStore(db_);
    ASSERT_TRUE(store_->Migrate().ok());
    ledger_ = store::NewSqlSubscriptionLedger(db_);
    auto local = storage::NewLocalExportStorage(dir_ + "/files");
    ASSERT_TRUE(local.ok());
    storage_ = std::move(local).value();
    registry_ = std::make_unique<registry::Registry>(Snapshot());
    auth_.jwt_hs256_secret = kSecret;
    auth_.download_url_secret = "subscription-test-download-secret";
    mail_.enabled = true;
    mail_.host = "127.0.0.1";
    mail_.allowed_domains = {"example.com"};
    ExportApi::Deps deps;
    deps.store = store_.get();
    deps.storage = storage_.get();
    deps.registry = registry_.get();
    deps.server.threads = 2;
    deps.auth = auth_;
    deps.subscriptions.ledger = ledger_.get();
    deps.subscriptions.mail = &mail_;
    deps.subscriptions.options.max_per_owner = 3;
    deps.subscriptions.on_run_now = [this] { ++run_now_wakes_; };
    api_ = std::make_unique<ExportApi>(std::move(deps));
    ASSERT_TRUE(api_->init_status().ok());
    http::HttpServerOptions options;
    options.worker_threads = 2;
    server_ = http::NewBeastHttpServer(options, api_.get());
    ASSERT_TRUE(server_->Start().ok());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    alice_ = Token("alice", "t1", {"export:orders"});
    bob_ = Token("bob", "t1", {"export:orders"});
    op_ = Token("olga", "t1", {"platform:export:operate"});
    other_op_ = Token("otto", "t2", {"platform:export:operate"});
  }

  void TearDown() override {
    if (server_) server_->Stop();
    client_.reset();
    api_.reset();
    ledger_.reset();
    store_.reset();
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string Token(const std::string& user, const std::string& tenant,
                    std::vector<std::string> perms) {
    auto t = identity::MintToken(
        auth_, Principal{user, tenant, task::AppCode::kPlatform, std::move(perms)},
        std::chrono::seconds(600));
    EXPECT_TRUE(t.ok());
    return *t;
  }

  static Reply ToReply(const httplib::Result& r) {
    Reply out;
    if (!r) {
      ADD_FAILURE() << "request failed";
      return out;
    }
    out.http = r->status;
    out.raw = r->body;
    out.body = json::parse(r->body, nullptr, false);
    return out;
  }
  static httplib::Headers Auth(const std::string& token) {
    return {{"Authorization", "Bearer " + token}};
  }
  Reply Get(const std::string& path, const std::string& token) {
    return ToReply(client_->Get(path.c_str(), Auth(token)));
  }
  Reply Post(const std::string& path, const std::string& token, const json& body = nullptr) {
    return ToReply(client_->Post(path.c_str(), Auth(token), body.is_null() ? "" : body.dump(),
                                 "application/json"));
  }
  Reply Put(const std::string& path, const std::string& token, const json& body) {
    return ToReply(client_->Put(path.c_str(), Auth(token), body.dump(), "application/json"));
  }
  Reply Delete(const std::string& path, const std::string& token) {
    return ToReply(client_->Delete(path.c_str(), Auth(token)));
  }

  static json Body() {
    return {{"exportType", "ORDER_LIST"},
            {"format", "CSV"},
            {"taskName", "Daily orders"},
            {"parameters", {{"from", {{"relative", "yesterday"}}}, {"keyword", "north"}}},
            {"schedule", {{"preset", "daily"}, {"time", "09:00"}}},
            {"delivery", {{"emails", {"a@example.com"}}, {"skipIfEmpty", true}}}};
  }

  // Creates one as `token`; returns its id.
  std::string Make(const std::string& token) {
    Reply r = Post(kSubs, token, Body());
    EXPECT_EQ(r.http, 201) << r.raw;
    EXPECT_EQ(r.code(), "200") << r.raw;
    return r.data().value("id", "");
  }

  std::string dir_;
  std::shared_ptr<store::Database> db_;
  std::unique_ptr<store::TaskStore> store_;
  std::unique_ptr<store::SubscriptionLedger> ledger_;
  std::unique_ptr<storage::ExportStorage> storage_;
  std::unique_ptr<registry::Registry> registry_;
  notify::mail::MailOptions mail_;
  AuthOptions auth_;
  std::unique_ptr<ExportApi> api_;
  std::unique_ptr<http::HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
  std::atomic<int> run_now_wakes_{0};
  std::string alice_, bob_, op_, other_op_;
};

TEST_F(SubscriptionApiTest, CreateAnswers201WithTheSubscription) {
  Reply r = Post(kSubs, alice_, Body());
  ASSERT_EQ(r.http, 201) << r.raw;
  const json& s = r.data();
  EXPECT_FALSE(s.value("id", "").empty());
  EXPECT_EQ(s["exportType"], "ORDER_LIST");
  EXPECT_EQ(s["format"], "CSV");
  EXPECT_EQ(s["taskName"], "Daily orders");
  EXPECT_EQ(s["parameters"]["from"], json({{"relative", "yesterday"}, {"bound", "start"}}));
  EXPECT_EQ(s["schedule"], json({{"preset", "daily"}, {"time", "09:00"}, {"cron", "0 9 * * *"}}));
  EXPECT_EQ(s["timeZone"], "Asia/Shanghai");
  EXPECT_EQ(s["businessDaysOnly"], false);
  EXPECT_EQ(s["delivery"]["emails"], json({"a@example.com"}));
  EXPECT_EQ(s["delivery"]["skipIfEmpty"], true);
  EXPECT_EQ(s["state"], "ACTIVE");
  EXPECT_TRUE(s["pauseReason"].is_null());
  EXPECT_EQ(s["consecutiveFailures"], 0);
  EXPECT_TRUE(s["lastRunAt"].is_null());
  ASSERT_EQ(s["nextRuns"].size(), 3u);
  EXPECT_EQ(s["nextRunAt"], s["nextRuns"][0]);
  // 09:00 in Shanghai is 01:00 UTC.
  EXPECT_NE(s["nextRunAt"].get<std::string>().find("T01:00:00.000Z"), std::string::npos)
      << s["nextRunAt"];
  EXPECT_EQ(s["version"], 1);
  EXPECT_EQ(s["owner"], "alice");
}

TEST_F(SubscriptionApiTest, BadInputNamesTheFieldInTheEnvelope) {
  json body = Body();
  body["schedule"] = {{"cron", "* * * * *"}};
  Reply r = Post(kSubs, alice_, body);
  EXPECT_EQ(r.http, 200);
  EXPECT_EQ(r.code(), "400");
  EXPECT_EQ(r.message().rfind("schedule.cron: ", 0), 0u) << r.raw;
  body = Body();
  body["timeZone"] = "Nowhere/Land";
  EXPECT_EQ(Post(kSubs, alice_, body).message().rfind("timeZone: ", 0), 0u);
  body = Body();
  body["parameters"]["keyword"] = {{"relative", "yesterday"}};
  EXPECT_EQ(Post(kSubs, alice_, body).message().rfind("parameters.keyword: ", 0), 0u);
  body = Body();
  body["delivery"]["emails"] = {"a@example.com", "x@elsewhere.org"};
  EXPECT_EQ(Post(kSubs, alice_, body).message().rfind("delivery.emails[1]: ", 0), 0u);
  // Refused as a create would be.
  Reply denied = Post(kSubs, Token("carl", "t1", {}), Body());
  EXPECT_EQ(denied.code(), "403") << denied.raw;
  Reply not_json = ToReply(client_->Post(kSubs.c_str(), Auth(alice_), "{", "application/json"));
  EXPECT_EQ(not_json.code(), "400");
}

TEST_F(SubscriptionApiTest, OwnersListTheirOwnByCursorAndOthersGet404) {
  const std::string a1 = Make(alice_);
  const std::string a2 = Make(alice_);
  Make(bob_);
  Reply first = Get(kSubs + "?limit=1", alice_);
  ASSERT_EQ(first.code(), "200") << first.raw;
  ASSERT_EQ(first.data()["items"].size(), 1u);
  EXPECT_EQ(first.data()["items"][0]["id"], a1);
  ASSERT_TRUE(first.data()["nextCursor"].is_string());
  Reply second =
      Get(kSubs + "?limit=1&cursor=" + first.data()["nextCursor"].get<std::string>(), alice_);
  ASSERT_EQ(second.data()["items"].size(), 1u);
  EXPECT_EQ(second.data()["items"][0]["id"], a2);
  Reply all = Get(kSubs, alice_);
  EXPECT_EQ(all.data()["items"].size(), 2u);
  EXPECT_TRUE(all.data()["nextCursor"].is_null());

  EXPECT_EQ(Get(kSubs + "/" + a1, bob_).code(), "404");
  EXPECT_EQ(Delete(kSubs + "/" + a1, bob_).code(), "404");
  EXPECT_EQ(Get(kSubs + "/" + a1, other_op_).code(), "404");
  EXPECT_EQ(Get(kSubs + "/" + a1, op_).code(), "200");
  Make(alice_);
  Reply cap = Post(kSubs, alice_, Body());
  EXPECT_EQ(cap.code(), "429") << cap.raw;
}

TEST_F(SubscriptionApiTest, EditPauseResumeRunDelete) {
  const std::string id = Make(alice_);
  const std::string one = kSubs + "/" + id;
  json edit = Body();
  edit["schedule"] = {{"preset", "weekly"}, {"days", {"MON", "FRI"}}, {"time", "08:30"}};
  edit["version"] = 1;
  Reply edited = Put(one, alice_, edit);
  ASSERT_EQ(edited.code(), "200") << edited.raw;
  EXPECT_EQ(edited.data()["schedule"]["cron"], "30 8 * * 1,5");
  EXPECT_EQ(edited.data()["version"], 2);
  Reply stale = Put(one, alice_, edit);
  EXPECT_EQ(stale.code(), "409") << stale.raw;

  Reply paused = Post(one + "/pause", alice_);
  ASSERT_EQ(paused.code(), "200") << paused.raw;
  EXPECT_EQ(paused.data()["state"], "PAUSED");
  EXPECT_EQ(paused.data()["pauseReason"], "OWNER");
  EXPECT_TRUE(paused.data()["nextRunAt"].is_null());
  EXPECT_EQ(Post(one + "/run", alice_).code(), "409");
  Reply resumed = Post(one + "/resume", alice_);
  EXPECT_EQ(resumed.data()["state"], "ACTIVE");

  Reply run = Post(one + "/run", alice_);
  ASSERT_EQ(run.http, 202) << run.raw;
  EXPECT_EQ(run.data()["run"]["outcome"], "CLAIMED");
  EXPECT_TRUE(run.data()["run"]["taskId"].is_null());
  EXPECT_EQ(run_now_wakes_.load(), 1);
  Reply runs = Get(one + "/runs", alice_);
  ASSERT_EQ(runs.code(), "200") << runs.raw;
  ASSERT_EQ(runs.data()["items"].size(), 1u);
  EXPECT_EQ(runs.data()["items"][0]["slotAt"], run.data()["run"]["slotAt"]);

  Reply deleted = Delete(one, alice_);
  EXPECT_EQ(deleted.http, 204) << deleted.raw;
  EXPECT_EQ(Get(one, alice_).code(), "404");
}

TEST_F(SubscriptionApiTest, TheConsoleListsItsScopeAndPausesOne) {
  const std::string id = Make(alice_);
  Make(bob_);
  Reply list = Get(kConsole, op_);
  ASSERT_EQ(list.code(), "200") << list.raw;
  ASSERT_EQ(list.data()["items"].size(), 2u);
  EXPECT_EQ(list.data()["items"][0]["tenantId"], "t1");
  EXPECT_EQ(Get(kConsole, other_op_).data()["items"].size(), 0u);
  EXPECT_EQ(Get(kConsole, alice_).code(), "403");
  EXPECT_EQ(Get(kConsole + "?tenant=t2", op_).code(), "403");
  EXPECT_EQ(Post(kConsole + "/" + id + "/pause", alice_).code(), "403");
  Reply paused = Post(kConsole + "/" + id + "/pause", op_);
  ASSERT_EQ(paused.code(), "200") << paused.raw;
  EXPECT_NE(paused.data()["pauseDetail"].get<std::string>().find("olga"), std::string::npos);
  EXPECT_EQ(Get(kConsole + "?state=PAUSED", op_).data()["items"].size(), 1u);
  EXPECT_EQ(Get(kConsole + "?state=NAPPING", op_).code(), "400");
  EXPECT_EQ(Post(kConsole + "/" + id + "/pause", other_op_).code(), "404");
  EXPECT_EQ(Post(kConsole + "/" + id + "/resume", op_).data()["state"], "ACTIVE");
}

// The owner's permissions are kept as the runs' snapshot, refreshed by any route.
TEST_F(SubscriptionApiTest, AnyCallRefreshesTheOwnersSnapshot) {
  const std::string id = Make(alice_);
  ASSERT_EQ(Get(kSubs, Token("alice", "t1", {"export:orders", "export:more"})).code(), "200");
  auto s = ledger_->GetSubscription(std::stoll(id));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(json::parse(s->spec.owner_perms), json({"export:orders", "export:more"}));
}

}  // namespace
}  // namespace export_center::api
