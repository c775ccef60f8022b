#pragma once
// MysqlDatasource: a MySQL/MariaDB replica through libmariadb, one connection
// per query. The session is made read-only (`SET SESSION TRANSACTION READ
// ONLY`) before the statement runs; a schema switch is `USE <schema>` after
// CheckSchemaName. Statements run as server-side prepared statements with `?`
// parameters, and every value is fetched as the client library prints it:
// DECIMAL exact ("1234.50"), DATE "2024-03-01", DATETIME "2024-03-01 10:11:12"
// (read in the export's zone, like any naive timestamp), TINYINT(1) "0"/"1".
// Each session's statements are bounded by the timeouts' statement_timeout_ms
// (MariaDB max_statement_time, MySQL max_execution_time; the client's read
// and write timeouts a few seconds later); Interrupt sends KILL QUERY for the
// statements running over a second connection.

#include <memory>
#include <string>

#include "common/client_tls_options.h"
#include "common/status.h"
#include "source/sql/datasource/read_only_datasource.h"

namespace export_center::source {

// `url`: mysql://user:password@host:port/database (mariadb:// also accepted;
// user, password, port and database optional; %XX escapes decoded).
// Every connection (the KILL QUERY one too) uses TLS as `tls` says; a
// connection refused for TLS is Unavailable, like any failed connect.
// InvalidArgument for a malformed URL. No I/O until Query.
StatusOr<std::unique_ptr<ReadOnlyDatasource>> NewMysqlDatasource(
    const std::string& url, const DatasourceTimeouts& timeouts = {},
    const ClientTlsOptions& tls = {});

}  // namespace export_center::source
