#include "task/table.h"

#include <array>
#include <charconv>
#include <cmath>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <utility>

#include "common/json_dump.h"
#include "common/utf8.h"
#include "task/column_options.h"
#include "task/language.h"
#include "task/task.h"

namespace export_center::task {
namespace {

constexpr std::array<std::pair<ColumnType, std::string_view>, 6> kTypeNames = {{
    {ColumnType::kString, "STRING"},
    {ColumnType::kInteger, "INTEGER"},
    {ColumnType::kDecimal, "DECIMAL"},
    {ColumnType::kBoolean, "BOOLEAN"},
    {ColumnType::kDate, "DATE"},
    {ColumnType::kDateTime, "DATETIME"},
}};

constexpr size_t kMaxColumns = 100;
constexpr size_t kMaxKeyBytes = 128;
constexpr size_t kMaxTitleBytes = 255;
constexpr size_t kMaxFormatBytes = 64;
constexpr int kMaxWidth = 255;
constexpr int kMaxScale = 10;
// A decimal cell is exact text, but a number with more integer digits than
// any ledger holds is a provider bug, not data.
constexpr int kMaxIntegerDigits = 30;
constexpr size_t kMaxDecimalText = 100;
constexpr int64_t kMsPerDay = 86400000;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Bytes of a value quoted in an error message: short, never a whole blob.
constexpr size_t kMaxQuotedBytes = 64;

// The value as it appears in an error message (utf8::Excerpt: valid UTF-8,
// never cut inside a character).
std::string Quote(const nlohmann::json& value) {
  return utf8::Excerpt(DumpTolerant(value), kMaxQuotedBytes);
}

// The quote is recorded on the Status (Status::QuotedValue): governance takes
// it out when the column is governed.
Status BadValue(const Column& column, const nlohmann::json& value, std::string_view why) {
  const std::string before = "column '" + utf8::Excerpt(column.key, kMaxKeyBytes) + "' (" +
                             std::string(ToString(column.type)) + "): value ";
  const std::string quoted = Quote(value);
  return InvalidArgument(before + quoted + " " + std::string(why))
      .WithQuotedValue(column.key, before.size(), quoted.size());
}

// Reads exactly `count` digits at text[*pos]; advances *pos.
std::optional<int> ReadDigits(std::string_view text, size_t* pos, int count) {
  if (*pos + count > text.size()) return std::nullopt;
  int v = 0;
  for (int i = 0; i < count; ++i) {
    char c = text[*pos + i];
    if (!IsDigit(c)) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  *pos += count;
  return v;
}

bool Expect(std::string_view text, size_t* pos, char c) {
  if (*pos >= text.size() || text[*pos] != c) return false;
  ++*pos;
  return true;
}

// "yyyy-MM-dd" at text[*pos], validated against the calendar.
std::optional<Date> ReadDate(std::string_view text, size_t* pos) {
  auto date = CivilDay::ParsePrefix(text.substr(*pos));
  if (date) *pos += 10;
  return date;
}

// Offset in minutes east of UTC: "Z", "+08:00", "+0800" or "+08".
std::optional<int> ReadOffset(std::string_view text, size_t* pos) {
  if (*pos >= text.size()) return std::nullopt;
  char c = text[*pos];
  if (c == 'Z' || c == 'z') {
    ++*pos;
    return 0;
  }
  if (c != '+' && c != '-') return std::nullopt;
  ++*pos;
  auto h = ReadDigits(text, pos, 2);
  if (!h) return std::nullopt;
  int minutes = 0;
  if (*pos < text.size()) {
    Expect(text, pos, ':');
    auto m = ReadDigits(text, pos, 2);
    if (!m) return std::nullopt;
    minutes = *m;
  }
  if (*h > 18 || minutes > 59) return std::nullopt;
  int total = *h * 60 + minutes;
  return c == '-' ? -total : total;
}

// ISO-8601 with a required offset; fractional seconds truncated to ms.
std::optional<int64_t> ParseIsoDateTime(std::string_view text) {
  size_t pos = 0;
  auto date = ReadDate(text, &pos);
  if (!date || pos >= text.size() || (text[pos] != 'T' && text[pos] != 't' && text[pos] != ' ')) {
    return std::nullopt;
  }
  ++pos;
  auto hh = ReadDigits(text, &pos, 2);
  if (!hh || !Expect(text, &pos, ':')) return std::nullopt;
  auto mi = ReadDigits(text, &pos, 2);
  if (!mi) return std::nullopt;
  int ss = 0, ms = 0;
  if (Expect(text, &pos, ':')) {
    auto s = ReadDigits(text, &pos, 2);
    if (!s) return std::nullopt;
    ss = *s;
    if (Expect(text, &pos, '.')) {
      int count = 0;
      for (; pos < text.size() && IsDigit(text[pos]); ++pos, ++count) {
        if (count < 3) ms = ms * 10 + (text[pos] - '0');
      }
      if (count == 0 || count > 9) return std::nullopt;
      for (; count < 3; ++count) ms *= 10;
    }
  }
  if (*hh > 23 || *mi > 59 || ss > 59) return std::nullopt;
  auto offset = ReadOffset(text, &pos);
  if (!offset || pos != text.size()) return std::nullopt;
  int64_t local_ms = date->days() * kMsPerDay + ((*hh * 60LL + *mi) * 60 + ss) * 1000 + ms;
  return local_ms - *offset * 60000LL;
}

// Adds one to a string of decimal digits ("" counts as 0).
void IncrementDigits(std::string* digits) {
  for (size_t i = digits->size(); i-- > 0;) {
    if ((*digits)[i] != '9') {
      ++(*digits)[i];
      return;
    }
    (*digits)[i] = '0';
  }
  digits->insert(digits->begin(), '1');
}

// Shortest text that round-trips the double, so 68141.1 stays "68141.1"
// instead of exposing the binary value 68141.100000000006.
std::string ShortestText(double d) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, res.ptr);
}

StatusOr<CellValue> ParseInteger(const Column& column, const nlohmann::json& value) {
  if (value.is_number_integer() && !value.is_number_unsigned()) return value.get<int64_t>();
  if (value.is_number_unsigned()) {
    uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return BadValue(column, value, "exceeds 64 bits");
    return static_cast<int64_t>(u);
  }
  if (value.is_number_float()) {
    // Some serializers write 5 as 5.0; accept only exactly integral values
    // that a double still represents exactly.
    double d = value.get<double>();
    if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) <= 9007199254740992.0) {
      return static_cast<int64_t>(d);
    }
    return BadValue(column, value, "is not an integer");
  }
  if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    int64_t v = 0;
    const char* begin = s.data();
    const char* end = s.data() + s.size();
    if (!s.empty() && s[0] != '+') {
      auto res = std::from_chars(begin, end, v);
      if (res.ec == std::errc() && res.ptr == end) return v;
    }
    return BadValue(column, value, "is not a 64-bit integer");
  }
  return BadValue(column, value, "is not an integer");
}

