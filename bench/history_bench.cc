// history_bench: what a long history costs (issue 46, docs/performance.md#history).
//
// For each store (SQLite, and a throwaway PostgreSQL and MariaDB server) it
// seeds N historical tasks in the shape (tests/support/history_seed.h:
// 1 000 users of tenant t1 holding 80%, 19 other tenants, three years, the
// timeline events of each task and a download-audit row for every fourth
// file of t1), ANALYZEs, and times the store calls behind each HTTP call of
// the table — the handler adds the JSON of one page — p50 and p99 over
// --runs calls, beside the same calls on an empty store (their ratio). Then
// the idle cost: for --idle-seconds it runs what an idle instance runs (the
// task events' poll once a second, the publisher's poll once a second, the
// reconciler's round and the gauges), and prints the CPU this process and the
// database server (its processes, for PostgreSQL and MariaDB) used, in % of
// one core, empty and full.
//
// usage: history_bench [--tasks N] [--events-per-task N] [--runs N]
//                      [--idle-seconds N] [--only sqlite|postgres|mysql] [--keep]
// (--keep leaves the SQLite files in /tmp, to read plans with the sqlite3 shell)
// Not run by the tests.

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "store/sql_task_store.h"
#include "store/sqlite/sqlite_database.h"
#include "store/task_store.h"
#include "tests/support/history_seed.h"
#ifdef EXPORT_CENTER_WITH_POSTGRES
#include "store/postgres/postgres_database.h"
#include "tests/support/postgres_server.h"
#endif
#ifdef EXPORT_CENTER_WITH_MYSQL
#include "store/mysql/mysql_database.h"
#include "tests/support/mariadb_server.h"
#endif

namespace {

namespace ec = export_center;
namespace store = export_center::store;
using Clock = std::chrono::steady_clock;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "history_bench: %s\n", what.c_str());
  std::exit(1);
}

template <typename T>
T Must(ec::StatusOr<T> v, const char* what) {
  if (!v.ok()) Die(std::string(what) + ": " + v.status().ToString());
  return std::move(v).value();
}

void Must(const ec::Status& s, const char* what) {
  if (!s.ok()) Die(std::string(what) + ": " + s.ToString());
}

// CPU seconds (user + system) of this process and of every process below it
// (the database servers a bench starts are its children).
double CpuSecondsOfTree() {
  const pid_t self = getpid();
  std::map<pid_t, std::pair<pid_t, double>> procs;  // pid → (ppid, cpu seconds)
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::ifstream in(entry.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t close = text.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(text.substr(close + 2));
    std::string state;
    long long ppid = 0, skip = 0, utime = 0, stime = 0;
    rest >> state >> ppid;
    for (int i = 0; i < 9; ++i) rest >> skip;
    rest >> utime >> stime;
    procs[static_cast<pid_t>(std::stoll(name))] = {static_cast<pid_t>(ppid),
                                                   static_cast<double>(utime + stime) / tick};
  }
  std::set<pid_t> tree = {self};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, info] : procs) {
      if (tree.count(info.first) && tree.insert(pid).second) grew = true;
    }
  }
  double total = 0;
  for (pid_t pid : tree) {
    if (auto it = procs.find(pid); it != procs.end()) total += it->second.second;
  }
  return total;
}

struct Figures {
  double p50_ms = 0, p99_ms = 0;
};

Figures Time(int runs, const std::function<void()>& call) {
  for (int i = 0; i < std::min(runs / 10 + 1, 5); ++i) call();  // warm the caches
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    auto start = Clock::now();
    call();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    return ms[std::min(ms.size() - 1, static_cast<size_t>(q * static_cast<double>(ms.size())))];
  };
  return {at(0.50), at(0.99)};
}

struct Call {
  std::string name;
  std::function<void(store::TaskStore&)> run;
};

