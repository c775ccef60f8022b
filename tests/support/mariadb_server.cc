#include "tests/support/mariadb_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <mysql.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/support/server_process.h"

namespace export_center::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kInstallDb = "/usr/bin/mariadb-install-db";
constexpr const char* kServer = "/usr/sbin/mariadbd";
constexpr const char* kOpenssl = "/usr/bin/openssl";

struct Closer {
  void operator()(MYSQL* m) const { mysql_close(m); }
};

// A root connection over TCP, or nullptr with *error.
std::unique_ptr<MYSQL, Closer> Connect(int port, const std::string& database, bool multi,
                                       std::string* error) {
  std::unique_ptr<MYSQL, Closer> m(mysql_init(nullptr));
  unsigned timeout = 2;
  mysql_options(m.get(), MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  mysql_options(m.get(), MYSQL_SET_CHARSET_NAME, "utf8mb4");
  if (!mysql_real_connect(
          m.get(), "127.0.0.1", "root", "", database.empty() ? nullptr : database.c_str(),
          static_cast<unsigned>(port), nullptr, multi ? CLIENT_MULTI_STATEMENTS : 0)) {
    *error = mysql_error(m.get());
    return nullptr;
  }
  return m;
}

// Runs `argv` to completion, its output appended to `log`.
Status Run(const std::vector<std::string>& argv, const std::string& log) {
  EC_ASSIGN_OR_RETURN(pid_t pid, SpawnLogged(argv, log));
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return Internal(argv[0] + " " + argv[1] + " failed: " + TailOfFile(log));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<MariaDbServer>> MariaDbServer::Start(const std::string& database) {
  return StartIn(database, /*tls=*/false);
}

StatusOr<std::unique_ptr<MariaDbServer>> MariaDbServer::StartWithTls(const std::string& database) {
  std::error_code ec;
  if (!fs::exists(kOpenssl, ec)) return Unavailable("no openssl CLI to make test certificates");
  return StartIn(database, /*tls=*/true);
}

StatusOr<std::unique_ptr<MariaDbServer>> MariaDbServer::StartIn(const std::string& database,
                                                                bool tls) {
  std::error_code ec;
  if (!fs::exists(kInstallDb, ec) || !fs::exists(kServer, ec)) {
    return Unavailable("no MariaDB server binaries (mariadb-install-db, mariadbd) found");
  }
  std::unique_ptr<MariaDbServer> server(new MariaDbServer());
  char tmpl[] = "/tmp/ec-maria-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return Internal("mkdtemp failed");
  server->dir_ = tmpl;  // from here on the destructor cleans up
  if (tls) EC_RETURN_IF_ERROR(server->MakeTlsFiles());
  EC_RETURN_IF_ERROR(server->Launch());
  EC_RETURN_IF_ERROR(server->Exec("CREATE DATABASE `" + database + "` CHARACTER SET utf8mb4"));
  server->database_ = database;
  server->url_ = server->UrlFor(database);
  return server;
}

StatusOr<std::string> MariaDbServer::CreateDatabase(const std::string& name) {
  EC_RETURN_IF_ERROR(Exec("CREATE DATABASE `" + name + "` CHARACTER SET utf8mb4", "mysql"));
  return UrlFor(name);
}

std::string MariaDbServer::UrlFor(const std::string& name) const {
  return "mysql://root@127.0.0.1:" + std::to_string(port_) + "/" + name;
}

// A CA, a server and a client certificate it signs, and an unrelated CA.
Status MariaDbServer::MakeTlsFiles() {
  const std::string log = dir_ + "/openssl.log";
  const std::vector<std::string> ec_key = {"-newkey", "ec", "-pkeyopt",
                                           "ec_paramgen_curve:prime256v1", "-nodes"};
  auto make_ca = [&](const std::string& name, const std::string& cn) {
    std::vector<std::string> argv = {kOpenssl, "req", "-x509"};
    argv.insert(argv.end(), ec_key.begin(), ec_key.end());
    argv.insert(argv.end(), {"-keyout", dir_ + "/" + name + "-key.pem", "-out",
                             dir_ + "/" + name + ".pem", "-days", "2", "-subj", "/CN=" + cn});
    return Run(argv, log);
  };
  // A certificate for `cn` signed by ca.pem, with the extensions `ext`.
  auto make_signed = [&](const std::string& name, const std::string& cn, const std::string& ext) {
    const std::string base = dir_ + "/" + name;
    std::ofstream(base + ".ext") << ext;
    std::vector<std::string> argv = {kOpenssl, "req"};
    argv.insert(argv.end(), ec_key.begin(), ec_key.end());
    argv.insert(argv.end(),
                {"-keyout", base + "-key.pem", "-out", base + ".csr", "-subj", "/CN=" + cn});
    EC_RETURN_IF_ERROR(Run(argv, log));
    return Run({kOpenssl, "x509", "-req", "-in", base + ".csr", "-CA", dir_ + "/ca.pem", "-CAkey",
                dir_ + "/ca-key.pem", "-CAcreateserial", "-days", "2", "-extfile", base + ".ext",
                "-out", base + "-cert.pem"},
               log);
  };
  EC_RETURN_IF_ERROR(make_ca("ca", "export-center test CA"));
  EC_RETURN_IF_ERROR(make_ca("other-ca", "export-center unrelated CA"));
  EC_RETURN_IF_ERROR(make_signed("server", "127.0.0.1",
                                 "basicConstraints=CA:FALSE\n"
                                 "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                                 "extendedKeyUsage=serverAuth\n"));
  EC_RETURN_IF_ERROR(make_signed("client", "export-center-client",
                                 "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n"));
  tls_ = {dir_ + "/ca.pem",          dir_ + "/server-cert.pem", dir_ + "/server-key.pem",
          dir_ + "/client-cert.pem", dir_ + "/client-key.pem",  dir_ + "/other-ca.pem"};
  return Status::Ok();
}

Status MariaDbServer::Launch() {
  const std::string data = dir_ + "/data";
  const std::string log = dir_ + "/mariadb.log";
  // As root, mariadbd refuses to start unless told --user=root.
  std::vector<std::string> common = {"--no-defaults", "--datadir=" + data};
  if (geteuid() == 0) common.push_back("--user=root");
  std::vector<std::string> install_argv = {kInstallDb};
  install_argv.insert(install_argv.end(), common.begin(), common.end());
  install_argv.insert(install_argv.end(),
                      {"--auth-root-authentication-method=normal", "--skip-test-db"});
  EC_ASSIGN_OR_RETURN(pid_t install, SpawnLogged(install_argv, log));
  int wstatus = 0;
  waitpid(install, &wstatus, 0);
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return Internal("mariadb-install-db failed: " + TailOfFile(log));
  }
  // A port picked by binding port 0 can be taken before the server binds it.
  Status last = Internal("mariadbd did not start");
  for (int attempt = 0; attempt < 3; ++attempt) {
    EC_ASSIGN_OR_RETURN(port_, FreeLoopbackPort());
    std::vector<std::string> argv = {kServer};
    argv.insert(argv.end(), common.begin(), common.end());
    argv.insert(
        argv.end(),
        {"--socket=" + dir_ + "/mariadb.sock", "--port=" + std::to_string(port_),
         "--bind-address=127.0.0.1", "--pid-file=" + dir_ + "/mariadb.pid", "--log-error=" + log,
         "--innodb-flush-log-at-trx-commit=0", "--skip-log-bin", "--innodb-buffer-pool-size=64M"});
    if (!tls_.ca.empty()) {
      argv.insert(argv.end(), {"--ssl-ca=" + tls_.ca, "--ssl-cert=" + tls_.server_cert,
                               "--ssl-key=" + tls_.server_key});
    }
    EC_ASSIGN_OR_RETURN(pid_, SpawnLogged(argv, log));
    last = WaitReady();
    if (last.ok()) return last;
  }
  return last;
}

Status MariaDbServer::WaitReady() {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::string error;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Connect(port_, "", false, &error)) return Status::Ok();
    int wstatus = 0;
    if (waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = -1;
      return Internal("mariadbd exited during start-up: " + TailOfFile(dir_ + "/mariadb.log"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Internal("mariadbd did not answer within 60 s (" + error +
                  "): " + TailOfFile(dir_ + "/mariadb.log"));
}

Status MariaDbServer::Exec(const std::string& sql, const std::string& database) {
  std::string error;
  auto m = Connect(port_, database.empty() ? database_ : database, true, &error);
  if (!m) return Unavailable("connect to test server: " + error);
  if (mysql_real_query(m.get(), sql.data(), sql.size())) {
    return Internal("test server: " + std::string(mysql_error(m.get())));
  }
  // Drain every result of a multi-statement batch; the first failure wins.
  do {
    if (MYSQL_RES* r = mysql_store_result(m.get())) mysql_free_result(r);
  } while (mysql_next_result(m.get()) == 0);
  if (mysql_errno(m.get()) != 0) {
    return Internal("test server: " + std::string(mysql_error(m.get())));
  }
  return Status::Ok();
}

MariaDbServer::~MariaDbServer() {
  // clean shutdown
  StopAndReap(pid_, SIGTERM);
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

}  // namespace export_center::testing
