// Route tests: the real HTTP server (Boost.Beast) on 127.0.0.1 (port 0) driven by a real
// httplib::Client, with the real embedded backends behind it: the SQLite task
// store and local storage in a temp directory. Two thin wrappers add what the
// tests need on top: FailingDatabase takes the database down, and
// ReadRecordingStorage shows that downloads stream in chunks. Tests arrange
// tasks and move time by writing rows through the Database, as the store's
// contract suite does. One test (or a few) per route of docs/http-api.md, bad
// input included.

#include "api/export_api.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../common/failing_random.h"  // OpenSSL random made to fail
#include "api/auth.h"
#include "api/download_audit.h"
#include "api/download_token.h"
#include "common/encoding.h"
#include "config/registry_yaml.h"
#include "http/beast/beast_http_server.h"
#include "identity/token_verifier.h"
#include "registry/registry.h"
#include "storage/export_storage.h"
#include "storage/local_export_storage.h"
#include "store/database.h"
#include "store/sql_task_store.h"
#include "store/sqlite/sqlite_database.h"
#include "store/task_store.h"
#include "tests/fakes/failing_database.h"
#include "tests/fakes/read_recording_storage.h"
#include "tests/support/raw_connection.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;
using task::TaskState;

const std::string kBase = "/api/platform/v1/files";
const std::string kTasks = kBase + "/export-tasks";
constexpr char kSecret[] = "route-test-hs256-secret-0123456789";
constexpr char kDownloadSecret[] = "route-test-download-secret";

struct Reply {
  int http = 0;
  json body;
  std::string raw;
  httplib::Headers headers;
  std::string Header(const std::string& k) const {
    auto it = headers.find(k);
    return it == headers.end() ? "" : it->second;
  }
  std::string code() const { return body.is_object() ? body.value("code", "") : ""; }
};

registry::ParameterSpec Param(std::string name, std::string type = "STRING",
                              std::vector<std::string> allowed = {}) {
  return {std::move(name), std::move(type), "", false, std::move(allowed)};
}

registry::RegistrySnapshot MakeSnapshot() {
  registry::RegistrySnapshot s;
  registry::ExportDefinition customers;
  customers.name = "CUSTOMER_LIST";
  customers.title = "客户列表";
  customers.service = "customer-service";
  customers.required_permission = "customer:export";
  customers.max_attempts = 4;
  customers.parameters = {Param("keyword"), Param("status", "STRING", {"ACTIVE", "INACTIVE"}),
                          Param("filter", "OBJECT"), Param("tags", "STRING_LIST")};
  for (int i = 0; i < 25; ++i) customers.parameters.push_back(Param("k" + std::to_string(i)));
  registry::ExportDefinition orders;
  orders.name = "ORDER_LIST";
  orders.title = "订单列表";
  orders.locale = "zh-TW";
  registry::ExportDefinition merchant;
  merchant.name = "MERCHANT_ORDERS";
  merchant.title = "Merchant orders";
  merchant.app_scope = task::AppCode::kMerchant;
  registry::ExportDefinition old;
  old.name = "OLD_TYPE";
  old.title = "Old";
  old.enabled = false;
  // Two governed columns (docs/configuration.md#column-governance-columns).
  registry::ExportDefinition governed;
  governed.name = "GOVERNED_LIST";
  governed.title = "Governed";
  governed.required_permission = "customer:export";
  task::ColumnDecision mobile;
  mobile.key = "mobile";
  mobile.action = task::ColumnAction::kMask;
  mobile.keep_first = 3;
  mobile.keep_last = 4;
  task::ColumnDecision balance;
  balance.key = "balance";
  governed.column_rules = {{"mobile", "customer:contact", mobile},
                           {"balance", "customer:finance", balance}};
  for (auto* d : {&customers, &orders, &merchant, &old, &governed}) s.definitions[d->name] = *d;
  return s;
}

class ExportApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ec-export-api-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto db = store::OpenSqliteDatabase(dir_ + "/tasks.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    database_ = std::make_shared<fakes::FailingDatabase>(db_);
    store_ = store::NewSqlTaskStore(database_);
    ASSERT_TRUE(store_->Migrate().ok());
    auto local = storage::NewLocalExportStorage(dir_ + "/files");
    ASSERT_TRUE(local.ok()) << local.status().ToString();
    storage_ = std::make_unique<fakes::ReadRecordingStorage>(std::move(local).value());
    // Reload() installs next_snapshot_: tests change a type's definition with it.
    registry_ = std::make_unique<registry::Registry>(
        MakeSnapshot(), [this](const std::string&) -> StatusOr<registry::RegistrySnapshot> {
          return next_snapshot_;
        });
    auth_.jwt_hs256_secret = kSecret;
    auth_.download_url_secret = kDownloadSecret;
    auth_.download_url_ttl_seconds = 300;
    Start();
    alice_ = Token("alice", "t1", task::AppCode::kPlatform, {"customer:export"});
    bob_ = Token("bob", "t1", task::AppCode::kPlatform, {"customer:export"});
    admin_ = Token("admin", "t1", task::AppCode::kPlatform,
                   {"customer:export", std::string(kDownloadAllPermission)});
    eve_ = Token("eve", "t2", task::AppCode::kPlatform,
                 {"customer:export", std::string(kDownloadAllPermission)});
    merchant_ = Token("alice", "t1", task::AppCode::kMerchant, {"customer:export"});
  }

  void TearDown() override {
    if (server_) server_->Stop();
    client_.reset();
    api_.reset();
    store_.reset();
    database_.reset();
    db_.reset();
    storage_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  void Start() {
    ExportApi::Deps deps;
    deps.store = store_.get();
    deps.storage = storage_.get();
    deps.registry = registry_.get();
    deps.server.threads = 4;
    deps.server.public_base_url = "http://files.example.test/";
    deps.auth = auth_;
    deps.on_task_created = [this] { ++wakes_; };
    deps.on_created = [this](const std::string& type) { created_types_.push_back(type); };
    deps.metrics_text = [] { return std::string("export_task_created_total 3\n"); };
    // Stands in for render::DeriveFileKeyMaterial + FileKeyRing::Wrap: keeps
    // nothing of the password but that it was given.
    deps.seal_file_password = [this](std::string_view password) -> StatusOr<WrappedFileKey> {
      EXPECT_FALSE(password.empty());
      ++seals_;
      return WrappedFileKey{"00112233aabbccdd", "c2VhbGVkIG1hdGVyaWFs"};
    };
    api_ = std::make_unique<ExportApi>(std::move(deps));
    ASSERT_TRUE(api_->init_status().ok()) << api_->init_status().ToString();
    http::HttpServerOptions options;
    options.worker_threads = 4;
    server_ = http::NewBeastHttpServer(options, api_.get());
    ASSERT_TRUE(server_->Start().ok());
    port_ = server_->port();
    ASSERT_GT(port_, 0);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
  }

  std::string Token(const std::string& user, const std::string& tenant, task::AppCode app,
                    std::vector<std::string> perms, int ttl = 600) {
    auto t = identity::MintToken(auth_, Principal{user, tenant, app, std::move(perms)},
                                 std::chrono::seconds(ttl));
    EXPECT_TRUE(t.ok());
    return *t;
  }

  static httplib::Headers Headers(const std::string& token, httplib::Headers extra = {}) {
    if (!token.empty()) extra.emplace("Authorization", "Bearer " + token);
    return extra;
  }

  static Reply ToReply(const httplib::Result& r) {
    Reply out;
    if (!r) {
      ADD_FAILURE() << "request failed: " << httplib::to_string(r.error());
      return out;
    }
    out.http = r->status;
    out.raw = r->body;
    out.headers = r->headers;
    out.body = json::parse(r->body, nullptr, false);
    return out;
  }

  Reply Get(const std::string& path, const std::string& token, httplib::Headers extra = {}) {
    return ToReply(client_->Get(path.c_str(), Headers(token, std::move(extra))));
  }

  Reply Post(const std::string& path, const std::string& token, const std::string& body = "",
             const std::string& content_type = "application/json") {
    return ToReply(client_->Post(path.c_str(), Headers(token), body, content_type.c_str()));
  }

  Reply Create(const std::string& token, const json& body) {
    return Post(kTasks, token, body.dump());
  }

  // Creates through the API and returns the task id.
  std::string CreateOk(const std::string& token, const json& body) {
    Reply r = Create(token, body);
    EXPECT_EQ(r.code(), "200") << r.raw;
    return r.body["data"].value("id", "");
  }

  // ---- arranging and reading state beside the API ----

  // The database clock, which every time comparison of the store uses.
  int64_t DbNowMs() {
    auto now = store_->DatabaseNowMs();
    EXPECT_TRUE(now.ok()) << now.status().ToString();
    return now.ok() ? *now : 0;
  }

  // Writes `t` into export_task as is, replacing a row with the same id.
  void StoreTask(const task::Task& t) {
    Status s = db_->WithTransaction(store::TxMode::kWrite, [&](store::Connection& c) -> Status {
      EC_RETURN_IF_ERROR(c.Exec("DELETE FROM export_task WHERE id = ?", {t.id}).status());
      return c
          .Exec(
              "INSERT INTO export_task (id, tenant_id, app_code, requested_by, export_type,"
              " task_name, format, parameters_json, params_hash, status, file_name, object_key,"
              " content_type, size_bytes, total_rows, processed_rows, failure_code,"
              " failure_message, dispatch_version, attempt_count, max_attempts, next_retry_at,"
              " lease_owner, lease_until, last_heartbeat_at, execution_deadline_at,"
              " cancel_requested, contract_version, download_count, last_downloaded_at,"
              " requested_at, started_at, completed_at, expires_at, updated_at)"
              " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
              " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
              {t.id,
               t.tenant_id,
               task::ToString(t.app_code),
               t.requested_by,
               t.export_type,
               t.task_name,
               task::ToString(t.format),
               t.parameters_json,
               t.params_hash,
               task::ToString(t.status),
               t.file_name,
               t.object_key,
               t.content_type,
               t.size_bytes,
               t.total_rows,
               t.processed_rows,
               t.failure_code,
               t.failure_message,
               t.dispatch_version,
               t.attempt_count,
               t.max_attempts,
               t.next_retry_at,
               t.lease.owner,
               t.lease.until,
               t.lease.last_heartbeat_at,
               t.execution_deadline_at,
               t.cancel_requested ? 1 : 0,
               t.contract_version,
               t.downloads.count,
               t.downloads.last_at,
               t.requested_at,
               t.started_at,
               t.completed_at,
               t.expires_at,
               t.updated_at})
          .status();
    });
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // The stored task, read past the API.
  std::optional<task::Task> StoredTask(int64_t id) {
    auto t = store_->GetTask(id);
    if (!t.ok()) return std::nullopt;
    return *t;
  }

  // Rows in export_outbox: one per command the API asked to be sent.
  int64_t OutboxRows() {
    auto rows = db_->Query("SELECT COUNT(*) FROM export_outbox");
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? rows->at(0).Int(0) : -1;
  }

  // Lets time pass for one task: its requested_at moves `delta_ms` back.
  void RequestedEarlier(const std::string& id, int64_t delta_ms) {
    auto n = db_->Exec("UPDATE export_task SET requested_at = requested_at - ? WHERE id = ?",
                       {delta_ms, std::stoll(id)});
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    ASSERT_EQ(*n, 1);
  }

  // Stores a committed file under `key`.
  void PutObject(const std::string& key, const std::string& bytes) {
    auto writer = storage_->Create(key);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    ASSERT_TRUE((*writer)->Append(bytes).ok());
    ASSERT_TRUE((*writer)->Commit().ok());
  }

  // Puts a task straight into the store, with a file when SUCCEEDED.
  task::Task PutTask(const std::string& user, TaskState state, const std::string& tenant = "t1",
                     const std::string& file_bytes = "") {
    task::Task t;
    t.id = NextTaskId();
    t.tenant_id = tenant;
    t.requested_by = user;
    t.export_type = "CUSTOMER_LIST";
    t.task_name = "客户列表";
    t.parameters_json = "{}";
    t.status = state;
    t.requested_at = DbNowMs() + t.id;  // distinct, increasing
    if (state == TaskState::kSucceeded) {
      t.object_key = storage::MakeObjectKey(t.id, "xlsx");
      t.file_name = "客户列表_20240501.xlsx";
      t.content_type = std::string(task::ContentType(task::FileFormat::kXlsx));
      t.size_bytes = static_cast<int64_t>(file_bytes.size());
      PutObject(*t.object_key, file_bytes);
    }
    StoreTask(t);
    return t;
  }

  // A SUCCEEDED GOVERNED_LIST task of `user` whose file was governed by
  // `policy` (the columns its requester lacked), as the create records it.
  task::Task PutGovernedTask(const std::string& user, const std::string& bytes,
                             const task::ColumnPolicy& policy) {
    task::Task t = PutTask(user, TaskState::kSucceeded, "t1", bytes);
    std::optional<std::string> text;
    if (!policy.empty()) text = task::ColumnPolicyToJson(policy);
    auto n = db_->Exec(
        "UPDATE export_task SET export_type = 'GOVERNED_LIST', column_policy_json = ? WHERE id = ?",
        {text, t.id});
    EXPECT_TRUE(n.ok() && *n == 1);
    t.export_type = "GOVERNED_LIST";
    t.column_policy = policy;
    return t;
  }

  // One request over a plain socket; returns the raw response (headers and body).
  std::string RawGet(const std::string& path, const std::string& token,
                     const std::string& method = "GET") {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      return "";
    }
    std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
    if (!token.empty()) req += "Authorization: Bearer " + token + "\r\n";
    req += "\r\n";
    ::send(fd, req.data(), req.size(), 0);
    std::string out;
    char buf[65536];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
      out.append(buf, static_cast<size_t>(n));
    ::close(fd);
    return out;
  }

  int64_t NextTaskId() { return ++next_id_; }
  static std::string Id(const task::Task& t) { return std::to_string(t.id); }

  std::string dir_;
  std::shared_ptr<store::Database> db_;               // the SQLite database itself
  std::shared_ptr<fakes::FailingDatabase> database_;  // what the store sees
  std::unique_ptr<store::TaskStore> store_;           // SqlTaskStore over database_
  std::unique_ptr<fakes::ReadRecordingStorage> storage_;
  std::unique_ptr<registry::Registry> registry_;
  registry::RegistrySnapshot next_snapshot_;
  AuthOptions auth_;
  std::unique_ptr<ExportApi> api_;
  std::unique_ptr<http::HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
  int port_ = 0;
  std::atomic<int> wakes_{0};
  std::atomic<int> seals_{0};
  std::vector<std::string> created_types_;
  int64_t next_id_ = 1000;
  std::string alice_, bob_, admin_, eve_, merchant_;
};

