#pragma once
// MariaDbServer: a throwaway real MariaDB (MySQL-compatible) server for one
// test binary, like PostgresServer.
//
// Start() makes a temp directory, runs mariadb-install-db in it, starts
// `mariadbd` on 127.0.0.1 and a free port (root, no password, no grant
// checks beyond the defaults), waits until it answers, and creates a
// database. The destructor stops the server by its own pid (SIGTERM, then
// SIGKILL after a grace period) and deletes the directory. Only the thread
// that owns the object may call its methods.
//
// StartWithTls() does the same with TLS on: a CA, a server certificate and a
// client certificate made at start with the openssl CLI, and mariadbd's
// --ssl-ca / --ssl-cert / --ssl-key. Unencrypted connections are still
// accepted (the helpers here use them), unless an account is created
// REQUIRE SSL / REQUIRE X509.

#include <sys/types.h>

#include <memory>
#include <string>

#include "common/status.h"

namespace export_center::testing {

class MariaDbServer {
 public:
  // Unavailable when no MariaDB server binaries are installed, Internal when
  // the install or the server fails (the log tail is in the message).
  static StatusOr<std::unique_ptr<MariaDbServer>> Start(
      const std::string& database = "export_center");

  // The PEM files of a server started with TLS, in its directory; EC P-256
  // keys, valid for two days.
  struct TlsFiles {
    std::string ca;           // the CA that signed both certificates
    std::string server_cert;  // CN 127.0.0.1; subjectAltName IP:127.0.0.1, DNS:localhost
    std::string server_key;
    std::string client_cert;  // CN export-center-client, for REQUIRE X509 accounts
    std::string client_key;
    std::string other_ca;  // a CA that signed nothing here: the wrong CA
  };
  // Start() with TLS. Unavailable also when there is no openssl CLI.
  static StatusOr<std::unique_ptr<MariaDbServer>> StartWithTls(
      const std::string& database = "export_center");
  // Empty paths when started without TLS.
  const TlsFiles& tls() const { return tls_; }

  ~MariaDbServer();
  MariaDbServer(const MariaDbServer&) = delete;
  MariaDbServer& operator=(const MariaDbServer&) = delete;

  // mysql://root@127.0.0.1:PORT/<database>
  const std::string& url() const { return url_; }
  int port() const { return port_; }

  // Runs `sql` (several statements allowed) as root in `database`.
  Status Exec(const std::string& sql, const std::string& database = "");

  // Creates database `name` (utf8mb4) and returns its URL.
  StatusOr<std::string> CreateDatabase(const std::string& name);
  // URL of database `name` on this server (which must exist).
  std::string UrlFor(const std::string& name) const;

 private:
  MariaDbServer() = default;
  static StatusOr<std::unique_ptr<MariaDbServer>> StartIn(const std::string& database, bool tls);
  Status MakeTlsFiles();
  Status Launch();
  Status WaitReady();

  std::string dir_;
  std::string url_;
  std::string database_;
  int port_ = 0;
  pid_t pid_ = -1;
  TlsFiles tls_;
};

}  // namespace export_center::testing
