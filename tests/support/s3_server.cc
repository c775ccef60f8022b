#include "tests/support/s3_server.h"

#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "tests/support/server_process.h"

namespace export_center::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kScript[] = EC_SOURCE_DIR "/scripts/test-s3.sh";
constexpr char kInstaller[] = EC_SOURCE_DIR "/scripts/install-s3proxy.sh";

// Whether the jar install-s3proxy.sh would fetch is already there.
bool JarPresent() {
  FILE* p = popen((std::string(kInstaller) + " --print-jar").c_str(), "r");
  if (p == nullptr) return false;
  char buf[1024] = {};
  std::string path;
  while (fgets(buf, sizeof buf, p)) path += buf;
  pclose(p);
  while (!path.empty() && path.back() == '\n') path.pop_back();
  std::error_code ec;
  return !path.empty() && fs::file_size(path, ec) > 0 && !ec;
}

}  // namespace

StatusOr<std::unique_ptr<S3Server>> S3Server::Start(bool tls) {
  if (system("command -v java >/dev/null 2>&1") != 0) return Unavailable("java is not installed");
  if (!JarPresent()) return Unavailable("no S3Proxy jar; run scripts/install-s3proxy.sh");
  std::unique_ptr<S3Server> server(new S3Server());
  char tmpl[] = "/tmp/ec-s3-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return Internal("mkdtemp failed");
  server->dir_ = tmpl;  // from here on the destructor cleans up
  server->tls_ = tls;
  EC_RETURN_IF_ERROR(server->Restart());
  return server;
}

Status S3Server::RunScript(const std::string& command) {
  const std::string log = dir_ + "/test-s3.out";
  std::vector<std::string> argv = {"/bin/bash", kScript, command, dir_};
  if (command == "start" && tls_) argv.push_back("--tls");
  EC_ASSIGN_OR_RETURN(pid_t pid, SpawnLogged(argv, log));
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return Internal("test-s3.sh " + command + " failed: " + TailOfFile(log) +
                    TailOfFile(dir_ + "/s3proxy.log"));
  }
  return Status::Ok();
}

Status S3Server::ReadEnv() {
  std::ifstream in(dir_ + "/s3.env");
  std::map<std::string, std::string> env;
  for (std::string line; std::getline(in, line);) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  endpoint_ = env["EXPORT_CENTER_S3_ENDPOINT"];
  bucket_ = env["EXPORT_CENTER_S3_BUCKET"];
  region_ = env["EXPORT_CENTER_S3_REGION"];
  access_key_ = env["EXPORT_CENTER_S3_ACCESS_KEY"];
  secret_key_ = env["EXPORT_CENTER_S3_SECRET_KEY"];
  ca_cert_file_ = env["EXPORT_CENTER_S3_CA_CERT_FILE"];
  other_ca_cert_file_ = env["EXPORT_CENTER_S3_OTHER_CA_CERT_FILE"];
  if (endpoint_.empty() || bucket_.empty() || access_key_.empty() || secret_key_.empty()) {
    return Internal("incomplete " + dir_ + "/s3.env");
  }
  return Status::Ok();
}

Status S3Server::Restart() {
  if (running_) return Status::Ok();
  EC_RETURN_IF_ERROR(RunScript("start"));
  running_ = true;
  return ReadEnv();
}

Status S3Server::Stop() {
  if (!running_) return Status::Ok();
  running_ = false;
  return RunScript("stop");
}

S3Server* SharedS3Server(bool tls, std::string* error) {
  struct Shared {
    std::unique_ptr<S3Server> server;
    std::string start_error;
  };
  static Shared shared[2];
  static bool started[2] = {false, false};
  Shared& s = shared[tls ? 1 : 0];
  if (!started[tls ? 1 : 0]) {
    started[tls ? 1 : 0] = true;
    auto server = S3Server::Start(tls);
    if (server.ok()) {
      s.server = std::move(server).value();
    } else {
      s.start_error = server.status().ToString();
    }
  }
  *error = s.start_error;
  return s.server.get();
}

S3Server::~S3Server() {
  (void)Stop();
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

}  // namespace export_center::testing
