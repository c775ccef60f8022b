#pragma once
// Database text to typed cells: how the sql-template route reads what a
// read-only datasource returns (every cell arrives as text, ResultSet) as the
// contract's column types (docs/sql-template-route.md#column-types). Pure
// functions, no I/O; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "task/table.h"

namespace export_center::source {

// Converts one database text value to `column`'s type. DATETIME text
// without an offset is read in `timezone`. InvalidArgument names the column
// and value.
StatusOr<task::CellValue> ParseDatabaseValue(const task::Column& column,
                                             const std::optional<std::string>& text,
                                             const std::string& timezone);

// A whole decimal number ("42", "+42", "-7"), as every integer cell and
// COUNT(*) arrives. False, without throwing, for any other text.
bool ParseDatabaseInt(std::string_view text, int64_t* out);

}  // namespace export_center::source
