// GET /export-tasks/events (docs/http-api.md#get-export-tasksevents--task-events) on the real Beast
// server and the real SQLite store: which changes reach which caller, that a
// change written by another store instance on the same database (another
// center instance) is pushed, that streams hold no worker thread, the caps,
// Last-Event-ID replay, and the end of a stream when the client leaves.

#include "api/task_events.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "api/auth.h"
#include "api/export_api.h"
#include "http/beast/beast_http_server.h"
#include "identity/token_verifier.h"
#include "registry/registry.h"
#include "storage/local_export_storage.h"
#include "store/sql_task_store.h"
#include "store/sqlite/sqlite_database.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr char kSecret[] = "events-test-hs256-secret-0123456789";
const std::string kEvents = "/api/platform/v1/files/export-tasks/events";
constexpr int kWorkers = 2;

// A Server-Sent Events client on a plain socket: sends the request, then
// collects what arrives.
class SseClient {
 public:
  SseClient(int port, const std::string& target, const std::string& extra_headers = "") {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    std::string request = "GET " + target +
                          " HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\n" +
                          extra_headers + "\r\n";
    if (connected_) connected_ = ::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) > 0;
  }
  ~SseClient() { Close(); }

  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // Reads until `needle` has arrived (true) or `timeout` passed (false).
  bool WaitFor(const std::string& needle, std::chrono::milliseconds timeout = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (seen_.find(needle) == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !ReadSome(left)) return false;
    }
    return true;
  }
  // Whatever arrives within `time`.
  void Drain(std::chrono::milliseconds time) { WaitFor("\x01never\x01", time); }

  bool connected() const { return connected_; }
  const std::string& seen() const { return seen_; }

 private:
  bool ReadSome(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
    char buf[8192];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return false;
    seen_.append(buf, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string seen_;
};

class TaskEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ec-task-events-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    store_ = OpenStore();
    ASSERT_TRUE(store_->Migrate().ok());
    auto local = storage::NewLocalExportStorage(dir_ + "/files");
    ASSERT_TRUE(local.ok());
    storage_ = std::move(local).value();
    registry::RegistrySnapshot snapshot;
    registry::ExportDefinition orders;
    orders.name = "ORDER_LIST";
    orders.title = "订单列表";
    snapshot.definitions[orders.name] = orders;
    registry_ = std::make_unique<registry::Registry>(snapshot);
    auth_.jwt_hs256_secret = kSecret;
    auth_.download_url_secret = "events-test-download-secret";
  }

  void TearDown() override {
    if (server_) server_->Stop();
    server_.reset();
    api_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::unique_ptr<store::TaskStore> OpenStore() {
    auto db = store::OpenSqliteDatabase(dir_ + "/tasks.db");
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return store::NewSqlTaskStore(std::move(db).value());
  }

  void StartServer(int max_streams = 1000, int per_user = 5, int tickets_per_user = 60,
                   int tickets_max_redeemed = 10000) {
    ExportApi::Deps deps;
    deps.store = store_.get();
    deps.storage = storage_.get();
    deps.registry = registry_.get();
    deps.auth = auth_;
    deps.server.events_max_streams = max_streams;
    deps.server.events_max_streams_per_user = per_user;
    deps.server.events_poll_interval_ms = 100;
    deps.server.events_tickets_per_user = tickets_per_user;
    deps.server.events_tickets_max_redeemed = tickets_max_redeemed;
    api_ = std::make_unique<ExportApi>(std::move(deps));
    ASSERT_TRUE(api_->init_status().ok()) << api_->init_status().ToString();
    http::HttpServerOptions options;
    options.worker_threads = kWorkers;
    server_ = http::NewBeastHttpServer(options, api_.get());
    ASSERT_TRUE(server_->Start().ok());
    port_ = server_->port();
  }

  std::string Token(const std::string& user, const std::string& tenant,
                    std::vector<std::string> perms = {}) {
    auto t = identity::MintToken(
        auth_, Principal{user, tenant, task::AppCode::kPlatform, std::move(perms)},
        std::chrono::seconds(600));
    EXPECT_TRUE(t.ok());
    return *t;
  }

  // A ticket from POST /export-tasks/events-ticket with `token`.
  std::string Ticket(const std::string& token) {
    httplib::Client client("127.0.0.1", port_);
    auto res = client.Post(kEvents + "-ticket", {{"Authorization", "Bearer " + token}}, "",
                           "application/json");
    EXPECT_TRUE(res);
    if (!res) return "";
    json body = json::parse(res->body);
    EXPECT_EQ(body["code"], "200") << res->body;
    EXPECT_EQ(body["data"]["expiresInSeconds"], 30);
    return body["data"]["ticket"].get<std::string>();
  }

  std::unique_ptr<SseClient> Open(const std::string& token, const std::string& extra = "") {
    auto c = std::make_unique<SseClient>(port_, kEvents,
                                         "Authorization: Bearer " + token + "\r\n" + extra);
    EXPECT_TRUE(c->connected());
    return c;
  }

  // Creates a task for `user` in `tenant` through `store` and returns its id.
  static std::string CreateTask(store::TaskStore& store, const std::string& user,
                                const std::string& tenant, const std::string& name) {
    store::NewTask t;
    t.tenant_id = tenant;
    t.requested_by = user;
    t.export_type = "ORDER_LIST";
    t.task_name = name;
    t.parameters_json = "{}";
    t.params_hash = "h-" + name;
    t.trace_id = "trace";
    auto created = store.CreateTask(t, {60, 100, 100});
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? std::to_string(created->task.id) : "";
  }

  std::string dir_;
  std::unique_ptr<store::TaskStore> store_;
  std::unique_ptr<storage::ExportStorage> storage_;
  std::unique_ptr<registry::Registry> registry_;
  AuthOptions auth_;
  std::unique_ptr<ExportApi> api_;
  std::unique_ptr<http::HttpServer> server_;
  int port_ = 0;
};

