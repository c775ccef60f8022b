// The operators' console over real HTTP (docs/http-api.md#operators-console):
// the Beast server on 127.0.0.1, an httplib client, the SQLite task store
// behind ExportApi. Tasks are created through the store and their outcomes
// written through the Database, as the store's contract suite does.

#include "api/operator_api.h"

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
#include "store/sql_task_store.h"
#include "store/sqlite/sqlite_database.h"
#include "store/task_store.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;
using task::TaskState;

const std::string kOp = "/api/platform/v1/files/operator";
constexpr char kSecret[] = "operator-test-hs256-secret-0123456789";

struct Reply {
  int http = 0;
  json body;
  std::string raw;
  std::string code() const { return body.is_object() ? body.value("code", "") : ""; }
  const json& data() const { return body["data"]; }
};

registry::RegistrySnapshot Snapshot() {
  registry::RegistrySnapshot s;
  registry::ExportDefinition orders;
  orders.name = "ORDER_LIST";
  orders.title = "Orders";
  registry::ExportDefinition secret = orders;
  secret.name = "SECRET_LIST";
  secret.required_permission = "secret:export";  // the operator does not hold it
  registry::ExportDefinition off = orders;
  off.name = "OFF_LIST";
  off.enabled = false;
  for (auto* d : {&orders, &secret, &off}) s.definitions[d->name] = *d;
  return s;
}

class OperatorApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ec-operator-api-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto db = store::OpenSqliteDatabase(dir_ + "/tasks.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    store_ = store::NewSqlTaskStore(db_);
    ASSERT_TRUE(store_->Migrate().ok());
    auto local = storage::NewLocalExportStorage(dir_ + "/files");
    ASSERT_TRUE(local.ok());
    storage_ = std::move(local).value();
    registry_ = std::make_unique<registry::Registry>(Snapshot());
    auth_.jwt_hs256_secret = kSecret;
    auth_.download_url_secret = "operator-test-download-secret";
    ExportApi::Deps deps;
    deps.store = store_.get();
    deps.operations = store_.get();
    deps.storage = storage_.get();
    deps.registry = registry_.get();
    deps.server.threads = 2;
    deps.auth = auth_;
    deps.on_task_created = [this] { ++wakes_; };
    api_ = std::make_unique<ExportApi>(std::move(deps));
    ASSERT_TRUE(api_->init_status().ok());
    http::HttpServerOptions options;
    options.worker_threads = 2;
    server_ = http::NewBeastHttpServer(options, api_.get());
    ASSERT_TRUE(server_->Start().ok());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());

    op1_ = Token("op1", "t1", {std::string(kOperatePermission)});
    op2_ = Token("op2", "t2", {std::string(kOperatePermission)});
    root_ = Token("root", "platform", {std::string(kOperateAllPermission)});
    user_ = Token("alice", "t1", {std::string(kDownloadAllPermission)});
  }

  void TearDown() override {
    if (server_) server_->Stop();
    client_.reset();
    api_.reset();
    store_.reset();
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string Token(const std::string& user, const std::string& tenant,
                    std::vector<std::string> perms, task::AppCode app = task::AppCode::kPlatform) {
    auto t = identity::MintToken(auth_, Principal{user, tenant, app, std::move(perms)},
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
  Reply Get(const std::string& path, const std::string& token) {
    return ToReply(client_->Get((kOp + path).c_str(), {{"Authorization", "Bearer " + token}}));
  }
  Reply Post(const std::string& path, const std::string& token, const json& body = json::object()) {
    return ToReply(client_->Post((kOp + path).c_str(), {{"Authorization", "Bearer " + token}},
                                 body.dump(), "application/json"));
  }

  // A task of `tenant`/`user`, optionally already ended in `state`.
  int64_t Make(const std::string& tenant, const std::string& user, const std::string& type,
               std::optional<TaskState> state = std::nullopt) {
    store::NewTask t;
    t.tenant_id = tenant;
    t.requested_by = user;
    t.export_type = type;
    t.task_name = type;
    t.parameters_json = "{\"n\":" + std::to_string(++made_) + "}";
    t.params_hash = t.parameters_json;
    auto created = store_->CreateTask(t, {60, 1000, 1000});
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    const int64_t id = created.ok() ? created->task.id : 0;
    if (state) {
      auto n = db_->Exec(
          "UPDATE export_task SET status = ?, failure_code = ?, started_at = requested_at + 10,"
          " completed_at = requested_at + 110 WHERE id = ?",
          {std::string(task::ToString(*state)),
           *state == TaskState::kFailed ? std::optional<std::string>("PROVIDER_ERROR")
                                        : std::nullopt,
           id});
      EXPECT_TRUE(n.ok());
    }
    return id;
  }
  TaskState StateOf(int64_t id) { return store_->GetTask(id)->status; }

  std::string dir_;
  std::shared_ptr<store::Database> db_;
  std::unique_ptr<store::TaskStore> store_;
  std::unique_ptr<storage::ExportStorage> storage_;
  std::unique_ptr<registry::Registry> registry_;
  AuthOptions auth_;
  std::unique_ptr<ExportApi> api_;
  std::unique_ptr<http::HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
  std::string op1_, op2_, root_, user_;
  int made_ = 0;
  int wakes_ = 0;
};

TEST_F(OperatorApiTest, EveryRouteNeedsAnOperatorPermission) {
  for (const char* path : {"/tasks", "/stats", "/queue-health", "/bulk-actions"}) {
    EXPECT_EQ(Get(path, user_).code(), "403") << path;
  }
  EXPECT_EQ(Get("/tasks", "not-a-token").code(), "401");
  EXPECT_EQ(Post("/bulk-actions/count", user_, {{"action", "RETRY"}}).code(), "403");
  EXPECT_EQ(Post("/notifications/1/redeliver", user_).code(), "403");
  // A tenant's operator cannot name another tenant; the platform's can.
  EXPECT_EQ(Get("/tasks?tenantId=t2", op1_).code(), "403");
  EXPECT_EQ(Get("/tasks?tenantId=t1", op1_).code(), "200");
  EXPECT_EQ(Get("/tasks?tenantId=t2", root_).code(), "200");
}

TEST_F(OperatorApiTest, SearchCrossesUsersButNotTenants) {
  const int64_t a = Make("t1", "alice", "ORDER_LIST");
  const int64_t b = Make("t1", "bob", "ORDER_LIST", TaskState::kFailed);
  const int64_t c = Make("t2", "carol", "ORDER_LIST");

  Reply mine = Get("/tasks", op1_);
  ASSERT_EQ(mine.code(), "200") << mine.raw;
  EXPECT_EQ(mine.data()["total"], "2");
  EXPECT_EQ(mine.data()["records"][0]["id"], std::to_string(b));  // newest first
  EXPECT_EQ(mine.data()["records"][0]["requestedBy"], "bob");
  EXPECT_EQ(mine.data()["records"][0]["tenantId"], "t1");
  EXPECT_EQ(mine.data()["records"][1]["id"], std::to_string(a));

  Reply failed = Get("/tasks?status=FAILED&failureCode=PROVIDER_ERROR&user=bob", op1_);
  EXPECT_EQ(failed.data()["total"], "1") << failed.raw;
  EXPECT_EQ(Get("/tasks?exportType=NOPE", op1_).data()["total"], "0");
  EXPECT_EQ(Get("/tasks?from=2000-01-01T00:00:00Z&to=2000-01-02T00:00:00Z", op1_).data()["total"],
            "0");
  EXPECT_EQ(Get("/tasks?from=soon", op1_).code(), "400");
  EXPECT_EQ(Get("/tasks?status=DONE", op1_).code(), "400");

  // The second tenant's operator sees nothing of the first.
  Reply theirs = Get("/tasks", op2_);
  EXPECT_EQ(theirs.data()["total"], "1");
  EXPECT_EQ(theirs.data()["records"][0]["id"], std::to_string(c));
  EXPECT_EQ(Get("/tasks/" + std::to_string(a), op2_).code(), "404");

  EXPECT_EQ(Get("/tasks", root_).data()["total"], "3");
  EXPECT_EQ(Get("/tasks?tenantId=t2", root_).data()["total"], "1");
}

TEST_F(OperatorApiTest, TaskDetailShowsDispatchVersionLeaseAndOutbox) {
  const int64_t id = Make("t1", "alice", "ORDER_LIST");
  store::ClaimRequest claim;
  claim.task_id = id;
  claim.dispatch_version = 1;
  claim.instance = "worker-7";
  ASSERT_TRUE(store_->ClaimTask(claim)->claimed);
  Reply r = Get("/tasks/" + std::to_string(id), op1_);
  ASSERT_EQ(r.code(), "200") << r.raw;
  EXPECT_EQ(r.data()["task"]["dispatchVersion"], 1);
  EXPECT_EQ(r.data()["task"]["leaseOwner"], "worker-7");
  EXPECT_TRUE(r.data()["task"]["leaseUntil"].is_string());
  // The claim is the attempt's first heartbeat (task::TaskLease).
  EXPECT_TRUE(r.data()["task"]["lastHeartbeatAt"].is_string()) << r.raw;
  ASSERT_EQ(r.data()["commands"].size(), 1u);
  EXPECT_EQ(r.data()["commands"][0]["status"], "PENDING");
  EXPECT_EQ(r.data()["commands"][0]["dispatchVersion"], 1);
  EXPECT_TRUE(r.data()["notifications"].empty());
  // The timeline of a task the operator did not request: created, then claimed.
  const json& timeline = r.data()["timeline"];
  ASSERT_GE(timeline.size(), 2u) << timeline.dump();
  EXPECT_EQ(timeline.front()["kind"], "CREATED");
  EXPECT_EQ(timeline.back()["kind"], "CLAIMED");
  EXPECT_EQ(timeline.back()["details"]["instance"], "worker-7") << timeline.dump();
  EXPECT_EQ(Get("/tasks/" + std::to_string(id), root_).code(), "200");
  EXPECT_EQ(Get("/tasks/999999", op1_).code(), "404");
  EXPECT_EQ(Get("/tasks/x1", op1_).code(), "400");
}

// docs/download-center.md#operators-console: the failure the user sees only
// classified is shown to the operators in full, in the task and its timeline;
// the requester's own routes never carry it.
TEST_F(OperatorApiTest, TaskDetailShowsTheFailureInFullTheUserSeesClassified) {
  const int64_t id = Make("t1", "alice", "ORDER_LIST");
  store::ClaimRequest claim;
  claim.task_id = id;
  claim.dispatch_version = 1;
  claim.instance = "worker-7";
  ASSERT_TRUE(store_->ClaimTask(claim)->claimed);
  const std::string classified = "The business system sent data this export type does not accept";
  const std::string detail =
      "InvalidArgument: provider columns: column 3 'amount' has unknown type \"MONEY\"";
  ASSERT_EQ(*store_->FinishAttempt({id, 1, "worker-7"}, TaskState::kFailed, "INVALID_DATA",
                                   {classified, detail}),
            store::FinishOutcome::kFinished);

  Reply r = Get("/tasks/" + std::to_string(id), op1_);
  ASSERT_EQ(r.code(), "200") << r.raw;
  EXPECT_EQ(r.data()["task"]["failureMessage"], classified);
  EXPECT_EQ(r.data()["task"]["failureDetail"], detail);
  const json& timeline = r.data()["timeline"];
  ASSERT_FALSE(timeline.empty());
  EXPECT_EQ(timeline.back()["kind"], "FINISHED");
  EXPECT_EQ(timeline.back()["details"]["detail"], detail) << timeline.dump();
  // The search shows it too.
  Reply found = Get("/tasks?status=FAILED", op1_);
  ASSERT_EQ(found.code(), "200") << found.raw;
  ASSERT_EQ(found.data()["records"].size(), 1u);
  EXPECT_EQ(found.data()["records"][0]["failureDetail"], detail);

  // The requester: the classified text only, in the task and the timeline.
  const std::string alice = Token("alice", "t1", {});
  const std::string task_path = "/api/platform/v1/files/export-tasks/" + std::to_string(id);
  Reply own = ToReply(client_->Get(task_path.c_str(), {{"Authorization", "Bearer " + alice}}));
  ASSERT_EQ(own.code(), "200") << own.raw;
  EXPECT_EQ(own.data()["failureMessage"], classified);
  EXPECT_FALSE(own.data().contains("failureDetail"));
  Reply line = ToReply(
      client_->Get((task_path + "/timeline").c_str(), {{"Authorization", "Bearer " + alice}}));
  ASSERT_EQ(line.code(), "200") << line.raw;
  EXPECT_EQ(line.raw.find("MONEY"), std::string::npos) << line.raw;
  EXPECT_EQ(line.data()["events"].back()["details"]["message"], classified);
}

TEST_F(OperatorApiTest, BulkRetryCountsConfirmsActsAndAudits) {
  std::vector<int64_t> failed;
  for (int i = 0; i < 3; ++i) {
    failed.push_back(Make("t1", "u" + std::to_string(i), "ORDER_LIST", TaskState::kFailed));
  }
  // The operator retries a type whose permission only its owner holds.
  const int64_t secret = Make("t1", "u9", "SECRET_LIST", TaskState::kFailed);
  const int64_t off = Make("t1", "u8", "OFF_LIST", TaskState::kFailed);
  const int64_t running = Make("t1", "u7", "ORDER_LIST");  // not retryable: not counted
  const int64_t other = Make("t2", "x", "ORDER_LIST", TaskState::kFailed);

  const json request = {{"action", "RETRY"}, {"filter", {{"status", "FAILED,PENDING"}}}};
  Reply count = Post("/bulk-actions/count", op1_, request);
  ASSERT_EQ(count.code(), "200") << count.raw;
  EXPECT_EQ(count.data()["matched"], "5");

  ASSERT_TRUE(count.data()["fingerprint"].is_string()) << count.raw;
  json confirmed = request;
  confirmed["expectedCount"] = "4";
  confirmed["expectedFingerprint"] = count.data()["fingerprint"];
  EXPECT_EQ(Post("/bulk-actions", op1_, confirmed).code(), "409") << "a stale count is refused";
  EXPECT_EQ(Post("/bulk-actions", op1_, request).code(), "400") << "no count, no action";
  EXPECT_EQ(StateOf(failed[0]), TaskState::kFailed);

  confirmed["expectedCount"] = "5";
  Reply done = Post("/bulk-actions", op1_, confirmed);
  ASSERT_EQ(done.code(), "200") << done.raw;
  EXPECT_EQ(done.data()["matched"], "5");
  EXPECT_EQ(done.data()["succeeded"], "4");
  EXPECT_EQ(done.data()["failed"], "1");  // the disabled type, by the single retry's rule
  EXPECT_EQ(done.data()["outcome"], "COMPLETED");
  EXPECT_NE(done.data()["firstError"].get<std::string>().find("disabled"), std::string::npos);
  for (int64_t id : failed) {
    EXPECT_EQ(StateOf(id), TaskState::kPending);
    EXPECT_EQ(store_->GetTask(id)->dispatch_version, 2);
  }
  EXPECT_EQ(StateOf(secret), TaskState::kPending);
  EXPECT_EQ(StateOf(off), TaskState::kFailed);
  EXPECT_EQ(StateOf(running), TaskState::kPending);
  EXPECT_EQ(StateOf(other), TaskState::kFailed) << "another tenant's task";
  EXPECT_EQ(wakes_, 1);

  Reply audit = Get("/bulk-actions", op1_);
  ASSERT_EQ(audit.data()["records"].size(), 1u) << audit.raw;
  EXPECT_EQ(audit.data()["records"][0]["actor"], "op1");
  EXPECT_EQ(audit.data()["records"][0]["filter"]["status"], "FAILED,PENDING");
  EXPECT_EQ(audit.data()["records"][0]["succeeded"], "4");
  EXPECT_TRUE(Get("/bulk-actions", op2_).data()["records"].empty());
  EXPECT_EQ(Get("/bulk-actions", root_).data()["records"].size(), 1u);
}

TEST_F(OperatorApiTest, BulkCancelActsOnPendingTasksOnly) {
  const int64_t a = Make("t1", "alice", "ORDER_LIST");
  const int64_t b = Make("t1", "bob", "ORDER_LIST");
  const int64_t ended = Make("t1", "carol", "ORDER_LIST", TaskState::kSucceeded);
  json request = {{"action", "CANCEL"}, {"filter", {{"user", "alice"}}}};
  EXPECT_EQ(Post("/bulk-actions/count", op1_, request).data()["matched"], "1");
  request["filter"] = json::object();
  Reply count = Post("/bulk-actions/count", op1_, request);
  EXPECT_EQ(count.data()["matched"], "2");
  request["expectedCount"] = "2";
  Reply unconfirmed = Post("/bulk-actions", op1_, request);
  EXPECT_EQ(unconfirmed.code(), "400") << "the count without the set's fingerprint";
  EXPECT_NE(unconfirmed.body["message"].get<std::string>().find("expectedFingerprint"),
            std::string::npos);
  request["expectedFingerprint"] = count.data()["fingerprint"];
  Reply done = Post("/bulk-actions", op1_, request);
  ASSERT_EQ(done.code(), "200") << done.raw;
  EXPECT_EQ(done.data()["succeeded"], "2");
  EXPECT_EQ(StateOf(a), TaskState::kCancelled);
  EXPECT_EQ(StateOf(b), TaskState::kCancelled);
  EXPECT_EQ(StateOf(ended), TaskState::kSucceeded);
  // Bad bodies.
  EXPECT_EQ(Post("/bulk-actions/count", op1_, {{"action", "DELETE"}}).code(), "400");
  EXPECT_EQ(Post("/bulk-actions/count", op1_, {{"action", "CANCEL"}, {"extra", 1}}).code(), "400");
  EXPECT_EQ(
      Post("/bulk-actions/count", op1_, {{"action", "CANCEL"}, {"filter", {{"tenantId", "t2"}}}})
          .code(),
      "403");
}

// A confirmation acts on the tasks that were counted, not on as many others:
// one task stopped matching and another came to match, the count is the
// same, and the action is refused (409) without touching either.
TEST_F(OperatorApiTest, AConfirmedBulkActionActsOnlyOnTheSetThatWasCounted) {
  const int64_t a = Make("t1", "alice", "ORDER_LIST");
  const int64_t b = Make("t1", "bob", "ORDER_LIST");
  json request = {{"action", "CANCEL"}, {"filter", json::object()}};
  Reply count = Post("/bulk-actions/count", op1_, request);
  ASSERT_EQ(count.code(), "200") << count.raw;
  EXPECT_EQ(count.data()["matched"], "2");
  const std::string fingerprint = count.data()["fingerprint"].get<std::string>();
  EXPECT_EQ(fingerprint.size(), 64u);
  EXPECT_EQ(Post("/bulk-actions/count", op1_, request).data()["fingerprint"], fingerprint)
      << "the same set, the same fingerprint";

  ASSERT_EQ(*store_->RequestCancel(a), TaskState::kCancelled);  // leaves the set
  const int64_t c = Make("t1", "carol", "ORDER_LIST");          // joins it
  request["expectedCount"] = "2";
  request["expectedFingerprint"] = fingerprint;
  Reply swapped = Post("/bulk-actions", op1_, request);
  EXPECT_EQ(swapped.code(), "409") << swapped.raw;
  EXPECT_NE(swapped.body["message"].get<std::string>().find("not the ones counted"),
            std::string::npos)
      << swapped.raw;
  EXPECT_EQ(StateOf(b), TaskState::kPending);
  EXPECT_EQ(StateOf(c), TaskState::kPending);
  EXPECT_TRUE(Get("/bulk-actions", op1_).data()["records"].empty()) << "nothing acted";

  Reply recount = Post("/bulk-actions/count", op1_, {{"action", "CANCEL"}});
  EXPECT_NE(recount.data()["fingerprint"], fingerprint);
  request["expectedFingerprint"] = recount.data()["fingerprint"];
  Reply done = Post("/bulk-actions", op1_, request);
  ASSERT_EQ(done.code(), "200") << done.raw;
  EXPECT_EQ(done.data()["succeeded"], "2");
  EXPECT_EQ(StateOf(b), TaskState::kCancelled);
  EXPECT_EQ(StateOf(c), TaskState::kCancelled);
}

// The operators' console shows a COMMAND_SENT event's send error raw (the
// task's reader gets it classified), and who downloaded only to an operator
// who also holds platform:audit:read.
TEST_F(OperatorApiTest, TheTimelineInTheTaskDetailShowsTheRawSendError) {
  const int64_t id = Make("t1", "alice", "ORDER_LIST");
  ASSERT_TRUE(db_->Exec("INSERT INTO export_task_event (id, task_id, dispatch_version, kind,"
                        " details_json, created_at) VALUES (?, ?, 1, 'COMMAND_SENT', ?, 1), (?, ?,"
                        " 1, 'DOWNLOADED', ?, 2)",
                        {id * 10, id,
                         std::string("{\"sends\":2,\"lastError\":\"broker-7.internal refused\"}"),
                         id * 10 + 1, id, std::string("{\"user\":\"bob\",\"via\":\"DIRECT\"}")})
                  .ok());
  auto details_of = [](const Reply& r, const std::string& kind) {
    for (const json& e : r.data()["timeline"]) {
      if (e["kind"] == kind) return e["details"];
    }
    return json();
  };
  Reply detail = Get("/tasks/" + std::to_string(id), op1_);
  ASSERT_EQ(detail.code(), "200") << detail.raw;
  EXPECT_EQ(details_of(detail, "COMMAND_SENT")["lastError"], "broker-7.internal refused");
  EXPECT_FALSE(details_of(detail, "DOWNLOADED").contains("user")) << detail.raw;
  const std::string auditing_op =
      Token("op1", "t1", {std::string(kOperatePermission), "platform:audit:read"});
  EXPECT_EQ(details_of(Get("/tasks/" + std::to_string(id), auditing_op), "DOWNLOADED")["user"],
            "bob");
}

// The audit honours the app: a MERCHANT operator of t1 does not list the
// PLATFORM operator's actions of t1 (docs/http-api.md#operators-console).
TEST_F(OperatorApiTest, TheBulkActionAuditIsScopedToTheOperatorsApp) {
  Make("t1", "platform-user", "ORDER_LIST");
  json request = {{"action", "CANCEL"}, {"filter", {{"user", "platform-user"}}}};
  Reply count = Post("/bulk-actions/count", op1_, request);
  request["expectedCount"] = count.data()["matched"];
  request["expectedFingerprint"] = count.data()["fingerprint"];
  Reply done = Post("/bulk-actions", op1_, request);
  ASSERT_EQ(done.code(), "200") << done.raw;
  EXPECT_EQ(done.data()["scopeApp"], "PLATFORM");

  const std::string merchant_op =
      Token("mop", "t1", {std::string(kOperatePermission)}, task::AppCode::kMerchant);
  Reply merchant = Get("/bulk-actions", merchant_op);
  ASSERT_EQ(merchant.code(), "200") << merchant.raw;
  EXPECT_TRUE(merchant.data()["records"].empty()) << merchant.raw;
  EXPECT_EQ(Get("/bulk-actions", op1_).data()["records"].size(), 1u);
  EXPECT_EQ(Get("/bulk-actions", root_).data()["records"].size(), 1u);
}

TEST_F(OperatorApiTest, StatsAndQueueHealthComeFromTheStore) {
  store_->SetNotificationRoutes({store::NotificationRoute{"hooks", {}, {}, {}, {}}});
  Make("t1", "alice", "ORDER_LIST", TaskState::kSucceeded);
  Make("t1", "bob", "ORDER_LIST", TaskState::kFailed);
  const int64_t cancelled = Make("t1", "carol", "ORDER_LIST");
  ASSERT_EQ(*store_->RequestCancel(cancelled), TaskState::kCancelled);
  auto notes = store_->notifications().ListNotificationsForTask(cancelled);
  ASSERT_TRUE(notes.ok() && notes->size() == 1u);
  const int64_t note = (*notes)[0].id;
  ASSERT_TRUE(db_->Exec("UPDATE export_notification SET status = 'DEAD', last_error = 'HTTP 500'"
                        " WHERE id = ?",
                        {note})
                  .ok());

  Reply stats = Get("/stats", op1_);
  ASSERT_EQ(stats.code(), "200") << stats.raw;
  ASSERT_EQ(stats.data()["windows"].size(), 2u);
  EXPECT_EQ(stats.data()["windows"][0]["window"], "24h");
  EXPECT_EQ(stats.data()["windows"][1]["window"], "7d");
  const json& orders = stats.data()["windows"][0]["types"][0];
  EXPECT_EQ(orders["exportType"], "ORDER_LIST");
  EXPECT_EQ(orders["count"], "3");
  EXPECT_DOUBLE_EQ(orders["successRate"].get<double>(), 1.0 / 3);
  EXPECT_EQ(orders["topFailureCodes"][0]["code"], "PROVIDER_ERROR");
  EXPECT_TRUE(Get("/stats", op2_).data()["windows"][0]["types"].empty());

  Reply health = Get("/queue-health", op1_);
  ASSERT_EQ(health.code(), "200") << health.raw;
  EXPECT_EQ(health.data()["deadNotifications"], "1");
  ASSERT_EQ(health.data()["deadDeliveries"].size(), 1u);
  EXPECT_EQ(health.data()["deadDeliveries"][0]["lastError"], "HTTP 500");
  EXPECT_EQ(Get("/queue-health", op2_).data()["deadNotifications"], "0");

  const std::string redeliver = "/notifications/" + std::to_string(note) + "/redeliver";
  EXPECT_EQ(Post(redeliver, op2_).code(), "404") << "another tenant's delivery";
  Reply again = Post(redeliver, op1_);
  ASSERT_EQ(again.code(), "200") << again.raw;
  EXPECT_EQ(Post(redeliver, op1_).code(), "409");
  EXPECT_EQ(store_->notifications().ListNotificationsForTask(cancelled)->at(0).status,
            store::NotificationStatus::kPending);
  Reply audit = Get("/bulk-actions", op1_);
  ASSERT_EQ(audit.data()["records"].size(), 1u);
  EXPECT_EQ(audit.data()["records"][0]["action"], "REDELIVER");
}

}  // namespace
}  // namespace export_center::api
