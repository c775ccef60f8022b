#include "store/mysql/mysql_database.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "mysql/mysql_client.h"
#include "store/bounded_connection_pool.h"
#include "store/mysql/mysql_error.h"

namespace export_center::store {
namespace {

// How long a caller waits for a pooled connection before Unavailable.
constexpr std::chrono::seconds kAcquireTimeout{30};
// A statement that has not answered in this long is treated as a lost
// connection. Longer than any lock wait and than the migration lock's 60 s.
constexpr unsigned kReadWriteTimeoutSeconds = 120;
// Prepared statements kept per connection. The store has a few dozen
// distinct statements; the cap only matters for ad-hoc SQL (tests, tools).
constexpr size_t kMaxCachedStatements = 128;

// Versions the dialect and the schema were checked against: utf8mb4_0900_bin
// (MySQL 8.0.17), CREATE INDEX IF NOT EXISTS and utf8mb4_nopad_bin (MariaDB).
constexpr unsigned long kMinMysqlVersion = 80017;
constexpr unsigned long kMinMariaDbVersion = 100300;

// READ COMMITTED, not InnoDB's default REPEATABLE READ: under REPEATABLE READ
// locking reads, UPDATEs found through a range and INSERT ... SELECT take
// next-key (gap) locks, and the claim and publisher paths (conditional UPDATEs
// next to INSERT IGNORE into the same index gaps) can deadlock each other under
// load. READ COMMITTED locks only the rows it changes, and an UPDATE that
// waited for a row lock re-checks its WHERE on the newest committed row
// (a "semi-consistent read"), which is what the conditional updates rely on —
// the same semantics the PostgreSQL backend gets from its READ COMMITTED.
// time_zone UTC: the dialect's {NOW} converts NOW(3) back to an epoch, which
// is exact only in a zone without a repeated daylight-saving hour.
// Strict mode: a value too long for its column is an error (1406), not a
// silent truncation; NO_ENGINE_SUBSTITUTION: no table silently leaves InnoDB.
constexpr const char* kSessionSetup[] = {
    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    "SET SESSION time_zone = '+00:00', SESSION autocommit = 1,"
    " SESSION sql_mode = 'STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
    "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'",
};

// Whether the session behind a connection cannot be used again: the client
// lost it (2000-2999, except the API-misuse codes that leave it intact), the
// server killed it (1927) or is shutting down (1053).
bool SessionIsGone(unsigned code) {
  const bool api_misuse = code >= 2030 && code <= 2036;
  const bool client = code >= mysql::kClientMinError && code <= mysql::kClientMaxError;
  return (client && !api_misuse) || code == 1927 || code == 1053;
}

mysql::Param ToParam(const SqlValue& value) {
  return std::visit(
      [](const auto& v) -> mysql::Param {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return std::monostate();
        } else {
          return v;
        }
      },
      value.storage());
}

class MysqlConnection final : public Connection {
 public:
  MysqlConnection(mysql::ConnPtr conn, int lock_conflict_retries)
      : conn_(std::move(conn)), retries_(lock_conflict_retries) {}
  MysqlConnection(const MysqlConnection&) = delete;
  MysqlConnection& operator=(const MysqlConnection&) = delete;

  // A broken connection, or one left inside a transaction, is not reused.
  bool healthy() const { return !broken_ && !aborted_.failed() && AutocommitIdle(); }

  StatusOr<Rows> Query(std::string_view sql, const SqlParams& params) override {
    EC_ASSIGN_OR_RETURN(mysql::Answer answer, Run(sql, params));
    Rows rows;
    rows.reserve(answer.rows.size());
    for (auto& cells : answer.rows) rows.emplace_back(std::move(cells));
    return rows;
  }

  StatusOr<int64_t> Exec(std::string_view sql, const SqlParams& params) override {
    EC_ASSIGN_OR_RETURN(mysql::Answer answer, Run(sql, params));
    return static_cast<int64_t>(answer.affected_rows);
  }

  // The MySQL error code of the last failed statement, 0 after a success.
  unsigned last_error() const { return last_error_; }
  void MarkBroken() { broken_ = true; }

 private:
  // Autocommit on and no transaction open: a statement here is a transaction
  // of its own.
  bool AutocommitIdle() const {
    unsigned int status = 0;
    if (mariadb_get_infov(conn_.get(), MARIADB_CONNECTION_SERVER_STATUS, &status)) return false;
    return (status & SERVER_STATUS_AUTOCOMMIT) != 0 && (status & SERVER_STATUS_IN_TRANS) == 0;
  }

