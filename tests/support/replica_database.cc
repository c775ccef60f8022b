#include "tests/support/replica_database.h"

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <utility>

#include "source/sql/datasource/sqlite/sqlite_datasource.h"
#ifdef EXPORT_CENTER_WITH_POSTGRES
#include <libpq-fe.h>

#include "source/sql/datasource/postgres/postgres_datasource.h"
#include "tests/support/postgres_server.h"
#endif
#ifdef EXPORT_CENTER_WITH_MYSQL
#include <mysql.h>

#include "source/sql/datasource/mysql/mysql_datasource.h"
#include "tests/support/mariadb_server.h"
#endif

namespace export_center::testing {
namespace {

constexpr char kNull[] = "<NULL>";

// A session over one connection of any kind, closed with the session.
template <class ConnPtr, class ExecFn>
class ConnectionSession : public ReplicaSession {
 public:
  ConnectionSession(ConnPtr conn, ExecFn exec) : conn_(std::move(conn)), exec_(exec) {}
  Status Exec(const std::string& sql) override { return exec_(conn_.get(), sql, nullptr); }

 private:
  ConnPtr conn_;
  ExecFn exec_;
};

template <class ConnPtr, class ExecFn>
std::unique_ptr<ReplicaSession> SessionOver(ConnPtr conn, ExecFn exec) {
  return std::make_unique<ConnectionSession<ConnPtr, ExecFn>>(std::move(conn), exec);
}

// ---- SQLite ------------------------------------------------------------------

using SqlitePtr = std::unique_ptr<sqlite3, int (*)(sqlite3*)>;

StatusOr<SqlitePtr> OpenSqlite(const std::string& path) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open(path.c_str(), &raw);
  SqlitePtr db(raw, sqlite3_close);
  if (rc != SQLITE_OK) return Unavailable("open " + path + ": " + sqlite3_errmsg(raw));
  sqlite3_busy_timeout(raw, 5000);
  return db;
}

Status ExecSqlite(sqlite3* db, const std::string& sql, TextRows* rows) {
  auto collect = [](void* out, int n, char** values, char**) {
    auto* table = static_cast<TextRows*>(out);
    if (table == nullptr) return 0;
    std::vector<std::string> row;
    for (int i = 0; i < n; ++i) row.emplace_back(values[i] ? values[i] : kNull);
    table->push_back(std::move(row));
    return 0;
  };
  char* error = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), collect, rows, &error);
  std::string message = error ? error : "";
  sqlite3_free(error);
  return rc == SQLITE_OK ? Status::Ok() : Internal("sqlite: " + message);
}

class SqliteReplica : public ReplicaDatabase {
 public:
  explicit SqliteReplica(const std::string& name)
      : path_((std::filesystem::temp_directory_path() /
               ("ec-" + name + "-" + std::to_string(::getpid()) + ".db"))
                  .string()) {
    std::filesystem::remove(path_);
  }
  ~SqliteReplica() override { std::filesystem::remove(path_); }

  StatusOr<std::unique_ptr<ReplicaSession>> OpenSession() override {
    EC_ASSIGN_OR_RETURN(SqlitePtr db, OpenSqlite(path_));
    return SessionOver(std::move(db), ExecSqlite);
  }
  std::shared_ptr<source::ReadOnlyDatasource> Open(
      const source::DatasourceTimeouts& timeouts) override {
    return source::NewSqliteDatasource(path_, timeouts);
  }

 private:
  Status Run(const std::string& sql, const std::string&, TextRows* rows) override {
    EC_ASSIGN_OR_RETURN(SqlitePtr db, OpenSqlite(path_));
    return ExecSqlite(db.get(), sql, rows);
  }
  const std::string path_;
};

// ---- PostgreSQL ----------------------------------------------------------------

#ifdef EXPORT_CENTER_WITH_POSTGRES
using PgPtr = std::unique_ptr<PGconn, void (*)(PGconn*)>;

StatusOr<PgPtr> ConnectPostgres(const std::string& url) {
  PgPtr conn(PQconnectdb(url.c_str()), PQfinish);
  if (PQstatus(conn.get()) != CONNECTION_OK) return Unavailable(PQerrorMessage(conn.get()));
  return conn;
}

// PQexec runs every statement of `sql`; the last one's result is checked.
Status ExecPostgres(PGconn* conn, const std::string& sql, TextRows* rows) {
  std::unique_ptr<PGresult, void (*)(PGresult*)> res(PQexec(conn, sql.c_str()), PQclear);
  const ExecStatusType status = PQresultStatus(res.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    return Internal("postgres: " + std::string(PQresultErrorMessage(res.get())));
  }
  for (int r = 0; rows != nullptr && r < PQntuples(res.get()); ++r) {
    std::vector<std::string> row;
    for (int c = 0; c < PQnfields(res.get()); ++c) {
      row.emplace_back(PQgetisnull(res.get(), r, c) ? kNull : PQgetvalue(res.get(), r, c));
    }
    rows->push_back(std::move(row));
  }
  return Status::Ok();
}

class PostgresReplica : public ReplicaDatabase {
 public:
  explicit PostgresReplica(std::unique_ptr<PostgresServer> server) : server_(std::move(server)) {}

