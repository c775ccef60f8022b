#pragma once
// MysqlDatabase: the Database backend for MySQL 8 and MariaDB 10.11
// (docs/store.md#mysql-and-mariadb), on MariaDB Connector/C.
//
// A bounded pool of connections, each set up the same way: utf8mb4, time zone
// UTC (for the dialect's {NOW}), strict SQL mode, READ COMMITTED, a short
// InnoDB lock wait, a statement time limit, and CLIENT_FOUND_ROWS so that an UPDATE's row count is
// the rows it matched, as on SQLite and PostgreSQL (MySQL otherwise counts only rows whose values
// changed, and a conditional UPDATE that writes the values a row already has would look like a
// miss). Write transactions run READ COMMITTED, read transactions REPEATABLE READ READ ONLY with
// one consistent snapshot. Statements with parameters run as server-side prepared statements, kept
// per connection; statements without parameters use the text protocol.
//
// A transaction the server rolled back to break a deadlock, or whose lock
// wait timed out, is run again from the start a couple of times (database.h
// allows it); a single autocommit statement likewise.

#include <memory>
#include <string>

#include "common/client_tls_options.h"
#include "common/status.h"
#include "store/database.h"

namespace export_center::store {

struct MysqlDatabaseOptions {
  int pool_size = 8;
  // innodb_lock_wait_timeout of every session: how long a statement waits for
  // a row lock before it fails with 1205 (the server's default is 50 s).
  int lock_wait_timeout_seconds = 5;
  // How many times a transaction rolled back by a lock conflict runs again.
  int lock_conflict_retries = 2;
  // Connecting, and each statement of a session: MariaDB max_statement_time
  // (every statement) or MySQL max_execution_time (SELECTs), past which the
  // server stops the statement (1969 / 3024, Unavailable). The client's read
  // and write timeouts are the backstop: the longer of 120 s and the
  // statement timeout + 5 s.
  SessionTimeouts timeouts;
  // TLS of every connection, the start-up probe's too (database.ssl-*).
  ClientTlsOptions tls;
};

// Connects to `url` (mysql://user:password@host:port/database; mariadb:// also
// accepted; %XX escapes decoded) and checks the server once. InvalidArgument
// for a malformed URL, a URL without a database, or a server too old (MySQL
// before 8.0.17, MariaDB before 10.3); Unavailable when the server cannot be
// reached or refuses the connection, TLS included (no TLS where options.tls
// requires it, a certificate that does not verify).
StatusOr<std::unique_ptr<Database>> OpenMysqlDatabase(const std::string& url,
                                                      const MysqlDatabaseOptions& options = {});

}  // namespace export_center::store