// ---- plumbing: health, metrics, page, unknown routes, methods, body size -----

TEST_F(ExportApiTest, HealthReadinessMetricsAndPage) {
  Reply health = Get("/healthz", "");
  EXPECT_EQ(health.http, 200);
  EXPECT_EQ(health.code(), "200");
  EXPECT_EQ(Get("/readyz", "").http, 200);
  database_->SetUnavailable(true);
  Reply down = Get("/readyz", "");
  EXPECT_EQ(down.http, 503);
  EXPECT_EQ(down.code(), "503");
  EXPECT_EQ(Get("/healthz", "").http, 200);
  database_->SetUnavailable(false);

  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(metrics->body, "export_task_created_total 3\n");

  auto page = client_->Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->get_header_value("Content-Type").find("text/html"), std::string::npos);
  EXPECT_NE(page->body.find("/api/platform/v1/files"), std::string::npos);
  EXPECT_NE(page->get_header_value("Content-Security-Policy").find("frame-ancestors 'self'"),
            std::string::npos);
  // The icon the page links to: the browser's console shows no 404.
  EXPECT_NE(page->body.find("/assets/favicon.svg"), std::string::npos);
  auto icon = client_->Get("/assets/favicon.svg");
  ASSERT_TRUE(icon);
  EXPECT_EQ(icon->status, 200);
  EXPECT_EQ(icon->get_header_value("Content-Type"), "image/svg+xml");
  EXPECT_EQ(icon->body.rfind("<svg", 0), 0u);
}

// A decoded %0A in the path would end the access-log line and let the rest
// of the path forge one of its own; a space would forge a field.
TEST_F(ExportApiTest, AccessLogEscapesControlBytesOfThePath) {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>("access-log-test", sink);
  logger->set_level(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  Reply r = Get("/x%0Ahttp%20request_id=forged%20status=200%22%5C%FF", "");
  spdlog::set_default_logger(previous);
  EXPECT_EQ(r.http, 404);
  std::string line;
  for (const std::string& l : sink->last_formatted()) {
    if (l.find("http request_id=") != std::string::npos && l.find("path=/x") != std::string::npos)
      line = l;
  }
  ASSERT_FALSE(line.empty()) << ::testing::PrintToString(sink->last_formatted());
  EXPECT_NE(line.find("path=/x\\u000ahttp\\u0020request_id=forged\\u0020status=200\\u0022\\u005c"
                      "\\xff "),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line only";
}

TEST_F(ExportApiTest, UnknownRouteIsHttp404WithEnvelope) {
  Reply r = Get("/nope", alice_);
  EXPECT_EQ(r.http, 404);
  EXPECT_EQ(r.code(), "404");
  EXPECT_EQ(Get(kBase + "/export-tasks/1/unknown", alice_).http, 404);
}

TEST_F(ExportApiTest, WrongMethodIsHttp405WithEnvelope) {
  auto del = client_->Delete(kTasks.c_str(), Headers(alice_));
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);
  EXPECT_EQ(json::parse(del->body)["code"], "405");
  EXPECT_NE(del->get_header_value("Allow").find("POST"), std::string::npos);
  EXPECT_NE(del->get_header_value("Allow").find("GET"), std::string::npos);

  Reply get_retry = Get(kTasks + "/1/retry", alice_);
  EXPECT_EQ(get_retry.http, 405);
  EXPECT_EQ(get_retry.code(), "405");
  Reply post_download = Post(kTasks + "/1/download", alice_);
  EXPECT_EQ(post_download.http, 405);
  auto put = client_->Put((kTasks + "/1").c_str(), Headers(alice_), "{}", "application/json");
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 405);
}

TEST_F(ExportApiTest, OversizedBodyIsHttp413WithEnvelope) {
  json body = {{"exportType", "CUSTOMER_LIST"}, {"taskName", std::string(70 * 1024, 'x')}};
  Reply r = Create(alice_, body);
  EXPECT_EQ(r.http, 413);
  EXPECT_EQ(r.code(), "413");
  EXPECT_EQ(OutboxRows(), 0);
}

TEST_F(ExportApiTest, RequestIdIsEchoedOrMinted) {
  Reply given = Get("/healthz", "", {{"X-Request-Id", "req-123"}});
  EXPECT_EQ(given.Header("X-Request-Id"), "req-123");
  Reply evil = Get("/healthz", "", {{"X-Request-Id", "bad id\twith spaces"}});
  EXPECT_NE(evil.Header("X-Request-Id"), "");
  EXPECT_NE(evil.Header("X-Request-Id"), "bad id\twith spaces");
}

// ---- authentication -----------------------------------------------------------

TEST_F(ExportApiTest, MissingOrBadTokenIs401InTheEnvelope) {
  Reply none = Get(kTasks, "");
  EXPECT_EQ(none.http, 200);
  EXPECT_EQ(none.code(), "401");
  std::string expired =
      Token("alice", "t1", task::AppCode::kPlatform, {}, -60);  // past the 30 s leeway
  EXPECT_EQ(Get(kTasks, expired).code(), "401");
  std::string forged = alice_.substr(0, alice_.rfind('.') + 1) + "AAAA";
  EXPECT_EQ(Get(kTasks, forged).code(), "401");
  std::string none_alg = Base64UrlEncode(R"({"alg":"none"})") + "." +
                         alice_.substr(alice_.find('.') + 1, alice_.rfind('.') - alice_.find('.'));
  EXPECT_EQ(Get(kTasks, none_alg).code(), "401");
  EXPECT_EQ(Create("", {{"exportType", "CUSTOMER_LIST"}}).code(), "401");
  EXPECT_EQ(OutboxRows(), 0);
}

// ---- create ---------------------------------------------------------------------

TEST_F(ExportApiTest, CreateReturnsTheTaskAndWakesThePublisher) {
  Reply r = Create(alice_, {{"exportType", "CUSTOMER_LIST"},
                            {"parameters", {{"status", "ACTIVE"}, {"keyword", "柏悦"}}}});
  ASSERT_EQ(r.code(), "200") << r.raw;
  EXPECT_EQ(r.http, 200);
  const json& d = r.body["data"];
  EXPECT_TRUE(d["id"].is_string());
  EXPECT_EQ(d["status"], "PENDING");
  EXPECT_EQ(d["taskName"], "客户列表");  // the type's title by default
  EXPECT_EQ(d["format"], "XLSX");
  EXPECT_EQ(d["exportType"], "CUSTOMER_LIST");
  EXPECT_EQ(d["parameters"]["keyword"], "柏悦");
  EXPECT_EQ(d["maxAttempts"], 4);
  EXPECT_EQ(d["dispatchVersion"], 1);
  EXPECT_EQ(d["deduplicated"], false);
  EXPECT_EQ(wakes_.load(), 1);
  ASSERT_EQ(created_types_.size(), 1u);
  EXPECT_EQ(created_types_[0], "CUSTOMER_LIST");
  EXPECT_EQ(OutboxRows(), 1);

  auto stored = StoredTask(std::stoll(d["id"].get<std::string>()));
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->parameters_json, R"({"keyword":"柏悦","status":"ACTIVE"})");
  EXPECT_EQ(stored->params_hash.size(), 64u);
  EXPECT_EQ(stored->tenant_id, "t1");
  EXPECT_EQ(stored->requested_by, "alice");
  EXPECT_EQ(stored->max_attempts, 4);
  EXPECT_FALSE(stored->parameters_json.empty());
}

TEST_F(ExportApiTest, CreateAcceptsFormatNameAndBom) {
  std::string body =
      "\xEF\xBB\xBF" +
      json{{"exportType", "ORDER_LIST"}, {"format", "CSV"}, {"taskName", "五月订单"}}.dump();
  Reply r = ToReply(
      client_->Post(kTasks.c_str(), Headers(alice_), body, "application/json; charset=UTF-8"));
  ASSERT_EQ(r.code(), "200") << r.raw;
  EXPECT_EQ(r.body["data"]["format"], "CSV");
  EXPECT_EQ(r.body["data"]["taskName"], "五月订单");
}

TEST_F(ExportApiTest, DuplicateSubmissionReturnsTheSameTask) {
  std::string first = CreateOk(alice_, {{"exportType", "CUSTOMER_LIST"},
                                        {"parameters", {{"keyword", "a"}, {"status", "ACTIVE"}}}});
  // Same canonical parameters, different key order and an explicit null.
  Reply again =
      Create(alice_, {{"exportType", "CUSTOMER_LIST"},
                      {"parameters", {{"status", "ACTIVE"}, {"keyword", "a"}, {"tags", nullptr}}}});
  ASSERT_EQ(again.code(), "200");
  EXPECT_EQ(again.body["data"]["id"], first);
  EXPECT_EQ(again.body["data"]["deduplicated"], true);
  EXPECT_EQ(wakes_.load(), 1);
  EXPECT_EQ(OutboxRows(), 1);
  // After the 60 s window a new task is made.
  RequestedEarlier(first, 61000);
  Reply later = Create(alice_, {{"exportType", "CUSTOMER_LIST"},
                                {"parameters", {{"keyword", "a"}, {"status", "ACTIVE"}}}});
  EXPECT_NE(later.body["data"]["id"], first);
}

TEST_F(ExportApiTest, ActiveTaskLimitsAre429) {
  for (int i = 0; i < 3; ++i)
    CreateOk(alice_,
             {{"exportType", "CUSTOMER_LIST"}, {"parameters", {{"keyword", std::to_string(i)}}}});
  Reply fourth =
      Create(alice_, {{"exportType", "CUSTOMER_LIST"}, {"parameters", {{"keyword", "x"}}}});
  EXPECT_EQ(fourth.http, 200);
  EXPECT_EQ(fourth.code(), "429");
  for (int i = 0; i < 2; ++i)
    CreateOk(bob_,
             {{"exportType", "CUSTOMER_LIST"}, {"parameters", {{"keyword", std::to_string(i)}}}});
  Reply sixth = Create(admin_, {{"exportType", "CUSTOMER_LIST"}});
  EXPECT_EQ(sixth.code(), "429");  // 5 active of the type
}

