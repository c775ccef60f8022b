#pragma once
// SqliteDatasource: a SQLite file opened read-only per query.
// SQLite has no schemas to switch to; a non-empty schema other than "main"
// is rejected.

#include <memory>
#include <string>

#include "source/datasource/read_only_datasource.h"

namespace export_center::source {

// No I/O until the first Query; a missing file fails that Query (Unavailable).
std::unique_ptr<ReadOnlyDatasource> NewSqliteDatasource(const std::string& path,
                                                        int busy_timeout_ms = 5000);

}  // namespace export_center::source