std::vector<Call> Calls() {
  auto list = [](std::optional<std::string> user, std::vector<ec::task::TaskState> states,
                 bool second_page) {
    return [=](store::TaskStore& s) {
      store::TaskCatalog::ListQuery q;
      q.tenant_id = "t1";
      q.requested_by = user;
      q.any_status = states;
      auto page = Must(s.ListTasks(q), "list");
      if (second_page && page.next) {
        q.after = page.next;
        Must(s.ListTasks(q), "list by cursor");
      }
    };
  };
  using ec::task::TaskState;
  return {
      {"GET /export-tasks (the user's list)", list("u1", {}, false)},
      {"GET /export-tasks (the tenant's list, download:all)", list(std::nullopt, {}, false)},
      {"GET /export-tasks?status=FAILED (tenant)", list(std::nullopt, {TaskState::kFailed}, false)},
      {"GET /export-tasks?status=FAILED,STALE,INCONSISTENT (tenant)",
       list(std::nullopt, {TaskState::kFailed, TaskState::kStale, TaskState::kInconsistent},
            false)},
      {"GET /export-tasks?after=… (tenant, pages 1+2)", list(std::nullopt, {}, true)},
      {"GET /export-tasks?after=… (tenant, page 2 alone)",
       [](store::TaskStore& s) {
         // The cursor after page 1, read once per store (its first run also reads page 1).
         static std::map<const store::TaskStore*, store::PageKey> cursors;
         store::TaskCatalog::ListQuery q;
         q.tenant_id = "t1";
         auto it = cursors.find(&s);
         if (it == cursors.end()) {
           auto first = Must(s.ListTasks(q), "list");
           if (!first.next) return;
           it = cursors.emplace(&s, *first.next).first;
         }
         q.after = it->second;
         Must(s.ListTasks(q), "list by cursor");
       }},
      {"GET /operator/tasks?status=FAILED",
       [](store::TaskStore& s) {
         store::OperatorFilter f;
         f.any_status = {TaskState::kFailed};
         Must(s.SearchTasks(f, 1, 20, std::nullopt), "search");
       }},
      {"GET /operator/stats (24 h + 7 d)",
       [](store::TaskStore& s) {
         Must(s.ReadTypeStats({}, 24 * 3600 * 1000LL), "stats 24h");
         Must(s.ReadTypeStats({}, 7 * 24 * 3600 * 1000LL), "stats 7d");
       }},
      {"POST /operator/bulk-actions/count (RETRY, all)",
       [](store::TaskStore& s) {
         store::OperatorFilter f;
         f.any_status = {TaskState::kFailed, TaskState::kCancelled, TaskState::kInconsistent};
         Must(s.CountTasks(f), "count");
       }},
      {"POST /operator/bulk-actions/count (RETRY, type1 of t1)",
       [](store::TaskStore& s) {
         store::OperatorFilter f;
         f.scope.tenant_id = "t1";
         f.scope.app_code = ec::task::AppCode::kPlatform;
         f.export_type = "type1";
         f.any_status = {TaskState::kFailed, TaskState::kCancelled, TaskState::kInconsistent};
         Must(s.CountTasks(f), "count");
       }},
      {"GET /download-audit",
       [](store::TaskStore& s) {
         store::DownloadAuditQuery q;
         q.tenant_id = "t1";
         Must(s.ListDownloadAudit(q), "audit");
       }},
  };
}

