#include "sdk/wire_values.h"

#include <openssl/sha.h>

#include <charconv>
#include <cstdio>

namespace export_center::sdk {
namespace {

// Civil date from days since 1970-01-01 (Howard Hinnant's civil_from_days).
void CivilFromDays(int64_t z, int* year, int* month, int* day) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  *month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *year = static_cast<int>(yoe + era * 400 + (*month <= 2 ? 1 : 0));
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

}  // namespace

std::string_view ToString(ColumnType type) {
  switch (type) {
    case ColumnType::kString:
      return "STRING";
    case ColumnType::kInteger:
      return "INTEGER";
    case ColumnType::kDecimal:
      return "DECIMAL";
    case ColumnType::kBoolean:
      return "BOOLEAN";
    case ColumnType::kDate:
      return "DATE";
    case ColumnType::kDateTime:
      return "DATETIME";
  }
  return "STRING";
}

namespace {

nlohmann::json TextToJson(const Text& text) {
  if (text.by_language.empty()) return text.text;
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [tag, shown] : text.by_language) out[tag] = shown;
  return out;
}

nlohmann::json TitleToJson(const Column& c) {
  auto path = [](const std::vector<std::string>& groups, const std::string& last) {
    if (groups.empty()) return nlohmann::json(last);
    nlohmann::json levels = groups;
    levels.push_back(last);
    return levels;
  };
  if (c.titles_by_language.empty()) return path(c.title_groups, c.title);
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [tag, levels] : c.titles_by_language) {
    out[tag] = levels.size() == 1 ? nlohmann::json(levels[0]) : nlohmann::json(levels);
  }
  return out;
}

const char* MergeName(Merge m) { return m == Merge::kSameValue ? "SAME_VALUE" : "NONE"; }

const char* MissingName(LabelMissing m) {
  switch (m) {
    case LabelMissing::kBlank:
      return "BLANK";
    case LabelMissing::kFail:
      return "FAIL";
    case LabelMissing::kKeep:
      break;
  }
  return "KEEP";
}

const char* TotalName(Total t) {
  switch (t) {
    case Total::kSum:
      return "SUM";
    case Total::kCount:
      return "COUNT";
    case Total::kMin:
      return "MIN";
    case Total::kMax:
      return "MAX";
    case Total::kAvg:
      return "AVG";
    case Total::kNone:
      break;
  }
  return "NONE";
}

const char* AlignName(Align a) {
  switch (a) {
    case Align::kLeft:
      return "LEFT";
    case Align::kCenter:
      return "CENTER";
    case Align::kRight:
      return "RIGHT";
    case Align::kDefault:
      break;
  }
  return "";
}

const char* OpName(HighlightOp op) {
  switch (op) {
    case HighlightOp::kEquals:
      return "EQUALS";
    case HighlightOp::kIn:
      return "IN";
    case HighlightOp::kGreater:
      return "GREATER";
    case HighlightOp::kLess:
      return "LESS";
    case HighlightOp::kNone:
      break;
  }
  return "";
}

// Only the options that are set: a plain column's JSON, and so its
// schemaHash, stays what it was before these options existed.
void AddRichOptions(const Column& c, nlohmann::json* j) {
  if (c.merge != Merge::kNone) (*j)["merge"] = MergeName(c.merge);
  if (!c.merge_within.empty()) (*j)["mergeWithin"] = c.merge_within;
  if (!c.labels.empty()) {
    nlohmann::json labels = nlohmann::json::object();
    for (const ValueLabel& l : c.labels) labels[l.value] = TextToJson(l.label);
    (*j)["labels"] = std::move(labels);
  }
  if (c.label_missing != LabelMissing::kKeep) (*j)["labelMissing"] = MissingName(c.label_missing);
  if (c.total != Total::kNone) (*j)["total"] = TotalName(c.total);
  const ColumnStyle& st = c.style;
  if (!st.header_fill.empty() || !st.header_font.empty() || st.align != Align::kDefault ||
      st.wrap) {
    nlohmann::json style = nlohmann::json::object();
    if (!st.header_fill.empty()) style["headerFill"] = st.header_fill;
    if (!st.header_font.empty()) style["headerFont"] = st.header_font;
    if (st.align != Align::kDefault) style["align"] = AlignName(st.align);
    if (st.wrap) style["wrap"] = true;
    (*j)["style"] = std::move(style);
  }
  const ColumnHighlight& h = c.highlight;
  if (h.op != HighlightOp::kNone) {
    nlohmann::json highlight = {{"op", OpName(h.op)}, {"values", h.values}};
    if (!h.fill.empty()) highlight["fill"] = h.fill;
    if (!h.font.empty()) highlight["font"] = h.font;
    (*j)["highlight"] = std::move(highlight);
  }
}

}  // namespace

