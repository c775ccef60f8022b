#include "source/sql/datasource/mysql/mysql_datasource.h"

#include <mysql.h>

#include <atomic>
#include <cctype>
#include <charconv>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "common/ascii.h"
#include "mysql/mysql_client.h"
#include "source/sql/datasource/connection_checkout.h"
#include "source/sql/datasource/idle_connection_cache.h"
#include "source/sql/datasource/running_statements.h"

namespace export_center::source {
namespace {

struct ResultFreer {
  void operator()(MYSQL_RES* r) const { mysql_free_result(r); }
};
using mysql::ConnPtr;

// The one place MySQL/MariaDB errors become a Status. A statement past its
// time limit (MariaDB 1969 max_statement_time, MySQL 3024
// max_execution_time) is DeadlineExceeded. Lost or refused connections
// (client errors 2000-2999 except the prepared-statement API misuse codes
// 2030-2036, SQLSTATE class 08), shutdown, too many connections, lock waits,
// deadlocks and killed statements (1317, which Query reports as the
// interrupt's reason when Interrupt killed it) are worth a later retry;
// anything else is the statement's fault.
Status MysqlError(unsigned code, const char* sqlstate, std::string_view message,
                  std::string_view what) {
  std::string state = sqlstate ? sqlstate : "";
  std::string text = "mysql datasource " + std::string(what) + ": [" + std::to_string(code) +
                     (state.empty() ? "" : "/" + state) + "] " + std::string(message);
  if (code == 1969 || code == 3024) return DeadlineExceeded(text);
  bool client_api_misuse = code >= 2030 && code <= 2036;
  bool client_connection = code >= 2000 && code < 3000 && !client_api_misuse;
  bool transient_server =
      code == 1040 || code == 1053 || code == 1205 || code == 1213 || code == 1317 || code == 1927;
  if (client_connection || transient_server || state.rfind("08", 0) == 0) {
    return Unavailable(text);
  }
  return InvalidArgument(text);
}

Status ConnError(MYSQL* m, std::string_view what) {
  return MysqlError(mysql_errno(m), mysql_sqlstate(m), mysql_error(m), what);
}

Status Failed(const mysql::Error& e, std::string_view what) {
  return MysqlError(e.code, e.sqlstate.c_str(), e.message, what);
}

StatusOr<std::vector<mysql::Param>> ToParams(const std::vector<nlohmann::json>& params) {
  std::vector<mysql::Param> out;
  out.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& v = params[i];
    if (v.is_null()) {
      out.emplace_back(std::monostate());
    } else if (v.is_boolean()) {
      out.emplace_back(v.get<bool>());
    } else if (v.is_number_integer()) {
      out.emplace_back(v.get<int64_t>());
    } else if (v.is_number()) {
      out.emplace_back(v.get<double>());
    } else if (v.is_string()) {
      out.emplace_back(v.get<std::string>());
    } else {
      return InvalidArgument("parameter " + std::to_string(i + 1) + " is not a scalar");
    }
  }
  return out;
}

bool IsIntegerType(enum_field_types type) {
  switch (type) {
    case MYSQL_TYPE_TINY:
    case MYSQL_TYPE_SHORT:
    case MYSQL_TYPE_INT24:
    case MYSQL_TYPE_LONG:
    case MYSQL_TYPE_LONGLONG:
    case MYSQL_TYPE_YEAR:
      return true;
    default:
      return false;
  }
}

// MySQL compares a string parameter with an integer column as doubles, which
// rounds ids past 2^53; integers therefore go back as integers. Everything
// else goes back as text, converted to the column's type by the server.
std::vector<nlohmann::json> LastRowParams(const std::vector<std::optional<std::string>>& row,
                                          const std::vector<enum_field_types>& types) {
  std::vector<nlohmann::json> params;
  params.reserve(row.size());
  for (size_t c = 0; c < row.size(); ++c) {
    if (!row[c]) {
      params.emplace_back(nullptr);
      continue;
    }
    long long v = 0;
    auto [end, ec] = std::from_chars(row[c]->data(), row[c]->data() + row[c]->size(), v);
    bool exact = ec == std::errc() && end == row[c]->data() + row[c]->size();
    if (IsIntegerType(types[c]) && exact) {
      params.emplace_back(static_cast<int64_t>(v));
    } else {
      params.emplace_back(*row[c]);
    }
  }
  return params;
}

class MysqlDatasource : public ReadOnlyDatasource {
 public:
  MysqlDatasource(mysql::Url url, DatasourceTimeouts timeouts, ClientTlsOptions tls)
      : url_(std::move(url)),
        timeouts_(timeouts),
        tls_(std::move(tls)),
        pool_(kPooledConnections, kPooledConnectionAge),
        checkout_(&running_, {[this](std::string_view schema) { return Session(schema); },
                              [this](Status failed) { return Explain(std::move(failed)); },
                              [this](Pooled conn, const Status& outcome) {
                                GiveBack(std::move(conn), outcome);
                              }}) {}

