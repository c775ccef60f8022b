#include "source/sql/datasource/postgres/postgres_datasource.h"

#include <libpq-fe.h>

#include <algorithm>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "pq/pq.h"
#include "source/sql/datasource/connection_checkout.h"
#include "source/sql/datasource/idle_connection_cache.h"
#include "source/sql/datasource/running_statements.h"

namespace export_center::source {
namespace {

using pq::ConnPtr;
using pq::ResultPtr;

// A statement cancelled (57014: by statement_timeout, or by a cancel
// request, which Query reports as the interrupt's reason instead) or a lock
// not granted in time (55P03) ran out of time. Connection classes (08),
// resources (53), shutdown (57) and no answer at all are worth a later
// retry; anything else is the statement's fault.
Status PgError(const char* sqlstate, std::string_view message, std::string_view what) {
  std::string state = sqlstate ? sqlstate : "";
  std::string text =
      "postgres datasource " + std::string(what) + ": [" + state + "] " + std::string(message);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (state == "57014" || state == "55P03") return DeadlineExceeded(text);
  std::string cls = state.substr(0, 2);
  if (state.empty() || cls == "08" || cls == "53" || cls == "57" || state == "40001" ||
      state == "40P01") {
    return Unavailable(text);
  }
  return InvalidArgument(text);
}

Status Exec(PGconn* conn, const std::string& sql) {
  ResultPtr res(PQexec(conn, sql.c_str()));
  if (res && PQresultStatus(res.get()) == PGRES_COMMAND_OK) return Status::Ok();
  if (!res) return PgError("", PQerrorMessage(conn), "exec");
  return PgError(PQresultErrorField(res.get(), PG_DIAG_SQLSTATE), PQresultErrorMessage(res.get()),
                 "exec");
}

// A pooled connection and the statements prepared on it. Planning is most
// of what a page's statement costs the server (an enrich SQL's IN list of a
// thousand keys is a thousand selectivity estimates); prepared once, later
// pages of the attempt run the cached plan.
struct CancelFreer {
  void operator()(PGcancel* c) const { PQfreeCancel(c); }
};

struct PgConnection {
  explicit PgConnection(ConnPtr c) : conn(std::move(c)), cancel(PQgetCancel(conn.get())) {}
  PGconn* get() const { return conn.get(); }
  ConnPtr conn;
  // What PQcancel needs to cancel this connection's statement from another
  // thread; independent of `conn`.
  std::unique_ptr<PGcancel, CancelFreer> cancel;
  std::list<std::pair<std::string, std::string>> prepared;  // key → name, most recent first
  int next_name = 0;
};
using PgConnectionPtr = std::unique_ptr<PgConnection>;

constexpr size_t kPreparedPerConnection = 8;

class PostgresDatasource : public ReadOnlyDatasource {
 public:
  PostgresDatasource(std::string url, DatasourceTimeouts timeouts)
      : url_(std::move(url)),
        timeouts_(timeouts),
        pool_(kPooledConnections, kPooledConnectionAge),
        checkout_(&running_,
                  {[this](std::string_view schema) { return Session(schema); },
                   [this](Status failed) { return Explain(std::move(failed)); },
                   [this](PgConnectionPtr conn, const Status&) { GiveBack(std::move(conn)); }}) {}

  std::string_view kind() const override { return "postgres"; }

  StatusOr<ResultSet> Query(std::string_view sql, const std::vector<nlohmann::json>& params,
                            std::string_view schema) override {
    return checkout_.Run(schema, [&](PgConnectionPtr& conn) -> StatusOr<ResultSet> {
      EC_ASSIGN_OR_RETURN(auto running, Register(*conn));
      return Run(conn.get(), sql, params);
    });
  }

  // Prepared and described, never executed.
  StatusOr<QueryDescription> Describe(std::string_view sql,
                                      const std::vector<nlohmann::json>& params,
                                      std::string_view schema) override {
    return checkout_.Run(schema, [&](PgConnectionPtr& conn) -> StatusOr<QueryDescription> {
      // Parse analysis takes the tables' locks: a prepare can wait too.
      EC_ASSIGN_OR_RETURN(auto running, Register(*conn));
      return DescribeOn(conn->get(), sql, params);
    });
  }

  // EXPLAIN (FORMAT JSON) with the values bound, so the planner sees them
  // as a custom plan would; its own statement_timeout bounds the planning.
  StatusOr<QueryPlan> Explain(std::string_view sql, const std::vector<nlohmann::json>& params,
                              std::string_view schema, int timeout_ms) override {
    return checkout_.Run(schema, [&](PgConnectionPtr& conn) -> StatusOr<QueryPlan> {
      EC_RETURN_IF_ERROR(
          Exec(conn->get(), "SET statement_timeout = " + std::to_string(std::max(timeout_ms, 1))));
      EC_ASSIGN_OR_RETURN(auto running, Register(*conn));
      return ExplainOn(conn->get(), sql, params);
    });
  }

