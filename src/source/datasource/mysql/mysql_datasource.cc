#include "source/datasource/mysql/mysql_datasource.h"

#include <memory>
#include <utility>
#include <vector>

#include "mysql/mysql_client.h"

namespace export_center::source {
namespace {

// The one place MySQL/MariaDB errors become a Status. Lost or refused
// connections (client errors 2000-2999 except the prepared-statement API
// misuse codes 2030-2036, SQLSTATE class 08), shutdown, too many connections,
// lock waits, deadlocks and killed statements are worth a later retry;
// anything else is the statement's fault.
Status DatasourceError(const mysql::Error& e, std::string_view what) {
  std::string text = "mysql datasource " + std::string(what) + ": " + e.ToString();
  const unsigned code = e.code;
  bool client_api_misuse = code >= 2030 && code <= 2036;
  bool client_connection =
      code >= mysql::kClientMinError && code <= mysql::kClientMaxError && !client_api_misuse;
  bool transient_server =
      code == 1040 || code == 1053 || code == 1205 || code == 1213 || code == 1927 || code == 1969;
  if (client_connection || transient_server || e.sqlstate.rfind("08", 0) == 0) {
    return Unavailable(text);
  }
  return InvalidArgument(text);
}

StatusOr<std::vector<mysql::Param>> ToParams(const std::vector<nlohmann::json>& params) {
  std::vector<mysql::Param> out;
  out.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& v = params[i];
    if (v.is_null()) {
      out.emplace_back();
    } else if (v.is_boolean()) {
      out.emplace_back(v.get<bool>());
    } else if (v.is_number_integer()) {
      out.emplace_back(int64_t{v.get<long long>()});
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

class MysqlDatasource : public ReadOnlyDatasource {
 public:
  MysqlDatasource(mysql::Url url, int connect_timeout_s)
      : url_(std::move(url)), connect_timeout_s_(connect_timeout_s) {}

  std::string_view kind() const override { return "mysql"; }

  StatusOr<ResultSet> Query(std::string_view sql, const std::vector<nlohmann::json>& params,
                            std::string_view schema) override {
    EC_RETURN_IF_ERROR(CheckSchemaName(schema));
    EC_ASSIGN_OR_RETURN(std::vector<mysql::Param> bound, ToParams(params));
    mysql::ConnectOptions options;
    options.connect_timeout_seconds = static_cast<unsigned>(connect_timeout_s_);
    auto [conn, error] = mysql::Connect(url_, options);
    if (!conn) {
      // Whatever the code, a failed connect is for a later attempt (as postgres).
      return Unavailable("mysql datasource connect: " + error.message);
    }
    // Read-only: a backstop behind the scanner, enforced by the server.
    EC_RETURN_IF_ERROR(Exec(conn.get(), "SET SESSION TRANSACTION READ ONLY"));
    if (!schema.empty()) {
      // CheckSchemaName allowed only [A-Za-z0-9_$]: nothing to escape.
      EC_RETURN_IF_ERROR(Exec(conn.get(), "USE `" + std::string(schema) + "`"));
    }
    return Run(conn.get(), sql, bound);
  }

 private:
  static Status Exec(MYSQL* conn, const std::string& sql) {
    mysql::Answer ignored;
    if (mysql::Error e = mysql::Query(conn, sql, &ignored); e.failed()) {
      return DatasourceError(e, "exec");
    }
    return Status::Ok();
  }

  static StatusOr<ResultSet> Run(MYSQL* conn, std::string_view sql,
                                 const std::vector<mysql::Param>& params) {
    auto [stmt, error] = mysql::Prepare(conn, sql);
    if (!stmt) return DatasourceError(error, "prepare");
    mysql::Answer answer;
    if (mysql::Error e = mysql::Execute(stmt.get(), params, &answer); e.failed()) {
      return DatasourceError(e, "query");
    }
    if (!answer.has_result_set) {
      return InvalidArgument("mysql datasource: the statement returned no result set");
    }
    ResultSet out;
    out.columns = std::move(answer.columns);
    out.rows = std::move(answer.rows);
    return out;
  }

  mysql::Url url_;
  int connect_timeout_s_;
};

}  // namespace

StatusOr<std::unique_ptr<ReadOnlyDatasource>> NewMysqlDatasource(const std::string& url,
                                                                 int connect_timeout_s) {
  auto parsed = mysql::ParseUrl(url);
  if (!parsed.ok()) return parsed.status().WithContext("mysql datasource");
  return std::unique_ptr<ReadOnlyDatasource>(
      std::make_unique<MysqlDatasource>(std::move(parsed).value(), connect_timeout_s));
}

}  // namespace export_center::source