StatusOr<CellValue> ParseDecimalValue(const Column& column, const nlohmann::json& value) {
  std::string text;
  if (value.is_string()) {
    text = value.get<std::string>();
  } else if (value.is_number_integer() && !value.is_number_unsigned()) {
    text = std::to_string(value.get<int64_t>());
  } else if (value.is_number_unsigned()) {
    text = std::to_string(value.get<uint64_t>());
  } else if (value.is_number_float() && std::isfinite(value.get<double>())) {
    text = ShortestText(value.get<double>());
  } else {
    return BadValue(column, value, "is not a decimal");
  }
  auto decimal = ParseDecimal(text, column.scale);
  if (!decimal.ok()) return BadValue(column, value, "is not a decimal");
  return *decimal;
}

StatusOr<CellValue> ParseDateTimeValue(const Column& column, const nlohmann::json& value) {
  // Years 0001..9999: what every writer and Excel can show.
  static const int64_t kMin = civil::DaysFromYmd(CivilDay::kMinYear, 1, 1) * kMsPerDay;
  static const int64_t kMax = civil::DaysFromYmd(CivilDay::kMaxYear + 1, 1, 1) * kMsPerDay - 1;
  std::optional<int64_t> ms;
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    ms = value.get<int64_t>();
  } else if (value.is_number_unsigned() && value.get<uint64_t>() <= static_cast<uint64_t>(kMax)) {
    ms = static_cast<int64_t>(value.get<uint64_t>());
  } else if (value.is_string()) {
    ms = ParseIsoDateTime(value.get_ref<const std::string&>());
  }
  if (!ms || *ms < kMin || *ms > kMax) {
    return BadValue(column, value, "is not an ISO-8601 date-time with offset or epoch ms");
  }
  return DateTime{*ms};
}

