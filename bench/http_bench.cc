// http_bench: the API's HTTP serving under load (docs/http-serving.md).
//
// Serves the real ExportApi (SQLite task store, local files) twice in one run:
// first through the previous serving model — cpp-httplib, a thread per
// connection, 8 threads, no TCP_NODELAY (the baseline) — then through the
// Beast server with the default deployment options. Each is driven by wrk
// (Debian package `wrk`) on loopback:
//
//   1. GET /healthz and GET /export-tasks/{id} at 50 keep-alive connections;
//   2. the same while 1 000 idle and 200 slowloris connections are held open
//      (from other loopback addresses, reopened when the server drops them);
//   3. the same while 500 clients hold long downloads and read them slowly.
//
// It prints req/s, p50/p99 latency, errors, the process RSS and, for the Beast
// server, its connection and stream gauges; and the ratio to the baseline.
// Scenario 3 is not run on the baseline: 8 threads would be 8 downloads.
//
// usage: http_bench [--duration S] [--hold S] [--skip-baseline] [--only plain|crowd|downloads]
//                   [--io-threads N] [--workers N]   (server.io-threads, server.threads)
// Not run by the tests. The server, the held connections and wrk share the
// machine's cores, as they would on a small host.

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/export_api.h"
#include "common/digest.h"
#include "http/beast/beast_http_server.h"
#include "identity/token_verifier.h"
#include "registry/registry.h"
#include "storage/export_storage.h"
#include "storage/local_export_storage.h"
#include "store/sqlite/sqlite_task_store.h"

namespace {

namespace ec = export_center;
using Clock = std::chrono::steady_clock;

constexpr char kJwtSecret[] = "bench-jwt-secret-0123456789abcdef0123";
constexpr char kDownloadSecret[] = "bench-download-secret-0123456789";
constexpr uint64_t kDownloadBytes = 8 * 1024 * 1024;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "http_bench: %s\n", what.c_str());
  std::exit(1);
}

template <class T>
T Must(ec::StatusOr<T> v, const char* what) {
  if (!v.ok()) Die(std::string(what) + ": " + v.status().ToString());
  return std::move(v).value();
}

uint64_t StatusKb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::strtoull(line.c_str() + std::strlen(key), nullptr, 10);
  }
  return 0;
}

// ---- the API on SQLite and local files ----------------------------------------

struct Fixture {
  std::string dir;
  std::unique_ptr<ec::store::TaskStore> store;
  std::unique_ptr<ec::storage::ExportStorage> storage;
  std::unique_ptr<ec::registry::Registry> registry;
  std::unique_ptr<ec::api::ExportApi> api;
  std::string token;
  int64_t task_id = 0;  // a SUCCEEDED task with an 8 MiB file
};

int64_t MakeSucceededTask(Fixture& f) {
  ec::store::NewTask nt;
  nt.tenant_id = "t1";
  nt.requested_by = "bench";
  nt.export_type = "CUSTOMER_LIST";
  nt.task_name = "bench";
  nt.format = ec::task::FileFormat::kCsv;
  nt.parameters_json = "{}";
  nt.params_hash = ec::Sha256Hex(nt.parameters_json);
  auto created = Must(f.store->CreateTask(nt, {}), "create task");
  ec::store::ClaimRequest claim;
  claim.task_id = created.task.id;
  claim.instance = "bench";
  if (!Must(f.store->ClaimTask(claim), "claim task").claimed) Die("claim missed");
  const std::string key = ec::storage::MakeObjectKey(created.task.id, "csv");
  auto writer = Must(f.storage->Create(key), "create file");
  std::string block(64 * 1024, 'x');
  for (uint64_t n = 0; n < kDownloadBytes; n += block.size()) {
    if (!writer->Append(block).ok()) Die("write file");
  }
  if (!writer->Commit().ok()) Die("commit file");
  ec::store::FileResult file{"bench.csv", key, "text/csv", static_cast<int64_t>(kDownloadBytes),
                             1,           "",  {}};
  ec::store::Attempt attempt{created.task.id, 1, "bench"};
  if (Must(f.store->CommitSuccess(attempt, file, 7), "commit task") !=
      ec::store::CommitOutcome::kCommitted) {
    Die("commit lost");
  }
  return created.task.id;
}

