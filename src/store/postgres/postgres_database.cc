#include "store/postgres/postgres_database.h"

#include <libpq-fe.h>

#include <charconv>
#include <chrono>
#include <string_view>
#include <type_traits>
#include <vector>

#include "pq/pq.h"
#include "store/bounded_connection_pool.h"
#include "store/postgres/postgres_error.h"

namespace export_center::store {
namespace {

// How long a caller waits for a pooled connection before Unavailable.
constexpr std::chrono::seconds kAcquireTimeout{30};

// How many more times a transaction the server rolled back to break a lock
// conflict runs (Database::WithTransaction's contract; MySQL's backend does
// the same with database.mysql lock-conflict-retries' default).
constexpr int kLockConflictRetries = 2;

// A deadlock (40P01) or a serialization failure (40001) rolls the whole
// transaction back and nothing of it committed, so running it again is safe.
// Not a statement timeout (57014) — it may have waited out a long lock and
// running it again only doubles the wait — and not a lost connection, where
// COMMIT may have committed.
bool IsRetryableLockConflict(std::string_view sqlstate) {
  return sqlstate == "40P01" || sqlstate == "40001";
}

using pq::kFloat8Oid;
using pq::kInt8Oid;
using pq::kTextOid;
using pq::ResultPtr;

// Parameters as libpq wants them: parallel arrays of types and text values.
struct BoundParams {
  std::vector<Oid> types;
  std::vector<std::string> texts;
  std::vector<const char*> values;

  explicit BoundParams(const SqlParams& params) {
    types.reserve(params.size());
    texts.reserve(params.size());
    for (const SqlValue& p : params) {
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::monostate>) {
              types.push_back(0);  // let the server infer the type of a NULL
              texts.emplace_back();
            } else if constexpr (std::is_same_v<T, int64_t>) {
              types.push_back(kInt8Oid);
              texts.push_back(std::to_string(v));
            } else if constexpr (std::is_same_v<T, double>) {
              types.push_back(kFloat8Oid);
              char buf[64];
              auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
              texts.emplace_back(buf, end);
            } else {
              types.push_back(kTextOid);
              texts.push_back(v);
            }
          },
          p.storage());
    }
    for (size_t i = 0; i < params.size(); ++i) {
      values.push_back(params[i].is_null() ? nullptr : texts[i].c_str());
    }
  }
};

class PostgresConnection final : public Connection {
 public:
  explicit PostgresConnection(PGconn* conn) : conn_(conn) {}
  ~PostgresConnection() override { PQfinish(conn_); }
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  // A broken socket, or a session left inside a transaction, is not reused.
  bool healthy() const {
    return PQstatus(conn_) == CONNECTION_OK && PQtransactionStatus(conn_) == PQTRANS_IDLE;
  }

  StatusOr<Rows> Query(std::string_view sql, const SqlParams& params) override {
    EC_ASSIGN_OR_RETURN(ResultPtr res, Run(sql, params));
    const int n_rows = PQntuples(res.get());
    const int n_cols = PQnfields(res.get());
    Rows rows;
    rows.reserve(n_rows);
    for (int r = 0; r < n_rows; ++r) {
      std::vector<std::optional<std::string>> cells(n_cols);
      for (int c = 0; c < n_cols; ++c) {
        if (PQgetisnull(res.get(), r, c)) continue;
        cells[c] = std::string(PQgetvalue(res.get(), r, c), PQgetlength(res.get(), r, c));
      }
      rows.emplace_back(std::move(cells));
    }
    return rows;
  }

  StatusOr<int64_t> Exec(std::string_view sql, const SqlParams& params) override {
    EC_ASSIGN_OR_RETURN(ResultPtr res, Run(sql, params));
    std::string_view count = PQcmdTuples(res.get());  // "" for BEGIN, SELECT ... in some versions
    int64_t n = 0;
    std::from_chars(count.data(), count.data() + count.size(), n);
    return n;
  }

  // The SQLSTATE of the last statement that failed on this session ("" after
  // ClearLastError).
  const std::string& last_sqlstate() const { return last_sqlstate_; }
  void ClearLastError() { last_sqlstate_.clear(); }

