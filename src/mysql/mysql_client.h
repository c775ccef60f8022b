#pragma once
// MariaDB Connector/C (libmariadb) helpers shared by the MySQL/MariaDB task
// store (store/mysql) and the MySQL read-only datasource
// (source/sql/datasource/mysql): the URL, owning handles, connecting, and running
// one statement with `?` parameters, every result cell fetched as text.
// Knows nothing of tasks or exports.
//
// Error code → Status stays with each user, as for src/pq/: a failed store
// write and a failed replica read call for different codes. So the functions
// here answer an Error (the server's or the client library's code, SQLSTATE
// and message) and the caller maps it.
//
// Thread-safety: the functions are thread-safe; a handle (MYSQL*, MYSQL_STMT*)
// is used by one thread at a time.

#include <mysql.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/client_tls_options.h"
#include "common/status.h"

namespace export_center::mysql {

struct ConnDeleter {
  void operator()(MYSQL* m) const { mysql_close(m); }
};
using ConnPtr = std::unique_ptr<MYSQL, ConnDeleter>;

struct StmtDeleter {
  void operator()(MYSQL_STMT* s) const { mysql_stmt_close(s); }
};
using StmtPtr = std::unique_ptr<MYSQL_STMT, StmtDeleter>;

// mysql://user:password@host:port/database?key=value&... (mariadb:// too).
// User, password, port, database and options are optional here; each user
// decides what it requires. %XX escapes are decoded in every part.
struct Url {
  std::string host;
  unsigned port = 3306;
  std::string user;
  std::string password;
  std::string database;
  std::vector<std::pair<std::string, std::string>> options;  // the query string, in order
};

// InvalidArgument naming what is wrong (never the password) for a string that
// is not such a URL.
StatusOr<Url> ParseUrl(std::string_view url);

// An error reported by the server (codes 1000..1999 and MySQL's 3000+) or by
// the client library (2000..2999). code 0 means success.
struct Error {
  unsigned code = 0;
  std::string sqlstate;
  std::string message;

  bool failed() const { return code != 0; }
  // "[1213/40001] Deadlock found when trying to get lock; ..."
  std::string ToString() const;
};
Error ErrorOf(MYSQL* conn);
Error ErrorOf(MYSQL_STMT* stmt);

// Client error codes (errmsg.h) and server error codes (mysqld_error.h) the
// users of this helper name.
inline constexpr unsigned kClientMinError = 2000;
inline constexpr unsigned kClientMaxError = 2999;
inline constexpr unsigned kClientInvalidParameterNo = 2034;  // CR_INVALID_PARAMETER_NO
inline constexpr unsigned kClientSslConnectionError = 2026;  // CR_SSL_CONNECTION_ERROR

struct ConnectOptions {
  unsigned connect_timeout_seconds = 5;
  // 0: wait as long as the statement takes.
  unsigned read_timeout_seconds = 0;
  unsigned write_timeout_seconds = 0;
  // CLIENT_* flags passed to mysql_real_connect (e.g. CLIENT_FOUND_ROWS).
  unsigned long client_flags = 0;
  // TLS of the connection, as MySQL's client names its modes. required and
  // the verify modes fail the connect (kClientSslConnectionError) when the
  // server does not speak TLS; verify-ca fails when the server's certificate
  // does not chain to tls.ca_file, verify-identity also when it does not
  // name url.host.
  ClientTlsOptions tls;
};

// Opens a connection: utf8mb4, no automatic reconnect (a silent reconnect
// would drop the session's settings and its open transaction), TLS as
// options.tls says. On failure the Error of the attempt and a null pointer.
std::pair<ConnPtr, Error> Connect(const Url& url, const ConnectOptions& options);

// Whether the connected server is MariaDB (else MySQL): its version string
// says so ("10.11.6-MariaDB...").
bool IsMariaDb(MYSQL* conn);

// The TLS cipher of the connection ("TLS_AES_256_GCM_SHA384"), or "" when it
// is not encrypted.
std::string TlsCipher(MYSQL* conn);

// One parameter value.
using Param = std::variant<std::monostate, bool, int64_t, double, std::string>;

// What one statement answered: its rows (every cell as the client library
// prints it, NULL as nullopt) or, for a statement without a result set, the
// number of rows it affected (with CLIENT_FOUND_ROWS: the rows it matched).
struct Answer {
  bool has_result_set = false;
  std::vector<std::string> columns;
  std::vector<enum_field_types> types;  // per column, as the result metadata gives it
  std::vector<std::vector<std::optional<std::string>>> rows;
  uint64_t affected_rows = 0;
};

// Prepares `sql` on `conn` as a server-side prepared statement.
std::pair<StmtPtr, Error> Prepare(MYSQL* conn, std::string_view sql);

// Binds `params` to the `?` of a prepared statement, runs it and reads the
// whole answer (a result set is buffered client-side; callers bound it with
// LIMIT). A parameter count that does not match the statement is the client
// error kClientInvalidParameterNo. The statement can be executed again.
Error Execute(MYSQL_STMT* stmt, const std::vector<Param>& params, Answer* answer);

// Runs `sql` (one statement, no parameters) over the text protocol: one round
// trip, and statements the prepared-statement protocol refuses (some DDL,
// triggers) work too.
Error Query(MYSQL* conn, std::string_view sql, Answer* answer);

}  // namespace export_center::mysql