  StatusOr<mysql::Answer> Run(std::string_view sql, const SqlParams& params) {
    // After a deadlock the server has rolled the transaction back and the
    // session is in autocommit mode: a caller that went on would write
    // outside any transaction. So every statement fails like the first
    // until the caller's ROLLBACK.
    if (aborted_.failed()) {
      if (sql != "ROLLBACK") return Failure(aborted_);
      aborted_ = mysql::Error();
    }
    // A statement outside a transaction that lost a lock conflict was rolled
    // back alone: running it again is safe. Inside a transaction the whole
    // transaction runs again (MysqlDatabase::WithTransaction).
    const bool alone = AutocommitIdle();
    for (int attempt = 0;; ++attempt) {
      mysql::Answer answer;
      mysql::Error error = params.empty() ? mysql::Query(conn_.get(), sql, &answer)
                                          : ExecutePrepared(sql, params, &answer);
      last_error_ = error.code;
      if (!error.failed()) return answer;
      if (SessionIsGone(error.code)) broken_ = true;  // do not pool it again
      if (!alone && IsRetryableLockConflict(error.code)) aborted_ = error;
      if (!(alone && IsRetryableLockConflict(error.code) && attempt < retries_)) {
        return Failure(error);
      }
    }
  }

  static Status Failure(const mysql::Error& error) {
    return MysqlError(error.code, error.sqlstate, error.message, "exec");
  }

  mysql::Error ExecutePrepared(std::string_view sql, const SqlParams& params,
                               mysql::Answer* answer) {
    auto it = statements_.find(std::string(sql));
    if (it == statements_.end()) {
      auto [stmt, error] = mysql::Prepare(conn_.get(), sql);
      if (error.failed()) return error;
      if (statements_.size() >= kMaxCachedStatements) statements_.clear();
      it = statements_.emplace(std::string(sql), std::move(stmt)).first;
    }
    std::vector<mysql::Param> bound;
    bound.reserve(params.size());
    for (const SqlValue& p : params) bound.push_back(ToParam(p));
    mysql::Error error = mysql::Execute(it->second.get(), bound, answer);
    // A statement that failed is prepared afresh next time (its metadata may
    // be stale after DDL).
    if (error.failed()) statements_.erase(it);
    return error;
  }

  mysql::ConnPtr conn_;
  const int retries_;
  // Declared after conn_: statements close before their connection.
  std::unordered_map<std::string, mysql::StmtPtr> statements_;
  unsigned last_error_ = 0;
  bool broken_ = false;
  mysql::Error aborted_;  // the lock conflict that ended the open transaction
};

StatusOr<std::unique_ptr<MysqlConnection>> Connect(const mysql::Url& url,
                                                   const MysqlDatabaseOptions& db_options) {
  mysql::ConnectOptions options;
  const int statement_ms = db_options.timeouts.statement_timeout_ms;
  options.connect_timeout_seconds =
      static_cast<unsigned>((db_options.timeouts.connect_timeout_ms + 999) / 1000);
  options.read_timeout_seconds =
      std::max(kReadWriteTimeoutSeconds, static_cast<unsigned>((statement_ms + 999) / 1000) + 5);
  options.write_timeout_seconds = options.read_timeout_seconds;
  options.client_flags = CLIENT_FOUND_ROWS;
  options.tls = db_options.tls;
  auto [conn, error] = mysql::Connect(url, options);
  if (!conn) {
    // Whatever the code (refused, unknown host, access denied while the
    // server starts), a failed connect is for a later attempt, as on postgres.
    Status mapped = MysqlError(error.code, error.sqlstate, error.message, "connect");
    return Unavailable(mapped.message());
  }
  const bool mariadb = mysql::IsMariaDb(conn.get());
  auto connection =
      std::make_unique<MysqlConnection>(std::move(conn), db_options.lock_conflict_retries);
  for (const char* statement : kSessionSetup) {
    EC_RETURN_IF_ERROR(connection->Exec(statement, {}).status());
  }
  EC_RETURN_IF_ERROR(connection
                         ->Exec("SET SESSION innodb_lock_wait_timeout = " +
                                    std::to_string(db_options.lock_wait_timeout_seconds),
                                {})
                         .status());
  // MariaDB's limit is in seconds with fractions and covers every statement;
  // MySQL's in milliseconds, SELECTs only.
  const std::string limit =
      mariadb ? "SET SESSION max_statement_time = " + std::to_string(statement_ms / 1000) + "." +
                    std::to_string(1000 + statement_ms % 1000).substr(1)
              : "SET SESSION max_execution_time = " + std::to_string(statement_ms);
  EC_RETURN_IF_ERROR(connection->Exec(limit, {}).status());
  return connection;
}

class MysqlDatabase final : public Database {
 public:
  MysqlDatabase(mysql::Url url, Dialect dialect, const MysqlDatabaseOptions& options)
      : dialect_(std::move(dialect)),
        retries_(options.lock_conflict_retries),
        pool_(options.pool_size,
              [url = std::move(url), options]() -> StatusOr<std::unique_ptr<MysqlConnection>> {
                return Connect(url, options);
              }) {}