nlohmann::json ColumnsToJson(const std::vector<Column>& columns) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : columns) {
    nlohmann::json j = {
        {"key", c.key}, {"title", TitleToJson(c)}, {"type", ToString(c.type)}, {"width", c.width}};
    if (c.type == ColumnType::kDecimal) j["scale"] = c.scale;
    if (!c.format.empty()) j["format"] = c.format;
    AddRichOptions(c, &j);
    out.push_back(std::move(j));
  }
  return out;
}

std::string SchemaHash(const std::vector<Column>& columns) {
  // nlohmann objects are key-sorted, so the dump is canonical.
  std::string text =
      ColumnsToJson(columns).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  std::string out = "sha256:";
  char hex[3];
  for (unsigned char b : digest) {
    std::snprintf(hex, sizeof hex, "%02x", b);
    out += hex;
  }
  return out;
}

nlohmann::json NullValue() { return nullptr; }
nlohmann::json StringValue(std::string_view text) { return std::string(text); }
nlohmann::json IntegerValue(int64_t value) { return std::to_string(value); }
nlohmann::json BooleanValue(bool value) { return value; }

// Digits are written by hand: snprintf costs more than the rest of a cell.
void AppendDigits(std::string* out, int64_t value, int width) {
  if (value < 0) {
    out->push_back('-');
    value = -value;
  }
  char buf[24];
  int n = 0;
  do {
    buf[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0 || n < width);
  while (n > 0) out->push_back(buf[--n]);
}

void AppendDecimalText(std::string* out, int64_t unscaled, int scale) {
  if (scale < 0) scale = 0;
  if (scale > 18) scale = 18;
  bool negative = unscaled < 0;
  // Via unsigned so INT64_MIN negates safely.
  uint64_t magnitude =
      negative ? 0 - static_cast<uint64_t>(unscaled) : static_cast<uint64_t>(unscaled);
  char buf[24];
  auto end = std::to_chars(buf, buf + sizeof buf, magnitude).ptr;
  std::string_view digits(buf, static_cast<size_t>(end - buf));
  const size_t width = static_cast<size_t>(scale) + 1;
  const size_t zeros = digits.size() < width ? width - digits.size() : 0;
  const size_t total = digits.size() + zeros;
  const size_t int_len = total - static_cast<size_t>(scale);
  if (negative) out->push_back('-');
  for (size_t i = 0; i < total; ++i) {
    if (i == int_len) out->push_back('.');
    out->push_back(i < zeros ? '0' : digits[i - zeros]);
  }
}

void AppendDateText(std::string* out, int year, int month, int day) {
  AppendDigits(out, year, 4);
  out->push_back('-');
  AppendDigits(out, month, 2);
  out->push_back('-');
  AppendDigits(out, day, 2);
}

void AppendDateTimeText(std::string* out, int64_t epoch_ms) {
  int64_t days = FloorDiv(epoch_ms, 86400000);
  int64_t ms_of_day = epoch_ms - days * 86400000;
  int y, m, d;
  CivilFromDays(days, &y, &m, &d);
  AppendDateText(out, y, m, d);
  out->push_back('T');
  AppendDigits(out, ms_of_day / 3600000, 2);
  out->push_back(':');
  AppendDigits(out, ms_of_day / 60000 % 60, 2);
  out->push_back(':');
  AppendDigits(out, ms_of_day / 1000 % 60, 2);
  out->push_back('.');
  AppendDigits(out, ms_of_day % 1000, 3);
  out->push_back('Z');
}

nlohmann::json DecimalValue(int64_t unscaled, int scale) {
  std::string out;
  AppendDecimalText(&out, unscaled, scale);
  return out;
}

nlohmann::json DateValue(int year, int month, int day) {
  std::string out;
  AppendDateText(&out, year, month, day);
  return out;
}

nlohmann::json DateTimeValue(int64_t epoch_ms) {
  std::string out;
  AppendDateTimeText(&out, epoch_ms);
  return out;
}

std::string IdCursor(int64_t last_id) { return std::to_string(last_id); }

std::optional<int64_t> ParseIdCursor(const std::optional<std::string>& cursor) {
  if (!cursor) return 0;
  const std::string& s = *cursor;
  int64_t v = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || s.size() > 19 || res.ec != std::errc() || res.ptr != s.data() + s.size() ||
      v < 0) {
    return std::nullopt;
  }
  return v;
}

}  // namespace export_center::sdk
