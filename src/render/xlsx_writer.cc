#include "render/xlsx_writer.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/ascii.h"
#include "common/utf8.h"
#include "render/cell_text.h"
#include "render/column_total.h"
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
constexpr int64_t kExcelRows = 1048576;
// Excel refuses formulas longer than 8 192 characters; a totals formula over
// more sheets than fit is left out and the cached value stands alone.
constexpr size_t kMaxFormulaChars = 8000;
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

// Appends a literal without a strlen: the hot path's appends. (With many
// `+= "..."` call sites in this file GCC stops inlining std::string's
// append(const char*), and every cell then pays a call and a strlen.)
template <size_t N>
inline void Put(std::string* out, const char (&text)[N]) {
  out->append(text, N - 1);
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

// Number formats, fonts, fills, the cellXfs that combine them and the dxfs of
// conditional formats. xf 0 is the default, xf 1 the bold header; every other
// distinct combination gets one more xf, made at Begin (styles.xml is written
// before the first sheet).
class StyleTable {
 public:
  struct Xf {
    int num_fmt = 0;
    int font = 0;  // 0 regular, 1 bold, 2.. bold coloured
    int fill = 0;  // 0 none, 1 gray125, 2.. solid
    task::Align align = task::Align::kDefault;
    bool vcenter = false;
    bool wrap = false;
    bool operator==(const Xf&) const = default;
  };

  StyleTable() {
    xfs_.push_back(Xf{});
    xfs_.push_back(Xf{.font = 1});
  }

  // The xf of a data cell with this number format (plain columns).
  int StyleFor(const std::string& format) { return XfFor(Xf{.num_fmt = FormatId(format)}); }
  int NumFmt(const std::string& format) { return format.empty() ? 0 : FormatId(format); }
  int BoldFont(const std::string& colour) { return Index(&fonts_, colour, 2); }
  int SolidFill(const std::string& colour) { return Index(&fills_, colour, 2); }
  int XfFor(const Xf& xf) {
    for (size_t i = 0; i < xfs_.size(); ++i) {
      if (xfs_[i] == xf) return static_cast<int>(i);
    }
    xfs_.push_back(xf);
    return static_cast<int>(xfs_.size()) - 1;
  }
  int Dxf(const std::string& fill, const std::string& font) {
    dxfs_.emplace_back(fill, font);
    return static_cast<int>(dxfs_.size()) - 1;
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
    x += "<fonts count=\"" + std::to_string(fonts_.size() + 2) +
         "\"><font><sz val=\"11\"/><name val=\"Calibri\"/><family val=\"2\"/>"
         "</font><font><b/><sz val=\"11\"/><name val=\"Calibri\"/><family val=\"2\"/></font>";
    for (const std::string& colour : fonts_) {
      x += "<font><b/><sz val=\"11\"/>" + Argb(colour) +
           "<name val=\"Calibri\"/><family val=\"2\"/></font>";
    }
    x += "</fonts><fills count=\"" + std::to_string(fills_.size() + 2) +
         "\"><fill><patternFill patternType=\"none\"/></fill><fill>"
         "<patternFill patternType=\"gray125\"/></fill>";
    for (const std::string& colour : fills_) {
      x += "<fill><patternFill patternType=\"solid\"><fgColor rgb=\"" + Rgb(colour) +
           "\"/><bgColor indexed=\"64\"/></patternFill></fill>";
    }
    x += "</fills><borders count=\"1\"><border>"
         "<left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count=\"1\">"
         "<xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\"/></cellStyleXfs>";
    x += "<cellXfs count=\"" + std::to_string(xfs_.size()) + "\">";
    for (const Xf& xf : xfs_) x += XfXml(xf);
    x += "</cellXfs><cellStyles count=\"1\"><cellStyle name=\"Normal\" xfId=\"0\" "
         "builtinId=\"0\"/></cellStyles>";
    if (!dxfs_.empty()) {
      x += "<dxfs count=\"" + std::to_string(dxfs_.size()) + "\">";
      for (const auto& [fill, font] : dxfs_) {
        x += "<dxf>";
        if (!font.empty()) x += "<font>" + Argb(font) + "</font>";
        if (!fill.empty()) {
          x += "<fill><patternFill patternType=\"solid\"><bgColor rgb=\"" + Rgb(fill) +
               "\"/></patternFill></fill>";
        }
        x += "</dxf>";
      }
      x += "</dxfs>";
    }
    x += "</styleSheet>";
    return x;
  }

 private:
  static constexpr int kFirstCustomId = 164;

  // "#1F4E78" -> <color rgb="FF1F4E78"/> (validated #RRGGBB by then).
  static std::string Argb(const std::string& colour) {
    return "<color rgb=\"" + Rgb(colour) + "\"/>";
  }
  static std::string Rgb(const std::string& colour) {
    std::string rgb = "FF" + colour.substr(1);
    for (char& c : rgb) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return rgb;
  }

  static int Index(std::vector<std::string>* list, const std::string& colour, int first) {
    for (size_t i = 0; i < list->size(); ++i) {
      if ((*list)[i] == colour) return first + static_cast<int>(i);
    }
    list->push_back(colour);
    return first + static_cast<int>(list->size()) - 1;
  }

  static std::string XfXml(const Xf& xf) {
    std::string x = "<xf numFmtId=\"" + std::to_string(xf.num_fmt) + "\" fontId=\"" +
                    std::to_string(xf.font) + "\" fillId=\"" + std::to_string(xf.fill) +
                    "\" borderId=\"0\" xfId=\"0\"";
    if (xf.num_fmt != 0) x += " applyNumberFormat=\"1\"";
    if (xf.font != 0) x += " applyFont=\"1\"";
    if (xf.fill != 0) x += " applyFill=\"1\"";
    const bool aligned = xf.align != task::Align::kDefault || xf.vcenter || xf.wrap;
    if (!aligned) return x + "/>";
    x += " applyAlignment=\"1\"><alignment";
    switch (xf.align) {
      case task::Align::kLeft:
        x += " horizontal=\"left\"";
        break;
      case task::Align::kCenter:
        x += " horizontal=\"center\"";
        break;
      case task::Align::kRight:
        x += " horizontal=\"right\"";
        break;
      default:
        break;
    }
    if (xf.vcenter) x += " vertical=\"center\"";
    if (xf.wrap) x += " wrapText=\"1\"";
    return x + "/></xf>";
  }

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
  std::vector<std::string> fonts_;  // colours of bold fonts 2, 3, ...
  std::vector<std::string> fills_;  // colours of solid fills 2, 3, ...
  std::vector<Xf> xfs_;
  std::vector<std::pair<std::string, std::string>> dxfs_;  // fill, font colour
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

// Whether two adjacent cells continue one merged run: same type and value;
// null and "" never merge (a blank run is not a group).
bool SameValue(const task::CellValue& a, const task::CellValue& b) {
  if (a.index() != b.index()) return false;
  switch (a.index()) {
    case 1: {
      const std::string& s = *std::get_if<std::string>(&a);
      return !s.empty() && s == *std::get_if<std::string>(&b);
    }
    case 2:
      return *std::get_if<int64_t>(&a) == *std::get_if<int64_t>(&b);
    case 3:
      return std::get_if<task::Decimal>(&a)->digits == std::get_if<task::Decimal>(&b)->digits;
    case 4:
      return *std::get_if<bool>(&a) == *std::get_if<bool>(&b);
    case 5: {
      return *std::get_if<task::Date>(&a) == *std::get_if<task::Date>(&b);
    }
    case 6:
      return std::get_if<task::DateTime>(&a)->epoch_ms == std::get_if<task::DateTime>(&b)->epoch_ms;
    default:
      return false;
  }
}

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

uint64_t GetVarint(const std::string& in, size_t* pos) {
  uint64_t v = 0;
  for (int shift = 0; *pos < in.size(); shift += 7) {
    const auto b = static_cast<unsigned char>(in[(*pos)++]);
    v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if (b < 0x80) break;
  }
  return v;
}

// A formula's text literal: "..." with quotes doubled.
std::string FormulaText(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string_view FunctionOf(task::TotalKind kind) {
  switch (kind) {
    case task::TotalKind::kSum:
      return "SUM";
    case task::TotalKind::kCount:
      return "COUNT";
    case task::TotalKind::kMin:
      return "MIN";
    case task::TotalKind::kMax:
      return "MAX";
    default:
      return "AVERAGE";
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

  // One column whose runs of equal values are tracked: a merged column, or
  // the mergeWithin parent of one. The sheet's merges of the column are kept
  // as LEB128 varint pairs (rows since the previous merge's end, length - 2):
  // a dense run of 2 costs 2 bytes, so the list is at most 1 byte per data
  // row of the sheet (docs/xlsx.md#merged-runs).
  struct Run {
    size_t col = 0;
    int parent = -1;  // index in runs_ of the parent's Run, or -1
    bool merged = false;
    task::CellValue prev{};
    int64_t start = 0;  // sheet data row (0-based) of the open run's first row
    bool brk = false;   // the row being written starts a new run
    std::string list{};
    int64_t last_end = 0;  // sheet data row after the previous merge
    int64_t count = 0;
  };

  // One column's conditional format: the rule's XML after `sqref="..."`.
  struct Conditional {
    size_t col = 0;
    std::string rule_head{};  // <cfRule ... priority="
    std::string rule_tail{};  // ">...</cfRule>
  };

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
  void BuildStyles(StyleTable* styles);
  void BuildHeader();
  void BuildConditionals(StyleTable* styles);
  void BuildRuns();
  void MarkRuns(const task::Row& row);
  void CommitRuns(const task::Row& row);
  void CloseRun(Run* run, int64_t last);
  Status WriteMerges();
  Status WriteTotalsRow();
  std::string CellRef(size_t col, int64_t row_number) const {
    return letters_[col] + std::to_string(row_number);
  }

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
  std::vector<int> header_style_;        // xf of each column's header cell
  std::vector<std::string> total_style_attr_;
  std::string styles_xml_;
  std::string base_sheet_name_;
  int header_rows_ = 1;
  int64_t first_data_row_ = 2;  // sheet row number of the first data row
  std::string header_xml_;      // the header rows, the same on every sheet
  std::string header_merges_;   // their <mergeCell>s
  int64_t header_merge_count_ = 0;
  std::vector<Run> runs_;
  std::vector<char> skip_;  // per column: this row's cell continues a merged run
  std::vector<std::pair<size_t, internal::ColumnTotal>> totals_;
  std::vector<Conditional> conditionals_;
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
  for (const task::Column& c : columns_) header_rows_ = std::max(header_rows_, task::TitleDepth(c));
  header_rows_ = std::min(header_rows_, 5);
  first_data_row_ = header_rows_ + 1;
  for (size_t i = 0; i < columns_.size(); ++i) {
    letters_.push_back(ColumnLetters(i));
    if (columns_[i].total != task::TotalKind::kNone) {
      totals_.emplace_back(i, internal::ColumnTotal::For(columns_[i]));
    }
  }
  // The header rows and a totals row must fit under Excel's 1 048 576 rows.
  options_.rows_per_sheet = std::min<int64_t>(
      options_.rows_per_sheet, kExcelRows - header_rows_ - (totals_.empty() ? 0 : 1));
  StyleTable styles;
  BuildStyles(&styles);
  BuildConditionals(&styles);
  styles_xml_ = styles.Xml();
  BuildRuns();
  base_sheet_name_ = SanitizeSheetName(options_.sheet_name);
  BuildHeader();
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

// Data cells: the number format, alignment and wrap (merged columns centred
// vertically, as EasyExcel shows a merged group). Headers: bold, the header
// colours, centred when the header has several rows.
void XlsxWriter::BuildStyles(StyleTable* styles) {
  const bool grouped = header_rows_ > 1;
  for (const task::Column& c : columns_) {
    const std::string format = ColumnFormat(c);
    const StyleTable::Xf data{.num_fmt = styles->NumFmt(format),
                              .align = c.style.align,
                              .vcenter = c.merge != task::MergeMode::kNone,
                              .wrap = c.style.wrap};
    const int xf = data == StyleTable::Xf{} ? 0 : styles->XfFor(data);
    style_attr_.push_back(xf == 0 ? "" : " s=\"" + std::to_string(xf) + "\"");
    StyleTable::Xf total = data;
    if (c.total == task::TotalKind::kAvg && c.type == task::ColumnType::kInteger) {
      const int scale = std::clamp(c.scale, 0, 10);
      total.num_fmt = styles->NumFmt(scale == 0 ? "0" : "0." + std::string(scale, '0'));
    }
    const int total_xf = styles->XfFor(total);
    total_style_attr_.push_back(total_xf == 0 ? "" : " s=\"" + std::to_string(total_xf) + "\"");
    StyleTable::Xf head{.font = 1};
    if (!c.style.header_font.empty()) head.font = styles->BoldFont(c.style.header_font);
    if (!c.style.header_fill.empty()) head.fill = styles->SolidFill(c.style.header_fill);
    if (grouped) {
      head.align = task::Align::kCenter;
      head.vcenter = true;
    }
    header_style_.push_back(styles->XfFor(head));
  }
}

// One rule per highlighted column, its dxf in styles.xml. The formula is
// relative to the first data cell, which is the same row on every sheet.
void XlsxWriter::BuildConditionals(StyleTable* styles) {
  for (size_t i = 0; i < columns_.size(); ++i) {
    const task::Column& c = columns_[i];
    const task::Highlight& h = c.highlight;
    if (h.op == task::HighlightOp::kNone || h.values.empty()) continue;
    const bool numeric = c.labels.empty() && (c.type == task::ColumnType::kInteger ||
                                              c.type == task::ColumnType::kDecimal);
    auto literal = [&](const std::string& v) { return numeric ? v : FormulaText(v); };
    const int dxf = styles->Dxf(h.fill, h.font);
    Conditional cf{.col = i};
    std::string formula;
    if (h.op == task::HighlightOp::kIn) {
      const std::string first = CellRef(i, first_data_row_);
      cf.rule_head =
          "<cfRule type=\"expression\" dxfId=\"" + std::to_string(dxf) + "\" priority=\"";
      formula = "OR(";
      for (size_t k = 0; k < h.values.size(); ++k) {
        if (k > 0) formula += ',';
        formula += first + "=" + literal(h.values[k]);
      }
      formula += ")";
      cf.rule_tail = "\">";
    } else {
      const char* op = h.op == task::HighlightOp::kEquals    ? "equal"
                       : h.op == task::HighlightOp::kGreater ? "greaterThan"
                                                             : "lessThan";
      cf.rule_head = "<cfRule type=\"cellIs\" dxfId=\"" + std::to_string(dxf) + "\" priority=\"";
      cf.rule_tail = "\" operator=\"" + std::string(op) + "\">";
      formula = literal(h.values[0]);
    }
    cf.rule_tail += "<formula>";
    AppendXmlText(formula, &cf.rule_tail);
    cf.rule_tail += "</formula></cfRule>";
    conditionals_.push_back(std::move(cf));
  }
}

void XlsxWriter::BuildRuns() {
  std::vector<int> run_of(columns_.size(), -1);
  std::vector<char> tracked(columns_.size(), 0);
  // A merged column and its mergeWithin parent (an earlier column) are tracked.
  for (size_t i = 0; i < columns_.size(); ++i) {
    const task::Column& c = columns_[i];
    if (c.merge == task::MergeMode::kNone) continue;
    tracked[i] = 1;
    for (size_t j = 0; j < i; ++j) {
      if (columns_[j].key == c.merge_within) tracked[j] = 1;
    }
  }
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (!tracked[i]) continue;
    Run run{.col = i, .merged = columns_[i].merge != task::MergeMode::kNone};
    const std::string& parent = columns_[i].merge_within;
    for (size_t j = 0; j < i && !parent.empty(); ++j) {
      if (columns_[j].key == parent) run.parent = run_of[j];
    }
    run_of[i] = static_cast<int>(runs_.size());
    runs_.push_back(std::move(run));
  }
  skip_.assign(columns_.size(), 0);
}

// EasyExcel's layout: level r of a column is a group cell merged across the
// adjacent columns that share levels 0..r; a column's last level is merged
// down to the last header row when it has fewer levels than the deepest.
void XlsxWriter::BuildHeader() {
  const size_t n = columns_.size();
  auto depth = [&](size_t c) { return std::min(task::TitleDepth(columns_[c]), header_rows_); };
  auto level = [&](size_t c, int r) {
    return r == depth(c) - 1 ? std::string_view(columns_[c].title)
                             : task::TitleLevel(columns_[c], r);
  };
  auto merge = [&](size_t c0, int r0, size_t c1, int r1) {
    header_merges_ +=
        "<mergeCell ref=\"" + CellRef(c0, r0 + 1) + ":" + CellRef(c1, r1 + 1) + "\"/>";
    ++header_merge_count_;
  };
  buf_.clear();
  const bool named = header_rows_ > 1;  // cells skip columns there, so each names itself
  for (int r = 0; r < header_rows_; ++r) {
    buf_ += "<row r=\"" + std::to_string(r + 1) + "\">";
    auto open = [&](size_t c) {
      buf_ += "<c";
      if (named) buf_ += " r=\"" + CellRef(c, r + 1) + "\"";
      buf_ += " s=\"" + std::to_string(header_style_[c]) + "\"";
    };
    for (size_t c = 0; c < n;) {
      const int d = depth(c);
      if (r < d - 1) {
        size_t e = c + 1;
        for (; e < n && depth(e) > r + 1; ++e) {
          bool same = true;
          for (int k = 0; k <= r && same; ++k) same = level(e, k) == level(c, k);
          if (!same) break;
        }
        open(c);
        AppendStringCell(c, named, level(c, r));
        // Styled blanks under the merge, so a header fill covers the group.
        for (size_t k = c + 1; k < e; ++k) {
          open(k);
          buf_ += "/>";
        }
        if (e - c > 1) merge(c, r, e - 1, r);
        c = e;
        continue;
      }
      open(c);
      if (r == d - 1) {
        AppendStringCell(c, named, columns_[c].title);
        if (d < header_rows_) merge(c, r, c, header_rows_ - 1);
      } else {
        buf_ += "/>";
      }
      ++c;
    }
    buf_ += "</row>";
  }
  header_xml_ = std::move(buf_);
  buf_.clear();
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
  const std::string top = "A" + std::to_string(first_data_row_);
  x += "<sheetViews><sheetView ";
  if (first) x += "tabSelected=\"1\" ";
  x += "workbookViewId=\"0\"><pane ySplit=\"" + std::to_string(header_rows_) + "\" topLeftCell=\"" +
       top + "\" activePane=\"bottomLeft\" state=\"frozen\"/><selection pane=\"bottomLeft\" " +
       "activeCell=\"" + top + "\" sqref=\"" + top + "\"/></sheetView></sheetViews><cols>";
  for (size_t i = 0; i < columns_.size(); ++i) {
    const task::Column& c = columns_[i];
    const int wanted = c.width > 0 ? c.width : std::max(10, DisplayWidth(c.title) + 2);
    const int width = std::min(wanted, options_.max_column_width);
    const std::string n = std::to_string(i + 1);
    x += "<col min=\"" + n + "\" max=\"" + n + "\" width=\"" + std::to_string(width) +
         "\" customWidth=\"1\"/>";
  }
  x += "</cols><sheetData>";
  return x;
}

Status XlsxWriter::StartSheet() {
  ++sheets_;
  sheet_rows_ = 0;
  EC_RETURN_IF_ERROR(
      Check(zip_.BeginEntry("xl/worksheets/sheet" + std::to_string(sheets_) + ".xml")));
  buf_ = SheetHead(sheets_ == 1);
  buf_ += header_xml_;
  return Status::Ok();
}

// Closes the sheet: its open runs, </sheetData>, the merges (header and
// data), the conditional formats over the sheet's data rows.
Status XlsxWriter::EndSheet() {
  for (Run& run : runs_) {
    if (sheet_rows_ > 0) CloseRun(&run, sheet_rows_ - 1);
  }
  buf_ += "</sheetData>";
  EC_RETURN_IF_ERROR(WriteMerges());
  if (sheet_rows_ > 0) {
    int priority = 0;
    for (const Conditional& cf : conditionals_) {
      buf_ += "<conditionalFormatting sqref=\"" + CellRef(cf.col, first_data_row_) + ":" +
              CellRef(cf.col, first_data_row_ + sheet_rows_ - 1) + "\">" + cf.rule_head +
              std::to_string(++priority) + cf.rule_tail + "</conditionalFormatting>";
    }
  }
  buf_ += "</worksheet>";
  EC_RETURN_IF_ERROR(Check(zip_.Write(buf_)));
  buf_.clear();
  for (Run& run : runs_) {
    run.list.clear();
    run.last_end = 0;
    run.count = 0;
  }
  return Check(zip_.EndEntry());
}

Status XlsxWriter::WriteMerges() {
  int64_t count = header_merge_count_;
  for (const Run& run : runs_) count += run.count;
  if (count == 0) return Status::Ok();
  buf_ += "<mergeCells count=\"" + std::to_string(count) + "\">" + header_merges_;
  for (const Run& run : runs_) {
    size_t pos = 0;
    int64_t end = 0;
    while (pos < run.list.size()) {
      const int64_t first = end + static_cast<int64_t>(GetVarint(run.list, &pos));
      const int64_t last = first + static_cast<int64_t>(GetVarint(run.list, &pos)) + 1;
      end = last + 1;
      buf_ += "<mergeCell ref=\"";
      buf_ += letters_[run.col];
      AppendInt(first + first_data_row_, &buf_);
      buf_ += ':';
      buf_ += letters_[run.col];
      AppendInt(last + first_data_row_, &buf_);
      buf_ += "\"/>";
      EC_RETURN_IF_ERROR(FlushIfFull());
    }
  }
  buf_ += "</mergeCells>";
  return Status::Ok();
}

Status XlsxWriter::FlushIfFull() {
  if (buf_.size() < kFlushBytes) return Status::Ok();
  EC_RETURN_IF_ERROR(Check(zip_.Write(buf_)));
  buf_.clear();
  return Status::Ok();
}

void XlsxWriter::MarkRuns(const task::Row& row) {
  for (Run& run : runs_) {
    const bool parent_break = run.parent >= 0 && runs_[run.parent].brk;
    run.brk = sheet_rows_ == 0 || parent_break || !SameValue(run.prev, row[run.col]);
    skip_[run.col] = run.merged && !run.brk;
  }
}

void XlsxWriter::CommitRuns(const task::Row& row) {
  for (Run& run : runs_) {
    if (!run.brk) continue;
    if (sheet_rows_ > 0) CloseRun(&run, sheet_rows_ - 1);
    run.start = sheet_rows_;
    run.prev = row[run.col];
  }
}

void XlsxWriter::CloseRun(Run* run, int64_t last) {
  const int64_t length = last - run->start + 1;
  if (!run->merged || length < 2) return;
  PutVarint(static_cast<uint64_t>(run->start - run->last_end), &run->list);
  PutVarint(static_cast<uint64_t>(length - 2), &run->list);
  run->last_end = last + 1;
  run->start = last + 1;
  ++run->count;
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
  const bool merging = !runs_.empty();
  if (merging) MarkRuns(row);
  const size_t mark = buf_.size();
  Put(&buf_, "<row r=\"");
  AppendInt(sheet_rows_ + first_data_row_, &buf_);
  Put(&buf_, "\">");
  // Cells carry no r="A2" while the row has no hole (smaller and faster);
  // after a null every later cell names its column, since readers number
  // unnamed cells by counting.
  bool gap = false;
  for (size_t i = 0; i < row.size(); ++i) {
    if (merging && skip_[i]) {
      // A merged run's later cells are hidden by the merge: an empty <c/>
      // keeps the count of unnamed cells (cheaper than naming every later
      // cell of the row), or nothing once the row names its cells anyway.
      if (!gap) Put(&buf_, "<c/>");
      continue;
    }
    const auto* text = std::get_if<std::string>(&row[i]);
    if (std::holds_alternative<std::monostate>(row[i]) || (text != nullptr && text->empty())) {
      // Null and "" both leave the cell out: an empty text cell only
      // confuses COUNTA and "go to blank" in Excel.
      gap = true;
      continue;
    }
    Status s = AppendCell(i, gap, row[i]);
    if (!s.ok()) {
      buf_.resize(mark);  // a bad value leaves no half row behind (nor a run step)
      return s;
    }
  }
  Put(&buf_, "</row>");
  if (merging) CommitRuns(row);
  for (auto& [col, total] : totals_) total.Add(row[col]);
  ++sheet_rows_;
  ++rows_;
  return FlushIfFull();
}

// The totals row under the last sheet's data: the label in the first column
// without a total, then per total column a formula over the data rows of
// every sheet and its exact cached value (render/column_total.h).
Status XlsxWriter::WriteTotalsRow() {
  const int64_t row_number = first_data_row_ + sheet_rows_;
  buf_ += "<row r=\"" + std::to_string(row_number) + "\">";
  size_t next_total = 0;
  bool labelled = options_.totals_label.empty();
  for (size_t i = 0; i < columns_.size(); ++i) {
    const bool has_total = next_total < totals_.size() && totals_[next_total].first == i;
    if (!has_total) {
      if (!labelled) {
        buf_ += "<c r=\"" + CellRef(i, row_number) + "\" s=\"1\"";
        AppendStringCell(i, true, options_.totals_label);
        labelled = true;
      }
      continue;
    }
    const task::Column& c = columns_[i];
    const internal::ColumnTotal& total = totals_[next_total++].second;
    // Every sheet but the last is full; sheets of one are referenced bare.
    std::string ranges;
    for (size_t sheet = 1; sheet <= sheets_; ++sheet) {
      const int64_t rows = sheet < sheets_ ? options_.rows_per_sheet : sheet_rows_;
      if (rows == 0) continue;
      if (!ranges.empty()) ranges += ',';
      if (sheets_ > 1) {
        ranges += '\'';
        for (char ch : SheetName(base_sheet_name_, sheet)) {
          if (ch == '\'') ranges += '\'';
          ranges += ch;
        }
        ranges += "'!";
      }
      ranges += CellRef(i, first_data_row_) + ":" + CellRef(i, first_data_row_ + rows - 1);
    }
    std::string formula;
    if (!ranges.empty()) {
      formula = std::string(FunctionOf(c.total)) + "(" + ranges + ")";
      if (c.total == task::TotalKind::kAvg) {
        const int scale = std::clamp(c.scale, 0, 10);
        formula = "ROUND(" + formula + "," + std::to_string(scale) + ")";
      }
      if (formula.size() > kMaxFormulaChars) formula.clear();
    }
    const std::optional<std::string> cached = total.Text();
    const bool div0 = c.total == task::TotalKind::kAvg && total.count() == 0;
    if (formula.empty() && !cached) continue;
    buf_ += "<c r=\"" + CellRef(i, row_number) + "\"" + total_style_attr_[i];
    if (div0 && !formula.empty()) buf_ += " t=\"e\"";
    buf_ += '>';
    if (!formula.empty()) {
      buf_ += "<f>";
      AppendXmlText(formula, &buf_);
      buf_ += "</f>";
    }
    if (cached) {
      buf_ += "<v>" + *cached + "</v>";
    } else if (div0 && !formula.empty()) {
      buf_ += "<v>#DIV/0!</v>";
    }
    buf_ += "</c>";
  }
  buf_ += "</row>";
  return FlushIfFull();
}

[[gnu::flatten]] void XlsxWriter::OpenCell(size_t col, bool gap, std::string_view type_attr) {
  Put(&buf_, "<c");
  if (gap) {
    Put(&buf_, " r=\"");
    buf_ += letters_[col];
    AppendInt(sheet_rows_ + first_data_row_, &buf_);
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
    if (*b) {
      Put(&buf_, "<v>1</v></c>");
    } else {
      Put(&buf_, "<v>0</v></c>");
    }
  } else if (const auto* date = std::get_if<task::Date>(&value)) {
    AppendSerialDate(col, gap, date->days(), 0, false);
  } else if (const auto* dt = std::get_if<task::DateTime>(&value)) {
    int64_t days, ms;
    clock_.Split(dt->epoch_ms, &days, &ms);
    AppendSerialDate(col, gap, days, ms, true);
  }
  return Status::Ok();
}

// Closes an opened <c ...> with an inline string; counts truncations.
[[gnu::flatten]] void XlsxWriter::AppendStringCell(size_t col, bool gap, std::string_view text) {
  const std::string_view clean = CleanText(text, &scratch_);
  const bool guard = NeedsFormulaGuard(clean);
  const std::string_view cut = utf8::TruncateUtf16Units(clean, internal::kMaxCellUnits - guard);
  if (cut.size() < clean.size()) ++truncated_;
  const bool preserve = !cut.empty() && (IsWhitespace(cut.front()) || IsWhitespace(cut.back()));
  if (preserve) {
    Put(&buf_, " t=\"inlineStr\"><is><t xml:space=\"preserve\">");
  } else {
    Put(&buf_, " t=\"inlineStr\"><is><t>");
  }
  if (guard) buf_ += '\'';
  AppendXmlText(cut, &buf_);
  Put(&buf_, "</t></is></c>");
}

[[gnu::flatten]] void XlsxWriter::AppendNumberCell(size_t col, bool gap, std::string_view number) {
  OpenCell(col, gap, "><v>");
  buf_ += number;
  Put(&buf_, "</v></c>");
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
    Put(&buf_, "<c");
    if (gap) buf_ += " r=\"" + letters_[col] + std::to_string(sheet_rows_ + first_data_row_) + "\"";
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
  if (!totals_.empty()) EC_RETURN_IF_ERROR(WriteTotalsRow());
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