// ---- the rich options on the wire (docs/xlsx.md#rich-columns) ----

using nlohmann::json;

// A field that is absent or null is "not given".
const json* Field(const json& object, const char* name) {
  auto it = object.find(name);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

// The entry of a language object {tag: value} the task's languages choose.
StatusOr<const json*> LanguageEntry(const std::string& where, const std::string& what,
                                    const json& object, const Languages& languages) {
  if (object.empty()) return InvalidArgument(where + ": " + what + " is an empty language object");
  if (object.size() > kMaxLanguages) {
    return InvalidArgument(where + ": " + what + " has " + std::to_string(object.size()) +
                           " languages, at most " + std::to_string(kMaxLanguages));
  }
  std::vector<std::string_view> tags;
  tags.reserve(object.size());
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (!IsLocaleTag(it.key())) {
      return InvalidArgument(where + ": " + what + " has '" +
                             utf8::Excerpt(it.key(), kMaxQuotedBytes) +
                             "', which is not a language tag");
    }
    tags.push_back(it.key());
  }
  auto chosen = object.begin();
  std::advance(chosen, static_cast<std::ptrdiff_t>(ChooseLanguage(tags, languages)));
  return &*chosen;
}

// `title`: a string, an array of 1..5 strings (top level first), or a
// language object whose values are either.
Status ReadTitle(const std::string& where, const json& title, const Languages& languages,
                 Column* c) {
  const json* value = &title;
  if (title.is_object()) {
    EC_ASSIGN_OR_RETURN(value, LanguageEntry(where, "title", title, languages));
  }
  if (value->is_string()) {
    c->title = value->get<std::string>();
    return Status::Ok();
  }
  if (!value->is_array()) {
    return InvalidArgument(where +
                           ": title is not a string, an array of strings or a language object");
  }
  if (value->empty()) return InvalidArgument(where + ": title has no level");
  if (value->size() > static_cast<size_t>(kMaxTitleDepth)) {
    return InvalidArgument(where + ": title has " + std::to_string(value->size()) +
                           " levels, at most 5");
  }
  for (size_t i = 0; i < value->size(); ++i) {
    const json& level = (*value)[i];
    if (!level.is_string()) {
      return InvalidArgument(where + ": title level " + std::to_string(i + 1) + " is not a string");
    }
    if (i + 1 < value->size()) {
      c->title_groups.push_back(level.get<std::string>());
    } else {
      c->title = level.get<std::string>();
    }
  }
  return Status::Ok();
}

// A label or a highlight value: a string or a language object of strings;
// with `numbers`, also a JSON number (its text).
StatusOr<std::string> ReadText(const std::string& where, const std::string& what, const json& value,
                               const Languages& languages, bool numbers) {
  const json* v = &value;
  if (value.is_object()) {
    EC_ASSIGN_OR_RETURN(v, LanguageEntry(where, what, value, languages));
  }
  if (v->is_string()) return v->get<std::string>();
  if (numbers && v != &value) numbers = false;  // a language object holds texts only
  if (numbers && (v->is_number_integer() || v->is_number_unsigned())) return v->dump();
  if (numbers && v->is_number_float()) return ShortestText(v->get<double>());
  return InvalidArgument(where + ": " + what +
                         (numbers ? " is not a string, a number or a language object"
                                  : " is not a string or a language object"));
}

StatusOr<std::string> ReadString(const std::string& where, const json& object, const char* name) {
  const json* v = Field(object, name);
  if (v == nullptr) return std::string();
  if (!v->is_string()) return InvalidArgument(where + ": " + name + " is not a string");
  return v->get<std::string>();
}

// An enum field: its name parsed by `parse`; unknown names are refused with
// the names allowed.
template <typename E, typename Parse>
Status ReadEnum(const std::string& where, const json& object, const char* name, Parse parse,
                const char* allowed, E* out) {
  EC_ASSIGN_OR_RETURN(std::string text, ReadString(where, object, name));
  if (text.empty() && Field(object, name) == nullptr) return Status::Ok();
  std::optional<E> parsed = parse(text);
  if (!parsed) {
    return InvalidArgument(where + ": " + name + " '" + utf8::Excerpt(text, kMaxQuotedBytes) +
                           "' is not one of " + allowed);
  }
  *out = *parsed;
  return Status::Ok();
}

