#pragma once
// SqliteDatasource: a SQLite file opened read-only per query.
// SQLite has no schemas to switch to; a non-empty schema other than "main"
// is rejected. A progress handler ends a statement past the timeouts'
// statement_timeout_ms (DeadlineExceeded); Interrupt calls sqlite3_interrupt
// for the statements running.

#include <memory>
#include <string>

#include "source/sql/datasource/read_only_datasource.h"

namespace export_center::source {

// No I/O until the first Query; a missing file fails that Query (Unavailable).
std::unique_ptr<ReadOnlyDatasource> NewSqliteDatasource(const std::string& path,
                                                        const DatasourceTimeouts& timeouts = {});

}  // namespace export_center::source
