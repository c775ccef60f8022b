#include "source/sql/database_value.h"

#include <cctz/civil_time.h>
#include <cctz/time_zone.h>

#include <cctype>
#include <charconv>
#include <map>

#include "common/ascii.h"
#include "common/civil_day.h"
#include "common/utf8.h"

namespace export_center::source {
namespace {

// Digits at text[pos, pos+n) as an int, or -1.
int Digits(std::string_view text, size_t pos, size_t n) {
  if (pos + n > text.size()) return -1;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return -1;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

// "yyyy-MM-dd[ T]HH:mm[:ss[.fff…]][Z|±hh[[:]mm]]", or bare "yyyy-MM-dd";
// without an offset the civil time is read in `zone`.
bool ParseDateTime(std::string_view text, const cctz::time_zone& zone, int64_t* epoch_ms) {
  auto date = CivilDay::ParsePrefix(text);
  if (!date) return false;
  int h = 0, mi = 0, s = 0, ms = 0;
  size_t pos = 10;
  if (pos < text.size()) {
    if (text[pos] != ' ' && text[pos] != 'T') return false;
    h = Digits(text, pos + 1, 2);
    mi = Digits(text, pos + 4, 2);
    if (h < 0 || mi < 0 || text.size() < pos + 6 || text[pos + 3] != ':') return false;
    pos += 6;
    if (pos < text.size() && text[pos] == ':') {
      s = Digits(text, pos + 1, 2);
      if (s < 0) return false;
      pos += 3;
    }
    if (pos < text.size() && text[pos] == '.') {
      size_t start = ++pos;
      while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
      std::string frac(text.substr(start, pos - start));
      frac = (frac + "000").substr(0, 3);
      ms = Digits(frac, 0, 3);
    }
  }
  std::optional<int> offset_s;
  if (pos < text.size()) {
    char sign = text[pos];
    if (sign == 'Z' && pos + 1 == text.size()) {
      offset_s = 0;
    } else if (sign == '+' || sign == '-') {
      int oh = Digits(text, pos + 1, 2), om = 0;
      size_t rest = pos + 3;
      if (rest < text.size() && text[rest] == ':') ++rest;
      if (rest < text.size()) om = Digits(text, rest, 2), rest += 2;
      if (oh < 0 || om < 0 || rest != text.size()) return false;
      offset_s = (sign == '-' ? -1 : 1) * (oh * 3600 + om * 60);
    } else {
      return false;
    }
  }
  int64_t seconds = 0;
  if (offset_s) {
    seconds = date->days() * 86400 + h * 3600 + mi * 60 + s - *offset_s;
  } else {
    auto tp =
        zone.lookup(cctz::civil_second(date->year(), date->month(), date->day(), h, mi, s)).pre;
    seconds = std::chrono::duration_cast<std::chrono::seconds>(tp.time_since_epoch()).count();
  }
  *epoch_ms = seconds * 1000 + ms;
  return true;
}

// Caches loaded zones: cctz loads tzdata from disk each time otherwise.
const cctz::time_zone& Zone(const std::string& name) {
  thread_local std::map<std::string, cctz::time_zone> zones;
  auto it = zones.find(name);
  if (it == zones.end()) {
    cctz::time_zone tz;
    if (!cctz::load_time_zone(name, &tz)) tz = cctz::utc_time_zone();
    it = zones.emplace(name, tz).first;
  }
  return it->second;
}

// Bytes of a value quoted in an error message, and of a column key.
constexpr size_t kMaxQuotedBytes = 64;
constexpr size_t kMaxKeyBytes = 128;

// The replica's text is quoted through utf8::Excerpt: it may be any bytes,
// and the message is stored and sent as JSON.
// The quote is recorded on the Status (Status::QuotedValue): governance takes
// it out when the column is governed.
Status BadValue(const task::Column& column, std::string_view text) {
  const std::string before = "column " + utf8::Excerpt(column.key, kMaxKeyBytes) + ": value ";
  const std::string quoted = "\"" + utf8::Excerpt(text, kMaxQuotedBytes) + "\"";
  return InvalidArgument(before + quoted + " is not a " + std::string(task::ToString(column.type)))
      .WithQuotedValue(column.key, before.size(), quoted.size());
}

}  // namespace

// Called for every integer and DATETIME cell of an export: from_chars, no
// copy and no exception for text that is not a number.
bool ParseDatabaseInt(std::string_view text, int64_t* out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  const char* end = text.data() + text.size();
  int64_t v = 0;
  auto [used, error] = std::from_chars(text.data(), end, v);
  if (error != std::errc() || used != end || text.empty()) return false;
  *out = v;
  return true;
}

StatusOr<task::CellValue> ParseDatabaseValue(const task::Column& column,
                                             const std::optional<std::string>& text,
                                             const std::string& timezone) {
  if (!text) return task::CellValue{};
  const std::string& t = *text;
  switch (column.type) {
    case task::ColumnType::kString:
      return task::CellValue{t};
    case task::ColumnType::kInteger: {
      int64_t v = 0;
      if (ParseDatabaseInt(t, &v)) return task::CellValue{v};
      // A whole number printed as a decimal ("12.00", numeric columns).
      auto d = task::ParseDecimal(t, 0);
      if (d.ok() && ParseDatabaseInt(d->digits, &v) &&
          task::ParseDecimal(t, 10)->digits == task::ParseDecimal(d->digits, 10)->digits) {
        return task::CellValue{v};
      }
      return BadValue(column, t);
    }
    case task::ColumnType::kDecimal: {
      auto d = task::ParseDecimal(t, column.scale);
      if (!d.ok()) return BadValue(column, t);
      return task::CellValue{*d};
    }
    case task::ColumnType::kBoolean: {
      std::string l = ToLowerAscii(t);
      if (l == "1" || l == "t" || l == "true") return task::CellValue{true};
      if (l == "0" || l == "f" || l == "false") return task::CellValue{false};
      return BadValue(column, t);
    }
    case task::ColumnType::kDate: {
      // A DATE, or a DATETIME's text read as its day.
      auto d = CivilDay::ParsePrefix(t);
      if (!d) return BadValue(column, t);
      return task::CellValue{*d};
    }
    case task::ColumnType::kDateTime: {
      int64_t ms = 0;
      if (ParseDatabaseInt(t, &ms)) return task::CellValue{task::DateTime{ms}};  // epoch ms
      if (!ParseDateTime(t, Zone(timezone), &ms)) return BadValue(column, t);
      return task::CellValue{task::DateTime{ms}};
    }
  }
  return BadValue(column, t);
}

}  // namespace export_center::source