  const Dialect& dialect() const override { return dialect_; }

  Status WithTransaction(TxMode mode, const std::function<Status(Connection&)>& fn) override {
    return RunAgainAfterLockConflicts(retries_, [&](bool* lock_conflict) {
      unsigned error = 0;
      Status status = RunTransactionOnce(mode, fn, &error);
      *lock_conflict = IsRetryableLockConflict(error);
      return status;
    });
  }

  Status WithConnection(const std::function<Status(Connection&)>& fn) override {
    EC_ASSIGN_OR_RETURN(auto lease, pool_.Acquire(kAcquireTimeout));
    return fn(*lease);
  }

 private:
  // One run of `fn` in a transaction. *error is the MySQL code that ended it
  // (0 when none did).
  Status RunTransactionOnce(TxMode mode, const std::function<Status(Connection&)>& fn,
                            unsigned* error) {
    EC_ASSIGN_OR_RETURN(auto lease, pool_.Acquire(kAcquireTimeout));
    if (mode == TxMode::kRead) {
      // Reads see one snapshot, so a count and its page agree; plain reads
      // take no locks at any level. Applies to the next transaction only.
      EC_RETURN_IF_ERROR(
          lease->Exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", {}).status());
    }
    EC_RETURN_IF_ERROR(lease
                           ->Exec(mode == TxMode::kWrite
                                      ? "START TRANSACTION"
                                      : "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
                                  {})
                           .status());
    Status status = fn(*lease);
    // The code of the failure inside fn, before COMMIT/ROLLBACK overwrite it.
    *error = status.ok() ? 0 : lease->last_error();
    if (status.ok()) {
      status = lease->Exec("COMMIT", {}).status();
      if (!status.ok()) *error = lease->last_error();
    }
    if (!status.ok() && !lease->Exec("ROLLBACK", {}).ok()) lease->MarkBroken();
    return status;
  }

  const Dialect dialect_;
  const int retries_;
  BoundedConnectionPool<MysqlConnection> pool_;
};

StatusOr<mysql::Url> ParseStoreUrl(const std::string& url) {
  auto parsed = mysql::ParseUrl(url);
  if (!parsed.ok()) return parsed.status().WithContext("database.mysql-url");
  if (parsed->database.empty()) {
    return InvalidArgument(
        "database.mysql-url names no database: use mysql://user:password@host:port/database");
  }
  if (!parsed->options.empty()) {
    return InvalidArgument("database.mysql-url: option \"" + parsed->options.front().first +
                           "\" is not supported (the URL takes no ?options)");
  }
  return parsed;
}

// Connects once: a wrong URL or an unsupported server fails at start-up, and
// the server's flavour picks the dialect.
StatusOr<MysqlFlavor> ProbeServer(const mysql::Url& url, const ClientTlsOptions& tls) {
  mysql::ConnectOptions options;
  options.tls = tls;
  auto [conn, error] = mysql::Connect(url, options);
  if (!conn) {
    return Unavailable(MysqlError(error.code, error.sqlstate, error.message, "connect").message());
  }
  const bool mariadb = mysql::IsMariaDb(conn.get());
  const unsigned long version = mysql_get_server_version(conn.get());
  const unsigned long minimum = mariadb ? kMinMariaDbVersion : kMinMysqlVersion;
  if (version < minimum) {
    return InvalidArgument(std::string("the database server is ") +
                           (mariadb ? "MariaDB " : "MySQL ") + mysql_get_server_info(conn.get()) +
                           "; export-center needs MySQL 8.0.17 or later, or MariaDB 10.3 or later");
  }
  return mariadb ? MysqlFlavor::kMariaDb : MysqlFlavor::kMysql;
}

}  // namespace

StatusOr<std::unique_ptr<Database>> OpenMysqlDatabase(const std::string& url,
                                                      const MysqlDatabaseOptions& options) {
  EC_ASSIGN_OR_RETURN(mysql::Url parsed, ParseStoreUrl(url));
  EC_ASSIGN_OR_RETURN(MysqlFlavor flavor, ProbeServer(parsed, options.tls));
  auto db = std::make_unique<MysqlDatabase>(std::move(parsed), MysqlDialect(flavor), options);
  // One pooled connection now, so a session setting the server refuses fails
  // at start-up too.
  EC_RETURN_IF_ERROR(db->WithConnection([](Connection&) { return Status::Ok(); }));
  return std::unique_ptr<Database>(std::move(db));
}

}  // namespace export_center::store
