#pragma once
// A real SMTP server for the mail tests: tests/notify/smtp_server.py on
// aiosmtpd (pinned, scripts/install-smtp-server.sh), on a free loopback port,
// with STARTTLS under a certificate of a CA made at test time with the
// openssl command, and AUTH required. Each accepted message is read back as
// JSON written by the server with Python's email package.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "tests/support/server_process.h"

namespace export_center::testing {

struct SmtpServerOptions {
  bool starttls = true;
  std::string user = "mailer";
  std::string password = "s3cret-pass";
  int tempfail = 0;  // the first N messages are answered 451 after DATA
};

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline int RunShell(const std::string& command) { return std::system(command.c_str()); }

// A CA (ca.pem), a second unrelated CA (other-ca.pem), and a server
// certificate for 127.0.0.1 and localhost signed by the first (server.pem,
// server.key), in `dir`. Returns false when openssl failed.
inline bool MakeTestCertificates(const std::string& dir) {
  const std::string d = "'" + dir + "'";
  const std::string quiet = " >/dev/null 2>&1";
  return RunShell("openssl req -x509 -newkey rsa:2048 -nodes -keyout " + d + "/ca.key -out " + d +
                  "/ca.pem -days 2 -subj '/CN=export-center test CA'" + quiet) == 0 &&
         RunShell("openssl req -x509 -newkey rsa:2048 -nodes -keyout " + d + "/other-ca.key -out " +
                  d + "/other-ca.pem -days 2 -subj '/CN=another CA'" + quiet) == 0 &&
         RunShell("openssl req -newkey rsa:2048 -nodes -keyout " + d + "/server.key -out " + d +
                  "/server.csr -subj '/CN=localhost'" + quiet) == 0 &&
         RunShell("printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > " + d + "/ext.cnf") ==
             0 &&
         RunShell("openssl x509 -req -in " + d + "/server.csr -CA " + d + "/ca.pem -CAkey " + d +
                  "/ca.key -CAcreateserial -out " + d + "/server.pem -days 2 -extfile " + d +
                  "/ext.cnf" + quiet) == 0;
}

class SmtpTestServer {
 public:
  // `dir` must exist and hold the certificates (MakeTestCertificates).
  SmtpTestServer(std::string dir, SmtpServerOptions options)
      : dir_(std::move(dir)), options_(std::move(options)) {}
  ~SmtpTestServer() { Stop(); }
  SmtpTestServer(const SmtpTestServer&) = delete;
  SmtpTestServer& operator=(const SmtpTestServer&) = delete;

  // Starts the server and waits until it serves. Empty on success, else why.
  std::string Start() {
    const std::string site = PinnedFolder();
    if (site.empty()) return "scripts/install-smtp-server.sh did not give a folder";
    auto port = FreeLoopbackPort();
    if (!port.ok()) return port.status().ToString();
    port_ = *port;
    box_ = dir_ + "/box-" + std::to_string(port_);
    std::filesystem::create_directories(box_);
    std::vector<std::string> argv = {"/usr/bin/env",
                                     "PYTHONPATH=" + site,
                                     "/usr/bin/python3",
                                     SMTP_SERVER_PY,
                                     "--port",
                                     std::to_string(port_),
                                     "--dir",
                                     box_,
                                     "--tempfail",
                                     std::to_string(options_.tempfail)};
    if (options_.starttls) {
      argv.insert(argv.end(), {"--cert", dir_ + "/server.pem", "--key", dir_ + "/server.key"});
    }
    if (!options_.user.empty()) {
      argv.insert(argv.end(), {"--user", options_.user, "--password", options_.password});
    }
    auto pid = SpawnLogged(argv, box_ + "/server.log");
    if (!pid.ok()) return pid.status().ToString();
    pid_ = *pid;
    for (int i = 0; i < 300; ++i) {
      if (std::filesystem::exists(box_ + "/ready")) return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return "smtp_server.py did not start: " + TailOfFile(box_ + "/server.log");
  }

  void Stop() {
    if (pid_ > 0) StopAndReap(pid_, SIGTERM);
    pid_ = 0;
  }

  int port() const { return port_; }

  // The messages accepted so far, in order: {mail_from, rcpt_tos, login, message{…}}.
  std::vector<nlohmann::json> Received() const {
    std::vector<nlohmann::json> out;
    for (int n = 1;; ++n) {
      const std::string path = box_ + "/" + std::to_string(n) + ".json";
      if (!std::filesystem::exists(path)) break;
      out.push_back(nlohmann::json::parse(ReadWholeFile(path)));
    }
    return out;
  }
  std::string RawMessage(int n) const {
    return ReadWholeFile(box_ + "/" + std::to_string(n) + ".eml");
  }

 private:
  static std::string PinnedFolder() {
    FILE* p = popen(INSTALL_SMTP_SERVER_SH " 2>/dev/null", "r");
    if (p == nullptr) return "";
    char buffer[4096];
    std::string out;
    while (fgets(buffer, sizeof buffer, p) != nullptr) out += buffer;
    pclose(p);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
  }

  const std::string dir_;
  const SmtpServerOptions options_;
  int port_ = 0;
  pid_t pid_ = 0;
  std::string box_;
};

}  // namespace export_center::testing