TEST_F(ExportApiTest, MalformedBodiesAre400) {
  auto code = [&](const std::string& body, const std::string& type = "application/json") {
    return Post(kTasks, alice_, body, type).code();
  };
  EXPECT_EQ(code("{"), "400");
  EXPECT_EQ(code("not json"), "400");
  EXPECT_EQ(code(""), "400");
  EXPECT_EQ(code(R"({"exportType":"CUSTOMER_LIST","exportType":"ORDER_LIST"})"), "400");
  EXPECT_EQ(code(R"({"exportType":"CUSTOMER_LIST"} {"x":1})"), "400");
  EXPECT_EQ(code(R"({"exportType":"CUSTOMER_LIST"}garbage)"), "400");
  EXPECT_EQ(code(R"({"exportType":"CUSTOMER_LIST","parameters":{"keyword":NaN}})"), "400");
  EXPECT_EQ(code(R"({"exportType":"CUSTOMER_LIST","parameters":{"k0":Infinity}})"), "400");
  EXPECT_EQ(code(R"(["CUSTOMER_LIST"])"), "400");
  EXPECT_EQ(code(R"({"exportType":"CUSTOMER_LIST"})", "text/plain"), "400");
  EXPECT_EQ(code(R"({"exportType":"CUSTOMER_LIST"})", "application/x-www-form-urlencoded"), "400");
  EXPECT_EQ(code(R"({"exportType":"CUSTOMER_LIST","providerUrl":"http://x"})"), "400");
  EXPECT_EQ(OutboxRows(), 0);
  EXPECT_EQ(wakes_.load(), 0);
}

TEST_F(ExportApiTest, ExportTypeRules) {
  EXPECT_EQ(Create(alice_, json::object()).code(), "400");
  EXPECT_EQ(Create(alice_, {{"exportType", ""}}).code(), "400");
  EXPECT_EQ(Create(alice_, {{"exportType", 7}}).code(), "400");
  Reply unknown = Create(alice_, {{"exportType", "NO_SUCH_TYPE"}});
  EXPECT_EQ(unknown.code(), "400");
  EXPECT_NE(unknown.body["message"].get<std::string>().find("NO_SUCH_TYPE"), std::string::npos);
  EXPECT_EQ(Create(alice_, {{"exportType", "OLD_TYPE"}}).code(), "400");  // disabled
  // MERCHANT tokens only create MERCHANT-scope types, and the other way round.
  EXPECT_EQ(Create(merchant_, {{"exportType", "CUSTOMER_LIST"}}).code(), "403");
  EXPECT_EQ(Create(alice_, {{"exportType", "MERCHANT_ORDERS"}}).code(), "403");
  EXPECT_EQ(Create(merchant_, {{"exportType", "MERCHANT_ORDERS"}}).code(), "200");
  std::string no_perm = Token("carol", "t1", task::AppCode::kPlatform, {});
  EXPECT_EQ(Create(no_perm, {{"exportType", "CUSTOMER_LIST"}}).code(), "403");
  EXPECT_EQ(Create(no_perm, {{"exportType", "ORDER_LIST"}}).code(), "200");
}

TEST_F(ExportApiTest, FormatRules) {
  EXPECT_EQ(Create(alice_, {{"exportType", "ORDER_LIST"}, {"format", "xlsx"}}).code(), "400");
  EXPECT_EQ(Create(alice_, {{"exportType", "ORDER_LIST"}, {"format", "PDF"}}).code(), "400");
  EXPECT_EQ(Create(alice_, {{"exportType", "ORDER_LIST"}, {"format", 1}}).code(), "400");
  EXPECT_EQ(Create(alice_, {{"exportType", "ORDER_LIST"}, {"format", "XLSX"}}).code(), "200");
}

// null is "not given" for format and taskName, as for parameters (found by
// tests/integration/api_fuzz_test.py: docs/openapi.json said string only).
TEST_F(ExportApiTest, NullFormatAndTaskNameMeanTheDefaults) {
  Reply r =
      Create(alice_, {{"exportType", "ORDER_LIST"}, {"format", nullptr}, {"taskName", nullptr}});
  ASSERT_EQ(r.code(), "200") << r.raw;
  EXPECT_EQ(r.body["data"]["format"], "XLSX");
  EXPECT_EQ(r.body["data"]["taskName"], "订单列表");  // the type's title
}

TEST_F(ExportApiTest, TaskNameRules) {
  auto code = [&](json name) {
    return Create(alice_, {{"exportType", "ORDER_LIST"}, {"taskName", name}}).code();
  };
  EXPECT_EQ(code(""), "400");
  EXPECT_EQ(code("   "), "400");
  EXPECT_EQ(code(std::string(101, 'a')), "400");
  EXPECT_EQ(code("bad\nname"), "400");
  EXPECT_EQ(code("bad\x7fname"), "400");
  EXPECT_EQ(code(42), "400");
  std::string hundred_chinese;
  for (int i = 0; i < 100; ++i) hundred_chinese += "表";
  Reply ok = Create(alice_, {{"exportType", "ORDER_LIST"}, {"taskName", hundred_chinese}});
  ASSERT_EQ(ok.code(), "200") << ok.raw;
  EXPECT_EQ(ok.body["data"]["taskName"], hundred_chinese);
}

TEST_F(ExportApiTest, ParameterLimits) {
  auto code = [&](json params) {
    return Create(alice_, {{"exportType", "CUSTOMER_LIST"}, {"parameters", params}}).code();
  };
  EXPECT_EQ(code(json::array()), "400");
  EXPECT_EQ(code("keyword"), "400");
  EXPECT_EQ(code({{"filter", {{"a", {{"b", 1}}}}}}), "400");  // depth 3
  EXPECT_EQ(code({{"filter", {{"a", {1}}}}}), "400");         // depth 3 via array
  json twenty_one = json::object();
  for (int i = 0; i < 21; ++i) twenty_one["k" + std::to_string(i)] = "v";
  EXPECT_EQ(code(twenty_one), "400");
  EXPECT_EQ(code({{"keyword", std::string(257, 'a')}}), "400");
  json big = json::object();
  for (int i = 0; i < 17; ++i) big["k" + std::to_string(i)] = std::string(250, 'x');
  EXPECT_EQ(code(big), "400");  // > 4 KB
  EXPECT_EQ(code({{"undeclared", "x"}}), "400");
  EXPECT_EQ(code({{"status", "DELETED"}}), "400");
  EXPECT_EQ(OutboxRows(), 0);
  // The edges themselves are fine.
  EXPECT_EQ(code({{"filter", {{"a", 1}}}, {"keyword", std::string(256, 'a')}}), "200");
}

// ---- read ------------------------------------------------------------------------

TEST_F(ExportApiTest, GetShowsTheTaskWithProgress) {
  task::Task t = PutTask("alice", TaskState::kRunning);
  t.processed_rows = 150;
  t.total_rows = 600;
  t.started_at = 1714552200123;
  StoreTask(t);
  Reply r = Get(kTasks + "/" + Id(t), alice_);
  ASSERT_EQ(r.code(), "200") << r.raw;
  const json& d = r.body["data"];
  EXPECT_EQ(d["id"], Id(t));
  EXPECT_EQ(d["status"], "RUNNING");
  EXPECT_EQ(d["progress"], 25);
  EXPECT_EQ(d["processedRows"], "150");
  EXPECT_EQ(d["totalRows"], "600");
  EXPECT_EQ(d["startedAt"], "2024-05-01T08:30:00.123Z");
  for (const char* key :
       {"exportType", "taskName", "format", "parameters", "fileName", "sizeBytes", "failureCode",
        "failureMessage", "attemptCount", "maxAttempts", "dispatchVersion", "cancelRequested",
        "downloadCount", "requestedAt", "completedAt", "expiresAt"}) {
    EXPECT_TRUE(d.contains(key)) << key;
  }
}

TEST_F(ExportApiTest, MalformedIdsAre400AndUnknownIs404) {
  for (const char* bad : {"0123", "abc", "99999999999999999999", "0", "-1", "1.5", "%20"}) {
    Reply r = Get(kTasks + "/" + bad, alice_);
    EXPECT_EQ(r.code(), "400") << bad;
  }
  EXPECT_EQ(Get(kTasks + "/9223372036854775807", alice_).code(), "404");
  EXPECT_EQ(Get(kTasks + "/424242", alice_).code(), "404");
}

TEST_F(ExportApiTest, OtherTenantsAndUsersSee404) {
  task::Task t = PutTask("alice", TaskState::kPending);
  EXPECT_EQ(Get(kTasks + "/" + Id(t), bob_).code(), "404");
  EXPECT_EQ(Get(kTasks + "/" + Id(t), eve_).code(), "404");       // download:all in another tenant
  EXPECT_EQ(Get(kTasks + "/" + Id(t), merchant_).code(), "404");  // same user, other app
  EXPECT_EQ(Get(kTasks + "/" + Id(t), admin_).code(), "200");
  // The message is the same as for a task that does not exist.
  EXPECT_EQ(Get(kTasks + "/" + Id(t), bob_).body["message"].get<std::string>(),
            "export task " + Id(t) + " not found");
}

// The timeline (docs/http-api.md#get-export-tasksidtimeline--a-tasks-timeline) is
// readable by whoever may read the task, and by nobody else.
TEST_F(ExportApiTest, TimelineShowsTheTasksEventsToWhoeverMayReadIt) {
  const std::string id = CreateOk(alice_, {{"exportType", "CUSTOMER_LIST"}});
  ASSERT_EQ(Post(kTasks + "/" + id + "/cancel", alice_).code(), "200");
  Reply r = Get(kTasks + "/" + id + "/timeline", alice_);
  ASSERT_EQ(r.code(), "200") << r.raw;
  const json& d = r.body["data"];
  EXPECT_EQ(d["taskId"], id);
  EXPECT_EQ(d["status"], "CANCELLED");
  EXPECT_EQ(d["limit"], store::kMaxEventsPerTask);
  ASSERT_EQ(d["events"].size(), 3u) << r.raw;
  EXPECT_EQ(d["events"][0]["kind"], "CREATED");
  EXPECT_EQ(d["events"][0]["details"]["by"], "alice");
  EXPECT_EQ(d["events"][0]["dispatchVersion"], 1);
  EXPECT_EQ(d["events"][1]["kind"], "CANCEL_REQUESTED");
  EXPECT_EQ(d["events"][1]["details"]["state"], "PENDING");
  EXPECT_EQ(d["events"][2]["kind"], "FINISHED");
  EXPECT_EQ(d["events"][2]["details"]["status"], "CANCELLED");
  EXPECT_TRUE(d["events"][2]["id"].is_string());
  EXPECT_EQ(d["events"][2]["at"].get<std::string>().size(), 24u);  // 2024-05-01T08:30:00.123Z

  EXPECT_EQ(Get(kTasks + "/" + id + "/timeline", admin_).code(), "200");
  EXPECT_EQ(Get(kTasks + "/" + id + "/timeline", bob_).code(), "404");
  EXPECT_EQ(Get(kTasks + "/" + id + "/timeline", eve_).code(), "404");
  EXPECT_EQ(Get(kTasks + "/" + id + "/timeline", merchant_).code(), "404");
  EXPECT_EQ(Get(kTasks + "/0123/timeline", alice_).code(), "400");
  EXPECT_EQ(Get(kTasks + "/424242/timeline", alice_).code(), "404");
  EXPECT_EQ(Get(kTasks + "/" + id + "/timeline", "").code(), "401");
}

// The timeline's DOWNLOADED event names who downloaded only to a holder of
// platform:audit:read; a COMMAND_SENT event's send error reaches the task's
// reader classified, never as the channel's text (hosts, brokers).
TEST_F(ExportApiTest, TimelineNamesDownloadersOnlyToAuditorsAndClassifiesSendErrors) {
  task::Task t = PutTask("alice", TaskState::kSucceeded, "t1", "0123456789");
  const std::string path = kTasks + "/" + Id(t) + "/download";
  ASSERT_EQ(client_->Get(path.c_str(), Headers(admin_))->status, 200);
  ASSERT_TRUE(db_->Exec("INSERT INTO export_task_event (id, task_id, dispatch_version, kind,"
                        " details_json, created_at) VALUES (?, ?, 1, 'COMMAND_SENT', ?, ?)",
                        {t.id * 10, t.id,
                         std::string("{\"eventId\":\"e1\",\"sends\":2,\"lastError\":"
                                     "\"connect to broker-7.internal:9876 refused\"}"),
                         DbNowMs() - 1000})
                  .ok());
  auto event_of = [](const Reply& r, const std::string& kind) {
    for (const json& e : r.body["data"]["events"]) {
      if (e["kind"] == kind) return e;
    }
    return json();
  };
  for (const std::string& reader : {alice_, admin_}) {
    Reply r = Get(kTasks + "/" + Id(t) + "/timeline", reader);
    ASSERT_EQ(r.code(), "200") << r.raw;
    const json downloaded = event_of(r, "DOWNLOADED");
    ASSERT_TRUE(downloaded.is_object()) << r.raw;
    EXPECT_EQ(downloaded["details"]["via"], "DIRECT");
    EXPECT_FALSE(downloaded["details"].contains("user")) << r.raw;
    const json sent = event_of(r, "COMMAND_SENT");
    ASSERT_TRUE(sent.is_object()) << r.raw;
    EXPECT_EQ(sent["details"]["sends"], 2);
    EXPECT_EQ(r.raw.find("broker-7"), std::string::npos) << r.raw;
    EXPECT_NE(sent["details"]["lastError"].get<std::string>().find("command channel"),
              std::string::npos);
  }
  const std::string auditing_admin =
      Token("admin", "t1", task::AppCode::kPlatform,
            {std::string(kDownloadAllPermission), std::string(kAuditReadPermission)});
  Reply audited = Get(kTasks + "/" + Id(t) + "/timeline", auditing_admin);
  ASSERT_EQ(audited.code(), "200") << audited.raw;
  EXPECT_EQ(event_of(audited, "DOWNLOADED")["details"]["user"], "admin");
}

TEST_F(ExportApiTest, ListShowsOwnTasksNewestFirst) {
  task::Task a1 = PutTask("alice", TaskState::kPending);
  task::Task a2 = PutTask("alice", TaskState::kFailed);
  PutTask("bob", TaskState::kPending);
  PutTask("eve", TaskState::kPending, "t2");
  Reply r = Get(kTasks, alice_);
  ASSERT_EQ(r.code(), "200") << r.raw;
  const json& d = r.body["data"];
  EXPECT_EQ(d["total"], "2");
  EXPECT_EQ(d["page"], 1);
  EXPECT_EQ(d["size"], 20);
  ASSERT_EQ(d["records"].size(), 2u);
  EXPECT_EQ(d["records"][0]["id"], Id(a2));
  EXPECT_EQ(d["records"][1]["id"], Id(a1));

  EXPECT_EQ(Get(kTasks, admin_).body["data"]["total"], "3");  // whole tenant
  EXPECT_EQ(Get(kTasks, eve_).body["data"]["total"], "1");
  EXPECT_EQ(Get(kTasks + "?status=FAILED", alice_).body["data"]["total"], "1");
  EXPECT_EQ(Get(kTasks + "?exportType=ORDER_LIST", alice_).body["data"]["total"], "0");
  Reply page2 = Get(kTasks + "?page=2&size=1", alice_);
  EXPECT_EQ(page2.body["data"]["records"][0]["id"], Id(a1));
  EXPECT_EQ(page2.body["data"]["size"], 1);
}

TEST_F(ExportApiTest, ListRejectsBadQueries) {
  for (const char* q : {"?size=0", "?size=101", "?size=abc", "?page=0", "?page=-1", "?page=01",
                        "?status=DONE", "?status=pending", "?exportType="}) {
    EXPECT_EQ(Get(kTasks + q, alice_).code(), "400") << q;
  }
  EXPECT_EQ(Get(kTasks + "?size=100&page=3", alice_).code(), "200");
}

// ---- paging by key and bounded totals (docs/http-api.md#paging) ---------------

TEST_F(ExportApiTest, ListPagesByCursorAndTheOldPageParameterStillWorks) {
  std::vector<std::string> newest_first;
  for (int i = 0; i < 5; ++i)
    newest_first.insert(newest_first.begin(), Id(PutTask("alice", TaskState::kFailed)));
  PutTask("bob", TaskState::kFailed);
  std::vector<std::string> got;
  std::string after;
  int pages = 0;
  for (; pages < 10; ++pages) {
    Reply r = Get(kTasks + "?size=2" + (after.empty() ? "" : "&after=" + after), alice_);
    ASSERT_EQ(r.code(), "200") << r.raw;
    const json& d = r.body["data"];
    EXPECT_EQ(d["total"], "5");
    EXPECT_EQ(d["totalIsExact"], true);
    for (const json& t : d["records"]) got.push_back(t["id"].get<std::string>());
    if (d["nextCursor"].is_null()) break;
    after = d["nextCursor"].get<std::string>();
  }
  EXPECT_EQ(pages, 2);  // 2 + 2 + 1
  EXPECT_EQ(got, newest_first);

  // page=2 is the page the first cursor continues to; a cursor outranks page.
  Reply first = Get(kTasks + "?size=2", alice_);
  const std::string cursor = first.body["data"]["nextCursor"].get<std::string>();
  Reply by_page = Get(kTasks + "?size=2&page=2", alice_);
  Reply by_cursor = Get(kTasks + "?size=2&page=3&after=" + cursor, alice_);
  ASSERT_EQ(by_page.code(), "200");
  ASSERT_EQ(by_cursor.code(), "200");
  EXPECT_EQ(by_page.body["data"]["records"], by_cursor.body["data"]["records"]);
  EXPECT_EQ(by_page.body["data"]["records"][0]["id"], newest_first[2]);

  // A cursor is opaque and checked: anything the API did not give out is a 400 naming it.
  std::string tampered = cursor;
  tampered[10] = tampered[10] == '0' ? '1' : '0';
  for (const std::string& bad : {std::string("zzz"), tampered, cursor.substr(1), cursor + "0",
                                 std::string("k") + std::string(36, 'g')}) {
    Reply r = Get(kTasks + "?after=" + bad, alice_);
    EXPECT_EQ(r.code(), "400") << bad;
    EXPECT_NE(r.body["message"].get<std::string>().find("after"), std::string::npos) << r.raw;
  }
}

TEST_F(ExportApiTest, TotalsAreExactUpTo10000ThenSayMore) {
  // 10 050 old FAILED tasks of alice, written in one statement.
  auto n = db_->Exec(
      "INSERT INTO export_task (id, tenant_id, app_code, requested_by, export_type, task_name,"
      " format, parameters_json, params_hash, status, next_retry_at, requested_at, updated_at)"
      " WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10050)"
      " SELECT 1000000 + i, 't1', 'PLATFORM', 'alice', 'CUSTOMER_LIST', 'old', 'XLSX', '{}',"
      " 'h', 'FAILED', 1000 + i, 1000 + i, 1000 + i FROM n");
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  PutTask("alice", TaskState::kPending);
  Reply all = Get(kTasks, alice_);
  ASSERT_EQ(all.code(), "200") << all.raw;
  EXPECT_EQ(all.body["data"]["total"], "10000");
  EXPECT_EQ(all.body["data"]["totalIsExact"], false);
  EXPECT_TRUE(all.body["data"]["nextCursor"].is_string());
  Reply pending = Get(kTasks + "?status=PENDING", alice_);
  EXPECT_EQ(pending.body["data"]["total"], "1");
  EXPECT_EQ(pending.body["data"]["totalIsExact"], true);
  EXPECT_TRUE(pending.body["data"]["nextCursor"].is_null());
  // `page` covers the first 10 000 tasks; deeper pages go by cursor.
  EXPECT_EQ(Get(kTasks + "?size=100&page=100", alice_).code(), "200");
  Reply deep = Get(kTasks + "?size=100&page=101", alice_);
  EXPECT_EQ(deep.code(), "400");
  EXPECT_NE(deep.body["message"].get<std::string>().find("after"), std::string::npos);
}

TEST_F(ExportApiTest, ListFiltersOfTheDownloadCenterTabsAndSearch) {
  task::Task queued = PutTask("alice", TaskState::kPending);
  task::Task retrying = PutTask("alice", TaskState::kPending);
  ASSERT_TRUE(db_->Exec("UPDATE export_task SET attempt_count = 1, task_name = 'Q3 订单'"
                        " WHERE id = ?",
                        {retrying.id})
                  .ok());
  task::Task stale = PutTask("alice", TaskState::kStale);
  PutTask("alice", TaskState::kFailed);
  PutTask("alice", TaskState::kSucceeded, "t1", "file");
  auto total = [&](const std::string& query) {
    Reply r = Get(kTasks + query, alice_);
    EXPECT_EQ(r.code(), "200") << query << " " << r.raw;
    return r.body["data"].value("total", "");
  };
  EXPECT_EQ(total("?status=QUEUED"), "1");
  EXPECT_EQ(Get(kTasks + "?status=RETRYING", alice_).body["data"]["records"][0]["id"],
            Id(retrying));
  EXPECT_EQ(total("?status=FAILED,STALE,INCONSISTENT"), "2");
  EXPECT_EQ(total("?status=SUCCEEDED,FAILED"), "2");
  EXPECT_EQ(total("?name=%E8%AE%A2%E5%8D%95"), "1");  // 订单
  EXPECT_EQ(total("?name=q3"), "1");
  EXPECT_EQ(total("?name=%25"), "0");  // % is a character, not a wildcard
  EXPECT_EQ(total("?name="), "5");     // empty: no filter
  for (const char* bad : {"?status=FAILED,", "?status=,FAILED", "?status=QUEUED,RUNNING"}) {
    EXPECT_EQ(Get(kTasks + bad, alice_).code(), "400") << bad;
  }
  EXPECT_EQ(Get(kTasks + "?name=" + std::string(101, 'x'), alice_).code(), "400");
  (void)queued;
  (void)stale;
}

TEST_F(ExportApiTest, RangeHeaderDoesNotSliceJson) {
  PutTask("alice", TaskState::kPending);
  Reply r = Get(kTasks, alice_, {{"Range", "bytes=0-5"}});
  EXPECT_EQ(r.http, 200);
  EXPECT_EQ(r.code(), "200");
}

TEST_F(ExportApiTest, ExportTypesShowWhatTheCallerMayExport) {
  auto names = [&](const std::string& token) {
    std::vector<std::string> out;
    Reply r = Get(kBase + "/export-types", token);
    for (const auto& t : r.body["data"]) {
      out.push_back(t["exportType"]);
    }
    return out;
  };
  EXPECT_EQ(names(alice_),
            (std::vector<std::string>{"CUSTOMER_LIST", "GOVERNED_LIST", "ORDER_LIST"}));
  EXPECT_EQ(names(merchant_), (std::vector<std::string>{"MERCHANT_ORDERS"}));
  EXPECT_EQ(names(Token("carol", "t1", task::AppCode::kPlatform, {})),
            (std::vector<std::string>{"ORDER_LIST"}));
  Reply all = Get(kBase + "/export-types", alice_);
  const json& types = all.body["data"];
  EXPECT_EQ(types[0]["title"], "客户列表");
  EXPECT_EQ(types[0]["formats"], json({"XLSX", "CSV"}));
  EXPECT_EQ(types[0]["parameters"][1]["name"], "status");
  EXPECT_EQ(types[0]["parameters"][1]["allowed"], json({"ACTIVE", "INACTIVE"}));
  EXPECT_EQ(Get(kBase + "/export-types", "").code(), "401");
}

// ---- download ----------------------------------------------------------------------

TEST_F(ExportApiTest, DownloadStreamsTheFileWithRfc5987Name) {
  std::string bytes;
  for (int i = 0; i < 300000; ++i) bytes.push_back(static_cast<char>('a' + i % 26));
  task::Task t = PutTask("alice", TaskState::kSucceeded, "t1", bytes);
  auto r = client_->Get((kTasks + "/" + Id(t) + "/download").c_str(), Headers(alice_));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, bytes);
  EXPECT_EQ(r->get_header_value("Content-Type"),
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
  // httplib's client percent-decodes header values, so look at the raw bytes.
  std::string raw = RawGet(kTasks + "/" + Id(t) + "/download", alice_);
  EXPECT_NE(raw.find("\r\nContent-Disposition: attachment; filename=\"_____20240501.xlsx\"; "
                     "filename*=UTF-8''%E5%AE%A2%E6%88%B7%E5%88%97%E8%A1%A8_20240501.xlsx\r\n"),
            std::string::npos)
      << raw.substr(0, raw.find("\r\n\r\n"));
  EXPECT_EQ(r->get_header_value("Content-Length"), std::to_string(bytes.size()));
  EXPECT_EQ(r->get_header_value("Accept-Ranges"), "bytes");
  EXPECT_GT(storage_->max_read_length(), 0u);          // read through the wrapper
  EXPECT_LE(storage_->max_read_length(), 64u * 1024);  // streamed in chunks
  EXPECT_EQ(StoredTask(t.id)->downloads.count, 1);     // twice by alice inside the window
}

TEST_F(ExportApiTest, DownloadFileNameIsSanitized) {
  task::Task t = PutTask("alice", TaskState::kSucceeded, "t1", "data");
  t.file_name = "../evil\u202Egnp.xlsx\r\nX-Injected: 1";
  StoreTask(t);
  auto r = client_->Get((kTasks + "/" + Id(t) + "/download").c_str(), Headers(alice_));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_FALSE(r->has_header("X-Injected"));
  std::string cd = r->get_header_value("Content-Disposition");
  EXPECT_EQ(cd.find('/'), std::string::npos);
  EXPECT_EQ(cd.find("\u202E"), std::string::npos);  // the client decoded %XX already
  EXPECT_NE(cd.find("filename=\"evilgnp.xlsxX-Injected: 1\""), std::string::npos) << cd;
}

TEST_F(ExportApiTest, DownloadHonoursRanges) {
  std::string bytes = "0123456789abcdefghij";
  task::Task t = PutTask("alice", TaskState::kSucceeded, "t1", bytes);
  std::string path = kTasks + "/" + Id(t) + "/download";
  auto get = [&](const std::string& range) {
    return client_->Get(path.c_str(), Headers(alice_, {{"Range", range}}));
  };
  auto first = get("bytes=0-9");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 206);
  EXPECT_EQ(first->body, "0123456789");
  EXPECT_EQ(first->get_header_value("Content-Range"), "bytes 0-9/20");
  auto suffix = get("bytes=-5");
  EXPECT_EQ(suffix->status, 206);
  EXPECT_EQ(suffix->body, "fghij");
  EXPECT_EQ(suffix->get_header_value("Content-Range"), "bytes 15-19/20");
  auto open = get("bytes=18-");
  EXPECT_EQ(open->status, 206);
  EXPECT_EQ(open->body, "ij");
  auto clamp = get("bytes=10-999");
  EXPECT_EQ(clamp->body, "abcdefghij");
  auto unsatisfiable = get("bytes=20-");
  EXPECT_EQ(unsatisfiable->status, 416);
  EXPECT_EQ(unsatisfiable->get_header_value("Content-Range"), "bytes */20");
  EXPECT_EQ(json::parse(unsatisfiable->body)["code"], "416");
  auto multi = get("bytes=0-1,5-6");
  EXPECT_EQ(multi->status, 200);  // multi-range is ignored
  EXPECT_EQ(multi->body, bytes);
  // One user's ranges inside the window are one download.
  EXPECT_EQ(StoredTask(t.id)->downloads.count, 1);
}

TEST_F(ExportApiTest, DownloadErrorsUseRealHttpStatuses) {
  task::Task ok = PutTask("alice", TaskState::kSucceeded, "t1", "data");
  task::Task running = PutTask("alice", TaskState::kRunning);
  task::Task expired = PutTask("alice", TaskState::kExpired);
  auto status = [&](const std::string& id, const std::string& token) {
    Reply r = Get(kTasks + "/" + id + "/download", token);
    if (r.http != 200) {
      EXPECT_EQ(r.code(), std::to_string(r.http)) << r.raw;
    }
    return r.http;
  };
  EXPECT_EQ(status(Id(ok), ""), 401);
  EXPECT_EQ(status(Id(ok), Token("alice", "t1", task::AppCode::kPlatform, {}, -60)),
            401);  // expired past the leeway
  EXPECT_EQ(status(Id(ok), bob_), 404);
  EXPECT_EQ(status(Id(ok), eve_), 404);
  EXPECT_EQ(status(Id(ok), admin_), 200);
  EXPECT_EQ(status("0123", alice_), 400);
  EXPECT_EQ(status("424242", alice_), 404);
  EXPECT_EQ(status(Id(running), alice_), 409);
  EXPECT_EQ(status(Id(expired), alice_), 410);
  ASSERT_TRUE(storage_->Delete(*ok.object_key).ok());
  EXPECT_EQ(status(Id(ok), alice_), 410);
}

TEST_F(ExportApiTest, SignedDownloadUrl) {
  task::Task t = PutTask("alice", TaskState::kSucceeded, "t1", "signed-bytes");
  Reply r = Post(kTasks + "/" + Id(t) + "/download-url", alice_);
  ASSERT_EQ(r.code(), "200") << r.raw;
  std::string url = r.body["data"]["url"];
  EXPECT_EQ(url.rfind("http://files.example.test" + kBase + "/downloads/", 0), 0u) << url;
  EXPECT_TRUE(r.body["data"]["expiresAt"].is_string());
  std::string path = url.substr(std::string("http://files.example.test").size());

  auto file = client_->Get(path.c_str());  // no Authorization: the link is the credential
  ASSERT_TRUE(file);
  EXPECT_EQ(file->status, 200);
  EXPECT_EQ(file->body, "signed-bytes");
  EXPECT_NE(file->get_header_value("Content-Disposition").find("filename*=UTF-8''"),
            std::string::npos);
  auto ranged = client_->Get(path.c_str(), {{"Range", "bytes=0-5"}});
  EXPECT_EQ(ranged->status, 206);
  EXPECT_EQ(ranged->body, "signed");

  // Forged: a grant signed with another secret, or a tampered token.
  DownloadGrant grant{t.id, "t1", "alice", DbNowMs() + 60000};
  auto forged = client_->Get((kBase + "/downloads/" + SignDownloadGrant("wrong", grant)).c_str());
  EXPECT_EQ(forged->status, 403);
  EXPECT_EQ(json::parse(forged->body)["code"], "403");
  std::string token = path.substr(path.rfind('/') + 1);
  token[2] = token[2] == 'A' ? 'B' : 'A';
  EXPECT_EQ(client_->Get((kBase + "/downloads/" + token).c_str())->status, 403);
  EXPECT_EQ(client_->Get((kBase + "/downloads/garbage").c_str())->status, 403);

  // Expired.
  DownloadGrant old{t.id, "t1", "alice", 1000};
  auto expired =
      client_->Get((kBase + "/downloads/" + SignDownloadGrant(kDownloadSecret, old)).c_str());
  EXPECT_EQ(expired->status, 410);
  EXPECT_EQ(json::parse(expired->body)["code"], "410");
  // A grant for another tenant's view of the task, or a missing task.
  DownloadGrant other{t.id, "t2", "eve", DbNowMs() + 600000};
  EXPECT_EQ(
      client_->Get((kBase + "/downloads/" + SignDownloadGrant(kDownloadSecret, other)).c_str())
          ->status,
      404);
}

// storage.s3.download: presigned — the same checks, then a 302 to the store.
TEST_F(ExportApiTest, PresigningStorageGetsARedirectAfterTheSameChecks) {
  task::Task t = PutTask("alice", TaskState::kSucceeded, "t1", "bytes in the store");
  task::Task running = PutTask("alice", TaskState::kRunning);
  task::Task expired = PutTask("alice", TaskState::kExpired);
  storage_->PresignAs("https://store.example.test/b/");
  const std::string path = kTasks + "/" + Id(t) + "/download";
  auto r = client_->Get(path.c_str(), Headers(alice_));  // httplib does not follow redirects
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 302);
  EXPECT_EQ(r->get_header_value("Location"), "https://store.example.test/b/" + *t.object_key);
  EXPECT_EQ(r->get_header_value("Cache-Control"), "private, no-store");
  const storage::DownloadHeaders signed_headers = storage_->last_presigned_headers();
  EXPECT_EQ(signed_headers.content_disposition,
            "attachment; filename=\"_____20240501.xlsx\"; "
            "filename*=UTF-8''%E5%AE%A2%E6%88%B7%E5%88%97%E8%A1%A8_20240501.xlsx");
  EXPECT_EQ(signed_headers.content_type,
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
  EXPECT_EQ(StoredTask(t.id)->downloads.count, 1);
  store::DownloadAuditQuery audit;
  audit.tenant_id = "t1";
  auto rows = store_->ListDownloadAudit(audit);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->records.size(), 1u);
  EXPECT_EQ(rows->records[0].record.served_by, "PRESIGNED_REDIRECT");
  EXPECT_EQ(rows->records[0].record.via, "DIRECT");
  // A resumed download (Range past 0) is redirected; inside the window it is
  // the same download.
  auto resumed = client_->Get(path.c_str(), Headers(alice_, {{"Range", "bytes=5-"}}));
  EXPECT_EQ(resumed->status, 302);
  EXPECT_EQ(StoredTask(t.id)->downloads.count, 1);
  EXPECT_EQ(storage_->max_read_length(), 0u);  // the center read no byte

  // Who may download, and what is ready, are decided here as before.
  auto status = [&](const std::string& id, const std::string& token) {
    return client_->Get((kTasks + "/" + id + "/download").c_str(), Headers(token))->status;
  };
  EXPECT_EQ(status(Id(t), ""), 401);
  EXPECT_EQ(status(Id(t), bob_), 404);
  EXPECT_EQ(status(Id(t), eve_), 404);
  EXPECT_EQ(status(Id(running), alice_), 409);
  EXPECT_EQ(status(Id(expired), alice_), 410);

  // The signed-URL endpoint redirects too.
  Reply link = Post(kTasks + "/" + Id(t) + "/download-url", alice_);
  ASSERT_EQ(link.code(), "200") << link.raw;
  std::string url = link.body["data"]["url"];
  auto via_link = client_->Get(url.substr(std::string("http://files.example.test").size()).c_str());
  EXPECT_EQ(via_link->status, 302);
  EXPECT_EQ(via_link->get_header_value("Location"),
            "https://store.example.test/b/" + *t.object_key);

  // A file that is gone answers 410 here, not the store's 404 later.
  ASSERT_TRUE(storage_->Delete(*t.object_key).ok());
  EXPECT_EQ(status(Id(t), alice_), 410);
}