  // PostgreSQL sorts NULL after every value in ascending order.
  OrderingTraits ordering() const override { return {/*nulls_first=*/false, true}; }

  void Interrupt(Status reason) override { running_.Interrupt(std::move(reason)); }

  // Two equal pg_current_snapshot() values (xmin:xmax:running xids) mean no
  // transaction ended between them: one that ran at the first would have
  // left the list, one started later would have moved xmax. On a hot
  // standby the snapshot follows the replayed transactions. The watch
  // must not outlive the datasource.
  std::unique_ptr<CommitWatch> WatchCommits(std::string_view schema) override {
    auto opened = Snapshot(schema);
    if (!opened) return nullptr;
    return std::make_unique<SnapshotWatch>(this, std::string(schema), std::move(*opened));
  }

 private:
  class SnapshotWatch : public CommitWatch {
   public:
    SnapshotWatch(PostgresDatasource* datasource, std::string schema, std::string opened)
        : datasource_(datasource), schema_(std::move(schema)), opened_(std::move(opened)) {}
    bool NothingCommitted() override { return datasource_->Snapshot(schema_) == opened_; }

   private:
    PostgresDatasource* const datasource_;
    const std::string schema_;
    const std::string opened_;
  };

  std::optional<std::string> Snapshot(std::string_view schema) {
    auto rs = Query("SELECT pg_current_snapshot()::text", {}, schema);
    if (!rs.ok() || rs->rows.size() != 1 || rs->rows[0].size() != 1 || !rs->rows[0][0]) {
      return std::nullopt;
    }
    return *rs->rows[0][0];
  }

  // The statement about to run on `conn`, cancellable by Interrupt until the
  // registration ends. PQcancel asks the server over a connection of its
  // own and is thread-safe; the server answers the statement 57014.
  StatusOr<RunningStatements::Registration> Register(const PgConnection& conn) {
    PGcancel* cancel = conn.cancel.get();
    return running_.Begin([cancel] {
      char error[256];
      if (cancel != nullptr) PQcancel(cancel, error, sizeof error);
    });
  }

  // A failed statement's Status: the interrupt's reason when Interrupt
  // cancelled it, else its own.
  Status Explain(Status failed) const {
    Status reason = running_.reason();
    return reason.ok() ? failed : reason;
  }

  StatusOr<ConnPtr> Connect() const {
    const char* keys[] = {"dbname", "connect_timeout", nullptr};
    // libpq counts whole seconds (and at least 2).
    std::string timeout = std::to_string((timeouts_.connect_timeout_ms + 999) / 1000);
    const char* values[] = {url_.c_str(), timeout.c_str(), nullptr};
    ConnPtr conn(PQconnectdbParams(keys, values, /*expand_dbname=*/1));
    if (!conn || PQstatus(conn.get()) != CONNECTION_OK) {
      return Unavailable("postgres datasource connect: " +
                         std::string(conn ? PQerrorMessage(conn.get()) : "out of memory"));
    }
    return conn;
  }

  // A connection for one statement: from the pool, its session reset —
  // every setting (set_config from a SELECT included) and advisory lock an
  // earlier statement left is gone; what a SELECT cannot create (temporary
  // tables, cursors, prepared statements) there is nothing of but our own
  // prepared statements, which stay — or new; then read-only, in UTC, on
  // `schema`. A pooled connection the server dropped meanwhile is replaced.
  StatusOr<PgConnectionPtr> Session(std::string_view schema) {
    EC_RETURN_IF_ERROR(CheckSchemaName(schema));
    // Read-only: a backstop behind the scanner, enforced by the server.
    // UTC makes timestamptz text carry "+00", parsed exactly by the source.
    // statement_timeout bounds each statement, lock waits included (57014).
    std::string setup =
        "SET default_transaction_read_only = on; SET TIME ZONE 'UTC'; "
        "SET statement_timeout = " +
        std::to_string(timeouts_.statement_timeout_ms);
    if (!schema.empty()) setup += "; SET search_path TO \"" + std::string(schema) + "\"";
    if (auto pooled = pool_.Take()) {
      if (Exec((*pooled)->get(), "SELECT pg_advisory_unlock_all(); RESET ALL; " + setup).ok()) {
        return std::move(*pooled);
      }
    }
    EC_ASSIGN_OR_RETURN(auto conn, Connect());
    EC_RETURN_IF_ERROR(Exec(conn.get(), setup));
    return std::make_unique<PgConnection>(std::move(conn));
  }