 private:
  StatusOr<ResultPtr> Run(std::string_view sql, const SqlParams& params) {
    const std::string text = pq::ToPostgresPlaceholders(sql);
    BoundParams bound(params);
    ResultPtr res(PQexecParams(conn_, text.c_str(), static_cast<int>(params.size()),
                               bound.types.data(), bound.values.data(), nullptr, nullptr,
                               /*resultFormat=*/0));
    if (res == nullptr) return PostgresError("", PQerrorMessage(conn_), "exec");
    ExecStatusType st = PQresultStatus(res.get());
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return res;
    const char* sqlstate = PQresultErrorField(res.get(), PG_DIAG_SQLSTATE);
    last_sqlstate_ = sqlstate ? sqlstate : "";
    return PostgresError(last_sqlstate_, PQresultErrorMessage(res.get()), "exec");
  }

  PGconn* conn_;
  std::string last_sqlstate_;
};

StatusOr<std::unique_ptr<PostgresConnection>> Connect(const std::string& url,
                                                      const SessionTimeouts& timeouts) {
  // A connect_timeout the URL names itself wins (later keywords override
  // earlier ones, and the URL's are expanded in place of dbname).
  const std::string connect_s = std::to_string((timeouts.connect_timeout_ms + 999) / 1000);
  const char* keys[] = {"connect_timeout", "dbname", nullptr};
  const char* values[] = {connect_s.c_str(), url.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn == nullptr) return Unavailable("postgres connect: out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    Status status = PostgresError("08001", PQerrorMessage(conn), "connect");
    PQfinish(conn);
    return status;
  }
  // CREATE ... IF NOT EXISTS and friends send NOTICEs; libpq would print them
  // to stderr.
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  auto connection = std::make_unique<PostgresConnection>(conn);
  // Every statement of the session, lock waits included, is bounded.
  EC_RETURN_IF_ERROR(
      connection
          ->Exec("SET statement_timeout = " + std::to_string(timeouts.statement_timeout_ms), {})
          .status());
  return connection;
}

class PostgresDatabase final : public Database {
 public:
  PostgresDatabase(std::string url, int pool_size, SessionTimeouts timeouts)
      : dialect_(PostgresDialect()),
        pool_(pool_size, [url, timeouts]() -> StatusOr<std::unique_ptr<PostgresConnection>> {
          return Connect(url, timeouts);
        }) {}

  const Dialect& dialect() const override { return dialect_; }

  // A transaction that lost a deadlock or a serialization check runs again
  // (kLockConflictRetries): under load, a migration's DDL and a running
  // instance's writes can take two tables' locks in opposite orders, and the
  // server breaks that by rolling one of them back.
  Status WithTransaction(TxMode mode, const std::function<Status(Connection&)>& fn) override {
    return RunAgainAfterLockConflicts(kLockConflictRetries, [&](bool* lock_conflict) {
      std::string sqlstate;
      Status status = RunTransactionOnce(mode, fn, &sqlstate);
      *lock_conflict = IsRetryableLockConflict(sqlstate);
      return status;
    });
  }

  Status WithConnection(const std::function<Status(Connection&)>& fn) override {
    EC_ASSIGN_OR_RETURN(auto lease, pool_.Acquire(kAcquireTimeout));
    return fn(*lease);
  }

 private:
  // One run of `fn` between BEGIN and COMMIT. *sqlstate: the SQLSTATE of the
  // statement that ended it ("" when none failed).
  Status RunTransactionOnce(TxMode mode, const std::function<Status(Connection&)>& fn,
                            std::string* sqlstate) {
    EC_ASSIGN_OR_RETURN(auto lease, pool_.Acquire(kAcquireTimeout));
    lease->ClearLastError();
    // Reads see one snapshot (a count and its page agree) and never fail to
    // serialise; writes stay READ COMMITTED, where a conditional UPDATE
    // re-checks its WHERE on the newest row version after a lock wait.
    const char* begin =
        mode == TxMode::kWrite ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
    EC_RETURN_IF_ERROR(lease->Exec(begin, {}).status());
    Status status = fn(*lease);
    if (status.ok()) status = lease->Exec("COMMIT", {}).status();
    if (!status.ok()) {
      *sqlstate = lease->last_sqlstate();
      (void)lease->Exec("ROLLBACK", {});
    }
    return status;
  }

  const Dialect dialect_;
  BoundedConnectionPool<PostgresConnection> pool_;
};

}  // namespace

StatusOr<std::unique_ptr<Database>> OpenPostgresDatabase(const std::string& url, int pool_size,
                                                         const SessionTimeouts& timeouts) {
  auto db = std::make_unique<PostgresDatabase>(url, pool_size, timeouts);
  // Connect once now so a wrong URL fails at start-up, not at the first task.
  EC_RETURN_IF_ERROR(db->WithConnection([](Connection&) { return Status::Ok(); }));
  return std::unique_ptr<Database>(std::move(db));
}

}  // namespace export_center::store