std::optional<Align> ParseAlign(std::string_view text) {
  if (text == "LEFT") return Align::kLeft;
  if (text == "CENTER") return Align::kCenter;
  if (text == "RIGHT") return Align::kRight;
  return std::nullopt;
}

std::optional<HighlightOp> ParseHighlightOp(std::string_view text) {
  if (text == "EQUALS") return HighlightOp::kEquals;
  if (text == "IN") return HighlightOp::kIn;
  if (text == "GREATER") return HighlightOp::kGreater;
  if (text == "LESS") return HighlightOp::kLess;
  return std::nullopt;
}

Status ReadLabels(const std::string& where, const json& labels, const Languages& languages,
                  Column* c) {
  if (!labels.is_object()) return InvalidArgument(where + ": labels is not an object");
  // Refused before anything is copied; ValidateColumnOptions checks the rest.
  if (labels.size() > kMaxLabelsPerColumn) {
    return InvalidArgument(where + ": " + std::to_string(labels.size()) +
                           " labels exceed the limit of 1000");
  }
  c->labels.reserve(labels.size());
  for (auto it = labels.begin(); it != labels.end(); ++it) {
    const std::string what = "the label of '" + utf8::Excerpt(it.key(), kMaxQuotedBytes) + "'";
    EC_ASSIGN_OR_RETURN(std::string label, ReadText(where, what, it.value(), languages, false));
    c->labels.emplace_back(it.key(), std::move(label));
  }
  return Status::Ok();
}

Status ReadStyle(const std::string& where, const json& style, Column* c) {
  if (!style.is_object()) return InvalidArgument(where + ": style is not an object");
  EC_ASSIGN_OR_RETURN(c->style.header_fill, ReadString(where, style, "headerFill"));
  EC_ASSIGN_OR_RETURN(c->style.header_font, ReadString(where, style, "headerFont"));
  EC_RETURN_IF_ERROR(
      ReadEnum(where, style, "align", ParseAlign, "LEFT, CENTER, RIGHT", &c->style.align));
  if (const json* wrap = Field(style, "wrap")) {
    if (!wrap->is_boolean()) return InvalidArgument(where + ": wrap is not true or false");
    c->style.wrap = wrap->get<bool>();
  }
  return Status::Ok();
}

Status ReadHighlight(const std::string& where, const json& highlight, const Languages& languages,
                     Column* c) {
  if (!highlight.is_object()) return InvalidArgument(where + ": highlight is not an object");
  Highlight& h = c->highlight;
  EC_RETURN_IF_ERROR(
      ReadEnum(where, highlight, "op", ParseHighlightOp, "EQUALS, IN, GREATER, LESS", &h.op));
  if (h.op == HighlightOp::kNone) return InvalidArgument(where + ": highlight lacks an op");
  EC_ASSIGN_OR_RETURN(h.fill, ReadString(where, highlight, "fill"));
  EC_ASSIGN_OR_RETURN(h.font, ReadString(where, highlight, "font"));
  const json* values = Field(highlight, "values");
  if (values == nullptr) return Status::Ok();  // ValidateColumnOptions: "has no value"
  if (!values->is_array()) return InvalidArgument(where + ": highlight values is not an array");
  if (values->size() > kMaxHighlightValues) {
    return InvalidArgument(where + ": highlight has over 50 values");
  }
  for (const json& v : *values) {
    EC_ASSIGN_OR_RETURN(std::string text, ReadText(where, "a highlight value", v, languages, true));
    h.values.push_back(std::move(text));
  }
  return Status::Ok();
}

// Every rich option of one wire column (all absent: a plain column).
Status ReadColumnOptions(const std::string& where, const json& j, const Languages& languages,
                         Column* c) {
  EC_RETURN_IF_ERROR(ReadEnum(where, j, "merge", ParseMergeMode, "SAME_VALUE", &c->merge));
  EC_ASSIGN_OR_RETURN(c->merge_within, ReadString(where, j, "mergeWithin"));
  if (const json* labels = Field(j, "labels")) {
    EC_RETURN_IF_ERROR(ReadLabels(where, *labels, languages, c));
  }
  EC_RETURN_IF_ERROR(ReadEnum(where, j, "labelMissing", ParseLabelMissing, "KEEP, BLANK, FAIL",
                              &c->label_missing));
  EC_RETURN_IF_ERROR(
      ReadEnum(where, j, "total", ParseTotalKind, "SUM, COUNT, MIN, MAX, AVG", &c->total));
  if (const json* style = Field(j, "style")) {
    EC_RETURN_IF_ERROR(ReadStyle(where, *style, c));
  }
  if (const json* highlight = Field(j, "highlight")) {
    EC_RETURN_IF_ERROR(ReadHighlight(where, *highlight, languages, c));
  }
  return Status::Ok();
}

}  // namespace

