#include "source/sql/datasource/sqlite/sqlite_datasource.h"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "source/sql/datasource/connection_checkout.h"
#include "source/sql/datasource/idle_connection_cache.h"
#include "source/sql/datasource/running_statements.h"

namespace export_center::source {
namespace {

// SQLITE_INTERRUPT is a statement past its timeout (the progress handler
// stopped it; Query reports the interrupt's reason instead when Interrupt
// did). SQLITE_BUSY/LOCKED/CANTOPEN are worth a later retry; the rest is the
// SQL's fault.
Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  std::string text = std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  int primary = rc & 0xff;
  if (primary == SQLITE_INTERRUPT) {
    return DeadlineExceeded("sqlite datasource " + text +
                            ": the statement ran past the datasource's statement timeout");
  }
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED || primary == SQLITE_CANTOPEN ||
      primary == SQLITE_IOERR || primary == SQLITE_NOMEM) {
    return Unavailable(text);
  }
  return InvalidArgument(text);
}

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};

Status Bind(sqlite3* db, sqlite3_stmt* stmt, const std::vector<nlohmann::json>& params) {
  if (static_cast<int>(params.size()) != sqlite3_bind_parameter_count(stmt)) {
    return InvalidArgument("statement has " + std::to_string(sqlite3_bind_parameter_count(stmt)) +
                           " placeholders but " + std::to_string(params.size()) + " values");
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& v = params[i];
    int idx = static_cast<int>(i) + 1;
    int rc = SQLITE_OK;
    if (v.is_null()) {
      rc = sqlite3_bind_null(stmt, idx);
    } else if (v.is_boolean()) {
      rc = sqlite3_bind_int(stmt, idx, v.get<bool>() ? 1 : 0);
    } else if (v.is_number_integer()) {
      rc = sqlite3_bind_int64(stmt, idx, v.get<int64_t>());
    } else if (v.is_number()) {
      rc = sqlite3_bind_double(stmt, idx, v.get<double>());
    } else if (v.is_string()) {
      const auto& s = v.get_ref<const std::string&>();
      rc = sqlite3_bind_text(stmt, idx, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    } else {
      return InvalidArgument("parameter " + std::to_string(idx) + " is not a scalar");
    }
    if (rc != SQLITE_OK) return SqliteError(db, rc, "bind");
  }
  return Status::Ok();
}

std::string Text(sqlite3_stmt* stmt, int col) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, col));
  return text ? std::string(text, sqlite3_column_bytes(stmt, col)) : std::string();
}

// The declared primary key of `table` in `database`, in key order; empty
// for a table keyed by its hidden rowid only.
StatusOr<std::vector<std::string>> PrimaryKeyOf(sqlite3* db, const std::string& database,
                                                const std::string& table) {
  sqlite3_stmt* raw = nullptr;
  const char* sql = "SELECT name FROM pragma_table_info(?1, ?2) WHERE pk > 0 ORDER BY pk";
  int rc = sqlite3_prepare_v2(db, sql, -1, &raw, nullptr);
  std::unique_ptr<sqlite3_stmt, StmtFinalizer> stmt(raw);
  if (rc != SQLITE_OK) return SqliteError(db, rc, "primary key");
  sqlite3_bind_text(stmt.get(), 1, table.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(stmt.get(), 2, database.c_str(), -1, SQLITE_TRANSIENT);
  std::vector<std::string> key;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) key.push_back(Text(stmt.get(), 0));
  if (rc != SQLITE_DONE) return SqliteError(db, rc, "primary key");
  return key;
}

// The first table (in result order) whose whole primary key the statement
// selects as plain columns, as result labels in key order. Needs SQLite's
// column metadata (SQLITE_ENABLE_COLUMN_METADATA, on in Debian's build).
StatusOr<std::vector<std::string>> SelectedPrimaryKey(sqlite3* db, sqlite3_stmt* stmt) {
  using Origin = std::pair<std::string, std::string>;  // database, table
  std::vector<Origin> tables;
  std::map<Origin, std::map<std::string, std::string>> labels;  // origin column → label
  for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
    const char* database = sqlite3_column_database_name(stmt, i);
    const char* table = sqlite3_column_table_name(stmt, i);
    const char* column = sqlite3_column_origin_name(stmt, i);
    if (!database || !table || !column) continue;  // an expression
    Origin origin{database, table};
    if (!labels.count(origin)) tables.push_back(origin);
    labels[origin].emplace(column, sqlite3_column_name(stmt, i));
  }
  for (const auto& origin : tables) {
    EC_ASSIGN_OR_RETURN(auto key, PrimaryKeyOf(db, origin.first, origin.second));
    std::vector<std::string> selected;
    for (const auto& column : key) {
      auto it = labels[origin].find(column);
      if (it == labels[origin].end()) break;
      selected.push_back(it->second);
    }
    if (!key.empty() && selected.size() == key.size()) return selected;
  }
  return std::vector<std::string>();
}