TEST_F(TaskEventsTest, EachCallerGetsOnlyTheChangesTheListWouldShowIt) {
  StartServer();
  auto alice = Open(Token("alice", "t1"));
  auto bob = Open(Token("bob", "t1"));
  auto admin = Open(Token("admin", "t1", {std::string(kDownloadAllPermission)}));
  auto eve = Open(Token("alice", "t2", {std::string(kDownloadAllPermission)}));
  for (auto* c : {alice.get(), bob.get(), admin.get(), eve.get()}) {
    ASSERT_TRUE(c->WaitFor(": connected")) << c->seen();
    EXPECT_NE(c->seen().find("Content-Type: text/event-stream"), std::string::npos);
    EXPECT_NE(c->seen().find("Transfer-Encoding: chunked"), std::string::npos);
  }
  std::string id = CreateTask(*store_, "alice", "t1", "alice 的订单");
  ASSERT_TRUE(alice->WaitFor("\"id\":\"" + id + "\"")) << alice->seen();
  EXPECT_NE(alice->seen().find("event: task\n"), std::string::npos);
  EXPECT_NE(alice->seen().find("\"status\":\"PENDING\""), std::string::npos);
  EXPECT_NE(alice->seen().find("alice 的订单"), std::string::npos);
  ASSERT_TRUE(admin->WaitFor("\"id\":\"" + id + "\""));  // download:all sees the tenant
  bob->Drain(500ms);
  eve->Drain(10ms);
  EXPECT_EQ(bob->seen().find("event: task"), std::string::npos) << bob->seen();
  EXPECT_EQ(eve->seen().find("event: task"), std::string::npos) << eve->seen();
}

