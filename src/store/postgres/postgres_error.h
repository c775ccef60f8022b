#pragma once
// The one place where PostgreSQL errors become a Status (docs/conventions.md#errors).

#include <string_view>

#include "common/status.h"

namespace export_center::store {

// SQLSTATE → code:
//   40001 serialization failure, 40P01 deadlock, 55P03 lock not available,
//   class 08 (connection), class 53 (resources), 57P* (shutdown) and an
//   empty SQLSTATE (no server answer)          → Unavailable (retry later)
//   23505 unique violation                     → Conflict
//   22001 value too long for its column        → InvalidArgument
//   anything else                              → Internal
StatusCode PostgresStatusCode(std::string_view sqlstate);

// A Status with that code and the message "postgres <what>: [SQLSTATE] message".
Status PostgresError(std::string_view sqlstate, std::string_view message, std::string_view what);

}  // namespace export_center::store