// ---- download audit and the permission re-check (docs/http-api.md#download-audit) ----

TEST_F(ExportApiTest, DownloadIsAuditedOncePerDownloadNotPerRangeChunk) {
  task::Task t = PutTask("alice", TaskState::kSucceeded, "t1", "0123456789abcdef");
  const std::string path = kTasks + "/" + Id(t) + "/download";
  const httplib::Headers ua = {{"User-Agent", "Mozilla/5.0 \xe6\xb5\x8b"}};
  auto whole = client_->Get(path.c_str(), Headers(alice_, ua));
  ASSERT_EQ(whole->status, 200);
  // A resumed download in three chunks: the same download, inside the window.
  for (const char* range : {"bytes=0-4", "bytes=5-9", "bytes=10-"}) {
    httplib::Headers h = Headers(alice_, ua);
    h.emplace("Range", range);
    ASSERT_EQ(client_->Get(path.c_str(), h)->status, 206) << range;
  }
  EXPECT_EQ(client_->Head(path.c_str(), Headers(alice_))->status, 200);  // HEAD: headers only
  EXPECT_EQ(StoredTask(t.id)->downloads.count, 1);
  ASSERT_EQ(client_->Get(path.c_str(), Headers(admin_, ua))->status, 200);  // another user
  EXPECT_EQ(StoredTask(t.id)->downloads.count, 2);

  Reply task = Get(kTasks + "/" + Id(t), alice_);
  EXPECT_EQ(task.body["data"]["downloadCount"], "2");
  EXPECT_TRUE(task.body["data"]["lastDownloadedAt"].is_string()) << task.raw;

  const std::string auditor =
      Token("auditor", "t1", task::AppCode::kPlatform, {std::string(kAuditReadPermission)});
  Reply audit = Get(kBase + "/download-audit?taskId=" + Id(t), auditor);
  ASSERT_EQ(audit.code(), "200") << audit.raw;
  const json& data = audit.body["data"];
  EXPECT_EQ(data["total"], "2");
  ASSERT_EQ(data["records"].size(), 2u);
  const json& row = data["records"][1];  // newest first: admin's, then alice's
  EXPECT_EQ(data["records"][0]["user"], "admin");
  EXPECT_EQ(row["taskId"], Id(t));
  EXPECT_EQ(row["user"], "alice");
  EXPECT_EQ(row["tenantId"], "t1");
  EXPECT_EQ(row["appCode"], "PLATFORM");
  EXPECT_EQ(row["exportType"], "CUSTOMER_LIST");
  EXPECT_EQ(row["via"], "DIRECT");
  EXPECT_EQ(row["servedBy"], "STREAM");
  EXPECT_EQ(row["clientAddress"], "127.0.0.1");
  EXPECT_EQ(row["userAgent"], "Mozilla/5.0 ???");  // non-ASCII bytes are not stored
  EXPECT_FALSE(row["requestId"].get<std::string>().empty());
  EXPECT_TRUE(row["downloadedAt"].is_string());
}

