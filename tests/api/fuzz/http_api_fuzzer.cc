// libFuzzer target for the whole HTTP request path: bytes from a client →
// the real Boost.Beast server (framing, limits, pipelining) → the Router →
// every ExportApi handler's input checks → the SQLite task store and the
// local file storage, all in this process.
//
// Each input is one TCP connection to the server on 127.0.0.1: its bytes are
// sent as they are (several requests when pipelined), then the write side is
// shut, and the answer is read until the server closes. A real socket rather
// than the parser alone, so the server's own framing and refusals are fuzzed
// exactly as deployed (docs/fuzzing.md says what it costs).
//
// Tokens: "@ALICE@", "@ADMIN@", "@MERCHANT@" and "@EXPIRED@" in an input are
// replaced by HS256 tokens minted at start for the fuzz secret (a user with
// customer:export, one that may also read all tasks, a merchant user, an
// expired one), and "@GRANT@" by a signed download token for task 1, so the
// handlers behind authentication are reached however the rest mutates. The
// store starts with task 1 SUCCEEDED (a file to download, Range included),
// task 2 FAILED (retryable) and task 3 PENDING (cancellable).
//
// Findings beside sanitizer reports: a handler that throws (the server would
// answer 500), any 5xx answer (nothing here is unavailable: the store is in
// memory), and a connection the server does not close once the client has
// stopped sending (a hang, caught by -timeout).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/auth.h"
#include "api/download_token.h"
#include "api/export_api.h"
#include "fuzz_registry.h"
#include "http/beast/beast_http_server.h"
#include "identity/token_verifier.h"
#include "registry/registry.h"
#include "storage/export_storage.h"
#include "storage/local_export_storage.h"
#include "store/database.h"
#include "store/sql_task_store.h"
#include "store/sqlite/sqlite_database.h"

namespace export_center::api {
namespace {

constexpr char kSecret[] = "fuzz-hs256-secret-0123456789abcdef";
constexpr char kDownloadSecret[] = "fuzz-download-secret";

// Fails the run loudly: a handler threw. The server would have answered 500.
class ThrowIsFinding : public http::HttpService {
 public:
  explicit ThrowIsFinding(http::HttpService* inner) : inner_(inner) {}
  http::HttpResponse Handle(http::HttpRequest& request) override {
    try {
      return inner_->Handle(request);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "FINDING: handler for %s %s threw: %s\n", request.method.c_str(),
                   request.path.c_str(), e.what());
      std::abort();
    }
  }
  http::HttpResponse Reject(const http::HttpRequest& request, int status) override {
    return inner_->Reject(request, status);
  }

 private:
  http::HttpService* inner_;
};

struct Fixture {
  std::string dir;
  std::shared_ptr<store::Database> db;
  std::unique_ptr<store::TaskStore> store;
  std::unique_ptr<storage::ExportStorage> storage;
  std::unique_ptr<registry::Registry> registry;
  std::unique_ptr<ExportApi> api;
  std::unique_ptr<ThrowIsFinding> service;
  std::unique_ptr<http::HttpServer> server;
  std::vector<std::pair<std::string, std::string>> placeholders;
};

void Check(const Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "http_api_fuzzer setup: %s: %s\n", what, s.ToString().c_str());
    std::abort();
  }
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Tasks 1-3 straight into the table, as the store's own tests arrange rows.
void ArrangeTasks(Fixture& f) {
  const int64_t now = NowMs();
  const std::string key = storage::MakeObjectKey(1, "xlsx");
  auto writer = f.storage->Create(key);
  Check(writer.status(), "create file");
  Check((*writer)->Append("0123456789abcdefghijklmnopqrstuvwxyz"), "write file");
  Check((*writer)->Commit(), "commit file");
  struct Row {
    int64_t id;
    const char* status;
  };
  for (Row r : {Row{1, "SUCCEEDED"}, Row{2, "FAILED"}, Row{3, "PENDING"}}) {
    const bool done = r.id == 1;
    Check(f.db->Exec("INSERT INTO export_task (id, tenant_id, app_code, requested_by, export_type,"
                     " task_name, format, parameters_json, params_hash, status, file_name,"
                     " object_key, content_type, size_bytes, total_rows, failure_code,"
                     " failure_message, next_retry_at, requested_at, completed_at, expires_at,"
                     " updated_at) VALUES (?, 't1', 'PLATFORM', 'alice', 'CUSTOMER_LIST', ?,"
                     " 'XLSX', '{}', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     {r.id, std::string("客户列表 ") + std::to_string(r.id),
                      "hash" + std::to_string(r.id), std::string(r.status),
                      done ? store::SqlValue("客户列表.xlsx") : nullptr,
                      done ? store::SqlValue(key) : nullptr,
                      done ? store::SqlValue("application/vnd.openxmlformats-officedocument."
                                             "spreadsheetml.sheet")
                           : nullptr,
                      done ? store::SqlValue(int64_t{36}) : nullptr,
                      done ? store::SqlValue(int64_t{3}) : nullptr,
                      r.id == 2 ? store::SqlValue("PROVIDER_UNAVAILABLE") : nullptr,
                      r.id == 2 ? store::SqlValue("provider answered HTTP 503") : nullptr, now, now,
                      done ? store::SqlValue(now) : nullptr,
                      done ? store::SqlValue(now + 86400000) : nullptr, now})
              .status(),
          "insert task");
  }
}

std::string Token(const AuthOptions& auth, const std::string& user, task::AppCode app,
                  std::vector<std::string> perms, int ttl_seconds) {
  auto t = identity::MintToken(auth, Principal{user, "t1", app, std::move(perms)},
                               std::chrono::seconds(ttl_seconds));
  Check(t.status(), "mint token");
  return *t;
}

