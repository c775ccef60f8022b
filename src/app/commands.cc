#include "app/commands.h"

#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>
#include <vector>

#include "app/backends.h"
#include "app/demo_console.h"
#include "app/export_center_app.h"
#include "common/json_dump.h"
#include "common/nesting.h"
#include "common/utf8.h"
#include "http/http_client.h"
#include "http/httplib/httplib_http_client.h"
#include "identity/token_verifier.h"

namespace export_center::app {
namespace {

using nlohmann::json;

StatusOr<config::AppConfig> Load(const std::string& path) {
  auto config = config::LoadConfig(path);
  if (!config.ok()) return config.status().WithContext("invalid configuration " + path);
  spdlog::set_level(spdlog::level::from_str(config->logging.level));
  return config;
}

// Blocks the signals we handle in every thread (threads inherit the mask), so
// that only WaitForStopSignal's sigwait sees them.
sigset_t BlockHandledSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

// Returns on SIGINT/SIGTERM; SIGHUP reloads the registry and keeps waiting.
void WaitForStopSignal(const sigset_t& set, ExportCenterApp& app) {
  while (true) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (sig == SIGHUP) {
      Status s = app.ReloadRegistry();
      if (s.ok()) {
        spdlog::info("registry reloaded");
      } else {
        spdlog::error("registry reload rejected, keeping the old set: {}", s.message());
      }
      continue;
    }
    spdlog::info("signal {} received, shutting down", sig);
    return;
  }
}

StatusOr<std::unique_ptr<ExportCenterApp>> StartApp(config::AppConfig config) {
  EC_ASSIGN_OR_RETURN(auto app, ExportCenterApp::Create(std::move(config)));
  EC_RETURN_IF_ERROR(app->Start());
  return app;
}

int Fail(const Status& status) {
  std::cerr << "export-center: " << status.message() << "\n";
  return 2;
}

// ---- demo helpers ----

std::string SelfDirectory() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

using Deadline = std::chrono::steady_clock::time_point;

// The demo's sample business service as a child process, with the read end of
// its stdout.
struct Child {
  pid_t pid = -1;
  int stdout_fd = -1;
};

// Which sample service the demo starts and how: the C++ customer-service next
// to this binary, or the Java order-service-java (examples/order-service-java),
// which scripts/order-service-java.sh builds with Maven (offline once its
// cache is warm) and starts. The file's own section names it
// (config::AppConfig::demo_service); each service reads its section itself.
struct SampleService {
  std::string name;
  std::vector<std::string> argv;
  // A first Maven build fetches its dependencies: minutes, not seconds.
  std::chrono::seconds start_timeout{180};
};

StatusOr<SampleService> FindSampleService(const config::AppConfig& config,
                                          const std::string& config_path) {
  std::error_code ec;
  const std::string absolute_config = std::filesystem::absolute(config_path, ec).string();
  if (config.demo_service == "order-service") {
    // The script lives in the source tree: found from the working directory
    // (scripts/demo-java.sh runs from the repository root) or from a build
    // folder inside the repository.
    for (const std::string& root :
         {std::filesystem::current_path(ec).string(), SelfDirectory() + "/.."}) {
      const std::string script = root + "/scripts/order-service-java.sh";
      if (std::filesystem::exists(script, ec)) {
        return SampleService{"order-service-java",
                             {"/bin/bash", script, "--config", absolute_config},
                             std::chrono::seconds(900)};
      }
    }
    return NotFound(
        "scripts/order-service-java.sh not found: run the Java demo from the "
        "repository root");
  }
  const std::string binary = SelfDirectory() + "/customer-service";
  if (!std::filesystem::exists(binary, ec)) {
    return NotFound("customer-service binary not found next to export-center: " + binary);
  }
  return SampleService{"customer-service", {binary, "--config", config_path}};
}

StatusOr<Child> SpawnSampleService(const SampleService& service) {
  int out[2];
  if (pipe(out) != 0) return Internal("pipe failed");
  std::vector<char*> argv;
  for (const std::string& arg : service.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(out[0]);
    close(out[1]);
    return Internal("fork failed");
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, nullptr);
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  return Child{pid, out[0]};
}

// Where the service listens, from the line it prints once it accepts
// connections ("<name> listening on http://HOST:PORT"), echoed to our stdout
// with any line before it. Only the service reads its section of the config
// file, so the center learns the address from the service itself.
struct Address {
  std::string host;
  int port = 0;
};

StatusOr<Address> WaitForListeningLine(const std::string& name, const Child& child,
                                       Deadline deadline, DemoConsole& console) {
  static const std::regex kListening(R"(listening on http://([^\s:/]+):([0-9]{1,5}))");
  std::string text;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd ready{child.stdout_fd, POLLIN, 0};
    if (poll(&ready, 1, 200) > 0) {
      char buf[256];
      ssize_t n = read(child.stdout_fd, buf, sizeof buf);
      if (n <= 0) return Unavailable(name + " exited during start-up");
      text.append(buf, static_cast<size_t>(n));
      for (size_t end = text.find('\n'); end != std::string::npos; end = text.find('\n')) {
        const std::string line = text.substr(0, end);
        text.erase(0, end + 1);
        console.Detail(line);
        std::smatch m;
        if (std::regex_search(line, m, kListening)) {
          return Address{m[1].str(), std::stoi(m[2].str())};
        }
      }
      continue;
    }
    int status = 0;
    if (waitpid(child.pid, &status, WNOHANG) == child.pid) {
      return Unavailable(name + " exited during start-up");
    }
  }
  return Unavailable(name + " did not start listening in time");
}