  std::string_view kind() const override { return "mysql"; }

  StatusOr<ResultSet> Query(std::string_view sql, const std::vector<nlohmann::json>& params,
                            std::string_view schema) override {
    return checkout_.Run(schema, [&](Pooled& conn) -> StatusOr<ResultSet> {
      EC_ASSIGN_OR_RETURN(auto running, Register(conn.handle.get()));
      return Run(conn.handle.get(), sql, params);
    });
  }

  // Prepared, never executed: the result metadata names each column's
  // origin table and column.
  StatusOr<QueryDescription> Describe(std::string_view sql, const std::vector<nlohmann::json>&,
                                      std::string_view schema) override {
    return checkout_.Run(schema, [&](Pooled& conn) -> StatusOr<QueryDescription> {
      EC_ASSIGN_OR_RETURN(auto running, Register(conn.handle.get()));
      return DescribeOn(conn.handle.get(), sql);
    });
  }

  // EXPLAIN FORMAT=JSON as a prepared statement with the values bound,
  // under a statement time limit of its own.
  StatusOr<QueryPlan> Explain(std::string_view sql, const std::vector<nlohmann::json>& params,
                              std::string_view schema, int timeout_ms) override {
    return checkout_.Run(schema, [&](Pooled& conn) -> StatusOr<QueryPlan> {
      EC_RETURN_IF_ERROR(Exec(conn.handle.get(), TimeLimitStatement(timeout_ms)));
      EC_ASSIGN_OR_RETURN(auto running, Register(conn.handle.get()));
      EC_ASSIGN_OR_RETURN(ResultSet rows, Run(conn.handle.get(),
                                              "EXPLAIN FORMAT=JSON " + std::string(sql), params));
      QueryPlan plan{"mysql", ""};
      for (const auto& row : rows.rows) {
        if (!row.empty() && row[0]) plan.text += *row[0];
      }
      return plan;
    });
  }

  // MariaDB evaluates (a, b) > (?, ?) without an index range.
  OrderingTraits ordering() const override { return {/*nulls_first=*/true, false}; }

  void Interrupt(Status reason) override { running_.Interrupt(std::move(reason)); }

 private:
  // The statement about to run on `conn`, cancellable by Interrupt until the
  // registration ends: the protocol has no cancel request, so the canceller
  // connects again and sends KILL QUERY for the connection's thread (only
  // the statement ends; the server answers it 1317).
  StatusOr<RunningStatements::Registration> Register(MYSQL* conn) {
    const unsigned long thread_id = mysql_thread_id(conn);
    return running_.Begin([this, thread_id] {
      auto [killer, error] = mysql::Connect(url_, ConnectOptionsFor(timeouts_.connect_timeout_ms));
      if (!killer) return;  // the statement ends at its own timeout instead
      mysql::Answer ignored;
      (void)mysql::Query(killer.get(), "KILL QUERY " + std::to_string(thread_id), &ignored);
    });
  }

  // A failed statement's Status: the interrupt's reason when Interrupt
  // killed it, else its own.
  Status Explain(Status failed) const {
    Status reason = running_.reason();
    return reason.ok() ? failed : reason;
  }

  // The server bounds each statement (max_statement_time); the client's
  // read and write timeouts are the backstop for a server that stops
  // answering altogether, a little later.
  mysql::ConnectOptions ConnectOptionsFor(int statement_timeout_ms) const {
    mysql::ConnectOptions options;
    options.connect_timeout_seconds =
        static_cast<unsigned>((timeouts_.connect_timeout_ms + 999) / 1000);
    const unsigned io_seconds = static_cast<unsigned>((statement_timeout_ms + 999) / 1000) + 5;
    options.read_timeout_seconds = io_seconds;
    options.write_timeout_seconds = io_seconds;
    options.tls = tls_;
    return options;
  }

  StatusOr<ConnPtr> Connect() {
    auto [conn, error] = mysql::Connect(url_, ConnectOptionsFor(timeouts_.statement_timeout_ms));
    // Whatever the code, a failed connect is for a later attempt (as postgres).
    if (!conn) return Unavailable("mysql datasource connect: " + error.message);
    mariadb_ = mysql::IsMariaDb(conn.get());
    return std::move(conn);
  }

