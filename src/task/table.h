#pragma once
// Columns and typed cell values: what a RowSource produces and a Writer consumes.
//
// Values arrive on the wire as JSON (docs/provider-contract.md#values-on-the-wire) and are
// parsed once, by ParseWireValue, into CellValue. Writers never see JSON.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/status.h"

namespace export_center::task {

enum class ColumnType { kString, kInteger, kDecimal, kBoolean, kDate, kDateTime };
std::string_view ToString(ColumnType type);
std::optional<ColumnType> ParseColumnType(std::string_view text);  // "STRING", "DATETIME", ...

struct Column {
  std::string key;
  std::string title;
  ColumnType type = ColumnType::kString;
  int width = 0;       // in characters; 0 = writer's default
  int scale = 2;       // DECIMAL digits after the point
  std::string format;  // optional number format override
};

// An exact decimal: value = unscaled / 10^scale. Kept as text digits so that
// 68141.10 never becomes 68141.10000000001.
struct Decimal {
  std::string digits;  // canonical, e.g. "-1234.50" at the column's scale
};

struct Date {
  int32_t year = 1970, month = 1, day = 1;
};

struct DateTime {
  int64_t epoch_ms = 0;  // UTC instant; writers show it in the export's time zone
};

using CellValue = std::variant<std::monostate, std::string, int64_t, Decimal, bool, Date, DateTime>;
using Row = std::vector<CellValue>;  // one value per column, in column order

// Validates a column list from a provider: 1..100 columns, unique non-empty
// keys, known types, width 0..255, scale 0..10.
Status ValidateColumns(const std::vector<Column>& columns);

// Parses one wire value for `column`. A value that does not fit its type is
// InvalidArgument naming the column and the value (the caller adds the row).
StatusOr<CellValue> ParseWireValue(const Column& column, const nlohmann::json& value);

// Parses "1234.5" / 1234.5 to a Decimal rounded half-up to `scale` digits.
StatusOr<Decimal> ParseDecimal(std::string_view text, int scale);

// Days since 1970-01-01 for a civil date (proleptic Gregorian).
int64_t DaysFromCivil(int32_t year, int32_t month, int32_t day);

// Parses a wire column list `[{key, title, type, width?, scale?, format?}]`
// and validates it with ValidateColumns. InvalidArgument names the column.
StatusOr<std::vector<Column>> ParseWireColumns(const nlohmann::json& columns);

}  // namespace export_center::task