Status WaitForPort(const std::string& name, const std::string& host, int port, pid_t child,
                   Deadline deadline) {
  while (std::chrono::steady_clock::now() < deadline) {
    http::HttpClientOptions options;
    options.base_url = "http://" + host + ":" + std::to_string(port);
    options.connect_timeout_ms = 1000;
    options.read_timeout_ms = 5000;  // the client library's defaults, as before the seam
    options.write_timeout_ms = 5000;
    auto probe = http::HttplibClientFactory()->NewClient(options);
    if (probe.ok()) {
      http::ClientRequest healthz;
      healthz.path = "/healthz";
      if ((*probe)->Send(healthz).outcome == http::ClientAnswer::Outcome::kRead) {
        return Status::Ok();
      }
    }
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == child) {
      return Unavailable(name + " exited during start-up");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Unavailable(name + " did not answer on " + host + ":" + std::to_string(port));
}

void StopChild(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
}

StatusOr<json> CallApi(http::HttpClient& client, const std::string& token,
                       const std::string& method, const std::string& path,
                       const json& body = nullptr) {
  http::ClientRequest request;
  request.method = method;
  request.path = path;
  request.headers.Add("Authorization", "Bearer " + token);
  if (method == "POST") {
    request.body = DumpTolerant(body);
    request.content_type = "application/json";
  }
  const http::ClientAnswer res = client.Send(request);
  if (res.outcome != http::ClientAnswer::Outcome::kRead) {
    return Unavailable("no answer from the center for " + path);
  }
  auto parsed = ParseJsonWithin<json>(res.body);  // common/nesting.h
  json reply = parsed.ok() ? std::move(parsed).value() : json(json::value_t::discarded);
  if (reply.is_discarded() || !reply.is_object() || !reply.contains("code")) {
    return Internal("unexpected reply for " + path + ": " + utf8::Excerpt(res.body, 300));
  }
  if (reply["code"] != "200") {
    return Internal(path + " answered code " + reply["code"].get<std::string>() + ": " +
                    reply.value("message", ""));
  }
  return reply["data"];
}

// One export the demo creates: what to ask for and how to name it.
struct DemoExport {
  std::string type;
  std::string name;
  json parameters;
};

// The demo's exports: one per data route (provider batches, sql-template).
std::vector<DemoExport> DemoExports() {
  return {{"CUSTOMER_LIST", "客户列表（演示）", {{"status", "ACTIVE"}}},
          {"ORDER_LIST", "订单列表（演示）", {{"status", "PAID"}}}};
}

// A count for people: "42122" → "42,122".
std::string Grouped(const std::string& digits) {
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// A task field as plain text: the API sends counts as strings ("42122").
std::string Plain(const json& task, const char* key) {
  auto it = task.find(key);
  if (it == task.end() || it->is_null()) return "?";
  return it->is_string() ? it->get<std::string>() : DumpTolerant(*it);
}

// "1,500 / 6,000 rows", or "1,500 rows" while the total is unknown.
std::string RowsText(const json& task) {
  const std::string done = Grouped(Plain(task, "processedRows"));
  const std::string total = Plain(task, "totalRows");
  return total == "?" ? done + " rows" : done + " / " + Grouped(total) + " rows";
}

// Creates one export and follows it with a progress bar until it ends; the
// demo's check: anything but SUCCEEDED fails the demo.
StatusOr<json> CreateAndWait(const ExportCenterApp& app, const std::string& token,
                             const DemoExport& demo, DemoConsole& console) {
  http::HttpClientOptions options;
  options.base_url = "http://127.0.0.1:" + std::to_string(app.port());
  options.connect_timeout_ms = 300000;  // the client library's default, as before the seam
  options.read_timeout_ms = 30000;
  options.write_timeout_ms = 5000;  // the client library's default
  options.tcp_nodelay = true;       // as the provider clients: small requests never wait on Nagle
  EC_ASSIGN_OR_RETURN(auto client, http::HttplibClientFactory()->NewClient(options));
  const std::string base = "/api/platform/v1/files/export-tasks";
  json create = {{"exportType", demo.type},
                 {"format", "XLSX"},
                 {"taskName", demo.name},
                 {"parameters", demo.parameters}};
  EC_ASSIGN_OR_RETURN(json created, CallApi(*client, token, "POST", base, create));
  const std::string id = created["id"].get<std::string>();
  console.Detail("task " + id + " created");
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = started + std::chrono::minutes(10);
  while (std::chrono::steady_clock::now() < deadline) {
    EC_ASSIGN_OR_RETURN(json task, CallApi(*client, token, "GET", base + "/" + id));
    const std::string status = task["status"].get<std::string>();
    if (status == "SUCCEEDED") {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      char elapsed[32];
      std::snprintf(elapsed, sizeof elapsed, "%.1f s", seconds);
      const std::string size = Plain(task, "sizeBytes");
      console.FinishProgress(Grouped(Plain(task, "totalRows")) + " rows, " +
                             (size == "?" ? size : DemoConsole::HumanBytes(std::stoll(size))) +
                             " in " + elapsed);
      return task;
    }
    if (status != "PENDING" && status != "RUNNING") {
      return Internal("the demo " + demo.type + " export ended " + status + ": " +
                      DumpTolerant(task.value("failureMessage", json(""))));
    }
    const json& progress = task["progress"];
    console.Progress(progress.is_number() ? std::optional<int>(progress.get<int>()) : std::nullopt,
                     RowsText(task));
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return DeadlineExceeded("the demo " + demo.type + " export did not finish in 10 minutes");
}

// Runs every demo export in turn (a step and a bar each) and then prints
// where to look; stops at the first failure.
Status RunDemoExports(const ExportCenterApp& app, const std::string& token, DemoConsole& console) {
  const std::string base = "http://" + app.config().server.host + ":" + std::to_string(app.port());
  std::string first_url;
  for (const DemoExport& demo : DemoExports()) {
    console.Step("export " + demo.type + " \"" + demo.name + "\"");
    EC_ASSIGN_OR_RETURN(json task, CreateAndWait(app, token, demo, console));
    const std::string id = task["id"].get<std::string>();
    const std::string url = base + "/api/platform/v1/files/export-tasks/" + id + "/download";
    console.Detail("file:     " + app.FilePathOf(id));
    console.Detail("download: " + url);
    if (first_url.empty()) first_url = url;
  }
  // The page keeps the token from the address bar and removes it at once.
  console.Step("ready: open the download center (it signs in by itself)");
  console.Detail(base + "/#token=" + token);
  console.Detail("or: curl -OJ -H 'Authorization: Bearer " + token + "' " + first_url);
  console.Detail("serving until Ctrl-C");
  return Status::Ok();
}

}  // namespace

StatusOr<std::string> MintDevToken(const config::AppConfig& config, const TokenOptions& options) {
  auto app = task::ParseAppCode(options.app);
  if (!app) return InvalidArgument("--app must be PLATFORM or MERCHANT");
  identity::Principal principal{options.user, options.tenant, *app, options.perms};
  return identity::MintToken(config.auth, principal, std::chrono::seconds(options.ttl_seconds));
}

int RunServe(const std::string& config_path) {
  sigset_t signals = BlockHandledSignals();
  auto config = Load(config_path);
  if (!config.ok()) return Fail(config.status());
  auto app = StartApp(std::move(*config));
  if (!app.ok()) return Fail(app.status());
  std::cout << "export-center listening on http://" << (*app)->config().server.host << ":"
            << (*app)->port() << std::endl;
  WaitForStopSignal(signals, **app);
  (*app)->Stop();
  return 0;
}

namespace {

// Where the demo writes its log: beside its SQLite database (var/ in
// config/demo.yaml), else in the working directory.
std::string DemoLogPath(const config::AppConfig& config) {
  if (config.database.kind == "sqlite") {
    auto folder = std::filesystem::path(config.database.sqlite.path).parent_path();
    if (!folder.empty()) return (folder / "export-center-demo.log").string();
  }
  return "export-center-demo.log";
}

}  // namespace

int RunDemo(const std::string& config_path) {
  sigset_t signals = BlockHandledSignals();
  auto config = Load(config_path);
  if (!config.ok()) return Fail(config.status());
  // A newcomer reads steps, not one line per HTTP request: the log goes to a
  // file and the access log to debug (serve keeps it at info).
  const std::string log_path = RedirectDemoLog(DemoLogPath(*config));
  config->server.access_log_level = "debug";
  DemoConsole console(std::cout, 2 + static_cast<int>(DemoExports().size()) + 1,
                      isatty(STDOUT_FILENO) == 1);
  // The service creates its database's folder and reads its own section.
  auto service = FindSampleService(*config, config_path);
  if (!service.ok()) return Fail(service.status());
  console.Step("start the sample service " + service->name +
               " (a first start builds it or seeds its database)");
  auto spawned = SpawnSampleService(*service);
  if (!spawned.ok()) return Fail(spawned.status());
  const pid_t child = spawned->pid;
  const Deadline deadline = std::chrono::steady_clock::now() + service->start_timeout;
  StatusOr<Address> address = WaitForListeningLine(service->name, *spawned, deadline, console);
  // The service prints nothing more on stdout (and ignores SIGPIPE).
  close(spawned->stdout_fd);
  Status up = address.ok()
                  ? WaitForPort(service->name, address->host, address->port, child, deadline)
                  : address.status();
  if (!up.ok()) {
    StopChild(child);
    return Fail(up);
  }
  TokenOptions demo_user{
      "demo-user", "1", "PLATFORM", {"platform:customer:export", "platform:order:export"}, 86400};
  auto token = MintDevToken(*config, demo_user);
  console.Step("start export-center" +
               (log_path.empty() ? std::string() : " (its log: " + log_path + ")"));
  auto app = StartApp(std::move(*config));
  if (!app.ok() || !token.ok()) {
    StopChild(child);
    return Fail(!app.ok() ? app.status() : token.status());
  }
  console.Detail("listening on http://" + (*app)->config().server.host + ":" +
                 std::to_string((*app)->port()));
  Status exported = RunDemoExports(**app, *token, console);
  if (!exported.ok()) {
    (*app)->Stop();
    StopChild(child);
    return Fail(exported);
  }
  WaitForStopSignal(signals, **app);
  (*app)->Stop();
  StopChild(child);
  return 0;
}

int RunStorageList(const std::string& config_path) {
  auto config = Load(config_path);
  if (!config.ok()) return Fail(config.status());
  auto storage = OpenExportStorage(config->storage);
  if (!storage.ok()) return Fail(storage.status());
  auto objects = (*storage)->List();
  if (!objects.ok()) return Fail(objects.status());
  auto partials = (*storage)->ListPartials();
  if (!partials.ok()) return Fail(partials.status());
  for (const auto& o : *objects) std::cout << o.key << '\t' << o.size << "\tcomplete\n";
  for (const auto& p : *partials) {
    std::cout << p.name << '\t' << (p.size ? std::to_string(*p.size) : "-") << "\tpartial\n";
  }
  std::cout.flush();
  std::cerr << objects->size() << " stored, " << partials->size() << " partial ("
            << config->storage.kind << ")\n";
  return 0;
}

}  // namespace export_center::app
