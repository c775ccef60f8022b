#include "render/xlsx_cells.h"

#include <charconv>
#include <variant>

#include "common/utf8.h"

namespace export_center::render::internal {
namespace {

// Same calendar limits as XlsxWriter: Excel serials are right from
// 1900-03-01 to 9999-12-31; outside that a date is ISO text.
constexpr int64_t kSerialOf1970 = 25569;
constexpr int64_t kFirstSerialDay = 61 - kSerialOf1970;
constexpr int64_t kLastSerialDay = 2958465 - kSerialOf1970;

bool IsWhitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void OpenCell(std::string_view ref, std::string_view style_attr, std::string* out) {
  out->append("<c r=\"");
  out->append(ref);
  out->push_back('"');
  out->append(style_attr);
}

void AppendNumber(std::string_view ref, std::string_view style_attr, std::string_view number,
                  std::string* out) {
  OpenCell(ref, style_attr, out);
  out->append("><v>");
  out->append(number);
  out->append("</v></c>");
}

}  // namespace

void AppendXmlText(std::string_view text, std::string* out) {
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    std::string_view rep;
    switch (text[i]) {
      case '&':
        rep = "&amp;";
        break;
      case '<':
        rep = "&lt;";
        break;
      case '>':
        rep = "&gt;";
        break;
      case '\r':
        rep = "&#13;";
        break;
      default:
        continue;
    }
    out->append(text.substr(start, i - start));
    out->append(rep);
    start = i + 1;
  }
  out->append(text.substr(start));
}

bool IsDecimalText(std::string_view s) {
  size_t i = (!s.empty() && s[0] == '-') ? 1 : 0;
  const size_t int_start = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == int_start) return false;
  if (i == s.size()) return true;
  if (s[i] != '.' || i + 1 == s.size()) return false;
  for (++i; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

void AppendInlineStringBody(std::string_view text, std::string* scratch, int* truncated,
                            std::string* out) {
  const std::string_view clean = CleanText(text, scratch);
  const bool guard = NeedsFormulaGuard(clean);
  const std::string_view cut = utf8::TruncateUtf16Units(clean, kMaxCellUnits - guard);
  if (cut.size() < clean.size()) ++*truncated;
  const bool preserve = !cut.empty() && (IsWhitespace(cut.front()) || IsWhitespace(cut.back()));
  out->append(preserve ? " t=\"inlineStr\"><is><t xml:space=\"preserve\">"
                       : " t=\"inlineStr\"><is><t>");
  if (guard) out->push_back('\'');
  AppendXmlText(cut, out);
  out->append("</t></is></c>");
}

Status AppendTypedCell(std::string_view ref, std::string_view style_attr,
                       const task::CellValue& value, const task::Column& column, LocalClock* clock,
                       std::string* scratch, int* truncated, std::string* out) {
  char buf[40];
  if (const auto* s = std::get_if<std::string>(&value)) {
    if (s->empty()) return Status::Ok();
    OpenCell(ref, style_attr, out);
    AppendInlineStringBody(*s, scratch, truncated, out);
  } else if (const auto* i = std::get_if<int64_t>(&value)) {
    auto r = std::to_chars(buf, buf + sizeof buf, *i);
    AppendNumber(ref, style_attr, std::string_view(buf, r.ptr - buf), out);
  } else if (const auto* d = std::get_if<task::Decimal>(&value)) {
    if (!IsDecimalText(d->digits)) {
      return InvalidArgument("xlsx: column " + column.key + ": bad decimal \"" + d->digits + "\"");
    }
    AppendNumber(ref, style_attr, d->digits, out);
  } else if (const auto* b = std::get_if<bool>(&value)) {
    OpenCell(ref, style_attr, out);
    out->append(*b ? " t=\"b\"><v>1</v></c>" : " t=\"b\"><v>0</v></c>");
  } else if (std::holds_alternative<task::Date>(value) ||
             std::holds_alternative<task::DateTime>(value)) {
    int64_t days = 0, ms = 0;
    const bool with_time = std::holds_alternative<task::DateTime>(value);
    if (const auto* date = std::get_if<task::Date>(&value)) {
      days = date->days();
    } else {
      clock->Split(std::get<task::DateTime>(value).epoch_ms, &days, &ms);
    }
    if (days < kFirstSerialDay || days > kLastSerialDay) {
      OpenCell(ref, style_attr, out);
      AppendInlineStringBody(ValueAsText(value, clock), scratch, truncated, out);
      return Status::Ok();
    }
    std::to_chars_result r;
    if (!with_time) {
      r = std::to_chars(buf, buf + sizeof buf, days + kSerialOf1970);
    } else {
      const double serial =
          static_cast<double>(days + kSerialOf1970) + static_cast<double>(ms) / 86400000.0;
      r = std::to_chars(buf, buf + sizeof buf, serial);
    }
    AppendNumber(ref, style_attr, std::string_view(buf, r.ptr - buf), out);
  }
  return Status::Ok();
}

std::string ValueAsText(const task::CellValue& value, LocalClock* clock) {
  std::string out;
  if (const auto* s = std::get_if<std::string>(&value)) {
    out = *s;
  } else if (const auto* i = std::get_if<int64_t>(&value)) {
    out = std::to_string(*i);
  } else if (const auto* d = std::get_if<task::Decimal>(&value)) {
    out = d->digits;
  } else if (const auto* b = std::get_if<bool>(&value)) {
    out = *b ? "TRUE" : "FALSE";
  } else if (const auto* date = std::get_if<task::Date>(&value)) {
    date->AppendTo(&out);
  } else if (const auto* dt = std::get_if<task::DateTime>(&value)) {
    int64_t days, ms;
    clock->Split(dt->epoch_ms, &days, &ms);
    AppendIsoDateTime(days, ms, &out);
  }
  return out;
}

}  // namespace export_center::render::internal