// A pooled read-only connection and the statements prepared on it, so the
// page statement an attempt sends again and again is prepared once per
// connection, not once per page.
class SqliteConnection {
 public:
  // The progress handler looks at the clock every this many virtual machine
  // instructions: well under a millisecond of work.
  static constexpr int kInstructionsBetweenDeadlineChecks = 10000;

  explicit SqliteConnection(sqlite3* db) : db_(db) {
    if (db != nullptr) {
      sqlite3_progress_handler(db, kInstructionsBetweenDeadlineChecks, &PastDeadline, this);
    }
  }
  sqlite3* db() const { return db_.get(); }

  // The statement about to run ends with SQLITE_INTERRUPT once `timeout`
  // has passed: SQLite has no statement timeout of its own, and readers
  // never wait for locks (WAL), so what takes long is the statement itself.
  void StartClock(std::chrono::milliseconds timeout) {
    deadline_ns_.store((std::chrono::steady_clock::now() + timeout).time_since_epoch().count());
  }

  // `sql` prepared on this connection, from the cache when it was before;
  // reset and unbound. Owned by the connection.
  StatusOr<sqlite3_stmt*> Prepare(std::string_view sql) {
    for (auto it = statements_.begin(); it != statements_.end(); ++it) {
      if (it->first != sql) continue;
      statements_.splice(statements_.begin(), statements_, it);  // most recent first
      sqlite3_reset(it->second.get());
      sqlite3_clear_bindings(it->second.get());
      return it->second.get();
    }
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v2(db(), sql.data(), static_cast<int>(sql.size()), &raw, nullptr);
    std::unique_ptr<sqlite3_stmt, StmtFinalizer> stmt(raw);
    if (rc != SQLITE_OK) return SqliteError(db(), rc, "prepare");
    if (stmt == nullptr) return InvalidArgument("empty statement");
    statements_.emplace_front(std::string(sql), std::move(stmt));
    if (statements_.size() > kCachedStatements) statements_.pop_back();
    return statements_.front().second.get();
  }

 private:
  static int PastDeadline(void* self) {
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    return now > static_cast<SqliteConnection*>(self)->deadline_ns_.load() ? 1 : 0;
  }

  static constexpr size_t kCachedStatements = 8;
  std::atomic<std::chrono::steady_clock::rep> deadline_ns_{
      std::chrono::steady_clock::time_point::max().time_since_epoch().count()};
  std::unique_ptr<sqlite3, DbCloser> db_;
  // Most recently used first; destroyed before db_.
  std::list<std::pair<std::string, std::unique_ptr<sqlite3_stmt, StmtFinalizer>>> statements_;
};

using SqliteConnectionPtr = std::unique_ptr<SqliteConnection>;

class SqliteDatasource : public ReadOnlyDatasource {
 public:
  SqliteDatasource(std::string path, DatasourceTimeouts timeouts)
      : path_(std::move(path)),
        timeouts_(timeouts),
        pool_(kPooledConnections, kPooledConnectionAge),
        checkout_(&running_, {[this](std::string_view schema) { return Take(schema); },
                              [this](Status failed) { return Explain(std::move(failed)); },
                              [this](SqliteConnectionPtr conn, const Status&) {
                                pool_.Return(std::move(conn));
                              }}) {}

  std::string_view kind() const override { return "sqlite"; }