Fixture MakeFixture() {
  Fixture f;
  char tmpl[] = "/tmp/http_bench_XXXXXX";
  if (mkdtemp(tmpl) == nullptr) Die("mkdtemp");
  f.dir = tmpl;
  f.store = Must(ec::store::OpenSqliteTaskStore(f.dir + "/ec.db"), "open store");
  if (!f.store->Migrate().ok()) Die("migrate");
  f.storage = Must(ec::storage::NewLocalExportStorage(f.dir + "/files"), "open storage");
  f.registry = std::make_unique<ec::registry::Registry>(ec::registry::RegistrySnapshot{});
  ec::api::AuthOptions auth;
  auth.jwt_hs256_secret = kJwtSecret;
  auth.download_url_secret = kDownloadSecret;
  ec::api::ExportApi::Deps deps;
  deps.store = f.store.get();
  deps.storage = f.storage.get();
  deps.registry = f.registry.get();
  deps.auth = auth;
  f.api = Must(ec::api::ExportApi::Create(std::move(deps)), "api");
  ec::identity::Principal bench{"bench", "t1", ec::task::AppCode::kPlatform, {}};
  f.token = Must(ec::identity::MintToken(auth, bench, std::chrono::hours(2)), "token");
  f.task_id = MakeSucceededTask(f);
  return f;
}

// ---- the baseline: the previous serving model ------------------------------------

// cpp-httplib as ExportApi::Register configured it: 8 pool threads, each
// connection held by one of them for its life, no TCP_NODELAY.
class HttplibServer {
 public:
  explicit HttplibServer(ec::http::HttpService* service) : service_(service) {
    server_.new_task_queue = [] { return new httplib::ThreadPool(8); };
    server_.set_payload_max_length(64 * 1024);
    auto handler = [this](const httplib::Request& req, httplib::Response& res) { Serve(req, res); };
    server_.Get(".*", handler);
    server_.Post(".*", handler);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~HttplibServer() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }

 private:
  void Serve(const httplib::Request& req, httplib::Response& res) {
    ec::http::HttpRequest r;
    r.method = req.method;
    r.target = req.target;
    ec::http::ParseTarget(req.target, &r.path, &r.query);
    for (const auto& [k, v] : req.headers) r.headers.Add(k, v);
    r.body = req.body;
    ec::http::HttpResponse out = service_->Handle(r);
    res.status = out.status;
    for (const auto& [k, v] : out.headers.fields()) res.set_header(k, v);
    std::string type = out.Header("Content-Type");
    if (!out.stream) return res.set_content(out.body, type);
    auto source = out.stream;
    res.set_content_provider(
        out.stream_length, type, [source](size_t, size_t length, httplib::DataSink& sink) {
          std::string chunk;
          if (!source->Next(std::min<size_t>(length, 65536), &chunk).ok() || chunk.empty()) {
            return false;
          }
          return sink.write(chunk.data(), chunk.size());
        });
  }

