#pragma once
// The options of source/: the HTTP client both routes use to call a business
// service (provider batches, the SQL contract) and the read-only databases
// the sql-template route may page.
//
// A header of its own because two client headers share ProviderClientOptions
// and config/, which fills both, needs neither client's declarations.

#include <cstdint>
#include <string>

#include "common/client_tls_options.h"

namespace export_center::source {

struct ProviderClientOptions {
  int connect_timeout_ms = 3000;
  int read_timeout_ms = 15000;
  int64_t max_response_bytes = 4LL * 1024 * 1024;
};

// A read-only database the sql-template route may query (docs/sql-template-route.md),
// named by a definition's `datasource`. Key: datasources.NAME.
struct DatasourceOptions {
  std::string name;         // the map key
  std::string kind;         // sqlite | postgres | mysql (required)
  std::string sqlite_path;  // sqlite
  std::string url;          // postgres | mysql; env EXPORT_CENTER_DATASOURCE_URL_<NAME_UPPER_SNAKE>
  // The deadlines of its calls (docs/sql-template-route.md#deadlines): the
  // connect (and a cancel's second connection), and one statement, lock
  // waits included, past which the database cancels it (DeadlineExceeded).
  // app/ hands them to the datasource as source::DatasourceTimeouts.
  int connect_timeout_ms = 5000;
  int statement_timeout_ms = 120000;
  // ssl-mode / ssl-ca / ssl-cert / ssl-key (mysql only; a postgres URL
  // carries sslmode itself): docs/configuration.md#database-tls.
  ClientTlsOptions tls;
};

}  // namespace export_center::source