  // The statement time limit of the session: MariaDB's max_statement_time
  // (seconds, fractions allowed) or MySQL's max_execution_time (ms, SELECT
  // only, which is all a datasource runs). MariaDB's lock_wait_timeout
  // (whole seconds) bounds a wait for a table lock on its own too.
  std::string TimeLimitStatement(int timeout_ms = 0) const {
    return "SET " + TimeLimitAssignments(timeout_ms);
  }
  std::string TimeLimitAssignments(int timeout_ms = 0) const {
    const int ms = timeout_ms > 0 ? timeout_ms : timeouts_.statement_timeout_ms;
    if (!mariadb_.load()) return "SESSION max_execution_time = " + std::to_string(ms);
    return "SESSION max_statement_time = " + std::to_string(ms / 1000) + "." +
           std::to_string(1000 + ms % 1000).substr(1) +
           ", SESSION lock_wait_timeout = " + std::to_string((ms + 999) / 1000);
  }

  // A connection and the database it was switched to (empty: the URL's).
  struct Pooled {
    ConnPtr handle;
    std::string schema;
  };

  // A connection for one statement: from the pool, its session reset
  // (COM_RESET_CONNECTION: variables, locks, temporary tables — whatever an
  // earlier statement left), or new; then read-only, on `schema`. A pooled
  // connection the server dropped meanwhile is replaced by a new one.
  StatusOr<Pooled> Session(std::string_view schema) {
    EC_RETURN_IF_ERROR(CheckSchemaName(schema));
    if (auto pooled = pool_.Take()) {
      if (Prepare(&*pooled, schema, /*reset=*/true).ok()) return std::move(*pooled);
    }
    EC_ASSIGN_OR_RETURN(ConnPtr conn, Connect());
    Pooled fresh{std::move(conn), ""};
    EC_RETURN_IF_ERROR(Prepare(&fresh, schema, /*reset=*/false));
    return fresh;
  }

  Status Prepare(Pooled* conn, std::string_view schema, bool reset) {
    MYSQL* m = conn->handle.get();
    if (reset && mysql_reset_connection(m)) return ConnError(m, "reset");
    EC_RETURN_IF_ERROR(ConfigureSession(m));
    if (conn->schema != schema) {
      // A reset keeps the current database: go back to the URL's, or drop
      // a connection that has none to go back to.
      if (schema.empty() && url_.database.empty()) return Unavailable("no default database");
      // CheckSchemaName allowed only [A-Za-z0-9_$]; the URL's name is quoted.
      std::string name(schema.empty() ? url_.database : std::string(schema));
      std::string quoted;
      for (char c : name) quoted += c == '`' ? std::string("``") : std::string(1, c);
      EC_RETURN_IF_ERROR(Exec(m, "USE `" + quoted + "`"));
      conn->schema = std::string(schema);
    }
    return Status::Ok();
  }

  // The session every statement runs in, set in one round trip (a keyset
  // export checks a connection out per page; five statements a page were
  // most of its round trips): utf8mb4, since a reset puts the server's
  // defaults back; read-only, a backstop behind the scanner enforced by the
  // server (MariaDB names it tx_read_only, MySQL 8 transaction_read_only);
  // the statement time limit; and the optimizer tuning below where the
  // server has it — the first server that does not (unknown variable or
  // value) turns it off and the session is set without it.
  Status ConfigureSession(MYSQL* m) {
    std::string settings = "SET NAMES utf8mb4, SESSION " +
                           std::string(mariadb_.load() ? "tx_read_only" : "transaction_read_only") +
                           " = 1, " + TimeLimitAssignments();
    if (tune_optimizer_.load()) {
      std::string tuned = settings + ", " + kTuneOptimizer;
      if (mysql_real_query(m, tuned.data(), tuned.size()) == 0) return Status::Ok();
      const unsigned code = mysql_errno(m);
      if (code != kUnknownSystemVariable && code != kWrongValueForVariable) {
        return ConnError(m, "session");
      }
      tune_optimizer_ = false;
    }
    return Exec(m, settings);
  }

  // MariaDB (10.6.17+, 10.11.7+) caps the cost it charges a ref scan on a
  // secondary index (max_seeks_for_key), so for a keyset page — ORDER BY …
  // LIMIT over the index the list is sorted by — it prefers walking the
  // index from its first entry (every row exported so far, again) over the
  // range that seeks straight to the boundary: quadratic once more.
  // disable_max_seek charges the ref scan what it costs.
  static constexpr const char* kTuneOptimizer =
      "SESSION optimizer_adjust_secondary_key_costs = "
      "CONCAT(@@global.optimizer_adjust_secondary_key_costs, ',disable_max_seek')";
  static constexpr unsigned kUnknownSystemVariable = 1193;  // ER_UNKNOWN_SYSTEM_VARIABLE
  static constexpr unsigned kWrongValueForVariable = 1231;  // ER_WRONG_VALUE_FOR_VAR

  // Back to the pool, unless the statement failed for connection trouble
  // (MysqlError's Unavailable): such a connection is closed.
  void GiveBack(Pooled conn, const Status& outcome) {
    if (outcome.code() != StatusCode::kUnavailable) pool_.Return(std::move(conn));
  }

