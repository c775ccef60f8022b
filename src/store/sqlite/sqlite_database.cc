#include "store/sqlite/sqlite_database.h"

#include <sqlite3.h>

#include <chrono>
#include <type_traits>

#include "store/bounded_connection_pool.h"
#include "store/sqlite/sqlite_error.h"

namespace export_center::store {
namespace {

// How long a caller waits for a pooled connection before Unavailable.
constexpr std::chrono::seconds kAcquireTimeout{30};

class SqliteConnection final : public Connection {
 public:
  explicit SqliteConnection(sqlite3* db) : db_(db) {}
  ~SqliteConnection() override { sqlite3_close_v2(db_); }
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  // SQLite connections do not break the way network connections do.
  bool healthy() const { return true; }

  StatusOr<Rows> Query(std::string_view sql, const SqlParams& params) override {
    Rows rows;
    EC_RETURN_IF_ERROR(Run(sql, params, &rows));
    return rows;
  }

  StatusOr<int64_t> Exec(std::string_view sql, const SqlParams& params) override {
    EC_RETURN_IF_ERROR(Run(sql, params, nullptr));
    return static_cast<int64_t>(sqlite3_changes64(db_));
  }

  // For BEGIN/COMMIT/ROLLBACK/PRAGMA: no parameters, no rows.
  Status Simple(const char* sql) {
    int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
    return rc == SQLITE_OK ? Status::Ok() : SqliteError(rc, db_, sql);
  }

 private:
  Status Run(std::string_view sql, const SqlParams& params, Rows* rows) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) return SqliteError(rc, db_, "prepare");
    Status status = BindAndStep(stmt, params, rows);
    sqlite3_finalize(stmt);
    return status;
  }

  Status BindAndStep(sqlite3_stmt* stmt, const SqlParams& params, Rows* rows) {
    if (static_cast<int>(params.size()) != sqlite3_bind_parameter_count(stmt)) {
      return Internal("sqlite: statement expects " +
                      std::to_string(sqlite3_bind_parameter_count(stmt)) + " parameters, got " +
                      std::to_string(params.size()));
    }
    for (size_t i = 0; i < params.size(); ++i) {
      int rc = Bind(stmt, static_cast<int>(i + 1), params[i]);
      if (rc != SQLITE_OK) return SqliteError(rc, db_, "bind");
    }
    const int columns = sqlite3_column_count(stmt);
    while (true) {
      int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) return Status::Ok();
      if (rc != SQLITE_ROW) return SqliteError(rc, db_, "step");
      if (rows == nullptr) continue;
      std::vector<std::optional<std::string>> cells(columns);
      for (int c = 0; c < columns; ++c) {
        if (sqlite3_column_type(stmt, c) == SQLITE_NULL) continue;
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
        cells[c] = std::string(text, sqlite3_column_bytes(stmt, c));
      }
      rows->emplace_back(std::move(cells));
    }
  }

  static int Bind(sqlite3_stmt* stmt, int index, const SqlValue& value) {
    return std::visit(
        [&](const auto& v) -> int {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::monostate>) {
            return sqlite3_bind_null(stmt, index);
          } else if constexpr (std::is_same_v<T, int64_t>) {
            return sqlite3_bind_int64(stmt, index, v);
          } else if constexpr (std::is_same_v<T, double>) {
            return sqlite3_bind_double(stmt, index, v);
          } else {
            return sqlite3_bind_text64(stmt, index, v.data(), v.size(), SQLITE_TRANSIENT,
                                       SQLITE_UTF8);
          }
        },
        value.storage());
  }

  sqlite3* db_;
};

StatusOr<std::unique_ptr<SqliteConnection>> OpenConnection(const std::string& path,
                                                           const SqliteOptions& options) {
  sqlite3* db = nullptr;
  // NOMUTEX: the pool guarantees one thread per connection at a time.
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status status = SqliteError(rc, db, "open " + path);
    sqlite3_close_v2(db);
    return status;
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, options.busy_timeout_ms);
  auto conn = std::make_unique<SqliteConnection>(db);
  // WAL lets readers proceed while one writer commits; NORMAL sync is durable
  // across process crashes, which is what WAL mode needs.
  for (const char* pragma :
       {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=OFF"}) {
    EC_RETURN_IF_ERROR(conn->Simple(pragma));
  }
  return conn;
}

class SqliteDatabase final : public Database {
 public:
  SqliteDatabase(std::string path, const SqliteOptions& options)
      : dialect_(SqliteDialect()),
        pool_(IsMemory(path) ? 1 : options.max_connections,
              [path, options]() -> StatusOr<std::unique_ptr<SqliteConnection>> {
                return OpenConnection(path, options);
              }) {}

  const Dialect& dialect() const override { return dialect_; }

  Status WithTransaction(TxMode mode, const std::function<Status(Connection&)>& fn) override {
    EC_ASSIGN_OR_RETURN(auto lease, pool_.Acquire(kAcquireTimeout));
    EC_RETURN_IF_ERROR(lease->Simple(mode == TxMode::kWrite ? "BEGIN IMMEDIATE" : "BEGIN"));
    Status status = fn(*lease);
    if (status.ok()) status = lease->Simple("COMMIT");
    if (!status.ok()) (void)lease->Simple("ROLLBACK");  // may fail if COMMIT already ended it
    return status;
  }

  Status WithConnection(const std::function<Status(Connection&)>& fn) override {
    EC_ASSIGN_OR_RETURN(auto lease, pool_.Acquire(kAcquireTimeout));
    return fn(*lease);
  }

 private:
  // Every connection to ":memory:" would be a separate empty database.
  static bool IsMemory(const std::string& path) {
    return path == ":memory:" || path.find("mode=memory") != std::string::npos;
  }

  const Dialect dialect_;
  BoundedConnectionPool<SqliteConnection> pool_;
};

}  // namespace

StatusOr<std::unique_ptr<Database>> OpenSqliteDatabase(const std::string& path,
                                                       const SqliteOptions& options) {
  auto db = std::make_unique<SqliteDatabase>(path, options);
  // Open one connection now so a bad path fails at start-up, not later.
  EC_RETURN_IF_ERROR(db->WithConnection([](Connection&) { return Status::Ok(); }));
  return std::unique_ptr<Database>(std::move(db));
}

}  // namespace export_center::store