// docs/http-api.md#download-audit: every answer that hands out file bytes or a URL to them
// is audited — once per (task, user, limits.download_audit_window_seconds).
TEST_F(ExportApiTest, EveryAnswerThatHandsOutTheFileIsAuditedOncePerWindow) {
  const std::string bytes = "0123456789abcdefghij";
  auto audit_rows = [&](const task::Task& t) {
    store::DownloadAuditQuery q;
    q.tenant_id = "t1";
    q.task_id = t.id;
    auto page = store_->ListDownloadAudit(q);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    return page.ok() ? page->total : -1;
  };
  auto get = [&](const task::Task& t, const httplib::Headers& h) {
    return client_->Get((kTasks + "/" + Id(t) + "/download").c_str(), h);
  };

  // All but the first byte.
  task::Task skip_first = PutTask("alice", TaskState::kSucceeded, "t1", bytes);
  auto r = get(skip_first, Headers(alice_, {{"Range", "bytes=1-"}}));
  ASSERT_EQ(r->status, 206);
  EXPECT_EQ(r->body, bytes.substr(1));
  EXPECT_EQ(StoredTask(skip_first.id)->downloads.count, 1);
  EXPECT_EQ(audit_rows(skip_first), 1);

  // A middle range, then the rest of the file: one download.
  task::Task middle = PutTask("alice", TaskState::kSucceeded, "t1", bytes);
  EXPECT_EQ(get(middle, Headers(alice_, {{"Range", "bytes=5-9"}}))->body, "56789");
  EXPECT_EQ(get(middle, Headers(alice_, {{"Range", "bytes=-5"}}))->status, 206);
  EXPECT_EQ(get(middle, Headers(alice_))->status, 200);
  EXPECT_EQ(StoredTask(middle.id)->downloads.count, 1);
  EXPECT_EQ(audit_rows(middle), 1);

  // A download manager: 16 ranges at once, each on its own connection.
  task::Task parallel = PutTask("alice", TaskState::kSucceeded, "t1", std::string(1600, 'x'));
  std::vector<std::thread> threads;
  std::atomic<int> partial{0};
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&, i] {
      httplib::Client c("127.0.0.1", port_);
      const std::string range =
          "bytes=" + std::to_string(i * 100) + "-" + std::to_string(i * 100 + 99);
      auto part = c.Get((kTasks + "/" + Id(parallel) + "/download").c_str(),
                        Headers(alice_, {{"Range", range}}));
      if (part && part->status == 206 && part->body.size() == 100) ++partial;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(partial, 16);
  EXPECT_EQ(StoredTask(parallel.id)->downloads.count, 1);
  EXPECT_EQ(audit_rows(parallel), 1);

  // HEAD sends headers only and a 416 sends nothing: neither is audited.
  task::Task head = PutTask("alice", TaskState::kSucceeded, "t1", bytes);
  EXPECT_EQ(client_->Head((kTasks + "/" + Id(head) + "/download").c_str(), Headers(alice_))->status,
            200);
  EXPECT_EQ(get(head, Headers(alice_, {{"Range", "bytes=20-"}}))->status, 416);
  EXPECT_EQ(StoredTask(head.id)->downloads.count, 0);
  EXPECT_EQ(audit_rows(head), 0);

  // The window passes: the same user's next download counts again.
  auto aged = db_->Exec(
      "UPDATE export_download_audit SET downloaded_at = downloaded_at - 601000 WHERE task_id = ?",
      {skip_first.id});
  ASSERT_TRUE(aged.ok()) << aged.status().ToString();
  EXPECT_EQ(get(skip_first, Headers(alice_, {{"Range", "bytes=1-"}}))->status, 206);
  EXPECT_EQ(StoredTask(skip_first.id)->downloads.count, 2);
  EXPECT_EQ(audit_rows(skip_first), 2);

  // Presigned: every 302 hands out a URL to the whole object — a HEAD, or
  // any Range — and is audited; once per window.
  storage_->PresignAs("https://store.example.test/b/");
  task::Task presigned_head = PutTask("alice", TaskState::kSucceeded, "t1", bytes);
  auto h =
      client_->Head((kTasks + "/" + Id(presigned_head) + "/download").c_str(), Headers(alice_));
  ASSERT_EQ(h->status, 302);
  EXPECT_FALSE(h->get_header_value("Location").empty());
  EXPECT_EQ(StoredTask(presigned_head.id)->downloads.count, 1);
  EXPECT_EQ(audit_rows(presigned_head), 1);
  task::Task presigned_range = PutTask("alice", TaskState::kSucceeded, "t1", bytes);
  EXPECT_EQ(get(presigned_range, Headers(alice_, {{"Range", "bytes=1-"}}))->status, 302);
  EXPECT_EQ(get(presigned_range, Headers(alice_, {{"Range", "bytes=5-9"}}))->status, 302);
  EXPECT_EQ(get(presigned_range, Headers(alice_))->status, 302);
  EXPECT_EQ(StoredTask(presigned_range.id)->downloads.count, 1);
  EXPECT_EQ(audit_rows(presigned_range), 1);
}

TEST_F(ExportApiTest, SignedLinkDownloadIsAuditedAsTheSigner) {
  task::Task t = PutTask("alice", TaskState::kSucceeded, "t1", "signed");
  Reply link = Post(kTasks + "/" + Id(t) + "/download-url", admin_);  // admin signs alice's task
  ASSERT_EQ(link.code(), "200") << link.raw;
  std::string url = link.body["data"]["url"];
  auto file = client_->Get(url.substr(std::string("http://files.example.test").size()).c_str());
  ASSERT_EQ(file->status, 200);
  const std::string auditor =
      Token("auditor", "t1", task::AppCode::kPlatform, {std::string(kAuditReadPermission)});
  Reply audit = Get(kBase + "/download-audit", auditor);
  ASSERT_EQ(audit.body["data"]["records"].size(), 1u) << audit.raw;
  EXPECT_EQ(audit.body["data"]["records"][0]["user"], "admin");
  EXPECT_EQ(audit.body["data"]["records"][0]["via"], "SIGNED_LINK");
}

TEST_F(ExportApiTest, DownloadAuditNeedsItsPermissionAndStaysInTheTenant) {
  task::Task mine = PutTask("alice", TaskState::kSucceeded, "t1", "a");
  task::Task theirs = PutTask("eve", TaskState::kSucceeded, "t2", "b");
  ASSERT_EQ(client_->Get((kTasks + "/" + Id(mine) + "/download").c_str(), Headers(alice_))->status,
            200);
  ASSERT_EQ(client_->Get((kTasks + "/" + Id(theirs) + "/download").c_str(), Headers(eve_))->status,
            200);
  const std::string audit = kBase + "/download-audit";
  EXPECT_EQ(Get(audit, "").code(), "401");
  EXPECT_EQ(Get(audit, alice_).code(), "403");
  EXPECT_EQ(Get(audit, admin_).code(), "403");  // download:all is not audit:read
  const std::string t1 =
      Token("auditor", "t1", task::AppCode::kPlatform, {std::string(kAuditReadPermission)});
  const std::string t2 =
      Token("auditor", "t2", task::AppCode::kPlatform, {std::string(kAuditReadPermission)});
  const std::string t1_merchant =
      Token("auditor", "t1", task::AppCode::kMerchant, {std::string(kAuditReadPermission)});
  Reply r1 = Get(audit, t1);
  ASSERT_EQ(r1.body["data"]["total"], "1") << r1.raw;
  EXPECT_EQ(r1.body["data"]["records"][0]["taskId"], Id(mine));
  Reply r2 = Get(audit, t2);
  ASSERT_EQ(r2.body["data"]["total"], "1") << r2.raw;
  EXPECT_EQ(r2.body["data"]["records"][0]["taskId"], Id(theirs));
  EXPECT_EQ(Get(audit, t1_merchant).body["data"]["total"], "0");
  // Another tenant's task id finds nothing, exactly like no downloads at all.
  EXPECT_EQ(Get(audit + "?taskId=" + Id(theirs), t1).body["data"]["total"], "0");

  // Filters.
  EXPECT_EQ(Get(audit + "?user=alice", t1).body["data"]["total"], "1");
  EXPECT_EQ(Get(audit + "?user=bob", t1).body["data"]["total"], "0");
  EXPECT_EQ(Get(audit + "?from=2000-01-01T00:00:00Z&to=2999-01-01T00:00:00.000Z", t1)
                .body["data"]["total"],
            "1");
  EXPECT_EQ(Get(audit + "?from=2999-01-01T00:00:00Z", t1).body["data"]["total"], "0");
  Reply paged = Get(audit + "?page=2&size=1", t1);
  EXPECT_EQ(paged.body["data"]["records"].size(), 0u);
  EXPECT_EQ(paged.body["data"]["page"], 2);
  EXPECT_EQ(paged.body["data"]["size"], 1);
  // Bad input: 400 naming the parameter.
  for (const char* bad :
       {"?taskId=abc", "?taskId=0", "?from=2024-05-01", "?to=2024-02-30T00:00:00Z",
        "?from=2024-05-02T00:00:00Z&to=2024-05-01T00:00:00Z", "?page=0", "?size=101", "?user="}) {
    Reply r = Get(audit + bad, t1);
    EXPECT_EQ(r.code(), "400") << bad << " " << r.raw;
    EXPECT_TRUE(r.body["data"].is_null());
  }
}

