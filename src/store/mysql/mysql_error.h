#pragma once
// The one place where MySQL/MariaDB errors become a Status for the task store
// (docs/store.md#mysql-and-mariadb).

#include <string_view>

#include "common/status.h"

namespace export_center::store {

// Server and client error codes → code:
//   1213 deadlock, 1205 lock wait timeout, 1020 record changed (snapshot
//   isolation), 1412 table definition changed, 1637 too many transactions,
//   1040 too many connections, 1203 user's connection limit, 1135 no thread,
//   1053 shutdown, 1927 connection killed, 1317/1969/3024 statement
//   interrupted or timed out, 2000-2999 client errors (lost connection 2013,
//   server gone 2006, cannot connect 2002/2003, ...) except the API-misuse
//   codes 2030-2036, and SQLSTATE class 08                 → Unavailable
//   1062/1586 duplicate key, 1022 duplicate key on write   → Conflict
//   1406 value too long for its column (SQLSTATE 22001)    → InvalidArgument
//   anything else                                          → Internal
StatusCode MysqlStatusCode(unsigned code, std::string_view sqlstate);

// A Status with that code and the message "mysql <what>: [code/SQLSTATE] message".
Status MysqlError(unsigned code, std::string_view sqlstate, std::string_view message,
                  std::string_view what);

// Whether the server rolled the whole transaction back to break a lock
// conflict (1213 deadlock; 1205 lock wait timeout, after which the caller
// rolls back itself), so running it again from the start is safe.
bool IsRetryableLockConflict(unsigned code);

}  // namespace export_center::store