  // Back to the pool, unless the statement left it broken or mid-transaction.
  void GiveBack(PgConnectionPtr conn) {
    if (PQstatus(conn->get()) == CONNECTION_OK &&
        PQtransactionStatus(conn->get()) == PQTRANS_IDLE) {
      pool_.Return(std::move(conn));
    }
  }

  // The name of `text` prepared with `types` on this connection: from its
  // cache, or prepared now (the least recent beyond kPreparedPerConnection
  // deallocated).
  static StatusOr<std::string> PreparedName(PgConnection* c, const std::string& text,
                                            const std::vector<Oid>& types) {
    std::string key;
    for (Oid t : types) key += std::to_string(t) + ",";
    key += "\n" + text;
    for (auto it = c->prepared.begin(); it != c->prepared.end(); ++it) {
      if (it->first != key) continue;
      c->prepared.splice(c->prepared.begin(), c->prepared, it);
      return it->second;
    }
    std::string name = "ec_" + std::to_string(c->next_name++);
    ResultPtr prepared(PQprepare(c->get(), name.c_str(), text.c_str(),
                                 static_cast<int>(types.size()), types.data()));
    EC_RETURN_IF_ERROR(Check(c->get(), prepared.get(), PGRES_COMMAND_OK, "prepare"));
    c->prepared.emplace_front(std::move(key), name);
    if (c->prepared.size() > kPreparedPerConnection) {
      ResultPtr gone(PQexec(c->get(), ("DEALLOCATE " + c->prepared.back().second).c_str()));
      c->prepared.pop_back();
    }
    return name;
  }

  static StatusOr<QueryPlan> ExplainOn(PGconn* conn, std::string_view sql,
                                       const std::vector<nlohmann::json>& params) {
    Bound bound;
    EC_RETURN_IF_ERROR(BindValues(params, &bound));
    std::string text = "EXPLAIN (FORMAT JSON) " + pq::ToPostgresPlaceholders(sql);
    ResultPtr res(PQexecParams(conn, text.c_str(), static_cast<int>(params.size()),
                               bound.types.data(), bound.values.data(), nullptr, nullptr, 0));
    EC_RETURN_IF_ERROR(Check(conn, res.get(), PGRES_TUPLES_OK, "explain"));
    QueryPlan plan{"postgres", ""};
    for (int r = 0; r < PQntuples(res.get()); ++r) plan.text += PQgetvalue(res.get(), r, 0);
    return plan;
  }

  static StatusOr<QueryDescription> DescribeOn(PGconn* conn, std::string_view sql,
                                               const std::vector<nlohmann::json>& params) {
    Bound bound;
    EC_RETURN_IF_ERROR(BindValues(params, &bound));
    std::string text = pq::ToPostgresPlaceholders(sql);
    ResultPtr prepared(
        PQprepare(conn, "", text.c_str(), static_cast<int>(params.size()), bound.types.data()));
    EC_RETURN_IF_ERROR(Check(conn, prepared.get(), PGRES_COMMAND_OK, "prepare"));
    ResultPtr described(PQdescribePrepared(conn, ""));
    EC_RETURN_IF_ERROR(Check(conn, described.get(), PGRES_COMMAND_OK, "describe"));
    QueryDescription out;
    for (int c = 0; c < PQnfields(described.get()); ++c) {
      out.columns.emplace_back(PQfname(described.get(), c));
    }
    EC_ASSIGN_OR_RETURN(out.primary_key, SelectedPrimaryKey(conn, described.get()));
    return out;
  }

  // Parameter texts and the pointers libpq reads; filled in place, since
  // moving short strings would move the text the pointers point into.
  struct Bound {
    std::vector<std::string> texts;
    std::vector<const char*> values;
    std::vector<Oid> types;  // 0: let the server infer (dates, numerics)
  };

  static Status BindValues(const std::vector<nlohmann::json>& params, Bound* out) {
    Bound& b = *out;
    b.texts.resize(params.size());
    b.values.assign(params.size(), nullptr);
    b.types.assign(params.size(), 0);
    for (size_t i = 0; i < params.size(); ++i) {
      const auto& v = params[i];
      if (v.is_null()) continue;
      if (v.is_boolean()) {
        b.texts[i] = v.get<bool>() ? "t" : "f";
        b.types[i] = pq::kBoolOid;
      } else if (v.is_number_integer()) {
        b.texts[i] = v.dump();
        b.types[i] = pq::kInt8Oid;
      } else if (v.is_number()) {
        b.texts[i] = v.dump();
        b.types[i] = pq::kFloat8Oid;
      } else if (v.is_string()) {
        b.texts[i] = v.get<std::string>();
      } else {
        return InvalidArgument("parameter " + std::to_string(i + 1) + " is not a scalar");
      }
      b.values[i] = b.texts[i].c_str();
    }
    return Status::Ok();
  }

