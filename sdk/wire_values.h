#pragma once
// Encoders from a business service's typed values to the wire format the
// export center expects (docs/provider-contract.md#values-on-the-wire), plus id cursors.
//
// Every encoder returns a JSON value to put in a row object under the
// column's key. 64-bit integers and decimals travel as strings so that no
// JSON parser on the way rounds them through a double.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace export_center::sdk {

enum class ColumnType { kString, kInteger, kDecimal, kBoolean, kDate, kDateTime };
std::string_view ToString(ColumnType type);

// The rich column options (docs/provider-contract.md#column-options, the same
// on the SQL contract): every one is off by default, and a column without
// them is sent exactly as before (same JSON, same schemaHash).
enum class Merge { kNone, kSameValue };                           // `merge`
enum class LabelMissing { kKeep, kBlank, kFail };                 // `labelMissing`
enum class Total { kNone, kSum, kCount, kMin, kMax, kAvg };       // `total`
enum class Align { kDefault, kLeft, kCenter, kRight };            // `style.align`
enum class HighlightOp { kNone, kEquals, kIn, kGreater, kLess };  // `highlight.op`

// A text shown as is, or one per language ({"zh-CN": "已支付", "en": "Paid"}):
// the center picks the task's language (docs/xlsx.md#languages).
struct Text {
  std::string text{};                                              // used when by_language is empty
  std::vector<std::pair<std::string, std::string>> by_language{};  // tag → text
};

// `labels`: the label shown for one value ("PAID", "3", "true", "12.50").
struct ValueLabel {
  std::string value{};
  Text label{};
};

struct ColumnStyle {
  std::string header_fill{};  // "#RRGGBB" or ""
  std::string header_font{};  // "#RRGGBB" or ""
  Align align = Align::kDefault;
  bool wrap = false;
};

struct ColumnHighlight {
  HighlightOp op = HighlightOp::kNone;
  std::vector<std::string> values{};  // compared with the cell as written (after labels)
  std::string fill{};                 // "#RRGGBB" or ""
  std::string font{};                 // "#RRGGBB" or ""
};

// One column of an export type. `scale` matters for DECIMAL only.
// Every member has a default, so a service's {"key", "Title", ColumnType::kDate, 12}
// compiles without -Wmissing-field-initializers warnings.
struct Column {
  std::string key{};
  std::string title{};
  ColumnType type = ColumnType::kString;
  int width = 0;
  int scale = 2;
  std::string format{};  // optional number format, e.g. "#,##0.00"
  // Header levels above `title`, top first: {"收货信息"} with title "电话"
  // sends the two-level title ["收货信息", "电话"].
  std::vector<std::string> title_groups{};
  // Titles per language, each a full path (top first); when set they are
  // sent instead of title_groups/title: {{"zh-CN", {"订单", "状态"}}, {"en", {"Order", "Status"}}}.
  std::vector<std::pair<std::string, std::vector<std::string>>> titles_by_language{};
  Merge merge = Merge::kNone;
  std::string merge_within{};  // key of an earlier column whose runs bound this one's
  std::vector<ValueLabel> labels{};
  LabelMissing label_missing = LabelMissing::kKeep;
  Total total = Total::kNone;
  ColumnStyle style{};
  ColumnHighlight highlight{};
};

// [{key,title,type,width,scale?,format?, and each rich option that is set}]
// in column order.
nlohmann::json ColumnsToJson(const std::vector<Column>& columns);
// "sha256:<hex>" of the canonical column JSON; changes whenever a column does.
std::string SchemaHash(const std::vector<Column>& columns);

nlohmann::json NullValue();
nlohmann::json StringValue(std::string_view text);
nlohmann::json IntegerValue(int64_t value);  // always a decimal string
nlohmann::json BooleanValue(bool value);
// unscaled / 10^scale, e.g. (6814110, 2) -> "68141.10"; scale 0..18.
nlohmann::json DecimalValue(int64_t unscaled, int scale);
nlohmann::json DateValue(int year, int month, int day);  // "yyyy-MM-dd"
// "yyyy-MM-ddTHH:mm:ss.SSSZ" (UTC); the center shows it in the export's zone.
nlohmann::json DateTimeValue(int64_t epoch_ms);

// The texts of the string-valued encoders above, appended to `out` (what
// RowWriter writes between the quotes).
void AppendDecimalText(std::string* out, int64_t unscaled, int scale);
void AppendDateText(std::string* out, int year, int month, int day);
void AppendDateTimeText(std::string* out, int64_t epoch_ms);

// Id cursors: the cursor is the last id of the previous batch, as text.
std::string IdCursor(int64_t last_id);
// No cursor (first batch) -> 0; a malformed cursor -> nullopt (answer 400).
std::optional<int64_t> ParseIdCursor(const std::optional<std::string>& cursor);

}  // namespace export_center::sdk
