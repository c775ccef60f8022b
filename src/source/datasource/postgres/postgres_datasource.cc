#include "source/datasource/postgres/postgres_datasource.h"

#include <libpq-fe.h>

#include <memory>

#include "pq/pq.h"

namespace export_center::source {
namespace {

using pq::ConnPtr;
using pq::ResultPtr;

// Connection classes (08), resources (53), shutdown (57) and no answer at all
// are worth a later retry; anything else is the statement's fault.
Status PgError(const char* sqlstate, std::string_view message, std::string_view what) {
  std::string state = sqlstate ? sqlstate : "";
  std::string text =
      "postgres datasource " + std::string(what) + ": [" + state + "] " + std::string(message);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
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

class PostgresDatasource : public ReadOnlyDatasource {
 public:
  PostgresDatasource(std::string url, int connect_timeout_s)
      : url_(std::move(url)), connect_timeout_s_(connect_timeout_s) {}

  std::string_view kind() const override { return "postgres"; }

  StatusOr<ResultSet> Query(std::string_view sql, const std::vector<nlohmann::json>& params,
                            std::string_view schema) override {
    EC_RETURN_IF_ERROR(CheckSchemaName(schema));
    EC_ASSIGN_OR_RETURN(auto conn, Connect());
    // Read-only: a backstop behind the scanner, enforced by the server.
    // UTC makes timestamptz text carry "+00", parsed exactly by the source.
    EC_RETURN_IF_ERROR(
        Exec(conn.get(), "SET default_transaction_read_only = on; SET TIME ZONE 'UTC'"));
    if (!schema.empty()) {
      EC_RETURN_IF_ERROR(Exec(conn.get(), "SET search_path TO \"" + std::string(schema) + "\""));
    }
    return Run(conn.get(), sql, params);
  }

 private:
  StatusOr<ConnPtr> Connect() const {
    const char* keys[] = {"dbname", "connect_timeout", nullptr};
    std::string timeout = std::to_string(connect_timeout_s_);
    const char* values[] = {url_.c_str(), timeout.c_str(), nullptr};
    ConnPtr conn(PQconnectdbParams(keys, values, /*expand_dbname=*/1));
    if (!conn || PQstatus(conn.get()) != CONNECTION_OK) {
      return Unavailable("postgres datasource connect: " +
                         std::string(conn ? PQerrorMessage(conn.get()) : "out of memory"));
    }
    return conn;
  }

  static StatusOr<ResultSet> Run(PGconn* conn, std::string_view sql,
                                 const std::vector<nlohmann::json>& params) {
    std::vector<std::string> texts(params.size());
    std::vector<const char*> values(params.size(), nullptr);
    std::vector<Oid> types(params.size(), 0);  // 0: let the server infer (dates, numerics)
    for (size_t i = 0; i < params.size(); ++i) {
      const auto& v = params[i];
      if (v.is_null()) continue;
      if (v.is_boolean()) {
        texts[i] = v.get<bool>() ? "t" : "f";
        types[i] = pq::kBoolOid;
      } else if (v.is_number_integer()) {
        texts[i] = v.dump();
        types[i] = pq::kInt8Oid;
      } else if (v.is_number()) {
        texts[i] = v.dump();
        types[i] = pq::kFloat8Oid;
      } else if (v.is_string()) {
        texts[i] = v.get<std::string>();
      } else {
        return InvalidArgument("parameter " + std::to_string(i + 1) + " is not a scalar");
      }
      values[i] = texts[i].c_str();
    }
    std::string text = pq::ToPostgresPlaceholders(sql);
    ResultPtr res(PQexecParams(conn, text.c_str(), static_cast<int>(params.size()), types.data(),
                               values.data(), nullptr, nullptr, 0));
    if (!res) return PgError("", PQerrorMessage(conn), "query");
    if (PQresultStatus(res.get()) != PGRES_TUPLES_OK) {
      return PgError(PQresultErrorField(res.get(), PG_DIAG_SQLSTATE),
                     PQresultErrorMessage(res.get()), "query");
    }
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
    return out;
  }

  std::string url_;
  int connect_timeout_s_;
};

}  // namespace

std::unique_ptr<ReadOnlyDatasource> NewPostgresDatasource(const std::string& url,
                                                          int connect_timeout_s) {
  return std::make_unique<PostgresDatasource>(url, connect_timeout_s);
}

}  // namespace export_center::source