std::string_view ToString(ColumnType type) {
  for (const auto& [t, name] : kTypeNames) {
    if (t == type) return name;
  }
  return "UNKNOWN";
}

std::optional<ColumnType> ParseColumnType(std::string_view text) {
  for (const auto& [t, name] : kTypeNames) {
    if (name == text) return t;
  }
  return std::nullopt;
}

Status ValidateColumns(const std::vector<Column>& columns) {
  if (columns.empty()) return InvalidArgument("no columns");
  if (columns.size() > kMaxColumns) {
    return InvalidArgument(std::to_string(columns.size()) + " columns exceed the limit of 100");
  }
  std::set<std::string_view> keys;
  for (size_t i = 0; i < columns.size(); ++i) {
    const Column& c = columns[i];
    std::string where = "column " + std::to_string(i + 1);
    if (c.key.empty()) return InvalidArgument(where + " has an empty key");
    if (c.key.size() > kMaxKeyBytes) return InvalidArgument(where + " has a key over 128 bytes");
    where += " '" + utf8::Excerpt(c.key, kMaxKeyBytes) + "'";
    if (!keys.insert(c.key).second) return InvalidArgument(where + " is duplicated");
    if (c.title.size() > kMaxTitleBytes)
      return InvalidArgument(where + " has a title over 255 bytes");
    if (!ParseColumnType(ToString(c.type))) return InvalidArgument(where + " has an unknown type");
    if (c.width < 0 || c.width > kMaxWidth)
      return InvalidArgument(where + ": width must be 0..255");
    if (c.scale < 0 || c.scale > kMaxScale) return InvalidArgument(where + ": scale must be 0..10");
    if (c.format.size() > kMaxFormatBytes) return InvalidArgument(where + ": format over 64 bytes");
  }
  return ValidateColumnOptions(columns);
}

StatusOr<Decimal> ParseDecimal(std::string_view text, int scale) {
  auto bad = [&] {
    return InvalidArgument("'" + utf8::Excerpt(text, kMaxQuotedBytes) + "' is not a decimal");
  };
  if (scale < 0 || scale > 18) return InvalidArgument("decimal scale must be 0..18");
  if (text.empty() || text.size() > kMaxDecimalText) return bad();
  size_t i = 0;
  bool negative = false;
  if (text[i] == '-') {
    negative = true;
    ++i;
  }
  std::string digits;
  int int_digits = 0;
  for (; i < text.size() && IsDigit(text[i]); ++i, ++int_digits) digits += text[i];
  if (int_digits == 0) return bad();
  if (i < text.size() && text[i] == '.') {
    ++i;
    size_t start = i;
    for (; i < text.size() && IsDigit(text[i]); ++i) digits += text[i];
    if (i == start) return bad();
  }
  int exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = i < text.size() && text[i] == '-';
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    size_t start = i;
    for (; i < text.size() && IsDigit(text[i]) && i - start < 4; ++i) {
      exponent = exponent * 10 + (text[i] - '0');
    }
    if (i == start) return bad();
    if (exp_negative) exponent = -exponent;
  }
  if (i != text.size()) return bad();

  // value = 0.<digits> * 10^point once leading zeros are gone.
  int point = int_digits + exponent;
  size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) {
    digits.clear();
  } else {
    digits.erase(0, first);
    point -= static_cast<int>(first);
  }
  if (!digits.empty() && point > kMaxIntegerDigits) return bad();

  // Keep point+scale digits as the unscaled integer; the next digit rounds
  // half-up (away from zero, like Java's RoundingMode.HALF_UP).
  std::string unscaled;
  int keep = digits.empty() ? 0 : point + scale;
  if (keep >= 0) {
    char next = '0';
    if (static_cast<size_t>(keep) < digits.size()) {
      unscaled = digits.substr(0, keep);
      next = digits[keep];
    } else {
      unscaled = digits + std::string(keep - digits.size(), '0');
    }
    if (next >= '5') IncrementDigits(&unscaled);
  }
  if (unscaled.size() < static_cast<size_t>(scale) + 1) {
    unscaled.insert(0, scale + 1 - unscaled.size(), '0');
  }
  std::string int_part = unscaled.substr(0, unscaled.size() - scale);
  std::string frac_part = unscaled.substr(unscaled.size() - scale);
  int_part.erase(0, std::min(int_part.find_first_not_of('0'), int_part.size() - 1));
  bool zero = unscaled.find_first_not_of('0') == std::string::npos;
  Decimal out;
  out.digits = (negative && !zero ? "-" : "") + int_part + (scale > 0 ? "." + frac_part : "");
  return out;
}