  static Status Check(PGconn* conn, PGresult* res, ExecStatusType want, std::string_view what) {
    if (!res) return PgError("", PQerrorMessage(conn), what);
    if (PQresultStatus(res) != want) {
      return PgError(PQresultErrorField(res, PG_DIAG_SQLSTATE), PQresultErrorMessage(res), what);
    }
    return Status::Ok();
  }

  // The first table (in result order) whose whole primary key the statement
  // selects as plain columns (PQftable/PQftablecol name the origin), as
  // result labels in key order.
  static StatusOr<std::vector<std::string>> SelectedPrimaryKey(PGconn* conn, PGresult* described) {
    std::vector<Oid> tables;
    std::map<Oid, std::map<int, std::string>> labels;  // table → attnum → label
    for (int c = 0; c < PQnfields(described); ++c) {
      Oid table = PQftable(described, c);
      if (table == InvalidOid || PQftablecol(described, c) <= 0) continue;
      if (!labels.count(table)) tables.push_back(table);
      labels[table].emplace(PQftablecol(described, c), PQfname(described, c));
    }
    for (Oid table : tables) {
      std::string oid = std::to_string(table);
      const char* values[] = {oid.c_str()};
      ResultPtr res(PQexecParams(conn,
                                 "SELECT array_to_string(indkey, ' ') FROM pg_index"
                                 " WHERE indrelid = $1::oid AND indisprimary",
                                 1, nullptr, values, nullptr, nullptr, 0));
      EC_RETURN_IF_ERROR(Check(conn, res.get(), PGRES_TUPLES_OK, "primary key"));
      if (PQntuples(res.get()) != 1) continue;
      std::istringstream attnums(PQgetvalue(res.get(), 0, 0));
      std::vector<std::string> selected;
      bool complete = true;
      for (int attnum; attnums >> attnum;) {
        auto it = labels[table].find(attnum);
        if (it == labels[table].end()) complete = false;
        if (complete) selected.push_back(it->second);
      }
      if (complete && !selected.empty()) return selected;
    }
    return std::vector<std::string>();
  }

  static StatusOr<ResultSet> Run(PgConnection* c, std::string_view sql,
                                 const std::vector<nlohmann::json>& params) {
    PGconn* conn = c->get();
    Bound bound;
    EC_RETURN_IF_ERROR(BindValues(params, &bound));
    std::string text = pq::ToPostgresPlaceholders(sql);
    EC_ASSIGN_OR_RETURN(std::string name, PreparedName(c, text, bound.types));
    ResultPtr res(PQexecPrepared(conn, name.c_str(), static_cast<int>(params.size()),
                                 bound.values.data(), nullptr, nullptr, 0));
    EC_RETURN_IF_ERROR(Check(conn, res.get(), PGRES_TUPLES_OK, "query"));
    ResultSet out;
    int cols = PQnfields(res.get());
    for (int c = 0; c < cols; ++c) out.columns.emplace_back(PQfname(res.get(), c));
    int rows = PQntuples(res.get());
    out.rows.reserve(rows);
    for (int r = 0; r < rows; ++r) {
      std::vector<std::optional<std::string>> row(cols);
      for (int c = 0; c < cols; ++c) {
        if (!PQgetisnull(res.get(), r, c)) {
          row[c] = std::string(PQgetvalue(res.get(), r, c), PQgetlength(res.get(), r, c));
        }
      }
      out.rows.push_back(std::move(row));
    }
    // Text of every type reads back exactly (floats print their shortest
    // exact form since PostgreSQL 12); the server infers each parameter's
    // type from the column it is compared with.
    if (!out.rows.empty()) {
      for (const auto& cell : out.rows.back()) {
        out.last_row_params.push_back(cell ? nlohmann::json(*cell) : nlohmann::json());
      }
    }
    return out;
  }

  std::string url_;
  const DatasourceTimeouts timeouts_;
  IdleConnectionCache<PgConnectionPtr> pool_;
  RunningStatements running_;
  const ConnectionCheckout<PgConnectionPtr> checkout_;  // after running_ and pool_
};

}  // namespace

std::unique_ptr<ReadOnlyDatasource> NewPostgresDatasource(const std::string& url,
                                                          const DatasourceTimeouts& timeouts) {
  return std::make_unique<PostgresDatasource>(url, timeouts);
}

}  // namespace export_center::source