  StatusOr<std::unique_ptr<ReplicaSession>> OpenSession() override {
    EC_ASSIGN_OR_RETURN(PgPtr conn, ConnectPostgres(server_->url()));
    return SessionOver(std::move(conn), ExecPostgres);
  }
  std::shared_ptr<source::ReadOnlyDatasource> Open(
      const source::DatasourceTimeouts& timeouts) override {
    return source::NewPostgresDatasource(server_->url(), timeouts);
  }

 private:
  Status Run(const std::string& sql, const std::string& schema, TextRows* rows) override {
    EC_ASSIGN_OR_RETURN(PgPtr conn, ConnectPostgres(server_->url()));
    const std::string in_schema = schema.empty() ? sql : "SET search_path TO " + schema + ";" + sql;
    return ExecPostgres(conn.get(), in_schema, rows);
  }
  std::unique_ptr<PostgresServer> server_;
};
#endif

// ---- MariaDB -----------------------------------------------------------------

#ifdef EXPORT_CENTER_WITH_MYSQL
using MysqlPtr = std::unique_ptr<MYSQL, void (*)(MYSQL*)>;

StatusOr<MysqlPtr> ConnectMariaDb(int port, const std::string& database) {
  MysqlPtr m(mysql_init(nullptr), mysql_close);
  if (!mysql_real_connect(m.get(), "127.0.0.1", "root", "",
                          database.empty() ? nullptr : database.c_str(), port, nullptr,
                          CLIENT_MULTI_STATEMENTS)) {
    return Unavailable("mariadb: " + std::string(mysql_error(m.get())));
  }
  mysql_set_character_set(m.get(), "utf8mb4");
  return m;
}

// Every result of a multi-statement batch is drained; the first failure
// wins and the last result set is the answer.
Status ExecMariaDb(MYSQL* m, const std::string& sql, TextRows* rows) {
  if (mysql_real_query(m, sql.data(), sql.size())) {
    return Internal("mariadb: " + std::string(mysql_error(m)));
  }
  do {
    MYSQL_RES* res = mysql_store_result(m);
    if (res == nullptr) continue;
    if (rows != nullptr) {
      rows->clear();
      const unsigned n = mysql_num_fields(res);
      while (MYSQL_ROW row = mysql_fetch_row(res)) {
        std::vector<std::string> cells;
        for (unsigned c = 0; c < n; ++c) cells.emplace_back(row[c] ? row[c] : kNull);
        rows->push_back(std::move(cells));
      }
    }
    mysql_free_result(res);
  } while (mysql_next_result(m) == 0);
  if (mysql_errno(m) != 0) return Internal("mariadb: " + std::string(mysql_error(m)));
  return Status::Ok();
}

class MariaDbReplica : public ReplicaDatabase {
 public:
  MariaDbReplica(std::unique_ptr<MariaDbServer> server, std::string database)
      : server_(std::move(server)), database_(std::move(database)) {}

  StatusOr<std::unique_ptr<ReplicaSession>> OpenSession() override {
    EC_ASSIGN_OR_RETURN(MysqlPtr m, ConnectMariaDb(server_->port(), database_));
    return SessionOver(std::move(m), ExecMariaDb);
  }
  std::shared_ptr<source::ReadOnlyDatasource> Open(
      const source::DatasourceTimeouts& timeouts) override {
    auto ds = source::NewMysqlDatasource(server_->url(), timeouts);
    return ds.ok() ? std::shared_ptr<source::ReadOnlyDatasource>(std::move(ds).value()) : nullptr;
  }

 private:
  Status Run(const std::string& sql, const std::string& schema, TextRows* rows) override {
    EC_ASSIGN_OR_RETURN(MysqlPtr m,
                        ConnectMariaDb(server_->port(), schema.empty() ? database_ : schema));
    return ExecMariaDb(m.get(), sql, rows);
  }
  std::unique_ptr<MariaDbServer> server_;
  const std::string database_;
};
#endif

}  // namespace

StatusOr<std::unique_ptr<ReplicaDatabase>> ReplicaDatabase::Start(const std::string& kind,
                                                                  const std::string& name) {
  if (kind == "sqlite") return std::unique_ptr<ReplicaDatabase>(new SqliteReplica(name));
#ifdef EXPORT_CENTER_WITH_POSTGRES
  if (kind == "postgres") {
    EC_ASSIGN_OR_RETURN(auto server, PostgresServer::Start(name));
    return std::unique_ptr<ReplicaDatabase>(new PostgresReplica(std::move(server)));
  }
#endif
#ifdef EXPORT_CENTER_WITH_MYSQL
  if (kind == "mariadb" || kind == "mysql") {
    EC_ASSIGN_OR_RETURN(auto server, MariaDbServer::Start(name));
    return std::unique_ptr<ReplicaDatabase>(new MariaDbReplica(std::move(server), name));
  }
#endif
  return Unavailable(kind + " is not built in");
}

ReplicaDatabase* SharedReplica(const std::string& kind, const std::string& name,
                               const std::function<Status(ReplicaDatabase&)>& seed,
                               std::string* why) {
  static OncePerKind<ReplicaDatabase> replicas;
  return replicas.Get(
      kind,
      [&]() -> StatusOr<std::unique_ptr<ReplicaDatabase>> {
        EC_ASSIGN_OR_RETURN(auto db, ReplicaDatabase::Start(kind, name));
        EC_RETURN_IF_ERROR(seed(*db).WithContext("seeding " + kind));
        return db;
      },
      why);
}

}  // namespace export_center::testing