Fixture* Start() {
  auto* f = new Fixture;
  spdlog::set_level(spdlog::level::off);  // a log line per request costs more than the request
  char tmpl[] = "/tmp/ec-http-api-fuzzer-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) std::abort();
  f->dir = tmpl;
  auto db = store::OpenSqliteDatabase(":memory:");
  Check(db.status(), "open sqlite");
  f->db = std::move(db).value();
  f->store = store::NewSqlTaskStore(f->db);
  Check(f->store->Migrate(), "migrate");
  auto storage = storage::NewLocalExportStorage(f->dir + "/files");
  Check(storage.status(), "local storage");
  f->storage = std::move(storage).value();
  f->registry = std::make_unique<registry::Registry>(fuzz::FuzzSnapshot());
  ArrangeTasks(*f);

  ExportApi::Deps deps;
  deps.store = f->store.get();
  deps.storage = f->storage.get();
  deps.registry = f->registry.get();
  deps.server.public_base_url = "http://files.example.test/";
  deps.server.events_poll_interval_ms = 50;
  deps.auth.jwt_hs256_secret = kSecret;
  deps.auth.download_url_secret = kDownloadSecret;
  deps.auth.metrics_bearer_token = "fuzz-metrics-token";
  deps.metrics_text = [] { return std::string("export_task_created_total 1\n"); };
  // The preview echoes what the request chose, as a real one shows data.
  deps.preview =
      [](const task::Task& t,
         std::shared_ptr<const registry::RegistrySnapshot>) -> StatusOr<task::PreviewTable> {
    task::PreviewTable table;
    table.columns = {task::Column{"name", "名称", task::ColumnType::kString},
                     task::Column{"params", "参数", task::ColumnType::kString}};
    table.rows = {{t.task_name, t.parameters_json}};
    table.row_count = 1;
    table.row_count_exact = true;
    return table;
  };
  f->api = std::make_unique<ExportApi>(std::move(deps));
  Check(f->api->init_status(), "api");
  f->service = std::make_unique<ThrowIsFinding>(f->api.get());

  http::HttpServerOptions options;
  options.worker_threads = 2;
  options.io_threads = 1;
  options.header_timeout = std::chrono::milliseconds(2000);
  options.body_timeout = std::chrono::milliseconds(2000);
  options.idle_timeout = std::chrono::milliseconds(2000);
  options.send_timeout = std::chrono::milliseconds(2000);
  f->server = http::NewBeastHttpServer(options, f->service.get());
  Check(f->server->Start(), "start server");

  AuthOptions auth;
  auth.jwt_hs256_secret = kSecret;
  const std::string all(kDownloadAllPermission);
  f->placeholders = {
      {"@ALICE@", Token(auth, "alice", task::AppCode::kPlatform, {"customer:export"}, 86400 * 365)},
      {"@ADMIN@",
       Token(auth, "admin", task::AppCode::kPlatform, {"customer:export", all}, 86400 * 365)},
      {"@MERCHANT@",
       Token(auth, "mia", task::AppCode::kMerchant, {"customer:export"}, 86400 * 365)},
      {"@EXPIRED@", Token(auth, "alice", task::AppCode::kPlatform, {"customer:export"}, -60)},
      {"@GRANT@", SignDownloadGrant(kDownloadSecret,
                                    DownloadGrant{1, "t1", "alice", NowMs() + 86400000LL * 365,
                                                  "customer:export"})},
  };
  return f;
}

std::string Substitute(std::string text, const Fixture& f) {
  for (const auto& [from, to] : f.placeholders) {
    for (size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  }
  return text;
}

// connect() that survives a signal: libFuzzer's -timeout is a SIGALRM every
// second, and a blocking connect interrupted by it fails with EINTR (never
// restarted) while the connection goes on; wait for it then.
bool ConnectLoopback(int fd, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return true;
  if (errno != EINTR) return false;
  pollfd p{fd, POLLOUT, 0};
  while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
  }
  int error = 0;
  socklen_t length = sizeof error;
  return ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
}

// One connection: sends `bytes`, shuts the write side, reads to the end.
// Every call is retried on EINTR (the SIGALRM above), so no answer is cut short.
std::string Exchange(int port, const std::string& bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) std::abort();
  if (!ConnectLoopback(fd, port)) {
    std::perror("http_api_fuzzer: connect");
    std::abort();
  }
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the server refused and closed: read what it said
    sent += static_cast<size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  std::string answer;
  char buf[16384];
  while (true) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return answer;
}

// The status codes of every response head in `answer` (pipelined answers included).
void CheckAnswer(const std::string& request, const std::string& answer) {
  for (size_t at = answer.find("HTTP/1."); at != std::string::npos;
       at = answer.find("HTTP/1.", at + 1)) {
    if (at != 0 && (at < 2 || answer.compare(at - 2, 2, "\r\n") != 0)) continue;
    if (answer.size() >= at + 10 && answer[at + 8] == ' ' && answer[at + 9] == '5') {
      std::fprintf(stderr, "FINDING: a 5xx answer\n--- request ---\n%s\n--- answer ---\n%s\n",
                   request.c_str(), answer.c_str());
      std::abort();
    }
  }
}

}  // namespace
}  // namespace export_center::api

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace export_center::api;
  static Fixture* fixture = Start();
  const std::string request =
      Substitute(std::string(reinterpret_cast<const char*>(data), size), *fixture);
  CheckAnswer(request, Exchange(fixture->server->port(), request));
  return 0;
}