StatusOr<CellValue> ParseWireValue(const Column& column, const nlohmann::json& value) {
  if (value.is_null()) return CellValue{};
  switch (column.type) {
    case ColumnType::kString:
      // Strict: a number sent for a text column usually means the provider's
      // column list and rows disagree, which must not pass silently.
      if (!value.is_string()) return BadValue(column, value, "is not a JSON string");
      return CellValue{value.get<std::string>()};
    case ColumnType::kInteger:
      return ParseInteger(column, value);
    case ColumnType::kDecimal:
      return ParseDecimalValue(column, value);
    case ColumnType::kBoolean:
      if (!value.is_boolean()) return BadValue(column, value, "is not true or false");
      return CellValue{value.get<bool>()};
    case ColumnType::kDate: {
      if (value.is_string()) {
        const auto& s = value.get_ref<const std::string&>();
        size_t pos = 0;
        auto date = ReadDate(s, &pos);
        if (date && pos == s.size()) return CellValue{*date};
      }
      return BadValue(column, value, "is not a date yyyy-MM-dd");
    }
    case ColumnType::kDateTime:
      return ParseDateTimeValue(column, value);
  }
  return BadValue(column, value, "has an unknown column type");
}

StatusOr<std::vector<Column>> ParseWireColumns(const nlohmann::json& columns,
                                               std::string_view locale,
                                               std::string_view default_language) {
  const Languages languages{std::string(locale), std::string(default_language)};
  if (!columns.is_array()) return InvalidArgument("columns is not an array");
  if (columns.size() > kMaxColumns) {
    return InvalidArgument(std::to_string(columns.size()) + " columns exceed the limit of 100");
  }
  std::vector<Column> out;
  for (size_t i = 0; i < columns.size(); ++i) {
    const auto& j = columns[i];
    std::string where = "column " + std::to_string(i + 1);
    if (!j.is_object()) return InvalidArgument(where + " is not an object");
    Column c;
    auto key = j.find("key");
    if (key == j.end() || !key->is_string()) return InvalidArgument(where + " lacks a string key");
    c.key = key->get<std::string>();
    where += " '" + utf8::Excerpt(c.key, kMaxKeyBytes) + "'";
    auto title = j.find("title");
    if (title != j.end() && !title->is_null()) {
      EC_RETURN_IF_ERROR(ReadTitle(where, *title, languages, &c));
    } else {
      c.title = c.key;
    }
    auto type = j.find("type");
    if (type == j.end() || !type->is_string()) return InvalidArgument(where + " lacks a type");
    auto parsed = ParseColumnType(type->get<std::string>());
    if (!parsed) return InvalidArgument(where + " has unknown type " + Quote(*type));
    c.type = *parsed;
    for (auto [name, field, limit] :
         {std::tuple{"width", &c.width, kMaxWidth}, std::tuple{"scale", &c.scale, kMaxScale}}) {
      auto it = j.find(name);
      if (it == j.end() || it->is_null()) continue;
      if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > limit) {
        return InvalidArgument(where + ": " + name + " must be an integer 0.." +
                               std::to_string(limit));
      }
      *field = it->get<int>();
    }
    auto format = j.find("format");
    if (format != j.end() && !format->is_null()) {
      if (!format->is_string()) return InvalidArgument(where + ": format is not a string");
      c.format = format->get<std::string>();
    }
    EC_RETURN_IF_ERROR(ReadColumnOptions(where, j, languages, &c));
    out.push_back(std::move(c));
  }
  EC_RETURN_IF_ERROR(ValidateColumns(out));
  return out;
}

}  // namespace export_center::task
