#include "tests/support/rocketmq_server.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
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

constexpr int64_t kCommitLogFileSize = 16 * 1024 * 1024;  // mappedFileSizeCommitLog

std::string CommitLogFile(const std::string& dir, int64_t offset) {
  char name[32];
  std::snprintf(name, sizeof name, "%020lld",
                static_cast<long long>(offset / kCommitLogFileSize * kCommitLogFileSize));
  return dir + "/store/commitlog/" + name;
}

int64_t BigEndian(const std::string& bytes, size_t pos, int n) {
  int64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[pos + i]);
  return v;
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

StatusOr<std::unique_ptr<RocketMqServer::CorruptedRecord>> RocketMqServer::CorruptRecord(
    int64_t commit_log_offset, int at) const {
  const std::string path = CommitLogFile(dir_, commit_log_offset);
  const int64_t pos = commit_log_offset % kCommitLogFileSize + at;
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  std::string saved(4, '\0');
  f.seekg(pos);
  f.read(saved.data(), 4);
  const char garbage[4] = {0x12, 0x34, 0x56, 0x78};
  f.seekp(pos);
  f.write(garbage, sizeof garbage);
  if (!f) return Internal("cannot rewrite " + path);
  return std::make_unique<CorruptedRecord>(path, pos, std::move(saved));
}

RocketMqServer::CorruptedRecord::~CorruptedRecord() {
  std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(pos_);
  f.write(saved_.data(), static_cast<std::streamsize>(saved_.size()));
}

StatusOr<int64_t> RocketMqServer::CommitLogOffsetOfBody(const std::string& body) const {
  // The store format (docs/rocketmq.md#messages) puts the body 88 bytes after
  // the record's start when both hosts are IPv4, as on this broker; the
  // record's own commit log offset (at byte 28) confirms the match.
  constexpr size_t kBodyAt = 88;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_ + "/store/commitlog", ec)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const int64_t file_start = std::stoll(entry.path().filename().string());
    for (size_t at = data.find(body); at != std::string::npos; at = data.find(body, at + 1)) {
      if (at < kBodyAt) continue;
      const size_t start = at - kBodyAt;
      if (BigEndian(data, start + 84, 4) != static_cast<int64_t>(body.size())) continue;
      if (BigEndian(data, start + 28, 8) == file_start + static_cast<int64_t>(start)) {
        return file_start + static_cast<int64_t>(start);
      }
    }
  }
  return NotFound("no stored record has that body");
}

RocketMqServer::~RocketMqServer() {
  if (running_) (void)RunScript("stop");
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

}  // namespace export_center::testing