// What an idle instance runs, for `seconds`: the task events' poll and the
// publisher's poll once a second, the gauges every 15 s, a reconciler round
// every 30 s. Returns % of one core used by the process and its servers.
double IdleCpuPercent(store::TaskStore& s, int seconds) {
  const double cpu0 = CpuSecondsOfTree();
  const auto start = Clock::now();
  for (int tick = 0; tick < seconds; ++tick) {
    const int64_t now = Must(s.DatabaseNowMs(), "now");
    store::TaskCatalog::ChangeQuery q;
    q.updated_after_ms = now - 2000;
    Must(s.ListChangeKeys(q), "change keys");
    Must(s.SelectDueOutbox(50), "due outbox");
    if (tick % 15 == 0) Must(s.ReadGauges(), "gauges");
    if (tick % 30 == 0) {
      Must(s.RedispatchMissingOutbox(60, 50), "redispatch");
      Must(s.RecoverExpiredLeases(20), "leases");
      Must(s.ListExpiredArtifacts(50), "expiry");
    }
    std::this_thread::sleep_until(start + std::chrono::seconds(tick + 1));
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  return 100.0 * (CpuSecondsOfTree() - cpu0) / wall;
}

struct Options {
  int64_t tasks = 1000000;
  int events_per_task = 5;
  int runs = 200;
  int idle_seconds = 30;
  std::string only;
  bool keep = false;  // leave the SQLite files, to read plans with the sqlite3 shell
};

using Opener = std::function<std::shared_ptr<store::Database>(const std::string& name)>;

void RunBackend(const std::string& kind, const Opener& open, const Options& o) {
  std::printf("\n== %s: %lld tasks, %d events each ==\n", kind.c_str(),
              static_cast<long long>(o.tasks), o.events_per_task);
  auto empty_db = open("empty");
  auto empty = store::NewSqlTaskStore(empty_db);
  Must(empty->Migrate(), "migrate empty");
  auto full_db = open("full");
  auto full = store::NewSqlTaskStore(full_db);
  Must(full->Migrate(), "migrate full");
  ec::testing::HistoryShape shape;
  shape.tasks = o.tasks;
  shape.events_per_task = o.events_per_task;
  const auto seed_start = Clock::now();
  Must(ec::testing::SeedHistory(*full_db, shape, Must(full->DatabaseNowMs(), "now"),
                                [&](int64_t n) {
                                  if (n % 100000 == 0) {
                                    std::fprintf(stderr, "  seeded %lld\n",
                                                 static_cast<long long>(n));
                                  }
                                }),
       "seed");
  std::printf("seeded in %.0f s\n",
              std::chrono::duration<double>(Clock::now() - seed_start).count());
  std::printf("| call | p50 ms | p99 ms | empty p50 | empty p99 | p99 ratio |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  for (const Call& call : Calls()) {
    const Figures e = Time(o.runs, [&] { call.run(*empty); });
    const Figures f = Time(o.runs, [&] { call.run(*full); });
    std::printf("| %s | %.2f | %.2f | %.2f | %.2f | %.1f× |\n", call.name.c_str(), f.p50_ms,
                f.p99_ms, e.p50_ms, e.p99_ms, f.p99_ms / std::max(e.p99_ms, 0.001));
    std::fflush(stdout);
  }
  const double idle_empty = IdleCpuPercent(*empty, o.idle_seconds);
  const double idle_full = IdleCpuPercent(*full, o.idle_seconds);
  std::printf(
      "idle CPU (process + database server, %% of one core over %d s): empty %.2f%%,"
      " full %.2f%%\n",
      o.idle_seconds, idle_empty, idle_full);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Die("missing value of " + arg);
      return argv[++i];
    };
    if (arg == "--tasks") {
      o.tasks = std::stoll(value());
    } else if (arg == "--events-per-task") {
      o.events_per_task = std::stoi(value());
    } else if (arg == "--runs") {
      o.runs = std::max(1, std::stoi(value()));
    } else if (arg == "--idle-seconds") {
      o.idle_seconds = std::max(1, std::stoi(value()));
    } else if (arg == "--only") {
      o.only = value();
    } else if (arg == "--keep") {
      o.keep = true;
    } else {
      Die("unknown argument " + arg);
    }
  }
  char tmpl[] = "/tmp/ec-history-bench-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  if (o.only.empty() || o.only == "sqlite") {
    RunBackend(
        "sqlite",
        [&](const std::string& name) {
          return std::shared_ptr<store::Database>(
              Must(store::OpenSqliteDatabase(dir + "/" + name + ".db"), "sqlite"));
        },
        o);
  }
#ifdef EXPORT_CENTER_WITH_POSTGRES
  if (o.only.empty() || o.only == "postgres") {
    auto server = Must(ec::testing::PostgresServer::Start("bench"), "postgres server");
    RunBackend(
        "postgres",
        [&](const std::string& name) {
          return std::shared_ptr<store::Database>(
              Must(store::OpenPostgresDatabase(Must(server->CreateDatabase(name), "database"), 4),
                   "postgres"));
        },
        o);
  }
#endif
#ifdef EXPORT_CENTER_WITH_MYSQL
  if (o.only.empty() || o.only == "mysql") {
    auto server = Must(ec::testing::MariaDbServer::Start("bench"), "mariadb server");
    RunBackend(
        "mariadb",
        [&](const std::string& name) {
          store::MysqlDatabaseOptions options;
          options.pool_size = 4;
          return std::shared_ptr<store::Database>(Must(
              store::OpenMysqlDatabase(Must(server->CreateDatabase(name), "database"), options),
              "mariadb"));
        },
        o);
  }
#endif
  if (o.keep) {
    std::printf("kept %s\n", dir.c_str());
  } else {
    std::filesystem::remove_all(dir);
  }
  return 0;
}
