#include "render/xlsx_writer.h"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/ascii.h"
#include "common/utf8.h"
#include "render/cell_text.h"
#include "render/xlsx_cells.h"
#include "render/zip_stream.h"

namespace export_center::render {
namespace {

using internal::AppendXmlText;
using internal::CleanText;
using internal::IsDecimalText;
using internal::NeedsFormulaGuard;

// Row XML collects here and goes to the deflater in chunks of about this size:
// big enough to amortise the call, small enough to keep memory flat.
constexpr size_t kFlushBytes = 64 * 1024;
constexpr int64_t kMaxSheetRows = 1048575;  // Excel's 1 048 576 rows minus the header
constexpr size_t kMaxSheetNameUnits = 31;
constexpr int kHeaderStyle = 1;  // xf 1 in styles.xml: bold font
// Excel serial numbers count days from 1899-12-30 for every date from
// 1900-03-01 on; earlier serials carry Excel's fictitious 1900-02-29, and
// 9999-12-31 is the last date Excel shows. Outside that range a date is
// written as ISO text rather than as a number Excel would misread.
constexpr int64_t kSerialOf1970 = 25569;
constexpr int64_t kFirstSerialDay = 61 - kSerialOf1970;      // 1900-03-01
constexpr int64_t kLastSerialDay = 2958465 - kSerialOf1970;  // 9999-12-31

constexpr std::string_view kXmlDecl =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n";
constexpr std::string_view kMainNs = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
constexpr std::string_view kRelNs =
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

std::string ColumnLetters(size_t index) {
  std::string s;
  for (size_t n = index + 1; n > 0; n = (n - 1) / 26) {
    s.insert(s.begin(), static_cast<char>('A' + (n - 1) % 26));
  }
  return s;
}

// Attribute values also escape quotes and keep tabs and newlines as references.
std::string XmlAttr(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\t':
        out += "&#9;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\r':
        out += "&#13;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

void AppendInt(int64_t v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

bool IsWhitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Display width of a title: CJK and other wide characters count double.
int DisplayWidth(std::string_view text) {
  int width = 0;
  for (unsigned char c : text) {
    if (c < 0x80)
      width += 1;
    else if (c >= 0xC0)
      width += 2;  // lead byte of a multi-byte character
  }
  return width;
}

// Sheet names: at most 31 units, none of []:*?/\ , no leading/trailing
// apostrophe, not "History" (reserved by Excel), and never empty.
std::string SanitizeSheetName(const std::string& name) {
  std::string scratch;
  std::string s(CleanText(name, &scratch));
  for (char& c : s) {
    if (std::string_view("[]:*?/\\\t\r\n").find(c) != std::string_view::npos) c = '_';
  }
  while (!s.empty() && s.front() == '\'') s.erase(s.begin());
  while (!s.empty() && s.back() == '\'') s.pop_back();
  if (EqualsIgnoreCaseAscii(s, "history")) s += "_";
  if (s.empty()) s = "Sheet1";
  return std::string(utf8::TruncateUtf16Units(s, kMaxSheetNameUnits));
}

// "Name", then "Name (2)", "Name (3)"… cut so the suffix always fits.
std::string SheetName(const std::string& base, size_t number) {
  if (number == 1) return base;
  const std::string suffix = " (" + std::to_string(number) + ")";
  std::string head(utf8::TruncateUtf16Units(base, kMaxSheetNameUnits - suffix.size()));
  while (!head.empty() && head.back() == '\'') head.pop_back();
  return head + suffix;
}

std::string UtcNowW3c() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Number formats and the cellXfs that use them. xf 0 is the default, xf 1 the
// bold header; each distinct number format gets one more xf.
class StyleTable {
 public:
  int StyleFor(const std::string& format) {
    const int fmt_id = FormatId(format);
    for (size_t i = 0; i < xf_formats_.size(); ++i) {
      if (xf_formats_[i] == fmt_id) return static_cast<int>(i) + 2;
    }
    xf_formats_.push_back(fmt_id);
    return static_cast<int>(xf_formats_.size()) + 1;
  }

  std::string Xml() const {
    std::string x(kXmlDecl);
    x += "<styleSheet xmlns=\"" + std::string(kMainNs) + "\">";
    if (!custom_.empty()) {
      x += "<numFmts count=\"" + std::to_string(custom_.size()) + "\">";
      for (size_t i = 0; i < custom_.size(); ++i) {
        x += "<numFmt numFmtId=\"" + std::to_string(kFirstCustomId + i) + "\" formatCode=\"" +
             XmlAttr(custom_[i]) + "\"/>";
      }
      x += "</numFmts>";
    }
    x += "<fonts count=\"2\"><font><sz val=\"11\"/><name val=\"Calibri\"/><family val=\"2\"/>"
         "</font><font><b/><sz val=\"11\"/><name val=\"Calibri\"/><family val=\"2\"/></font>"
         "</fonts><fills count=\"2\"><fill><patternFill patternType=\"none\"/></fill><fill>"
         "<patternFill patternType=\"gray125\"/></fill></fills><borders count=\"1\"><border>"
         "<left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count=\"1\">"
         "<xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\"/></cellStyleXfs>";
    x += "<cellXfs count=\"" + std::to_string(xf_formats_.size() + 2) + "\">";
    x += "<xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\"/>";
    x += "<xf numFmtId=\"0\" fontId=\"1\" fillId=\"0\" borderId=\"0\" xfId=\"0\" "
         "applyFont=\"1\"/>";
    for (int id : xf_formats_) {
      x += "<xf numFmtId=\"" + std::to_string(id) +
           "\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/>";
    }
    x += "</cellXfs><cellStyles count=\"1\"><cellStyle name=\"Normal\" xfId=\"0\" "
         "builtinId=\"0\"/></cellStyles></styleSheet>";
    return x;
  }

 private:
  static constexpr int kFirstCustomId = 164;

  int FormatId(const std::string& format) {
    // Built-in ids need no <numFmt> and every reader knows them.
    static constexpr std::pair<std::string_view, int> kBuiltin[] = {
        {"General", 0}, {"0", 1}, {"0.00", 2}, {"#,##0", 3}, {"#,##0.00", 4}};
    for (const auto& [code, id] : kBuiltin) {
      if (format == code) return id;
    }
    for (size_t i = 0; i < custom_.size(); ++i) {
      if (custom_[i] == format) return kFirstCustomId + static_cast<int>(i);
    }
    custom_.push_back(format);
    return kFirstCustomId + static_cast<int>(custom_.size()) - 1;
  }

  std::vector<std::string> custom_;
  std::vector<int> xf_formats_;  // numFmtId of xf 2, 3, ...
};

// The default number format of a column, or its override when usable.
std::string ColumnFormat(const task::Column& column) {
  using task::ColumnType;
  const bool overridable =
      column.type != ColumnType::kString && column.type != ColumnType::kBoolean;
  if (overridable && !column.format.empty() && column.format.size() <= 255) {
    std::string scratch;
    if (CleanText(column.format, &scratch).size() == column.format.size()) return column.format;
  }
  switch (column.type) {
    case ColumnType::kInteger:
      return "0";  // not General: 12+ digit ids would show as 1.23457E+11
    case ColumnType::kDecimal: {
      const int scale = std::clamp(column.scale, 0, 30);
      return scale == 0 ? "0" : "0." + std::string(scale, '0');
    }
    case ColumnType::kDate:
      return "yyyy-mm-dd";
    case ColumnType::kDateTime:
      return "yyyy-mm-dd hh:mm:ss";
    default:
      return "";
  }
}

class XlsxWriter final : public Writer {
 public:
  XlsxWriter(ByteSink* sink, const WriterOptions& options)
      : options_(options), zip_(sink, ZipOptions{.deflate_level = options.deflate_level}) {
    options_.rows_per_sheet = std::clamp<int64_t>(options_.rows_per_sheet, 1, kMaxSheetRows);
    options_.max_column_width = std::clamp(options_.max_column_width, 1, 255);
  }

  Status Begin(const std::vector<task::Column>& columns) override;
  Status WriteRow(const task::Row& row) override;
  StatusOr<WriteSummary> Finish() override;

 private:
  enum class State { kNew, kWriting, kDone };

  Status Check(Status s) {
    if (!s.ok() && status_.ok()) status_ = s;
    return s;
  }
  Status WritePart(std::string_view name, std::string_view content);
  Status StartSheet();
  Status EndSheet();
  Status FlushIfFull();
  std::string SheetHead(bool first) const;
  std::string WorkbookXml() const;
  std::string WorkbookRelsXml() const;
  std::string ContentTypesXml() const;

  void OpenCell(size_t col, bool gap, std::string_view type_attr);
  void AppendStringCell(size_t col, bool gap, std::string_view text);
  void AppendNumberCell(size_t col, bool gap, std::string_view number);
  Status AppendCell(size_t col, bool gap, const task::CellValue& value);
  void AppendSerialDate(size_t col, bool gap, int64_t days, int64_t ms_of_day, bool with_time);

  WriterOptions options_;
  ZipStreamWriter zip_;
  internal::LocalClock clock_;
  State state_ = State::kNew;
  Status status_;
  std::vector<task::Column> columns_;
  std::vector<std::string> letters_;     // "A", "B", ... per column
  std::vector<std::string> style_attr_;  // ` s="N"` or "" per column
  std::string styles_xml_;
  std::string base_sheet_name_;
  size_t sheets_ = 0;
  int64_t sheet_rows_ = 0;  // data rows in the current sheet
  int64_t rows_ = 0;
  int truncated_ = 0;
  std::string buf_;
  std::string scratch_;
};

Status XlsxWriter::Begin(const std::vector<task::Column>& columns) {
  if (state_ != State::kNew) return Check(Internal("xlsx: Begin called twice"));
  if (columns.empty()) return Check(InvalidArgument("xlsx: no columns"));
  EC_RETURN_IF_ERROR(Check(clock_.Init(options_.timezone)));
  columns_ = columns;
  StyleTable styles;
  for (size_t i = 0; i < columns_.size(); ++i) {
    letters_.push_back(ColumnLetters(i));
    const std::string format = ColumnFormat(columns_[i]);
    style_attr_.push_back(
        format.empty() ? "" : " s=\"" + std::to_string(styles.StyleFor(format)) + "\"");
  }
  styles_xml_ = styles.Xml();
  base_sheet_name_ = SanitizeSheetName(options_.sheet_name);
  buf_.reserve(kFlushBytes * 2);
  state_ = State::kWriting;

  const std::string now = UtcNowW3c();
  EC_RETURN_IF_ERROR(WritePart(
      "docProps/core.xml",
      std::string(kXmlDecl) +
          "<cp:coreProperties xmlns:cp=\"http://schemas.openxmlformats.org/package/2006/"
          "metadata/core-properties\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\" "
          "xmlns:dcterms=\"http://purl.org/dc/terms/\" "
          "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"><dc:creator>export-center"
          "</dc:creator><dcterms:created xsi:type=\"dcterms:W3CDTF\">" +
          now + "</dcterms:created><dcterms:modified xsi:type=\"dcterms:W3CDTF\">" + now +
          "</dcterms:modified></cp:coreProperties>"));
  EC_RETURN_IF_ERROR(
      WritePart("docProps/app.xml",
                std::string(kXmlDecl) +
                    "<Properties xmlns=\"http://schemas.openxmlformats.org/officeDocument/2006/"
                    "extended-properties\"><Application>export-center</Application></Properties>"));
  EC_RETURN_IF_ERROR(WritePart(
      "_rels/.rels",
      std::string(kXmlDecl) +
          "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
          "<Relationship Id=\"rId1\" Type=\"" +
          std::string(kRelNs) +
          "/officeDocument\" Target=\"xl/workbook.xml\"/><Relationship Id=\"rId2\" "
          "Type=\"http://schemas.openxmlformats.org/package/2006/relationships/metadata/"
          "core-properties\" Target=\"docProps/core.xml\"/><Relationship Id=\"rId3\" Type=\"" +
          std::string(kRelNs) +
          "/extended-properties\" Target=\"docProps/app.xml\"/>"
          "</Relationships>"));
  EC_RETURN_IF_ERROR(WritePart("xl/styles.xml", styles_xml_));
  return StartSheet();
}

Status XlsxWriter::WritePart(std::string_view name, std::string_view content) {
  EC_RETURN_IF_ERROR(Check(zip_.BeginEntry(name)));
  EC_RETURN_IF_ERROR(Check(zip_.Write(content)));
  return Check(zip_.EndEntry());
}

std::string XlsxWriter::SheetHead(bool first) const {
  std::string x(kXmlDecl);
  x += "<worksheet xmlns=\"" + std::string(kMainNs) + "\" xmlns:r=\"" + std::string(kRelNs) + "\">";
  // No <dimension>: the row count is unknown until the end, and a deflated
  // stream cannot be patched. Omitting it is valid (readers compute it); a
  // wrong one (POI writes "A1") makes some readers clip every row.
  x += "<sheetViews><sheetView ";
  if (first) x += "tabSelected=\"1\" ";
  x += "workbookViewId=\"0\"><pane ySplit=\"1\" topLeftCell=\"A2\" activePane=\"bottomLeft\" "
       "state=\"frozen\"/><selection pane=\"bottomLeft\" activeCell=\"A2\" sqref=\"A2\"/>"
       "</sheetView></sheetViews><cols>";
  for (size_t i = 0; i < columns_.size(); ++i) {
    const task::Column& c = columns_[i];
    const int wanted = c.width > 0 ? c.width : std::max(10, DisplayWidth(c.title) + 2);
    const int width = std::min(wanted, options_.max_column_width);
    const std::string n = std::to_string(i + 1);
    x += "<col min=\"" + n + "\" max=\"" + n + "\" width=\"" + std::to_string(width) +
         "\" customWidth=\"1\"/>";
  }
  x += "</cols><sheetData><row r=\"1\">";
  return x;
}

Status XlsxWriter::StartSheet() {
  ++sheets_;
  sheet_rows_ = 0;
  EC_RETURN_IF_ERROR(
      Check(zip_.BeginEntry("xl/worksheets/sheet" + std::to_string(sheets_) + ".xml")));
  buf_ = SheetHead(sheets_ == 1);
  for (size_t i = 0; i < columns_.size(); ++i) {
    buf_ += "<c s=\"" + std::to_string(kHeaderStyle) + "\"";
    AppendStringCell(i, /*gap=*/false, columns_[i].title);
  }
  buf_ += "</row>";
  return Status::Ok();
}

Status XlsxWriter::EndSheet() {
  buf_ += "</sheetData></worksheet>";
  EC_RETURN_IF_ERROR(Check(zip_.Write(buf_)));
  buf_.clear();
  return Check(zip_.EndEntry());
}

Status XlsxWriter::FlushIfFull() {
  if (buf_.size() < kFlushBytes) return Status::Ok();
  EC_RETURN_IF_ERROR(Check(zip_.Write(buf_)));
  buf_.clear();
  return Status::Ok();
}

Status XlsxWriter::WriteRow(const task::Row& row) {
  EC_RETURN_IF_ERROR(status_);
  if (state_ != State::kWriting) return Check(Internal("xlsx: WriteRow outside Begin/Finish"));
  if (row.size() != columns_.size()) {
    return InvalidArgument("xlsx: row has " + std::to_string(row.size()) + " values for " +
                           std::to_string(columns_.size()) + " columns");
  }
  if (sheet_rows_ == options_.rows_per_sheet) {
    EC_RETURN_IF_ERROR(EndSheet());
    EC_RETURN_IF_ERROR(StartSheet());
  }
  const size_t mark = buf_.size();
  buf_ += "<row r=\"";
  AppendInt(sheet_rows_ + 2, &buf_);
  buf_ += "\">";
  // Cells carry no r="A2" while the row has no hole (smaller and faster);
  // after a null every later cell names its column, since readers number
  // unnamed cells by counting.
  bool gap = false;
  for (size_t i = 0; i < row.size(); ++i) {
    const auto* text = std::get_if<std::string>(&row[i]);
    if (std::holds_alternative<std::monostate>(row[i]) || (text != nullptr && text->empty())) {
      // Null and "" both leave the cell out: an empty text cell only
      // confuses COUNTA and "go to blank" in Excel.
      gap = true;
      continue;
    }
    Status s = AppendCell(i, gap, row[i]);
    if (!s.ok()) {
      buf_.resize(mark);  // a bad value leaves no half row behind
      return s;
    }
  }
  buf_ += "</row>";
  ++sheet_rows_;
  ++rows_;
  return FlushIfFull();
}

void XlsxWriter::OpenCell(size_t col, bool gap, std::string_view type_attr) {
  buf_ += "<c";
  if (gap) {
    buf_ += " r=\"";
    buf_ += letters_[col];
    AppendInt(sheet_rows_ + 2, &buf_);
    buf_ += '"';
  }
  buf_ += style_attr_[col];
  buf_ += type_attr;
}

Status XlsxWriter::AppendCell(size_t col, bool gap, const task::CellValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) {
    OpenCell(col, gap, "");
    AppendStringCell(col, gap, *s);
  } else if (const auto* i = std::get_if<int64_t>(&value)) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, *i);
    AppendNumberCell(col, gap, std::string_view(buf, r.ptr - buf));
  } else if (const auto* d = std::get_if<task::Decimal>(&value)) {
    if (!IsDecimalText(d->digits)) {
      return InvalidArgument("xlsx: column " + columns_[col].key + ": bad decimal \"" + d->digits +
                             "\"");
    }
    AppendNumberCell(col, gap, d->digits);  // the exact digits: no double round trip
  } else if (const auto* b = std::get_if<bool>(&value)) {
    OpenCell(col, gap, " t=\"b\">");
    buf_ += *b ? "<v>1</v></c>" : "<v>0</v></c>";
  } else if (const auto* date = std::get_if<task::Date>(&value)) {
    if (!internal::IsValidDate(date->year, date->month, date->day)) {
      return InvalidArgument("xlsx: column " + columns_[col].key + ": bad date");
    }
    AppendSerialDate(col, gap, internal::DaysFromCivil(date->year, date->month, date->day), 0,
                     false);
  } else if (const auto* dt = std::get_if<task::DateTime>(&value)) {
    int64_t days, ms;
    clock_.Split(dt->epoch_ms, &days, &ms);
    AppendSerialDate(col, gap, days, ms, true);
  }
  return Status::Ok();
}

// Closes an opened <c ...> with an inline string; counts truncations.
void XlsxWriter::AppendStringCell(size_t col, bool gap, std::string_view text) {
  const std::string_view clean = CleanText(text, &scratch_);
  const bool guard = NeedsFormulaGuard(clean);
  const std::string_view cut = utf8::TruncateUtf16Units(clean, internal::kMaxCellUnits - guard);
  if (cut.size() < clean.size()) ++truncated_;
  const bool preserve = !cut.empty() && (IsWhitespace(cut.front()) || IsWhitespace(cut.back()));
  buf_ += preserve ? " t=\"inlineStr\"><is><t xml:space=\"preserve\">" : " t=\"inlineStr\"><is><t>";
  if (guard) buf_ += '\'';
  AppendXmlText(cut, &buf_);
  buf_ += "</t></is></c>";
}

void XlsxWriter::AppendNumberCell(size_t col, bool gap, std::string_view number) {
  OpenCell(col, gap, "><v>");
  buf_ += number;
  buf_ += "</v></c>";
}

void XlsxWriter::AppendSerialDate(size_t col, bool gap, int64_t days, int64_t ms_of_day,
                                  bool with_time) {
  if (days < kFirstSerialDay || days > kLastSerialDay) {
    std::string text;
    if (with_time) {
      internal::AppendIsoDateTime(days, ms_of_day, &text);
    } else {
      internal::AppendIsoDate(days, &text);
    }
    buf_ += "<c";
    if (gap) buf_ += " r=\"" + letters_[col] + std::to_string(sheet_rows_ + 2) + "\"";
    AppendStringCell(col, gap, text);
    return;
  }
  char buf[40];
  std::to_chars_result r;
  if (!with_time) {
    r = std::to_chars(buf, buf + sizeof buf, days + kSerialOf1970);
  } else {
    // Shortest text that round-trips the double Excel will hold anyway.
    const double serial =
        static_cast<double>(days + kSerialOf1970) + static_cast<double>(ms_of_day) / 86400000.0;
    r = std::to_chars(buf, buf + sizeof buf, serial);
  }
  AppendNumberCell(col, gap, std::string_view(buf, r.ptr - buf));
}

StatusOr<WriteSummary> XlsxWriter::Finish() {
  EC_RETURN_IF_ERROR(status_);
  if (state_ != State::kWriting) return Check(Internal("xlsx: Finish without Begin"));
  state_ = State::kDone;
  EC_RETURN_IF_ERROR(EndSheet());
  // These name every sheet, so they can only be written now; ZIP order does
  // not matter to readers, which go by the central directory.
  EC_RETURN_IF_ERROR(WritePart("xl/workbook.xml", WorkbookXml()));
  EC_RETURN_IF_ERROR(WritePart("xl/_rels/workbook.xml.rels", WorkbookRelsXml()));
  EC_RETURN_IF_ERROR(WritePart("[Content_Types].xml", ContentTypesXml()));
  EC_RETURN_IF_ERROR(Check(zip_.Finish()));
  // Every sheet but the last is full (a new one starts only then).
  std::vector<int64_t> part_rows(sheets_ - 1, options_.rows_per_sheet);
  part_rows.push_back(sheet_rows_);
  return WriteSummary{.rows = rows_, .truncated_cells = truncated_, .part_rows = part_rows};
}

std::string XlsxWriter::WorkbookXml() const {
  std::string x(kXmlDecl);
  x += "<workbook xmlns=\"" + std::string(kMainNs) + "\" xmlns:r=\"" + std::string(kRelNs) +
       "\"><workbookPr/><bookViews><workbookView/></bookViews><sheets>";
  for (size_t i = 1; i <= sheets_; ++i) {
    x += "<sheet name=\"" + XmlAttr(SheetName(base_sheet_name_, i)) + "\" sheetId=\"" +
         std::to_string(i) + "\" r:id=\"rId" + std::to_string(i) + "\"/>";
  }
  x += "</sheets></workbook>";
  return x;
}

std::string XlsxWriter::WorkbookRelsXml() const {
  std::string x(kXmlDecl);
  x += "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">";
  for (size_t i = 1; i <= sheets_; ++i) {
    x += "<Relationship Id=\"rId" + std::to_string(i) + "\" Type=\"" + std::string(kRelNs) +
         "/worksheet\" Target=\"worksheets/sheet" + std::to_string(i) + ".xml\"/>";
  }
  x += "<Relationship Id=\"rId" + std::to_string(sheets_ + 1) + "\" Type=\"" + std::string(kRelNs) +
       "/styles\" Target=\"styles.xml\"/></Relationships>";
  return x;
}

std::string XlsxWriter::ContentTypesXml() const {
  constexpr std::string_view kSheetType =
      "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml";
  std::string x(kXmlDecl);
  x += "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">"
       "<Default Extension=\"rels\" "
       "ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>"
       "<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
       "<Override PartName=\"/xl/workbook.xml\" ContentType=\"application/"
       "vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/>"
       "<Override PartName=\"/xl/styles.xml\" ContentType=\"application/"
       "vnd.openxmlformats-officedocument.spreadsheetml.styles+xml\"/>"
       "<Override PartName=\"/docProps/core.xml\" ContentType=\"application/"
       "vnd.openxmlformats-package.core-properties+xml\"/>"
       "<Override PartName=\"/docProps/app.xml\" ContentType=\"application/"
       "vnd.openxmlformats-officedocument.extended-properties+xml\"/>";
  for (size_t i = 1; i <= sheets_; ++i) {
    x += "<Override PartName=\"/xl/worksheets/sheet" + std::to_string(i) + ".xml\" ContentType=\"" +
         std::string(kSheetType) + "\"/>";
  }
  x += "</Types>";
  return x;
}

}  // namespace

std::unique_ptr<Writer> NewXlsxWriter(ByteSink* sink, const WriterOptions& options) {
  return std::make_unique<XlsxWriter>(sink, options);
}

}  // namespace export_center::render
