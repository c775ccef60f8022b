#pragma once
// PostgresDatasource: a PostgreSQL replica, one libpq connection per query.
// The session is made read-only before the statement runs; a schema switch
// is `SET search_path TO <schema>` after CheckSchemaName. Each session has
// `statement_timeout` set to the timeouts' statement_timeout_ms; Interrupt
// sends PQcancel for the statements running.

#include <memory>
#include <string>

#include "source/sql/datasource/read_only_datasource.h"

namespace export_center::source {

// `url`: a postgresql:// URL or libpq connection string. No I/O until Query.
std::unique_ptr<ReadOnlyDatasource> NewPostgresDatasource(const std::string& url,
                                                          const DatasourceTimeouts& timeouts = {});

}  // namespace export_center::source