TEST_F(TaskEventsTest, AChangeWrittenByAnotherInstanceIsPushed) {
  StartServer();
  std::string id = CreateTask(*store_, "alice", "t1", "report");
  auto alice = Open(Token("alice", "t1"));
  ASSERT_TRUE(alice->WaitFor(": connected"));
  // Another center instance: its own store object on the same database.
  auto other = OpenStore();
  store::ClaimRequest claim;
  claim.task_id = std::stoll(id);
  claim.instance = "other-instance";
  ASSERT_TRUE(other->ClaimTask(claim)->claimed);
  ASSERT_TRUE(alice->WaitFor("\"status\":\"RUNNING\"")) << alice->seen();
  store::Attempt attempt{claim.task_id, 1, "other-instance"};
  ASSERT_TRUE(other->UpdateProgress(attempt, 500, 1000).ok());
  ASSERT_TRUE(alice->WaitFor("\"progress\":50")) << alice->seen();
  EXPECT_NE(alice->seen().find("\"processedRows\":\"500\""), std::string::npos);
}

TEST_F(TaskEventsTest, MoreStreamsThanWorkersLeaveTheApiAnswering) {
  StartServer();
  const std::string token = Token("admin", "t1", {std::string(kDownloadAllPermission)});
  std::vector<std::unique_ptr<SseClient>> streams;
  for (int i = 0; i < 4 * kWorkers; ++i) {
    streams.push_back(
        Open(Token("user" + std::to_string(i), "t1", {std::string(kDownloadAllPermission)})));
  }
  for (auto& s : streams) ASSERT_TRUE(s->WaitFor(": connected"));
  EXPECT_EQ(server_->stats().live_streams, 4 * kWorkers);
  httplib::Client client("127.0.0.1", port_);
  client.set_read_timeout(2, 0);
  auto list =
      client.Get("/api/platform/v1/files/export-tasks", {{"Authorization", "Bearer " + token}});
  ASSERT_TRUE(list);
  EXPECT_EQ(list->status, 200);
  std::string id = CreateTask(*store_, "someone", "t1", "shared");
  for (auto& s : streams) EXPECT_TRUE(s->WaitFor("\"id\":\"" + id + "\"")) << s->seen();
  // Clients that leave are noticed and their streams closed.
  streams.clear();
  for (int i = 0; i < 50 && server_->stats().live_streams > 0; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(server_->stats().live_streams, 0);
}

TEST_F(TaskEventsTest, StreamsAreCappedPerUserAndInTotal) {
  StartServer(/*max_streams=*/3, /*per_user=*/2);
  const std::string alice = Token("alice", "t1");
  auto a1 = Open(alice);
  auto a2 = Open(alice);
  ASSERT_TRUE(a1->WaitFor(": connected"));
  ASSERT_TRUE(a2->WaitFor(": connected"));
  auto a3 = Open(alice);
  ASSERT_TRUE(a3->WaitFor("\r\n\r\n"));
  EXPECT_EQ(a3->seen().rfind("HTTP/1.1 429", 0), 0u) << a3->seen();
  EXPECT_NE(a3->seen().find("per user"), std::string::npos);
  auto b1 = Open(Token("bob", "t1"));
  ASSERT_TRUE(b1->WaitFor(": connected"));
  auto c1 = Open(Token("carol", "t1"));
  ASSERT_TRUE(c1->WaitFor("\r\n\r\n"));
  EXPECT_EQ(c1->seen().rfind("HTTP/1.1 503", 0), 0u) << c1->seen();
  // A closed stream frees its place.
  a1->Close();
  for (int i = 0; i < 100 && api_ && server_->stats().live_streams > 2; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  auto c2 = Open(Token("carol", "t1"));
  EXPECT_TRUE(c2->WaitFor(": connected")) << c2->seen();
}

TEST_F(TaskEventsTest, TicketInTheQueryAndLastEventIdReplay) {
  StartServer();
  const std::string token = Token("alice", "t1");
  SseClient anonymous(port_, kEvents);
  ASSERT_TRUE(anonymous.WaitFor("\r\n\r\n"));
  EXPECT_EQ(anonymous.seen().rfind("HTTP/1.1 401", 0), 0u) << anonymous.seen();

  SseClient first(port_, kEvents + "?ticket=" + Ticket(token));
  ASSERT_TRUE(first.WaitFor(": connected")) << first.seen();
  std::string id = CreateTask(*store_, "alice", "t1", "one");
  ASSERT_TRUE(first.WaitFor("\"id\":\"" + id + "\""));
  // The event id before the task's change: a reconnect replays the change.
  auto task = store_->GetTask(std::stoll(id));
  ASSERT_TRUE(task.ok());
  first.Close();
  SseClient again(port_, kEvents + "?ticket=" + Ticket(token),
                  "Last-Event-ID: " + std::to_string(task->updated_at - 1) + "\r\n");
  ASSERT_TRUE(again.WaitFor("\"id\":\"" + id + "\"", 1000ms)) << again.seen();
  EXPECT_NE(again.seen().find("id: " + std::to_string(task->updated_at) + "\n"), std::string::npos);
}

// A ticket opens one stream; the URL a proxy logged opens nothing (docs/http-api.md).
TEST_F(TaskEventsTest, ATicketOpensOneStreamOnly) {
  StartServer();
  const std::string ticket = Ticket(Token("alice", "t1"));
  SseClient first(port_, kEvents + "?ticket=" + ticket);
  ASSERT_TRUE(first.WaitFor(": connected")) << first.seen();
  SseClient replay(port_, kEvents + "?ticket=" + ticket);
  ASSERT_TRUE(replay.WaitFor("\r\n\r\n"));
  EXPECT_EQ(replay.seen().rfind("HTTP/1.1 401", 0), 0u) << replay.seen();
  EXPECT_NE(replay.seen().find("already used"), std::string::npos) << replay.seen();
  // Without a bearer token no ticket is issued.
  httplib::Client client("127.0.0.1", port_);
  auto refused = client.Post(kEvents + "-ticket", "", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(json::parse(refused->body)["code"], "401");
}

// One user cannot deny the stream to others (docs/http-api.md): ticket issuing
// is rate-limited per user, a connect over the stream caps spends no ticket,
// each user holds a bounded share of the redeemed set, and a full set answers
// 503 with Retry-After (not 500).
TEST_F(TaskEventsTest, OneUsersTicketsCannotDenyOthersTheirStreams) {
  StartServer(/*max_streams=*/1000, /*per_user=*/2, /*tickets_per_user=*/3,
              /*tickets_max_redeemed=*/4);
  const std::string alice = Token("alice", "t1");
  std::vector<std::string> tickets;
  for (int i = 0; i < 3; ++i) tickets.push_back(Ticket(alice));
  httplib::Client client("127.0.0.1", port_);
  auto fourth = client.Post(kEvents + "-ticket", {{"Authorization", "Bearer " + alice}}, "",
                            "application/json");
  ASSERT_TRUE(fourth);
  EXPECT_EQ(json::parse(fourth->body)["code"], "429") << fourth->body;
  EXPECT_EQ(fourth->get_header_value("Retry-After"), "5");

  SseClient a1(port_, kEvents + "?ticket=" + tickets[0]);
  SseClient a2(port_, kEvents + "?ticket=" + tickets[1]);
  ASSERT_TRUE(a1.WaitFor(": connected")) << a1.seen();
  ASSERT_TRUE(a2.WaitFor(": connected")) << a2.seen();
  // Over Alice's stream cap: 429, and the ticket is not spent.
  SseClient a3(port_, kEvents + "?ticket=" + tickets[2]);
  ASSERT_TRUE(a3.WaitFor("\r\n\r\n"));
  EXPECT_EQ(a3.seen().rfind("HTTP/1.1 429", 0), 0u) << a3.seen();
  EXPECT_NE(a3.seen().find("Retry-After: 30"), std::string::npos) << a3.seen();
  a1.Close();
  for (int i = 0; i < 100 && server_->stats().live_streams > 1; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  SseClient a3_again(port_, kEvents + "?ticket=" + tickets[2]);
  ASSERT_TRUE(a3_again.WaitFor(": connected")) << a3_again.seen();

  // Alice holds 3 of the 4 places; Bob takes the last one.
  SseClient b1(port_, kEvents + "?ticket=" + Ticket(Token("bob", "t1")));
  ASSERT_TRUE(b1.WaitFor(": connected")) << b1.seen();
  // The set is full of live nonces: 503 with Retry-After, as documented.
  SseClient c1(port_, kEvents + "?ticket=" + Ticket(Token("carol", "t1")));
  ASSERT_TRUE(c1.WaitFor("\r\n\r\n"));
  EXPECT_EQ(c1.seen().rfind("HTTP/1.1 503", 0), 0u) << c1.seen();
  EXPECT_NE(c1.seen().find("Retry-After: 30"), std::string::npos) << c1.seen();
}

// The bearer token in the query string is refused, also beside a valid header:
// no client should keep putting it where proxies log it.
TEST_F(TaskEventsTest, ABearerTokenInTheQueryIsRefused) {
  StartServer();
  const std::string token = Token("alice", "t1");
  SseClient query(port_, kEvents + "?access_token=" + token);
  ASSERT_TRUE(query.WaitFor("\r\n\r\n"));
  EXPECT_EQ(query.seen().rfind("HTTP/1.1 401", 0), 0u) << query.seen();
  EXPECT_NE(query.seen().find("events-ticket"), std::string::npos) << query.seen();
  auto both = Open(token, "");
  ASSERT_TRUE(both->WaitFor(": connected"));  // the header alone is fine
  SseClient with_header(port_, kEvents + "?access_token=" + token,
                        "Authorization: Bearer " + token + "\r\n");
  ASSERT_TRUE(with_header.WaitFor("\r\n\r\n"));
  EXPECT_EQ(with_header.seen().rfind("HTTP/1.1 401", 0), 0u) << with_header.seen();
}

// docs/http-api.md#get-export-tasksevents--task-events: a stream opened shortly before the token's
// exp ends there (exp + leeway), with a last `event: reauth`, for the header and the ticket.
TEST_F(TaskEventsTest, AStreamEndsWhenItsTokenExpires) {
  auth_.jwt_leeway_seconds = 0;
  StartServer();
  auto t = identity::MintToken(auth_, Principal{"alice", "t1", task::AppCode::kPlatform, {}},
                               std::chrono::seconds(2));
  ASSERT_TRUE(t.ok());
  const auto opened = std::chrono::steady_clock::now();
  auto header = Open(*t);
  SseClient ticket(port_, kEvents + "?ticket=" + Ticket(*t));
  ASSERT_TRUE(header->WaitFor(": connected"));
  ASSERT_TRUE(ticket.WaitFor(": connected"));
  EXPECT_EQ(header->seen().find("event: reauth"), std::string::npos);
  for (SseClient* c : {header.get(), &ticket}) {
    ASSERT_TRUE(c->WaitFor("event: reauth\ndata: {\"reason\":\"TOKEN_EXPIRED\"", 5000ms))
        << c->seen();
    // The server ends the chunked body: the last chunk follows.
    EXPECT_TRUE(c->WaitFor("\r\n0\r\n\r\n", 2000ms)) << c->seen();
  }
  const auto took = std::chrono::steady_clock::now() - opened;
  EXPECT_GE(took, 900ms);  // exp has whole seconds: 1..2 s after opening
  EXPECT_LT(took, 4000ms);
  for (int i = 0; i < 100 && api_ && server_->stats().live_streams > 0; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(server_->stats().live_streams, 0);
}

// The hub on its own: heartbeats on a quiet stream, and a client that falls
// too far behind is ended (it reconnects with Last-Event-ID).
TEST_F(TaskEventsTest, QuietStreamsGetHeartbeatsAndLaggardsAreEnded) {
  TaskEventsOptions options;
  options.poll_interval = std::chrono::milliseconds(50);
  options.heartbeat = std::chrono::milliseconds(200);
  options.max_backlog_bytes = 4096;
  TaskEventHub hub(store_.get(), options);
  Principal alice{"alice", "t1", task::AppCode::kPlatform, {}};
  auto subscribed = hub.Subscribe(alice, std::nullopt);
  ASSERT_TRUE(subscribed.ok()) << subscribed.status().ToString();
  std::shared_ptr<http::LiveSource> source = *subscribed;
  std::atomic<int> wakes{0};
  source->SetWaker([&] { ++wakes; });
  std::string out;
  ASSERT_EQ(source->Poll(1 << 20, &out), http::LiveSource::PollResult::kReady);
  EXPECT_EQ(out, "retry: 3000\n: connected\n\n");
  std::this_thread::sleep_for(600ms);
  out.clear();
  source->Poll(1 << 20, &out);
  EXPECT_NE(out.find(": heartbeat\n\n"), std::string::npos) << out;
  EXPECT_GT(wakes.load(), 0);

  // Nobody reads: the backlog passes 4 KiB and the stream ends.
  for (int i = 0; i < 20; ++i)
    CreateTask(*store_, "alice", "t1", std::string(300, 'n') + std::to_string(i));
  std::this_thread::sleep_for(300ms);
  out.clear();
  EXPECT_EQ(source->Poll(1 << 20, &out), http::LiveSource::PollResult::kEnd);
  source->Close();
  EXPECT_EQ(hub.open_streams(), 0);
}

// The hub reading a real SQLite store, with a reader draining the stream as
// the server's I/O thread would; returns the task ids of the events seen
// once `want` distinct ones arrived or `timeout` passed.
std::set<std::string> CollectTaskIds(http::LiveSource& source, size_t want,
                                     std::chrono::milliseconds timeout) {
  std::set<std::string> ids;
  std::string seen;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t scanned = 0;
  while (ids.size() < want && std::chrono::steady_clock::now() < deadline) {
    std::string out;
    if (source.Poll(1 << 20, &out) == http::LiveSource::PollResult::kEnd) break;
    if (out.empty()) {
      std::this_thread::sleep_for(2ms);
      continue;
    }
    seen += out;
    // Whole events only: "data: {...}\n\n".
    for (size_t end; (end = seen.find("\n\n", scanned)) != std::string::npos; scanned = end + 2) {
      const std::string event = seen.substr(scanned, end - scanned);
      const size_t data = event.find("\ndata: ");
      if (data == std::string::npos) continue;
      ids.insert(json::parse(event.substr(data + 7)).at("id").get<std::string>());
    }
    seen.erase(0, scanned);
    scanned = 0;
  }
  return ids;
}

// Copies the task `id` into `n` more rows (ids id+1..id+n) in one statement,
// their updated_at at `at` plus (i % spread) ms: n changes of the database
// inside one second, committed at once.
void CopyTask(store::Database& db, const std::string& id, int n, int64_t at, int spread) {
  auto columns = db.Query("SELECT name FROM pragma_table_info('export_task')");
  ASSERT_TRUE(columns.ok()) << columns.status().ToString();
  std::string names;
  std::string values;
  for (const auto& row : *columns) {
    const std::string c = row.Text(0);
    names += (names.empty() ? "" : ", ") + c;
    values += (values.empty() ? "" : ", ") + (c == "id" ? "t.id + seq.i"
                                              : c == "updated_at"
                                                  ? "? + seq.i % " + std::to_string(spread)
                                              : c == "params_hash" ? "t.params_hash || seq.i"
                                                                   : "t." + c);
  }
  auto inserted = db.Exec(
      "WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq"
      " WHERE i < ?) INSERT INTO export_task (" +
          names + ") SELECT " + values + " FROM export_task t CROSS JOIN seq WHERE t.id = ?",
      {int64_t{n}, at, std::stoll(id)});
  ASSERT_TRUE(inserted.ok()) << inserted.status().ToString();
  ASSERT_EQ(*inserted, n);
}

// docs/http-api.md#get-export-tasksevents--task-events: 5 000 changes inside one second all reach
// an open stream — 2 500 of them in the same millisecond — though a poll reads 2 000. (A poll that
// read "updated_at > cursor - 5 s LIMIT 2000" and skipped what it had sent read the same 2 000 rows
// for ever.)
TEST_F(TaskEventsTest, ABurstOfChangesLargerThanAPageAllReachAnOpenStream) {
  TaskEventsOptions options;
  options.poll_interval = 50ms;
  options.max_backlog_bytes = 64 << 20;
  TaskEventHub hub(store_.get(), options);
  Principal admin{"admin", "t1", task::AppCode::kPlatform, {std::string(kDownloadAllPermission)}};
  auto subscribed = hub.Subscribe(admin, std::nullopt);
  ASSERT_TRUE(subscribed.ok()) << subscribed.status().ToString();
  std::shared_ptr<http::LiveSource> source = *subscribed;
  const std::string first = CreateTask(*store_, "alice", "t1", "burst");
  ASSERT_EQ(CollectTaskIds(*source, 1, 5000ms), std::set<std::string>{first});

  auto db = store::OpenSqliteDatabase(dir_ + "/tasks.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto now = store_->DatabaseNowMs();
  ASSERT_TRUE(now.ok());
  CopyTask(**db, first, 2500, *now + 100, 1);  // one millisecond
  CopyTask(**db, std::to_string(std::stoll(first) + 2500), 2500, *now + 100, 900);
  std::set<std::string> ids = CollectTaskIds(*source, 5000, 20000ms);
  EXPECT_EQ(ids.size(), 5000u);
  for (int64_t i = 1; i <= 5000; ++i) {
    if (!ids.contains(std::to_string(std::stoll(first) + i))) {
      ADD_FAILURE() << "task " << i << " of the burst never arrived";
      break;
    }
  }
  source->Close();
}

// The look-back: a change committed late, carrying an updated_at older than
// changes already sent (a transaction on another instance whose statement
// ran before theirs), is still sent, once.
TEST_F(TaskEventsTest, AChangeCommittedLateWithAnOlderUpdatedAtIsSentOnce) {
  const std::string dormant = CreateTask(*store_, "alice", "t1", "dormant");
  auto db = store::OpenSqliteDatabase(dir_ + "/tasks.db");
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)
                  ->Exec("UPDATE export_task SET updated_at = updated_at - 60000 WHERE id = ?",
                         {std::stoll(dormant)})
                  .ok());
  TaskEventsOptions options;
  options.poll_interval = 50ms;
  TaskEventHub hub(store_.get(), options);
  Principal admin{"admin", "t1", task::AppCode::kPlatform, {std::string(kDownloadAllPermission)}};
  auto subscribed = hub.Subscribe(admin, std::nullopt);
  ASSERT_TRUE(subscribed.ok()) << subscribed.status().ToString();
  std::shared_ptr<http::LiveSource> source = *subscribed;
  const std::string newer = CreateTask(*store_, "bob", "t1", "newer");
  ASSERT_EQ(CollectTaskIds(*source, 2, 1000ms), std::set<std::string>{newer});
  auto sent = store_->GetTask(std::stoll(newer));
  ASSERT_TRUE(sent.ok());
  // Commits after `newer` was sent, with an updated_at 2 s before it.
  ASSERT_TRUE((*db)
                  ->Exec("UPDATE export_task SET updated_at = ?, processed_rows = 7 WHERE id = ?",
                         {sent->updated_at - 2000, std::stoll(dormant)})
                  .ok());
  ASSERT_EQ(CollectTaskIds(*source, 1, 5000ms), std::set<std::string>{dormant});
  // Sent once: later polls skip it.
  EXPECT_TRUE(CollectTaskIds(*source, 1, 500ms).empty());
  source->Close();
}

}  // namespace
}  // namespace export_center::api
