#include "store/postgres/postgres_error.h"

#include <string>

namespace export_center::store {

StatusCode PostgresStatusCode(std::string_view s) {
  if (s.empty()) return StatusCode::kUnavailable;
  // 57014: cancelled, by statement_timeout — the statement may succeed later.
  if (s == "40001" || s == "40P01" || s == "55P03" || s == "57014") return StatusCode::kUnavailable;
  if (s.starts_with("08") || s.starts_with("53") || s.starts_with("57P")) {
    return StatusCode::kUnavailable;
  }
  if (s == "23505") return StatusCode::kConflict;
  if (s == "22001") return StatusCode::kInvalidArgument;
  return StatusCode::kInternal;
}

Status PostgresError(std::string_view sqlstate, std::string_view message, std::string_view what) {
  std::string text = "postgres " + std::string(what) + ": ";
  if (!sqlstate.empty()) text += "[" + std::string(sqlstate) + "] ";
  // libpq messages end with a newline.
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
    message.remove_suffix(1);
  }
  text += message;
  return Status(PostgresStatusCode(sqlstate), std::move(text));
}

}  // namespace export_center::store
