#pragma once
// PostgresDatabase: the scale-out Database backend (docs/store.md), on libpq.
//
// A bounded pool of connections; write transactions run READ COMMITTED and
// rely on conditional updates plus `SELECT ... FOR UPDATE` of the guard row,
// read transactions run REPEATABLE READ READ ONLY so a count and its page
// agree. Parameters are sent typed (int8, float8, text) so expressions such
// as `{NOW} + $1` never overflow an inferred int4.

#include <memory>
#include <string>

#include "common/status.h"
#include "store/database.h"

namespace export_center::store {

// Connects to `url` (a libpq connection string or postgresql:// URL) with up
// to `pool_size` connections, each connect bounded by the timeouts'
// connect_timeout_ms and each session's statements by statement_timeout_ms
// (`statement_timeout`; a statement past it fails Unavailable, SQLSTATE
// 57014). Fails with Unavailable when the server cannot be reached.
StatusOr<std::unique_ptr<Database>> OpenPostgresDatabase(const std::string& url, int pool_size,
                                                         const SessionTimeouts& timeouts = {});

}  // namespace export_center::store