  StatusOr<ResultSet> Query(std::string_view sql, const std::vector<nlohmann::json>& params,
                            std::string_view schema) override {
    return checkout_.Run(schema, [&](SqliteConnectionPtr& conn) -> StatusOr<ResultSet> {
      EC_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, conn->Prepare(sql));
      // Reset ends the statement's read transaction before the connection idles.
      struct ResetOnExit {
        sqlite3_stmt* stmt;
        ~ResetOnExit() { sqlite3_reset(stmt); }
      } reset{stmt};
      EC_RETURN_IF_ERROR(Bind(conn->db(), stmt, params));
      EC_ASSIGN_OR_RETURN(auto running, Register(conn.get()));
      return Fetch(conn->db(), stmt);
    });
  }

  // Prepared, never stepped: the column metadata is known after prepare.
  StatusOr<QueryDescription> Describe(std::string_view sql, const std::vector<nlohmann::json>&,
                                      std::string_view schema) override {
    return checkout_.Run(schema, [&](SqliteConnectionPtr& conn) -> StatusOr<QueryDescription> {
      EC_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, conn->Prepare(sql));
      QueryDescription out;
      for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
        out.columns.emplace_back(sqlite3_column_name(stmt, i));
      }
      EC_ASSIGN_OR_RETURN(auto running, Register(conn.get()));
      EC_ASSIGN_OR_RETURN(out.primary_key, SelectedPrimaryKey(conn->db(), stmt));
      return out;
    });
  }

  // EXPLAIN QUERY PLAN, prepared apart from the connection's statement
  // cache (a plan asked once must not push a page statement out of it).
  // EXPLAIN starts no read transaction, so it plans with the schema the
  // pooled connection loaded last, blind to an index created since (the
  // one the advice asked for): one read of the schema table first reloads
  // it when it changed.
  StatusOr<QueryPlan> Explain(std::string_view sql, const std::vector<nlohmann::json>& params,
                              std::string_view schema, int timeout_ms) override {
    return checkout_.Run(schema, [&](SqliteConnectionPtr& conn) -> StatusOr<QueryPlan> {
      // Under the plan's own deadline: the schema read may wait behind a writer.
      EC_ASSIGN_OR_RETURN(auto running, Register(conn.get(), timeout_ms));
      sqlite3_exec(conn->db(), "SELECT 1 FROM sqlite_schema LIMIT 1", nullptr, nullptr, nullptr);
      const std::string text = "EXPLAIN QUERY PLAN " + std::string(sql);
      sqlite3_stmt* raw = nullptr;
      int rc = sqlite3_prepare_v2(conn->db(), text.c_str(), static_cast<int>(text.size()), &raw,
                                  nullptr);
      std::unique_ptr<sqlite3_stmt, StmtFinalizer> stmt(raw);
      if (rc != SQLITE_OK || stmt == nullptr) return SqliteError(conn->db(), rc, "explain");
      EC_RETURN_IF_ERROR(Bind(conn->db(), stmt.get(), params));
      return ReadPlan(conn->db(), stmt.get());
    });
  }

  void Interrupt(Status reason) override { running_.Interrupt(std::move(reason)); }

  // PRAGMA data_version changes on a connection when another one committed
  // to the file since the connection last read it — so the watch keeps its
  // own connection, asked when opened and when asked again.
  std::unique_ptr<CommitWatch> WatchCommits(std::string_view schema) override {
    if (!running_.reason().ok()) return nullptr;
    auto conn = Take(schema);
    if (!conn.ok()) return nullptr;
    auto watch =
        std::make_unique<DataVersionWatch>(std::move(conn).value(), timeouts_.statement_timeout_ms);
    if (!watch->Opened()) return nullptr;
    return watch;
  }

 private:
  class DataVersionWatch : public CommitWatch {
   public:
    DataVersionWatch(SqliteConnectionPtr conn, int timeout_ms)
        : conn_(std::move(conn)), timeout_ms_(timeout_ms), opened_(Read()) {}
    bool Opened() const { return opened_.has_value(); }
    bool NothingCommitted() override {
      std::optional<int64_t> now = Read();
      return now && opened_ && *now == *opened_;
    }

   private:
    std::optional<int64_t> Read() {
      conn_->StartClock(std::chrono::milliseconds(timeout_ms_));
      sqlite3_stmt* raw = nullptr;
      if (sqlite3_prepare_v2(conn_->db(), "PRAGMA data_version", -1, &raw, nullptr) != SQLITE_OK) {
        sqlite3_finalize(raw);
        return std::nullopt;
      }
      std::unique_ptr<sqlite3_stmt, StmtFinalizer> stmt(raw);
      if (sqlite3_step(stmt.get()) != SQLITE_ROW) return std::nullopt;
      return sqlite3_column_int64(stmt.get(), 0);
    }

    SqliteConnectionPtr conn_;
    const int timeout_ms_;
    const std::optional<int64_t> opened_;
  };

  // The plan's rows as QueryPlan's text: id, parent, detail per line.
  static StatusOr<QueryPlan> ReadPlan(sqlite3* db, sqlite3_stmt* stmt) {
    QueryPlan plan{"sqlite", ""};
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      std::string detail = Text(stmt, 3);
      for (char& c : detail) {
        if (c == '\t' || c == '\n' || c == '\r') c = ' ';
      }
      plan.text += Text(stmt, 0) + "\t" + Text(stmt, 1) + "\t" + detail + "\n";
    }
    if (rc != SQLITE_DONE) return SqliteError(db, rc, "explain");
    return plan;
  }

  // The statement about to run on `conn`, its clock started, cancellable by
  // Interrupt until the registration ends (sqlite3_interrupt is safe from
  // any thread while the connection is open, which the registration keeps
  // it).
  StatusOr<RunningStatements::Registration> Register(SqliteConnection* conn, int timeout_ms = 0) {
    conn->StartClock(
        std::chrono::milliseconds(timeout_ms > 0 ? timeout_ms : timeouts_.statement_timeout_ms));
    sqlite3* db = conn->db();
    return running_.Begin([db] { sqlite3_interrupt(db); });
  }

  // A failed statement's Status: the interrupt's reason when Interrupt
  // stopped it; the timeout, named, when the progress handler did.
  Status Explain(Status failed) const {
    if (Status reason = running_.reason(); !reason.ok()) return reason;
    if (failed.code() != StatusCode::kDeadlineExceeded) return failed;
    return DeadlineExceeded("sqlite datasource: the statement ran past its statement timeout of " +
                            std::to_string(timeouts_.statement_timeout_ms) +
                            " ms (statement-timeout-ms) and was stopped");
  }

  // A connection of the pool, or a new one: read-only, with the file mapped
  // (read in place from the OS cache instead of copied page by page).
  StatusOr<SqliteConnectionPtr> Take(std::string_view schema) {
    if (!schema.empty() && schema != "main") {
      return InvalidArgument("a sqlite datasource has no schema " + std::string(schema));
    }
    if (auto pooled = pool_.Take()) return std::move(*pooled);
    sqlite3* raw = nullptr;
    int rc =
        sqlite3_open_v2(path_.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
    auto conn = std::make_unique<SqliteConnection>(raw);
    if (rc != SQLITE_OK) return Unavailable("cannot open sqlite datasource " + path_);
    // A reader waits for a lock only in rollback-journal mode, behind a writer.
    sqlite3_busy_timeout(raw, std::min(kBusyTimeoutMs, timeouts_.statement_timeout_ms));
    sqlite3_exec(raw, "PRAGMA mmap_size = 1073741824", nullptr, nullptr, nullptr);
    return conn;
  }

  static StatusOr<ResultSet> Fetch(sqlite3* db, sqlite3_stmt* stmt) {
    ResultSet out;
    int n = sqlite3_column_count(stmt);
    for (int i = 0; i < n; ++i) out.columns.emplace_back(sqlite3_column_name(stmt, i));
    // The storage class of the latest row's cells, and its REAL values
    // exactly (their text has 15 digits): what last_row_params needs once
    // the statement has moved past the row.
    std::vector<int> types(n);
    std::vector<double> reals(n);
    while (true) {
      int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return SqliteError(db, rc, "step");
      std::vector<std::optional<std::string>> row(n);
      for (int i = 0; i < n; ++i) {
        types[i] = sqlite3_column_type(stmt, i);
        if (types[i] == SQLITE_NULL) continue;
        if (types[i] == SQLITE_FLOAT) reals[i] = sqlite3_column_double(stmt, i);
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
        row[i] = std::string(text, sqlite3_column_bytes(stmt, i));
      }
      out.rows.push_back(std::move(row));
    }
    if (!out.rows.empty()) out.last_row_params = LastRowParams(out.rows.back(), types, reals);
    return out;
  }

  // SQLite compares an INTEGER with a TEXT parameter as unequal whatever
  // the digits, so each value goes back in its own storage class.
  static std::vector<nlohmann::json> LastRowParams(
      const std::vector<std::optional<std::string>>& row, const std::vector<int>& types,
      const std::vector<double>& reals) {
    std::vector<nlohmann::json> params;
    params.reserve(row.size());
    for (size_t i = 0; i < row.size(); ++i) {
      if (types[i] == SQLITE_NULL) {
        params.emplace_back(nullptr);
      } else if (types[i] == SQLITE_INTEGER) {
        params.emplace_back(std::stoll(*row[i]));
      } else if (types[i] == SQLITE_FLOAT) {
        params.emplace_back(reals[i]);
      } else {
        params.emplace_back(*row[i]);
      }
    }
    return params;
  }

  static constexpr int kBusyTimeoutMs = 5000;
  std::string path_;
  const DatasourceTimeouts timeouts_;
  IdleConnectionCache<SqliteConnectionPtr> pool_;
  RunningStatements running_;
  const ConnectionCheckout<SqliteConnectionPtr> checkout_;  // after running_ and pool_
};

}  // namespace

std::unique_ptr<ReadOnlyDatasource> NewSqliteDatasource(const std::string& path,
                                                        const DatasourceTimeouts& timeouts) {
  return std::make_unique<SqliteDatasource>(path, timeouts);
}

}  // namespace export_center::source