TEST_F(ExportApiTest, DownloadRechecksTheTypePermission) {
  task::Task t = PutTask("alice", TaskState::kSucceeded, "t1", "bytes");
  // Alice's own task, but her token no longer carries customer:export.
  const std::string demoted = Token("alice", "t1", task::AppCode::kPlatform, {});
  const std::string path = kTasks + "/" + Id(t) + "/download";
  auto direct = client_->Get(path.c_str(), Headers(demoted));
  EXPECT_EQ(direct->status, 403);
  EXPECT_EQ(json::parse(direct->body)["code"], "403");
  EXPECT_NE(direct->body.find("customer:export"), std::string::npos);
  EXPECT_EQ(Post(kTasks + "/" + Id(t) + "/download-url", demoted).code(), "403");
  // Not counted, not audited.
  EXPECT_EQ(StoredTask(t.id)->downloads.count, 0);
  EXPECT_EQ(client_->Get(path.c_str(), Headers(alice_))->status, 200);
}

TEST_F(ExportApiTest, SignedLinkCarriesTheSignersPermissionAtSigningTime) {
  task::Task t = PutTask("alice", TaskState::kSucceeded, "t1", "bytes");
  Reply link = Post(kTasks + "/" + Id(t) + "/download-url", alice_);
  ASSERT_EQ(link.code(), "200") << link.raw;
  const std::string path = link.body["data"]["url"].get<std::string>().substr(
      std::string("http://files.example.test").size());
  EXPECT_EQ(client_->Get(path.c_str())->status, 200);

  // The type now requires another permission: the link signed under the old one is refused.
  next_snapshot_ = MakeSnapshot();
  next_snapshot_.definitions["CUSTOMER_LIST"].required_permission = "customer:export:v2";
  ASSERT_TRUE(registry_->Reload("test").ok());
  auto refused = client_->Get(path.c_str());
  EXPECT_EQ(refused->status, 403);
  EXPECT_EQ(json::parse(refused->body)["code"], "403");
  // ... and alice, without the new permission, cannot sign a new one.
  EXPECT_EQ(Post(kTasks + "/" + Id(t) + "/download-url", alice_).code(), "403");
  EXPECT_EQ(StoredTask(t.id)->downloads.count, 1);

  // A type removed from the registry: its files are closed (fail closed).
  next_snapshot_.definitions.erase("CUSTOMER_LIST");
  ASSERT_TRUE(registry_->Reload("test").ok());
  EXPECT_EQ(client_->Get(path.c_str(), Headers(admin_))->status, 403);
  EXPECT_EQ(client_->Get((kTasks + "/" + Id(t) + "/download").c_str(), Headers(admin_))->status,
            403);
}

// ---- column governance of downloads (docs/http-api.md#column-governance-of-downloads) ----

// What GOVERNED_LIST's file is for a requester without either permission.
task::ColumnPolicy MaskedMobileOmittedBalance() {
  task::ColumnPolicy p;
  task::ColumnDecision mobile;
  mobile.key = "mobile";
  mobile.action = task::ColumnAction::kMask;
  mobile.keep_first = 3;
  mobile.keep_last = 4;
  task::ColumnDecision balance;
  balance.key = "balance";
  p.decisions = {mobile, balance};
  return p;
}

void ExpectColumnsRefusal(const std::string& body, const std::string& task_id,
                          const std::vector<std::string>& columns) {
  json j = json::parse(body, nullptr, false);
  ASSERT_TRUE(j.is_object()) << body;
  EXPECT_EQ(j["code"], "403") << body;
  EXPECT_EQ(j["data"]["reason"], "COLUMNS_NOT_PERMITTED") << body;
  EXPECT_EQ(j["data"]["columns"], json(columns)) << body;
  EXPECT_EQ(j["data"]["exportAgain"], kTasks + "/" + task_id + "/export-again") << body;
  const std::string message = j["message"];
  EXPECT_NE(message.find("export again"), std::string::npos) << message;
  for (const std::string& c : columns) EXPECT_NE(message.find(c), std::string::npos) << message;
}

// A file governed for its requester is handed to another reader only when it
// is no wider than that reader's own: a platform:download:all holder without
// the columns' permissions, the requester after a permission was taken away.
TEST_F(ExportApiTest, AFileWiderThanTheReadersColumnsIsRefusedWithExportAgain) {
  const std::string full_perms[] = {"customer:export", "customer:contact", "customer:finance"};
  const std::string boss =
      Token("boss", "t1", task::AppCode::kPlatform, {full_perms[0], full_perms[1], full_perms[2]});
  // boss held both permissions: the file has every column.
  task::Task full = PutGovernedTask("boss", "full-file", task::ColumnPolicy{});
  // alice held neither: mobile masked, balance omitted.
  task::Task narrow = PutGovernedTask("alice", "narrow-file", MaskedMobileOmittedBalance());
  auto download = [&](const task::Task& t, const std::string& token) {
    return client_->Get((kTasks + "/" + Id(t) + "/download").c_str(), Headers(token));
  };

  // admin (platform:download:all, neither column permission) reads boss's file: refused.
  auto refused = download(full, admin_);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403);
  ExpectColumnsRefusal(refused->body, Id(full), {"mobile", "balance"});
  Reply url = Post(kTasks + "/" + Id(full) + "/download-url", admin_);
  EXPECT_EQ(url.http, 200);
  ExpectColumnsRefusal(url.raw, Id(full), {"mobile", "balance"});
  EXPECT_EQ(StoredTask(full.id)->downloads.count, 0);  // nothing counted or audited
  // ... but alice's file is exactly as narrow as admin's own would be.
  EXPECT_EQ(download(narrow, admin_)->status, 200);
  EXPECT_EQ(download(narrow, admin_)->body, "narrow-file");
  // Holding one permission: the other column is still wider.
  const std::string finance =
      Token("fin", "t1", task::AppCode::kPlatform,
            {"customer:export", "customer:finance", std::string(kDownloadAllPermission)});
  ExpectColumnsRefusal(download(full, finance)->body, Id(full), {"mobile"});
  EXPECT_EQ(download(narrow, finance)->status, 200);  // narrower than theirs: fine

  // The requester, after a permission was taken away.
  EXPECT_EQ(download(full, boss)->status, 200);
  const std::string demoted =
      Token("boss", "t1", task::AppCode::kPlatform, {"customer:export", "customer:contact"});
  auto own = download(full, demoted);
  EXPECT_EQ(own->status, 403);
  ExpectColumnsRefusal(own->body, Id(full), {"balance"});

  // Presigned storage: refused before any redirect.
  storage_->PresignAs("https://store.example.test/b/");
  auto presigned = download(full, admin_);
  EXPECT_EQ(presigned->status, 403);
  EXPECT_EQ(presigned->get_header_value("Location"), "");
  ExpectColumnsRefusal(presigned->body, Id(full), {"mobile", "balance"});
  EXPECT_EQ(download(full, boss)->status, 302);
  EXPECT_EQ(download(narrow, admin_)->status, 302);

  // Export again writes the caller's own governed file.
  Reply again = Post(kTasks + "/" + Id(full) + "/export-again", admin_);
  ASSERT_EQ(again.code(), "200") << again.raw;
  EXPECT_EQ(again.body["data"]["columnPolicy"]["masked"], 1) << again.raw;
  EXPECT_EQ(again.body["data"]["columnPolicy"]["omitted"], 1) << again.raw;
}

// A signed link carries the signer's column permissions: following it decides
// the signer's policy against the rules in force then.
TEST_F(ExportApiTest, ASignedLinkCarriesTheSignersColumnPermissions) {
  const std::string boss = Token("boss", "t1", task::AppCode::kPlatform,
                                 {"customer:export", "customer:contact", "customer:finance"});
  task::Task full = PutGovernedTask("boss", "full-file", task::ColumnPolicy{});
  auto follow = [&](const Reply& link) {
    const std::string url = link.body["data"]["url"];
    return client_->Get(url.substr(std::string("http://files.example.test").size()).c_str());
  };
  Reply link = Post(kTasks + "/" + Id(full) + "/download-url", boss);
  ASSERT_EQ(link.code(), "200") << link.raw;
  auto file = follow(link);
  EXPECT_EQ(file->status, 200);
  EXPECT_EQ(file->body, "full-file");

  // A grant that names no column permission (signed before column governance
  // of downloads, or by a reader without them) opens nothing wider.
  DownloadGrant bare{full.id, "t1", "admin", DbNowMs() + 60000, "customer:export"};
  auto forged_path = kBase + "/downloads/" + SignDownloadGrant(kDownloadSecret, bare);
  auto bare_answer = client_->Get(forged_path.c_str());
  EXPECT_EQ(bare_answer->status, 403);
  ExpectColumnsRefusal(bare_answer->body, Id(full), {"mobile", "balance"});
  // ... while one narrow enough for it is served.
  task::Task narrow = PutGovernedTask("alice", "narrow-file", MaskedMobileOmittedBalance());
  DownloadGrant narrow_grant{narrow.id, "t1", "admin", DbNowMs() + 60000, "customer:export"};
  EXPECT_EQ(
      client_
          ->Get((kBase + "/downloads/" + SignDownloadGrant(kDownloadSecret, narrow_grant)).c_str())
          ->status,
      200);

  // The rule of balance now needs another permission: boss's link no longer covers it.
  next_snapshot_ = MakeSnapshot();
  next_snapshot_.definitions["GOVERNED_LIST"].column_rules[1].required_permission =
      "customer:finance:v2";
  ASSERT_TRUE(registry_->Reload("test").ok());
  auto stale = follow(link);
  EXPECT_EQ(stale->status, 403);
  ExpectColumnsRefusal(stale->body, Id(full), {"balance"});
  // The presigned route refuses it the same way, before the redirect.
  storage_->PresignAs("https://store.example.test/b/");
  EXPECT_EQ(follow(link)->status, 403);
  EXPECT_EQ(StoredTask(full.id)->downloads.count, 1);  // only the first follow
}

