#include "tests/support/rocketmq_server.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "tests/support/server_process.h"

namespace export_center::testing {
namespace {

namespace fs = std::filesystem;

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool HaveJava() {
  if (const char* home = std::getenv("JAVA_HOME")) {
    if (access((std::string(home) + "/bin/java").c_str(), X_OK) == 0) return true;
  }
  return std::system("command -v java >/dev/null 2>&1") == 0;
}

}  // namespace

StatusOr<std::unique_ptr<RocketMqServer>> RocketMqServer::Start() { return StartWithEnv(""); }

StatusOr<std::unique_ptr<RocketMqServer>> RocketMqServer::StartWithAcl(
    const std::string& user, const std::string& password) {
  if (user.empty() || password.empty() || user.find(':') != std::string::npos) {
    return InvalidArgument("an ACL test broker needs a user without ':' and a password");
  }
  return StartWithEnv(user + ":" + password);
}

StatusOr<std::unique_ptr<RocketMqServer>> RocketMqServer::StartWithEnv(const std::string& auth) {
  if (!HaveJava()) return Unavailable("no java on PATH: the test broker needs Java 17");
  std::unique_ptr<RocketMqServer> server(new RocketMqServer());
  char tmpl[] = "/tmp/ec-rmq-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return Internal("mkdtemp failed");
  server->dir_ = tmpl;  // from here on the destructor cleans up
  server->running_ = true;
  EC_RETURN_IF_ERROR(server->RunScript("start", auth));
  server->namesrv_addr_ = ReadFirstLine(server->dir_ + "/namesrv");
  std::istringstream ports(ReadFirstLine(server->dir_ + "/ports"));
  std::string field;
  while (ports >> field) {
    if (field.rfind("BROKER_PORT=", 0) == 0) server->broker_addr_ = "127.0.0.1:" + field.substr(12);
  }
  if (server->namesrv_addr_.empty() || server->broker_addr_.empty()) {
    return Internal("test-rocketmq.sh start wrote no addresses into " + server->dir_);
  }
  return server;
}

Status RocketMqServer::RunScript(const std::string& command, const std::string& auth,
                                 const std::string& broker) {
  const std::string log = dir_ + "/script.log";
  // env(1) sets the script's EC_TEST_ROCKETMQ_AUTH without touching this
  // process's environment (other threads may read it).
  std::vector<std::string> argv = {"/usr/bin/env", "EC_TEST_ROCKETMQ_AUTH=" + auth,
                                   "/bin/bash",    EC_TEST_ROCKETMQ_SCRIPT,
                                   command,        dir_};
  if (!broker.empty()) argv.push_back(broker);
  EC_ASSIGN_OR_RETURN(pid_t pid, SpawnLogged(argv, log));
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 3) {
    return Unavailable("no Java or no RocketMQ jars: " + TailOfFile(log));
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return Internal("test-rocketmq.sh " + command + " failed: " + TailOfFile(log));
  }
  return Status::Ok();
}

Status RocketMqServer::Kill() { return RunScript("kill"); }

Status RocketMqServer::Restart() { return RunScript("restart"); }

Status RocketMqServer::StartSecondBroker() {
  EC_RETURN_IF_ERROR(RunScript("start-b"));
  second_broker_addr_ = ReadFirstLine(dir_ + "/broker-b.addr");
  if (second_broker_addr_.empty()) return Internal("test-rocketmq.sh start-b wrote no address");
  return Status::Ok();
}

Status RocketMqServer::Freeze(bool second) {
  return RunScript("freeze", "", second ? "broker-b" : "broker");
}

Status RocketMqServer::Thaw(bool second) {
  return RunScript("thaw", "", second ? "broker-b" : "broker");
}

RocketMqServer::~RocketMqServer() {
  if (running_) (void)RunScript("stop");
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

}  // namespace export_center::testing
