#include "tests/support/postgres_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/support/server_process.h"

namespace export_center::testing {
namespace {

namespace fs = std::filesystem;

StatusOr<RunAs> ServerUser() {
  RunAs who;
  if (geteuid() != 0) return who;
  struct passwd* pw = getpwnam("postgres");
  if (pw == nullptr) return Unavailable("running as root but there is no user 'postgres'");
  who.switch_user = true;
  who.uid = pw->pw_uid;
  who.gid = pw->pw_gid;
  return who;
}

bool HasServer(const fs::path& bindir) {
  std::error_code ec;
  return fs::exists(bindir / "postgres", ec) && fs::exists(bindir / "initdb", ec);
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

StatusOr<std::string> FindPostgresBinDir() {
  if (FILE* p = popen("pg_config --bindir 2>/dev/null", "r")) {
    char buf[512] = {};
    std::string out;
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
    out = Trim(out);
    if (!out.empty() && HasServer(out)) return out;
  }
  std::vector<std::pair<int, fs::path>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    fs::path bin = entry.path() / "bin";
    if (HasServer(bin)) found.emplace_back(std::atoi(entry.path().filename().c_str()), bin);
  }
  if (found.empty()) return NotFound("no PostgreSQL server binaries (initdb, postgres) found");
  std::sort(found.begin(), found.end());
  return found.back().second.string();
}

StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Start(const std::string& database) {
  StatusOr<std::string> bindir = FindPostgresBinDir();
  if (!bindir.ok()) return Unavailable(bindir.status().message());
  std::unique_ptr<PostgresServer> server(new PostgresServer());
  char tmpl[] = "/tmp/ec-pg-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return Internal("mkdtemp failed");
  server->dir_ = tmpl;  // from here on the destructor cleans up
  EC_RETURN_IF_ERROR(server->Launch(*bindir));
  if (database != "postgres") EC_RETURN_IF_ERROR(server->CreateDatabase(database).status());
  server->url_ = server->UrlFor(database);
  return server;
}

Status PostgresServer::Launch(const std::string& bindir) {
  EC_ASSIGN_OR_RETURN(RunAs who, ServerUser());
  if (who.switch_user && chown(dir_.c_str(), who.uid, who.gid) != 0) {
    return Internal("cannot chown " + dir_ + " to postgres");
  }
  const std::string data = dir_ + "/data";
  const std::string log = dir_ + "/postgres.log";
  EC_ASSIGN_OR_RETURN(pid_t initdb,
                      SpawnLogged({bindir + "/initdb", "-D", data, "-U", "postgres", "-A", "trust",
                                   "-E", "UTF8", "--locale=C", "--no-sync"},
                                  log, who));
  int wstatus = 0;
  waitpid(initdb, &wstatus, 0);
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return Internal("initdb failed: " + TailOfFile(log));
  }
  // A port picked by binding port 0 can be taken before postgres binds it:
  // try a few.
  Status last = Internal("postgres did not start");
  for (int attempt = 0; attempt < 3; ++attempt) {
    EC_ASSIGN_OR_RETURN(port_, FreeLoopbackPort());
    EC_ASSIGN_OR_RETURN(
        pid_, SpawnLogged(
                  {bindir + "/postgres", "-D", data, "-k", dir_, "-c", "listen_addresses=127.0.0.1",
                   "-p", std::to_string(port_), "-c", "fsync=off", "-c", "synchronous_commit=off",
                   "-c", "full_page_writes=off", "-c", "max_connections=300"},
                  log, who));
    last = WaitReady();
    if (last.ok()) return last;
  }
  return last;
}

Status PostgresServer::WaitReady() {
  const std::string conninfo = UrlFor("postgres");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (PQping(conninfo.c_str()) == PQPING_OK) return Status::Ok();
    int wstatus = 0;
    if (waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = -1;
      return Internal("postgres exited during start-up: " + TailOfFile(dir_ + "/postgres.log"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Internal("postgres did not answer within 60 s: " + TailOfFile(dir_ + "/postgres.log"));
}

std::string PostgresServer::UrlFor(const std::string& name) const {
  return "postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/" + name;
}

StatusOr<std::string> PostgresServer::CreateDatabase(const std::string& name) {
  PGconn* conn = PQconnectdb(UrlFor("postgres").c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string err = PQerrorMessage(conn);
    PQfinish(conn);
    return Unavailable("connect to test server: " + err);
  }
  const std::string sql = "CREATE DATABASE \"" + name + "\"";
  PGresult* res = PQexec(conn, sql.c_str());
  bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
  std::string err = ok ? "" : PQresultErrorMessage(res);
  PQclear(res);
  PQfinish(conn);
  if (!ok) return Internal("CREATE DATABASE " + name + ": " + err);
  return UrlFor(name);
}

PostgresServer::~PostgresServer() {
  // fast shutdown: roll back sessions, stop
  StopAndReap(pid_, SIGINT);
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

}  // namespace export_center::testing