TEST_F(ExportApiTest, OpenApiDocumentIsServed) {
  auto r = client_->Get("/openapi.json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  json doc = json::parse(r->body, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << r->body.substr(0, 200);
  EXPECT_EQ(doc["openapi"], "3.1.0");
  EXPECT_TRUE(doc["paths"].contains(kBase + "/download-audit"));
}

TEST_F(ExportApiTest, DownloadUrlRules) {
  task::Task running = PutTask("alice", TaskState::kRunning);
  task::Task done = PutTask("alice", TaskState::kSucceeded, "t1", "x");
  EXPECT_EQ(Post(kTasks + "/" + Id(running) + "/download-url", alice_).code(), "409");
  EXPECT_EQ(Post(kTasks + "/" + Id(done) + "/download-url", bob_).code(), "404");
  EXPECT_EQ(Post(kTasks + "/" + Id(done) + "/download-url", "").code(), "401");
  EXPECT_EQ(Post(kTasks + "/abc/download-url", alice_).code(), "400");
  Reply ok = Post(kTasks + "/" + Id(done) + "/download-url", admin_);
  EXPECT_EQ(ok.code(), "200");
}

// ---- retry / cancel ----------------------------------------------------------------

TEST_F(ExportApiTest, ManualRetry) {
  task::Task failed = PutTask("alice", TaskState::kFailed);
  Reply r = Post(kTasks + "/" + Id(failed) + "/retry", alice_);
  ASSERT_EQ(r.code(), "200") << r.raw;
  EXPECT_EQ(r.body["data"]["status"], "PENDING");
  EXPECT_EQ(r.body["data"]["dispatchVersion"], 2);
  EXPECT_EQ(wakes_.load(), 1);
  EXPECT_EQ(OutboxRows(), 1);
  EXPECT_TRUE(created_types_.empty());  // a retry is not a new task

  EXPECT_EQ(Post(kTasks + "/" + Id(failed) + "/retry", alice_).code(), "409");  // now PENDING
  task::Task other = PutTask("alice", TaskState::kCancelled);
  EXPECT_EQ(Post(kTasks + "/" + Id(other) + "/retry", bob_).code(), "404");
  EXPECT_EQ(Post(kTasks + "/" + Id(other) + "/retry", admin_).code(), "200");
  EXPECT_EQ(Post(kTasks + "/0123/retry", alice_).code(), "400");
  EXPECT_EQ(Post(kTasks + "/424242/retry", alice_).code(), "404");
  // The permission is checked again at retry time
  // (docs/task-lifecycle.md#when-definition-values-take-effect).
  task::Task inconsistent = PutTask("alice", TaskState::kInconsistent);
  std::string revoked = Token("alice", "t1", task::AppCode::kPlatform, {});
  EXPECT_EQ(Post(kTasks + "/" + Id(inconsistent) + "/retry", revoked).code(), "403");
}

// docs/http-api.md#the-requesters-language: the body's `locale`, else the
// first tag of Accept-Language, else the definition's, else ""; stored on the
// task, kept by a retry (the same task) and copied by export again, whatever
// language the later request asks in.
TEST_F(ExportApiTest, TheRequestersLocaleIsRecordedAndKeptByRetryAndExportAgain) {
  std::vector<std::string> ids;
  // Creates `body`, checks the stored locale is the answer's, and ends the
  // task (FAILED) so the active limits never bite. Returns the answer's locale.
  auto create = [&](const json& body, httplib::Headers extra = {}) -> std::string {
    Reply r = ToReply(client_->Post(kTasks.c_str(), Headers(alice_, std::move(extra)), body.dump(),
                                    "application/json"));
    EXPECT_EQ(r.code(), "200") << r.raw;
    const std::string id = r.body["data"].value("id", "");
    if (id.empty()) return "?";
    ids.push_back(id);
    EXPECT_EQ(StoredTask(std::stoll(id))->locale, r.body["data"]["locale"]) << r.raw;
    EXPECT_TRUE(
        db_->Exec("UPDATE export_task SET status = 'FAILED' WHERE id = ?", {std::stoll(id)}).ok());
    return r.body["data"].value("locale", "?");
  };
  EXPECT_EQ(create({{"exportType", "ORDER_LIST"}, {"locale", "en-US"}}), "en-US");
  EXPECT_EQ(
      create({{"exportType", "ORDER_LIST"}}, {{"Accept-Language", "fr-CA, fr;q=0.9, *;q=0.1"}}),
      "fr-CA");
  // A header without a tag is a hint not taken: the definition's language.
  EXPECT_EQ(create({{"exportType", "ORDER_LIST"}, {"locale", nullptr}}, {{"Accept-Language", "*"}}),
            "zh-TW");
  EXPECT_EQ(create({{"exportType", "CUSTOMER_LIST"}}), "");
  EXPECT_EQ(
      create({{"exportType", "CUSTOMER_LIST"}, {"locale", "ja"}}, {{"Accept-Language", "en"}}),
      "ja");
  for (const json& bad : {json("en_US"), json(""), json(42), json("en-"), json("中文"),
                          json("en-" + std::string(8, 'a') + "-" + std::string(8, 'b') + "-" +
                               std::string(8, 'c') + "-abcdefgh")}) {
    Reply r = Create(alice_, {{"exportType", "ORDER_LIST"}, {"locale", bad}});
    EXPECT_EQ(r.code(), "400") << bad;
    EXPECT_NE(r.body.value("message", "").find("locale"), std::string::npos) << r.raw;
  }

  // A manual retry is the same task: the same language, whatever the retrier's.
  httplib::Headers german = Headers(alice_, {{"Accept-Language", "de-DE"}});
  Reply retry = ToReply(
      client_->Post((kTasks + "/" + ids[0] + "/retry").c_str(), german, "", "application/json"));
  ASSERT_EQ(retry.code(), "200") << retry.raw;
  EXPECT_EQ(retry.body["data"]["dispatchVersion"], 2);
  EXPECT_EQ(retry.body["data"]["locale"], "en-US");
  EXPECT_EQ(StoredTask(std::stoll(ids[0]))->locale, "en-US");
  // Export again copies the old task's language, "" included.
  Reply again = ToReply(client_->Post((kTasks + "/" + ids[1] + "/export-again").c_str(), german, "",
                                      "application/json"));
  ASSERT_EQ(again.code(), "200") << again.raw;
  EXPECT_NE(again.body["data"]["id"], ids[1]);
  EXPECT_EQ(again.body["data"]["locale"], "fr-CA");
  EXPECT_EQ(StoredTask(std::stoll(again.body["data"]["id"].get<std::string>()))->locale, "fr-CA");
  task::Task before = PutTask("alice", TaskState::kFailed);  // a task of before migration 15
  before.export_type = "ORDER_LIST";
  StoreTask(before);
  Reply plain = ToReply(client_->Post((kTasks + "/" + Id(before) + "/export-again").c_str(), german,
                                      "", "application/json"));
  ASSERT_EQ(plain.code(), "200") << plain.raw;
  EXPECT_EQ(plain.body["data"]["locale"], "");
}

// docs/task-lifecycle.md#export-again: a retry keeps the recorded contract version and would end
// STALE again; the way out is a new task with the same parameters.
TEST_F(ExportApiTest, StaleIsExportedAgainNotRetried) {
  task::Task stale = PutTask("alice", TaskState::kStale);
  stale.task_name = "Q3 客户";
  stale.format = task::FileFormat::kCsv;
  stale.parameters_json = R"({"keyword":"acme","status":"ACTIVE"})";
  stale.contract_version = "v1";
  StoreTask(stale);
  const std::string path = kTasks + "/" + Id(stale);

  Reply retry = Post(path + "/retry", alice_);
  EXPECT_EQ(retry.code(), "409") << retry.raw;
  EXPECT_NE(retry.body["message"].get<std::string>().find("/export-again"), std::string::npos)
      << retry.raw;
  EXPECT_EQ(StoredTask(stale.id)->status, TaskState::kStale) << "not retried";
  EXPECT_EQ(OutboxRows(), 0);

  // Auth and visibility as for every task route; the permission as at create.
  EXPECT_EQ(Post(path + "/export-again", "").code(), "401");
  EXPECT_EQ(Post(path + "/export-again", bob_).code(), "404");
  EXPECT_EQ(Post(path + "/export-again", eve_).code(), "404");
  EXPECT_EQ(Post(kTasks + "/0123/export-again", alice_).code(), "400");
  EXPECT_EQ(Post(kTasks + "/424242/export-again", alice_).code(), "404");
  const std::string revoked = Token("alice", "t1", task::AppCode::kPlatform, {});
  EXPECT_EQ(Post(path + "/export-again", revoked).code(), "403");
  EXPECT_EQ(OutboxRows(), 0);

  Reply again = Post(path + "/export-again", alice_);
  ASSERT_EQ(again.code(), "200") << again.raw;
  const json& fresh = again.body["data"];
  EXPECT_NE(fresh["id"], Id(stale));
  EXPECT_EQ(fresh["status"], "PENDING");
  EXPECT_EQ(fresh["dispatchVersion"], 1);
  EXPECT_EQ(fresh["deduplicated"], false);
  EXPECT_EQ(fresh["exportType"], "CUSTOMER_LIST");
  EXPECT_EQ(fresh["format"], "CSV");
  EXPECT_EQ(fresh["taskName"], "Q3 客户");
  std::optional<task::Task> stored = StoredTask(std::stoll(fresh["id"].get<std::string>()));
  ASSERT_TRUE(stored);
  EXPECT_EQ(json::parse(stored->parameters_json), json::parse(stale.parameters_json));
  EXPECT_EQ(stored->requested_by, "alice");
  EXPECT_FALSE(stored->contract_version.has_value()) << "no version of the old task carried over";
  EXPECT_EQ(OutboxRows(), 1);
  EXPECT_EQ(created_types_, std::vector<std::string>{"CUSTOMER_LIST"});
  EXPECT_EQ(StoredTask(stale.id)->status, TaskState::kStale) << "the old task is untouched";
  // Asked twice inside the dedupe window: the same new task.
  Reply twice = Post(path + "/export-again", alice_);
  EXPECT_EQ(twice.body["data"]["id"], fresh["id"]) << twice.raw;
  EXPECT_EQ(twice.body["data"]["deduplicated"], true);

  // An admin of the tenant may export alice's task again; the new task is the admin's.
  Reply by_admin = Post(path + "/export-again", admin_);
  ASSERT_EQ(by_admin.code(), "200") << by_admin.raw;
  EXPECT_EQ(StoredTask(std::stoll(by_admin.body["data"]["id"].get<std::string>()))->requested_by,
            "admin");
  // Still running: nothing to export again yet.
  task::Task running = PutTask("alice", TaskState::kRunning);
  EXPECT_EQ(Post(kTasks + "/" + Id(running) + "/export-again", alice_).code(), "409");
}

TEST_F(ExportApiTest, Cancel) {
  task::Task pending = PutTask("alice", TaskState::kPending);
  Reply r = Post(kTasks + "/" + Id(pending) + "/cancel", alice_);
  ASSERT_EQ(r.code(), "200") << r.raw;
  EXPECT_EQ(r.body["data"]["status"], "CANCELLED");

  task::Task running = PutTask("alice", TaskState::kRunning);
  Reply rr = Post(kTasks + "/" + Id(running) + "/cancel", alice_);
  ASSERT_EQ(rr.code(), "200");
  EXPECT_EQ(rr.body["data"]["status"], "RUNNING");
  EXPECT_EQ(rr.body["data"]["cancelRequested"], true);

  task::Task done = PutTask("alice", TaskState::kSucceeded, "t1", "x");
  EXPECT_EQ(Post(kTasks + "/" + Id(done) + "/cancel", alice_).code(), "409");
  EXPECT_EQ(Post(kTasks + "/" + Id(running) + "/cancel", bob_).code(), "404");
  EXPECT_EQ(Post(kTasks + "/" + Id(running) + "/cancel", eve_).code(), "404");
  EXPECT_EQ(Post(kTasks + "/abc/cancel", alice_).code(), "400");
}

TEST_F(ExportApiTest, BodilessPostsDoNotWaitForABody) {
  // curl -X POST sends neither Content-Length nor a chunked body.
  task::Task pending = PutTask("alice", TaskState::kPending);
  auto start = std::chrono::steady_clock::now();
  std::string raw = RawGet(kTasks + "/" + Id(pending) + "/cancel", alice_, "POST");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_NE(raw.find("\"code\":\"200\""), std::string::npos) << raw;
  // A body that is sent anyway is read and ignored, keeping the connection usable.
  task::Task failed = PutTask("alice", TaskState::kFailed);
  EXPECT_EQ(Post(kTasks + "/" + Id(failed) + "/retry", alice_, "{\"why\":\"again\"}").code(),
            "200");
  EXPECT_EQ(Post(kTasks + "/" + Id(failed) + "/cancel", alice_, std::string(70 * 1024, ' ')).http,
            413);
}

// ---- serving: connections, streams, refusals (docs/http-serving.md) --------------

TEST_F(ExportApiTest, KeepAliveRequestsAreFast) {
  // httplib's client leaves Nagle on, like many clients: the server must not
  // split a response into writes that wait for a delayed ACK.
  ASSERT_EQ(Get("/healthz", "").http, 200);
  std::vector<double> ms;
  for (int i = 0; i < 20; ++i) {
    auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(Get(kTasks, alice_).code(), "200");
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  EXPECT_LT(ms[ms.size() / 2], 5.0) << "median keep-alive request took " << ms[ms.size() / 2];
}

TEST_F(ExportApiTest, RequestAfter64IdleConnectionsAnswersWithinASecond) {
  std::vector<std::unique_ptr<testing::RawConnection>> idle;
  for (int i = 0; i < 64; ++i) idle.push_back(testing::RawConnection::Open(port_));
  for (int i = 0; i < 64; ++i) {
    idle.push_back(testing::RawConnection::Open(port_));
    ASSERT_TRUE(idle.back()->Send("GET /healthz HTTP/1.1\r\nHo"));  // half a request
  }
  auto start = std::chrono::steady_clock::now();
  httplib::Client fresh("127.0.0.1", port_);
  auto r = fresh.Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST_F(ExportApiTest, SlowDownloadHoldsNoWorkerAndOneChunk) {
  std::string bytes(16 * 1024 * 1024, 'x');
  for (size_t i = 0; i < bytes.size(); i += 997) bytes[i] = static_cast<char>('a' + i % 26);
  task::Task t = PutTask("alice", TaskState::kSucceeded, "t1", bytes);
  // Four slow readers, as many as the server has workers.
  std::vector<std::unique_ptr<testing::RawConnection>> slow;
  for (int i = 0; i < 4; ++i) {
    slow.push_back(testing::RawConnection::Open(port_, "", /*receive_buffer_bytes=*/4096));
    ASSERT_TRUE(slow.back()->Send("GET " + kTasks + "/" + Id(t) +
                                  "/download HTTP/1.1\r\nHost: t\r\nConnection: close\r\n"
                                  "Authorization: Bearer " +
                                  alice_ + "\r\n\r\n"));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Get(kTasks + "/" + Id(t), alice_).code(), "200");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  http::HttpServerStats stats = server_->stats();
  EXPECT_EQ(stats.open_streams, 4);
  EXPECT_LE(stats.stream_buffer_bytes, 4 * 64 * 1024);
  EXPECT_LE(storage_->max_read_length(), 64u * 1024);

  std::string all;
  EXPECT_EQ(slow[0]->WaitForClose(std::chrono::seconds(20), &all),
            testing::RawConnection::End::kEof);
  EXPECT_EQ(testing::BodyOf(all), bytes);
}

// Without a configured secret the API makes one; if the random source fails
// it must refuse to start rather than sign links with a predictable key.
TEST_F(ExportApiTest, BrokenRandomSourceWithoutADownloadSecretFailsStartUp) {
  ExportApi::Deps deps;
  deps.store = store_.get();
  deps.storage = storage_.get();
  deps.registry = registry_.get();
  deps.auth = auth_;
  deps.auth.download_url_secret.clear();
  testing::FailingRandom broken;
  ExportApi api(std::move(deps));
  ASSERT_FALSE(api.init_status().ok());
  EXPECT_NE(api.init_status().message().find("random"), std::string::npos)
      << api.init_status().ToString();
}

TEST_F(ExportApiTest, ServerRefusalsCarryTheEnvelope) {
  http::HttpRequest head;
  head.method = "POST";
  head.path = kTasks;
  for (int status : {400, 413, 431, 500, 503}) {
    http::HttpResponse res = api_->Reject(head, status);
    EXPECT_EQ(res.status, status);
    json body = json::parse(res.body);
    EXPECT_EQ(body["code"], std::to_string(status));
    EXPECT_FALSE(body["message"].get<std::string>().empty());
    EXPECT_FALSE(res.Header("X-Request-Id").empty());
  }
  EXPECT_EQ(json::parse(api_->Reject(head, 413).body)["message"],
            "request body exceeds 65536 bytes");
}

TEST_F(ExportApiTest, MetricsCanBeProtectedByABearerToken) {
  server_->Stop();
  auth_.metrics_bearer_token = "scrape-token-0123456789";
  Start();
  auto anonymous = client_->Get("/metrics");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_EQ(anonymous->body.find("export_task_created_total"), std::string::npos);
  auto wrong = client_->Get("/metrics", Headers("not-the-token"));
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto scraper = client_->Get(
      "/metrics", httplib::Headers{{"Authorization", "Bearer scrape-token-0123456789"}});
  ASSERT_TRUE(scraper);
  EXPECT_EQ(scraper->status, 200);
  EXPECT_EQ(scraper->body, "export_task_created_total 3\n");
}

TEST_F(ExportApiTest, StoreOutageIs500WithRetryHint) {
  database_->SetUnavailable(true);
  Reply r = Get(kTasks, alice_);
  EXPECT_EQ(r.http, 200);
  EXPECT_EQ(r.code(), "500");
  const std::string message = r.body["message"];
  EXPECT_NE(message.find("retry"), std::string::npos) << message;
  // The database's own words stay in the log; the caller gets the request id.
  EXPECT_NE(message.find("(request "), std::string::npos) << message;
  EXPECT_EQ(message.find("database"), std::string::npos) << message;
}

TEST_F(ExportApiTest, CreateWithRegistryHotReloadUsesTheCurrentSnapshot) {
  // A registry loaded from a file, so that it can really be reloaded.
  const std::string head = R"(
auth:
  jwt-hs256-secret: test-secret-0123456789abcdef0123456789
  download-url-secret: test-download-0123456789abcdef0123456789
  jwt-issuer: test-issuer
  jwt-audience: export-center
provider-services:
  customer-service:
    base-url: http://127.0.0.1:8081
    internal-token: token-1234567890
definitions:
  CUSTOMER_LIST:
    provider-service: customer-service
    provider-path: /internal/exports/v1/CUSTOMER_LIST/batches
    required-permission: platform:customer:export
)";
  const std::string added = R"(  NEW_TYPE:
    provider-service: customer-service
    provider-path: /internal/exports/v1/NEW_TYPE/batches
    required-permission: platform:customer:export
)";
  // As app/ wires it: config/ maps the file, and reloads re-read it whole.
  auto parsed = config::ParseRegistry(head, nullptr);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  server_->Stop();
  registry_ = std::make_unique<registry::Registry>(*parsed, [](const std::string& path) {
    return config::LoadRegistryForReload(path, nullptr);
  });
  Start();
  const std::string exporter =
      Token("alice", "t1", task::AppCode::kPlatform, {"platform:customer:export"});
  EXPECT_EQ(Create(exporter, {{"exportType", "NEW_TYPE"}}).code(), "400");

  // Registry readers take a snapshot per request: after the reload the new
  // type is accepted without a restart.
  const std::string path =
      ::testing::TempDir() + "ec_api_reload_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path, std::ios::trunc) << head << added;
  ASSERT_TRUE(registry_->Reload(path).ok());
  std::remove(path.c_str());
  Reply created = Create(exporter, {{"exportType", "NEW_TYPE"}});
  ASSERT_EQ(created.code(), "200") << created.raw;
  EXPECT_EQ(created.body["data"]["exportType"], "NEW_TYPE");
}

// docs/task-lifecycle.md#when-definition-values-take-effect: `enabled` is
// checked again at manual retry.
TEST_F(ExportApiTest, ManualRetryOfADisabledTypeIsRefusedWithItsCode) {
  task::Task failed = PutTask("alice", TaskState::kFailed);
  auto n = db_->Exec("UPDATE export_task SET export_type = 'OLD_TYPE' WHERE id = ?", {failed.id});
  ASSERT_TRUE(n.ok() && *n == 1) << n.status().ToString();
  Reply r = Post(kTasks + "/" + Id(failed) + "/retry", alice_);
  EXPECT_EQ(r.code(), "400") << r.raw;
  EXPECT_NE(r.body["message"].get<std::string>().find("disabled"), std::string::npos) << r.raw;
  EXPECT_EQ(StoredTask(failed.id)->status, TaskState::kFailed) << "nothing retried";
  EXPECT_EQ(OutboxRows(), 0);
}

// ---- password-protected files (docs/configuration.md#password-protected-files-file-password)
// -----------

// Three types beside the others: one that takes a password, one that requires
// it, and one whose governed column requires it of whoever sees it in full.
registry::RegistrySnapshot WithPasswordTypes() {
  registry::RegistrySnapshot s = MakeSnapshot();
  registry::ExportDefinition optional = s.definitions["CUSTOMER_LIST"];
  optional.name = "PROTECTABLE_LIST";
  optional.file_password = registry::FilePasswordRule::kOptional;
  registry::ExportDefinition required = s.definitions["CUSTOMER_LIST"];
  required.name = "PROTECTED_LIST";
  required.file_password = registry::FilePasswordRule::kRequired;
  registry::ExportDefinition id_cards = s.definitions["GOVERNED_LIST"];
  id_cards.name = "ID_CARD_LIST";
  id_cards.file_password = registry::FilePasswordRule::kOptional;
  id_cards.column_rules[0].require_file_password = true;  // mobile, customer:contact
  for (auto* d : {&optional, &required, &id_cards}) s.definitions[d->name] = *d;
  return s;
}

constexpr char kGoodPassword[] = "Tr0ub4dor&3-horse";

class FilePasswordApiTest : public ExportApiTest {
 protected:
  void SetUp() override {
    ExportApiTest::SetUp();
    if (HasFatalFailure()) return;
    next_snapshot_ = WithPasswordTypes();
    ASSERT_TRUE(registry_->Reload("unused").ok());
  }

  Reply CreateWith(const std::string& type, const json& password, const std::string& token = "") {
    json body = {{"exportType", type}};
    if (!password.is_null()) body["filePassword"] = password;
    return Create(token.empty() ? alice_ : token, body);
  }
};

TEST_F(FilePasswordApiTest, AGoodPasswordMakesAnEncryptedTaskAndIsNeverEchoedOrStored) {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256);
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>("file-password-test", sink);
  logger->set_level(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  Reply r = CreateWith("PROTECTABLE_LIST", kGoodPassword);
  spdlog::set_default_logger(previous);
  ASSERT_EQ(r.code(), "200") << r.raw;
  EXPECT_EQ(r.body["data"]["encrypted"], true);
  EXPECT_EQ(r.raw.find(kGoodPassword), std::string::npos);
  EXPECT_EQ(seals_.load(), 1);
  EXPECT_EQ(OutboxRows(), 1);
  std::optional<task::Task> stored =
      StoredTask(std::stoll(r.body["data"]["id"].get<std::string>()));
  ASSERT_TRUE(stored);
  EXPECT_TRUE(stored->encrypted);
  ASSERT_TRUE(stored->file_key);
  EXPECT_EQ(stored->file_key->key_id, "00112233aabbccdd");
  EXPECT_EQ(stored->parameters_json.find(kGoodPassword), std::string::npos);
  // Nothing in the whole row holds it: every column read back as text.
  auto rows = db_->Query("SELECT * FROM export_task");
  ASSERT_TRUE(rows.ok());
  for (const store::Row& row : *rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      EXPECT_EQ(row.OptText(i).value_or("").find(kGoodPassword), std::string::npos) << i;
    }
  }
  for (const std::string& line : sink->last_formatted()) {
    EXPECT_EQ(line.find(kGoodPassword), std::string::npos) << line;
  }
  // The task's JSON says so in every read, and the plain type's task does not.
  Reply got = Get(kTasks + "/" + r.body["data"]["id"].get<std::string>(), alice_);
  EXPECT_EQ(got.body["data"]["encrypted"], true) << got.raw;
  Reply plain = CreateWith("PROTECTABLE_LIST", nullptr, bob_);
  ASSERT_EQ(plain.code(), "200") << plain.raw;
  EXPECT_EQ(plain.body["data"]["encrypted"], false);
  EXPECT_EQ(seals_.load(), 1);
}

