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
#include <utility>
#include <variant>
#include <vector>

#include "common/civil_day.h"
#include "common/status.h"

namespace export_center::task {

enum class ColumnType { kString, kInteger, kDecimal, kBoolean, kDate, kDateTime };
std::string_view ToString(ColumnType type);
std::optional<ColumnType> ParseColumnType(std::string_view text);  // "STRING", "DATETIME", ...

// Rich column options (issue 45; docs/xlsx.md#rich-columns). Every default
// is "off", so a Column made with only key/title/type writes the plain file.

// `merge` on the wire: runs of equal adjacent values become one merged cell.
enum class MergeMode { kNone, kSameValue };
// `labelMissing` on the wire: what a value without a label becomes.
enum class LabelMissing { kKeep, kBlank, kFail };
// `total` on the wire: the totals row's formula for this column.
enum class TotalKind { kNone, kSum, kCount, kMin, kMax, kAvg };
enum class Align { kDefault, kLeft, kCenter, kRight };
// A conditional highlight: one Excel conditional-format rule over the column.
enum class HighlightOp { kNone, kEquals, kIn, kGreater, kLess };

std::string_view ToString(MergeMode mode);        // "NONE", "SAME_VALUE"
std::string_view ToString(LabelMissing missing);  // "KEEP", "BLANK", "FAIL"
std::string_view ToString(TotalKind total);       // "NONE", "SUM", "COUNT", "MIN", "MAX", "AVG"
std::optional<MergeMode> ParseMergeMode(std::string_view text);
std::optional<LabelMissing> ParseLabelMissing(std::string_view text);
std::optional<TotalKind> ParseTotalKind(std::string_view text);

// Looks of a column. Colours are "#RRGGBB" (ValidateColumns refuses others)
// or "" for the default.
struct ColumnStyle {
  std::string header_fill;        // background of the column's header cell
  std::string header_font;        // font colour of the column's header cell
  Align align = Align::kDefault;  // horizontal alignment of data cells
  bool wrap = false;              // wrap text in data cells
  bool operator==(const ColumnStyle&) const = default;
};

struct Highlight {
  HighlightOp op = HighlightOp::kNone;
  // kEquals/kGreater/kLess: exactly one; kIn: 1..50. Compared with the cell as
  // written (after labels): numbers for a numeric column without labels, text
  // otherwise.
  std::vector<std::string> values;
  std::string fill;  // "#RRGGBB" background of a matching cell, or ""
  std::string font;  // "#RRGGBB" font colour of a matching cell, or ""
  bool operator==(const Highlight&) const = default;
};

struct Column {
  std::string key;
  std::string title;  // the last (or only) level of the header
  ColumnType type = ColumnType::kString;
  int width = 0;       // in characters; 0 = writer's default
  int scale = 2;       // DECIMAL digits after the point
  std::string format;  // optional number format override
  // Header levels above `title`, top first: {"收货信息"} with title "电话" is
  // the two-level title ["收货信息", "电话"]. Empty: a one-level header.
  std::vector<std::string> title_groups{};
  MergeMode merge = MergeMode::kNone;
  std::string merge_within{};  // key of an earlier column whose runs bound this one's
  // value → label, applied before the writer (task/column_options.h
  // ValueLabeler). Keys are the value's text: "PAID", "3", "true", "12.50".
  std::vector<std::pair<std::string, std::string>> labels{};
  LabelMissing label_missing = LabelMissing::kKeep;
  TotalKind total = TotalKind::kNone;
  ColumnStyle style{};
  Highlight highlight{};
  // Every field equal: what a provider's later batch must repeat.
  bool operator==(const Column&) const = default;
};

// The header path of a column: title_groups then title (1..5 levels).
int TitleDepth(const Column& column);
std::string_view TitleLevel(const Column& column, int level);  // REQUIRES: level < depth

// An exact decimal: value = unscaled / 10^scale. Kept as text digits so that
// 68141.10 never becomes 68141.10000000001.
struct Decimal {
  std::string digits;  // canonical, e.g. "-1234.50" at the column's scale
};

// A DATE cell: a day that exists (common/civil_day.h), so a writer can always
// write it; each route refuses a date that does not exist as a bad value.
using Date = CivilDay;

struct DateTime {
  int64_t epoch_ms = 0;  // UTC instant; writers show it in the export's time zone
};

using CellValue = std::variant<std::monostate, std::string, int64_t, Decimal, bool, Date, DateTime>;
using Row = std::vector<CellValue>;  // one value per column, in column order

// Validates a column list from a provider: 1..100 columns, unique non-empty
// keys, known types, width 0..255, scale 0..10, and the rich options
// (ValidateColumnOptions in task/column_options.h).
Status ValidateColumns(const std::vector<Column>& columns);

// Parses one wire value for `column`. A value that does not fit its type is
// InvalidArgument naming the column and the value (the caller adds the row).
StatusOr<CellValue> ParseWireValue(const Column& column, const nlohmann::json& value);

// Parses "1234.5" / 1234.5 to a Decimal rounded half-up to `scale` digits.
StatusOr<Decimal> ParseDecimal(std::string_view text, int scale);

// Parses a wire column list `[{key, title, type, width?, scale?, format?}]`
// with the rich options (docs/xlsx.md#rich-columns: title as a string, an
// array of 1..5 levels or a language object; merge, mergeWithin, labels —
// values may be language objects —, labelMissing, total, style, highlight)
// and validates it with ValidateColumns. Language objects are resolved to
// one text by ChooseLanguage (task/language.h) with the task's `locale` and
// the definition's `default_language`. InvalidArgument names the column:
// wrong JSON types, unknown enum names, non-string label values, bad
// language tags, and every ValidateColumns refusal.
StatusOr<std::vector<Column>> ParseWireColumns(const nlohmann::json& columns,
                                               std::string_view locale = "",
                                               std::string_view default_language = "");

}  // namespace export_center::task