  ec::http::HttpService* service_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

// ---- held connections ------------------------------------------------------------

int Dial(int port, const std::string& source_ip, int rcvbuf = 0) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (rcvbuf > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  inet_pton(AF_INET, source_ip.c_str(), &local.sin_addr);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// True when the server has closed `fd` (EOF or error, nothing blocking).
bool Closed(int fd) {
  char buf[4096];
  while (true) {
    ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) return true;
    if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK;
  }
}

// Keeps `idle` silent and `slow` slowloris connections open until destroyed:
// slowloris ones send one header byte a second; any the server closes are
// reopened. Each loopback address holds at most 200 of them.
class Crowd {
 public:
  Crowd(int port, int idle, int slow) : port_(port) {
    for (int i = 0; i < idle + slow; ++i) conns_.push_back({-1, i >= idle, Address(i), 0});
    thread_ = std::thread([this] { Run(); });
    // Wait for the first full set.
    for (auto end = Clock::now() + std::chrono::seconds(10); Clock::now() < end;) {
      if (open_.load() == static_cast<int>(conns_.size())) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~Crowd() {
    stop_ = true;
    thread_.join();
    for (auto& c : conns_) {
      if (c.fd >= 0) ::close(c.fd);
    }
  }
  int open() const { return open_.load(); }
  int reopened() const { return reopened_.load(); }

 private:
  struct Conn {
    int fd;
    bool slow;
    std::string address;
    size_t sent;
  };
  static std::string Address(int i) { return "127.0.1." + std::to_string(2 + i / 200); }

  void Run() {
    static const std::string kPartial = "GET /healthz HTTP/1.1\r\nHost: bench\r\nX-Slow-";
    auto next_trickle = Clock::now();
    while (!stop_) {
      int open = 0;
      bool trickle = Clock::now() >= next_trickle;
      if (trickle) next_trickle = Clock::now() + std::chrono::seconds(1);
      for (auto& c : conns_) {
        if (c.fd >= 0 && Closed(c.fd)) {
          ::close(c.fd);
          c.fd = -1;
          ++reopened_;
        }
        if (c.fd < 0) {
          c.fd = Dial(port_, c.address);
          c.sent = 0;
          if (c.fd >= 0 && c.slow && ::send(c.fd, kPartial.data(), 20, MSG_NOSIGNAL) > 0) {
            c.sent = 20;
          }
        } else if (c.slow && trickle) {
          char byte = c.sent < kPartial.size() ? kPartial[c.sent] : 'a';
          if (::send(c.fd, &byte, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1) ++c.sent;
        }
        if (c.fd >= 0) ++open;
      }
      open_ = open;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  const int port_;
  std::vector<Conn> conns_;
  std::atomic<int> open_{0};
  std::atomic<int> reopened_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// `n` clients each downloading the 8 MiB file and reading 4 KiB a second:
// slow, yet above the send deadline's floor of 64 KiB a minute.
class SlowDownloads {
 public:
  SlowDownloads(int port, int n, const std::string& path, const std::string& token) {
    std::string req =
        "GET " + path + " HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer " + token + "\r\n\r\n";
    for (int i = 0; i < n; ++i) {
      int fd = Dial(port, "127.0.2." + std::to_string(2 + i / 200), /*rcvbuf=*/8192);
      if (fd >= 0 && ::send(fd, req.data(), req.size(), MSG_NOSIGNAL) > 0) fds_.push_back(fd);
    }
    thread_ = std::thread([this] { Run(); });
  }
  ~SlowDownloads() {
    stop_ = true;
    thread_.join();
    for (int fd : fds_) ::close(fd);
  }
  int clients() const { return static_cast<int>(fds_.size()); }
  uint64_t bytes() const { return bytes_.load(); }

 private:
  void Run() {
    char buf[4096];
    while (!stop_) {
      for (int fd : fds_) {
        ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) bytes_ += static_cast<uint64_t>(n);
      }
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
  std::vector<int> fds_;
  std::atomic<uint64_t> bytes_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// ---- wrk -----------------------------------------------------------------------

struct Load {
  double rps = 0, p50_ms = 0, p99_ms = 0;
  long errors = 0;          // socket errors, timeouts and non-2xx answers
  std::string error_lines;  // wrk's own words for them
  bool ran = false;
};

// Like popen, but the child gets none of our descriptors: wrk sizes its event
// loop for its own connections and fails to use any socket numbered above
// that, and this process holds over a thousand.
FILE* Spawn(const std::string& cmd) {
  int fds[2];
  if (::pipe(fds) != 0) return nullptr;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close_range(3, ~0U, 0);
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    return nullptr;
  }
  return ::fdopen(fds[0], "r");
}

double ToMs(double v, const char* unit) {
  if (std::strcmp(unit, "us") == 0) return v / 1000;
  if (std::strcmp(unit, "s") == 0) return v * 1000;
  return v;  // ms
}

Load Wrk(int port, const std::string& path, const std::string& token, int connections,
         int seconds) {
  std::string cmd = "wrk -t2 -c" + std::to_string(connections) + " -d" + std::to_string(seconds) +
                    "s --timeout 2s --latency";
  if (!token.empty()) cmd += " -H 'Authorization: Bearer " + token + "'";
  cmd += " http://127.0.0.1:" + std::to_string(port) + path + " 2>&1";
  Load load;
  FILE* p = Spawn(cmd);
  if (p == nullptr) return load;
  char line[512];
  while (std::fgets(line, sizeof line, p) != nullptr) {
    double v = 0;
    char unit[8] = {};
    long a = 0, b = 0, c = 0, d = 0;
    if (std::sscanf(line, " 50%% %lf%7s", &v, unit) == 2) load.p50_ms = ToMs(v, unit);
    if (std::sscanf(line, " 99%% %lf%7s", &v, unit) == 2) load.p99_ms = ToMs(v, unit);
    if (std::sscanf(line, "Requests/sec: %lf", &v) == 1) load.rps = v, load.ran = true;
    if (std::sscanf(line, "  Socket errors: connect %ld, read %ld, write %ld, timeout %ld", &a, &b,
                    &c, &d) == 4) {
      load.errors += a + b + c + d;
      load.error_lines += line;
    }
    if (std::sscanf(line, "  Non-2xx or 3xx responses: %ld", &a) == 1) {
      load.errors += a;
      load.error_lines += line;
    }
  }
  std::fclose(p);
  while (::wait(nullptr) > 0) {
  }
  return load;
}

// ---- report ----------------------------------------------------------------------

struct Row {
  std::string scenario, server;
  Load load;
  uint64_t rss_mb = 0;
  std::string extra;
};

void Print(const Row& r, const Row* baseline) {
  std::printf("%-44s %-8s %9.0f %8.2f %9.2f %7ld %6lu", r.scenario.c_str(), r.server.c_str(),
              r.load.rps, r.load.p50_ms, r.load.p99_ms, r.load.errors,
              static_cast<unsigned long>(r.rss_mb));
  if (baseline != nullptr && baseline->load.rps > 0) {
    std::printf("  x%.1f req/s", r.load.rps / baseline->load.rps);
  }
  if (!r.extra.empty()) std::printf("  %s", r.extra.c_str());
  std::printf("\n%s", r.load.error_lines.c_str());
  std::fflush(stdout);
}

struct Args {
  int duration = 10;
  int hold = 60;
  bool baseline = true;
  std::string only;    // plain | crowd | downloads; empty: all
  int io_threads = 1;  // the deployment defaults
  int workers = 8;
  bool Runs(const std::string& scenario) const { return only.empty() || only == scenario; }
};

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--duration" && i + 1 < argc)
      a.duration = std::atoi(argv[++i]);
    else if (s == "--hold" && i + 1 < argc)
      a.hold = std::atoi(argv[++i]);
    else if (s == "--skip-baseline")
      a.baseline = false;
    else if (s == "--only" && i + 1 < argc)
      a.only = argv[++i];
    else if (s == "--io-threads" && i + 1 < argc)
      a.io_threads = std::atoi(argv[++i]);
    else if (s == "--workers" && i + 1 < argc)
      a.workers = std::atoi(argv[++i]);
    else
      Die("usage: http_bench [--duration S] [--hold S] [--skip-baseline] "
          "[--only plain|crowd|downloads] [--io-threads N] [--workers N]");
  }
  return a;
}

// Runs both endpoints; `gauges` adds the Beast server's counters.
std::vector<Row> Measure(const std::string& scenario, const std::string& server, int port,
                         const Fixture& f, int seconds,
                         const std::function<std::string()>& gauges) {
  std::vector<Row> rows;
  const std::pair<std::string, std::string> targets[] = {
      {"/healthz", ""},
      {"/api/platform/v1/files/export-tasks/" + std::to_string(f.task_id), f.token}};
  for (const auto& [path, token] : targets) {
    Row r;
    r.scenario = scenario + (token.empty() ? " healthz" : " task");
    r.server = server;
    r.load = Wrk(port, path, token, 50, seconds);
    r.rss_mb = StatusKb("VmRSS:") / 1024;
    r.extra = gauges ? gauges() : "";
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  Args args = Parse(argc, argv);
  spdlog::set_level(spdlog::level::warn);  // the access log would measure the disk
  if (std::system("command -v wrk > /dev/null") != 0) {
    Die("wrk is not installed (scripts/install-deps.sh)");
  }
  Fixture f = MakeFixture();
  const std::string download =
      "/api/platform/v1/files/export-tasks/" + std::to_string(f.task_id) + "/download";
  std::printf("%-44s %-8s %9s %8s %9s %7s %6s\n", "scenario (50 keep-alive conns, wrk)", "server",
              "req/s", "p50 ms", "p99 ms", "errors", "RSS MB");

  std::vector<Row> baseline;
  if (args.baseline && args.Runs("plain")) {
    HttplibServer old(f.api.get());
    for (auto& r : Measure("plain", "httplib", old.port(), f, args.duration, nullptr)) {
      Print(r, nullptr);
      baseline.push_back(r);
    }
  }
  if (args.baseline && args.Runs("crowd")) {
    HttplibServer old(f.api.get());
    Crowd crowd(old.port(), 1000, 200);
    for (auto& r : Measure("1000 idle + 200 slowloris", "httplib", old.port(), f,
                           std::min(args.duration, 5), nullptr)) {
      Print(r, nullptr);
      baseline.push_back(r);
    }
  }

  ec::http::HttpServerOptions options;  // the deployment defaults but for these two
  options.worker_threads = args.workers;
  options.io_threads = args.io_threads;
  auto server = ec::http::NewBeastHttpServer(options, f.api.get());
  if (!server->Start().ok()) Die("beast server did not start");
  auto gauges = [&server] {
    auto s = server->stats();
    return "conns " + std::to_string(s.open_connections) + ", rejected " +
           std::to_string(s.rejected_connections) + ", timed out " +
           std::to_string(s.timed_out_connections) + ", streams " + std::to_string(s.open_streams) +
           " holding " + std::to_string(s.stream_buffer_bytes / 1024) + " KiB";
  };
  size_t b = 0;
  auto base = [&]() -> const Row* { return b < baseline.size() ? &baseline[b++] : nullptr; };
  if (args.Runs("plain")) {
    for (auto& r : Measure("plain", "beast", server->port(), f, args.duration, gauges)) {
      Print(r, base());
    }
  }
  if (args.Runs("crowd")) {
    Crowd crowd(server->port(), 1000, 200);
    for (auto& r :
         Measure("1000 idle + 200 slowloris", "beast", server->port(), f, args.duration, gauges)) {
      Print(r, base());
    }
    std::printf("  crowd: %d held, %d reopened after the server's deadlines\n", crowd.open(),
                crowd.reopened());
  }
  if (args.Runs("downloads")) {
    SlowDownloads downloads(server->port(), 500, download, f.token);
    // Starting 500 downloads is 500 database writes (the download count); the
    // figures are for holding them, so wait until every stream is running.
    for (auto end = Clock::now() + std::chrono::seconds(60);
         Clock::now() < end && server->stats().open_streams < downloads.clients();) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));
    auto start = Clock::now();
    int rounds = 0;
    while (Clock::now() - start < std::chrono::seconds(args.hold) || rounds == 0) {
      for (auto& r :
           Measure("500 slow downloads held", "beast", server->port(), f, args.duration, gauges)) {
        Print(r, nullptr);
      }
      ++rounds;
    }
    std::printf("  downloads: %d clients, %.1f MiB read by them in %.0f s; peak RSS %lu MB\n",
                downloads.clients(), static_cast<double>(downloads.bytes()) / (1 << 20),
                std::chrono::duration<double>(Clock::now() - start).count(),
                static_cast<unsigned long>(StatusKb("VmHWM:") / 1024));
  }
  server->Stop();
  std::filesystem::remove_all(f.dir);
  return 0;
}
