#pragma once
// PostgresServer: a throwaway real PostgreSQL server for one test binary.
//
// Start() makes a temp directory, runs initdb in it (as user postgres when
// we are root), starts `postgres` on 127.0.0.1 and a free port, waits until
// it answers, and creates a database. The destructor stops the server by its
// own pid (fast shutdown, then SIGKILL after a grace period) and deletes the
// directory. Only the thread that owns the object may call its methods.

#include <sys/types.h>

#include <memory>
#include <string>

#include "common/status.h"

namespace export_center::testing {

class PostgresServer {
 public:
  // Unavailable when no PostgreSQL server binaries are installed, Internal
  // when initdb or the server fails (the log tail is in the message).
  static StatusOr<std::unique_ptr<PostgresServer>> Start(
      const std::string& database = "export_center");

  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // postgresql://postgres@127.0.0.1:PORT/<database>
  const std::string& url() const { return url_; }
  int port() const { return port_; }

  // Creates another empty database and returns its URL.
  StatusOr<std::string> CreateDatabase(const std::string& name);
  // URL of database `name` on this server (which must exist).
  std::string UrlFor(const std::string& name) const;

 private:
  PostgresServer() = default;
  Status Launch(const std::string& bindir);
  Status WaitReady();

  std::string dir_;
  std::string url_;
  int port_ = 0;
  pid_t pid_ = -1;
};

// The PostgreSQL server binary directory: `pg_config --bindir` if it holds
// `postgres`, else the newest /usr/lib/postgresql/*/bin. NotFound otherwise.
StatusOr<std::string> FindPostgresBinDir();

}  // namespace export_center::testing