  static StatusOr<QueryDescription> DescribeOn(MYSQL* conn, std::string_view sql) {
    auto [stmt, prepare_error] = mysql::Prepare(conn, sql);
    if (!stmt) return Failed(prepare_error, "prepare");
    std::unique_ptr<MYSQL_RES, ResultFreer> meta(mysql_stmt_result_metadata(stmt.get()));
    if (!meta) return InvalidArgument("mysql datasource: the statement returned no result set");
    const unsigned n = mysql_num_fields(meta.get());
    const MYSQL_FIELD* fields = mysql_fetch_fields(meta.get());
    QueryDescription out;
    for (unsigned c = 0; c < n; ++c) out.columns.emplace_back(fields[c].name);
    EC_ASSIGN_OR_RETURN(out.primary_key, SelectedPrimaryKey(conn, fields, n));
    return out;
  }

  // The first table (in result order) whose whole primary key the statement
  // selects as plain columns, as result labels in key order.
  static StatusOr<std::vector<std::string>> SelectedPrimaryKey(MYSQL* conn,
                                                               const MYSQL_FIELD* fields,
                                                               unsigned n) {
    using Origin = std::pair<std::string, std::string>;  // database, table
    std::vector<Origin> tables;
    std::map<Origin, std::map<std::string, std::string>> labels;  // lower-case column → label
    for (unsigned c = 0; c < n; ++c) {
      if (!(fields[c].flags & PRI_KEY_FLAG) || fields[c].org_table_length == 0 ||
          fields[c].org_name_length == 0) {
        continue;
      }
      Origin origin{fields[c].db, fields[c].org_table};
      if (!labels.count(origin)) tables.push_back(origin);
      labels[origin].emplace(ToLowerAscii(fields[c].org_name), fields[c].name);
    }
    for (const auto& origin : tables) {
      EC_ASSIGN_OR_RETURN(
          ResultSet key,
          Run(conn,
              "SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = ?"
              " AND TABLE_NAME = ? AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION",
              {origin.first, origin.second}));
      std::vector<std::string> selected;
      for (const auto& row : key.rows) {
        auto it = row.empty() || !row[0] ? labels[origin].end()
                                         : labels[origin].find(ToLowerAscii(*row[0]));
        if (it == labels[origin].end()) break;
        selected.push_back(it->second);
      }
      if (!key.rows.empty() && selected.size() == key.rows.size()) return selected;
    }
    return std::vector<std::string>();
  }

  static Status Exec(MYSQL* conn, const std::string& sql) {
    if (mysql_real_query(conn, sql.data(), sql.size())) return ConnError(conn, "exec");
    return Status::Ok();
  }

  // Prepared per statement: the session reset of the next one drops it.
  static StatusOr<ResultSet> Run(MYSQL* conn, std::string_view sql,
                                 const std::vector<nlohmann::json>& params) {
    EC_ASSIGN_OR_RETURN(std::vector<mysql::Param> bound, ToParams(params));
    auto [stmt, prepare_error] = mysql::Prepare(conn, sql);
    if (!stmt) return Failed(prepare_error, "prepare");
    mysql::Answer answer;
    if (mysql::Error e = mysql::Execute(stmt.get(), bound, &answer); e.failed()) {
      return Failed(e, e.code == mysql::kClientInvalidParameterNo ? "bind" : "query");
    }
    if (!answer.has_result_set) {
      return InvalidArgument("mysql datasource: the statement returned no result set");
    }
    ResultSet out;
    out.columns = std::move(answer.columns);
    out.rows = std::move(answer.rows);
    if (!out.rows.empty()) out.last_row_params = LastRowParams(out.rows.back(), answer.types);
    return out;
  }

  mysql::Url url_;
  const DatasourceTimeouts timeouts_;
  const ClientTlsOptions tls_;
  IdleConnectionCache<Pooled> pool_;
  std::atomic<bool> tune_optimizer_{true};
  std::atomic<bool> mariadb_{true};  // the server's flavour, learned at each connect
  RunningStatements running_;
  const ConnectionCheckout<Pooled> checkout_;  // after running_ and pool_
};

}  // namespace

StatusOr<std::unique_ptr<ReadOnlyDatasource>> NewMysqlDatasource(const std::string& url,
                                                                 const DatasourceTimeouts& timeouts,
                                                                 const ClientTlsOptions& tls) {
  EC_ASSIGN_OR_RETURN(mysql::Url parsed, mysql::ParseUrl(url));
  return std::unique_ptr<ReadOnlyDatasource>(
      std::make_unique<MysqlDatasource>(std::move(parsed), timeouts, tls));
}

}  // namespace export_center::source