TEST_F(FilePasswordApiTest, BadPasswordsAre400NamingTheRuleNotTheValue) {
  auto refused = [&](const json& password, const std::string& expect,
                     const std::string& type = "PROTECTABLE_LIST") {
    Reply r = CreateWith(type, password);
    EXPECT_EQ(r.code(), "400") << r.raw;
    const std::string message = r.body.value("message", "");
    EXPECT_NE(message.find(expect), std::string::npos) << message;
    if (password.is_string()) {
      EXPECT_EQ(r.raw.find(password.get<std::string>()), std::string::npos) << r.raw;
    }
  };
  refused("Ab1-xyz", "too short");
  refused(std::string(129, 'a') + "1", "too long");
  refused("alllowercase", "all one kind");
  refused("12345678901", "all one kind");
  refused("密码密码密码密码", "all one kind");
  refused("Ab1\tabcdef", "control characters");
  refused(12345678, "must be a string");
  refused(kGoodPassword, "not allowed", "CUSTOMER_LIST");
  // Multi-byte characters count once: 8 of them are long enough.
  EXPECT_EQ(CreateWith("PROTECTABLE_LIST", "密码密码1234").code(), "200");
  EXPECT_EQ(CreateWith("PROTECTABLE_LIST", std::string(127, 'a') + "1", bob_).code(), "200");
  // Not UTF-8 is refused by the JSON reader, which quotes none of the bytes.
  Reply bad_utf8 = Post(kTasks, alice_,
                        "{\"exportType\":\"PROTECTABLE_LIST\",\"filePassword\":\"Pass\xff"
                        "word-secret1\"}");
  EXPECT_EQ(bad_utf8.code(), "400") << bad_utf8.raw;
  EXPECT_EQ(bad_utf8.raw.find("word-secret1"), std::string::npos) << bad_utf8.raw;
  EXPECT_EQ(bad_utf8.raw.find("Pass"), std::string::npos) << bad_utf8.raw;
  EXPECT_EQ(seals_.load(), 2);
}

TEST_F(FilePasswordApiTest, AMissingRequiredPasswordIs400BeforeAnythingIsQueued) {
  Reply r = CreateWith("PROTECTED_LIST", nullptr);
  EXPECT_EQ(r.code(), "400") << r.raw;
  EXPECT_NE(r.body.value("message", "").find("filePassword is required"), std::string::npos);
  EXPECT_EQ(OutboxRows(), 0);
  EXPECT_EQ(wakes_.load(), 0);
  EXPECT_EQ(CreateWith("PROTECTED_LIST", kGoodPassword).code(), "200");

  // The governed column: who sees mobile in full must protect the file; who
  // gets it masked need not.
  const std::string contact =
      Token("carol", "t1", task::AppCode::kPlatform, {"customer:export", "customer:contact"});
  Reply full = CreateWith("ID_CARD_LIST", nullptr, contact);
  EXPECT_EQ(full.code(), "400") << full.raw;
  EXPECT_NE(full.body.value("message", "").find("column mobile"), std::string::npos) << full.raw;
  EXPECT_EQ(CreateWith("ID_CARD_LIST", kGoodPassword, contact).code(), "200");
  Reply masked = CreateWith("ID_CARD_LIST", nullptr, bob_);
  EXPECT_EQ(masked.code(), "200") << masked.raw;
  EXPECT_EQ(masked.body["data"]["encrypted"], false);
  EXPECT_EQ(OutboxRows(), 3);
}

TEST_F(FilePasswordApiTest, ExportTypesSayWhatEachCallerMustGive) {
  auto policy = [&](const std::string& token) {
    std::map<std::string, std::string> out;
    const Reply types = Get(kBase + "/export-types", token);
    for (const auto& t : types.body["data"]) {
      out[t["exportType"]] = t["filePassword"];
    }
    return out;
  };
  std::map<std::string, std::string> alice = policy(alice_);
  EXPECT_EQ(alice["CUSTOMER_LIST"], "NONE");
  EXPECT_EQ(alice["PROTECTABLE_LIST"], "OPTIONAL");
  EXPECT_EQ(alice["PROTECTED_LIST"], "REQUIRED");
  EXPECT_EQ(alice["ID_CARD_LIST"], "OPTIONAL");
  const std::string contact =
      Token("carol", "t1", task::AppCode::kPlatform, {"customer:export", "customer:contact"});
  EXPECT_EQ(policy(contact)["ID_CARD_LIST"], "REQUIRED");
}

// The password was never kept: the task cannot be retried, and exporting it
// again needs a new password.
TEST_F(FilePasswordApiTest, AnEncryptedTaskIsExportedAgainWithANewPasswordNotRetried) {
  Reply r = CreateWith("PROTECTABLE_LIST", kGoodPassword);
  ASSERT_EQ(r.code(), "200") << r.raw;
  const std::string id = r.body["data"]["id"].get<std::string>();
  auto ended = db_->Exec(
      "UPDATE export_task SET status = 'FAILED', file_key_id = NULL, file_key_wrapped = NULL"
      " WHERE id = ?",
      {std::stoll(id)});
  ASSERT_TRUE(ended.ok() && *ended == 1);
  const std::string path = kTasks + "/" + id;

  Reply retry = Post(path + "/retry", alice_);
  EXPECT_EQ(retry.code(), "409") << retry.raw;
  EXPECT_NE(retry.body.value("message", "").find("filePassword"), std::string::npos);

  Reply without = Post(path + "/export-again", alice_);
  EXPECT_EQ(without.code(), "400") << without.raw;
  EXPECT_NE(without.body.value("message", "").find("filePassword is required"), std::string::npos);
  EXPECT_EQ(Post(path + "/export-again", alice_, R"({"filePassword":"short1"})").code(), "400");
  EXPECT_EQ(Post(path + "/export-again", alice_, R"({"other":1})").code(), "400");
  Reply again =
      Post(path + "/export-again", alice_, json({{"filePassword", "N3w-password!"}}).dump());
  ASSERT_EQ(again.code(), "200") << again.raw;
  EXPECT_EQ(again.body["data"]["encrypted"], true);
  EXPECT_NE(again.body["data"]["id"], id);
  EXPECT_EQ(again.raw.find("N3w-password!"), std::string::npos);
  EXPECT_EQ(seals_.load(), 2);

  // A plain task exported again stays plain without a body; a password for
  // a type that takes none is refused.
  task::Task plain = PutTask("alice", TaskState::kFailed);
  EXPECT_EQ(Post(kTasks + "/" + Id(plain) + "/export-again", alice_,
                 json({{"filePassword", kGoodPassword}}).dump())
                .code(),
            "400");
  Reply plain_again = Post(kTasks + "/" + Id(plain) + "/export-again", alice_);
  ASSERT_EQ(plain_again.code(), "200") << plain_again.raw;
  EXPECT_EQ(plain_again.body["data"]["encrypted"], false);
}

}  // namespace
}  // namespace export_center::api
