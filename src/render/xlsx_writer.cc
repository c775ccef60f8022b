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
#include "render/xlsx_merged_runs.h"
#include "render/xlsx_parts.h"
#include "render/xlsx_styles.h"
#include "render/zip_stream.h"

namespace export_center::render {
namespace {

using internal::AppendXmlText;
using internal::CleanText;
using internal::IsDecimalText;
using internal::kXmlDecl;
using internal::NeedsFormulaGuard;
using internal::SheetName;

// Row XML collects here and goes to the deflater in chunks of about this size:
// big enough to amortise the call, small enough to keep memory flat.
constexpr size_t kFlushBytes = 64 * 1024;
constexpr int64_t kMaxSheetRows = 1048575;  // Excel's 1 048 576 rows minus the header
constexpr int64_t kExcelRows = 1048576;
// Excel refuses formulas longer than 8 192 characters; a totals formula over
// more sheets than fit is left out and the cached value stands alone.
constexpr size_t kMaxFormulaChars = 8000;
// Excel serial numbers count days from 1899-12-30 for every date from
// 1900-03-01 on; earlier serials carry Excel's fictitious 1900-02-29, and
// 9999-12-31 is the last date Excel shows. Outside that range a date is
// written as ISO text rather than as a number Excel would misread.
constexpr int64_t kSerialOf1970 = 25569;
constexpr int64_t kFirstSerialDay = 61 - kSerialOf1970;      // 1900-03-01
constexpr int64_t kLastSerialDay = 2958465 - kSerialOf1970;  // 9999-12-31

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

  // The header rows, the same on every sheet, and their merges.
  struct Header {
    std::string xml{};
    std::string merges{};  // <mergeCell>s
    int64_t merge_count = 0;
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
  void BuildHeader();
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
  std::vector<std::string> letters_;  // "A", "B", ... per column
  internal::WorkbookStyles styles_;
  std::string base_sheet_name_;
  int header_rows_ = 1;
  int64_t first_data_row_ = 2;  // sheet row number of the first data row
  Header header_;
  internal::MergedRuns runs_;
  std::vector<std::pair<size_t, internal::ColumnTotal>> totals_;
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
    letters_.push_back(internal::ColumnLetters(i));
    if (columns_[i].total != task::TotalKind::kNone) {
      totals_.emplace_back(i, internal::ColumnTotal::For(columns_[i]));
    }
  }
  // The header rows and a totals row must fit under Excel's 1 048 576 rows.
  options_.rows_per_sheet = std::min<int64_t>(
      options_.rows_per_sheet, kExcelRows - header_rows_ - (totals_.empty() ? 0 : 1));
  styles_ = internal::BuildWorkbookStyles(columns_, header_rows_, first_data_row_);
  runs_.Build(columns_);
  base_sheet_name_ = internal::SanitizeSheetName(options_.sheet_name);
  BuildHeader();
  buf_.reserve(kFlushBytes * 2);
  state_ = State::kWriting;

  EC_RETURN_IF_ERROR(WritePart("docProps/core.xml", internal::CorePropertiesXml()));
  EC_RETURN_IF_ERROR(WritePart("docProps/app.xml", internal::AppPropertiesXml()));
  EC_RETURN_IF_ERROR(WritePart("_rels/.rels", internal::PackageRelsXml()));
  EC_RETURN_IF_ERROR(WritePart("xl/styles.xml", styles_.xml));
  return StartSheet();
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
    header_.merges +=
        "<mergeCell ref=\"" + CellRef(c0, r0 + 1) + ":" + CellRef(c1, r1 + 1) + "\"/>";
    ++header_.merge_count;
  };
  buf_.clear();
  const bool named = header_rows_ > 1;  // cells skip columns there, so each names itself
  for (int r = 0; r < header_rows_; ++r) {
    buf_ += "<row r=\"" + std::to_string(r + 1) + "\">";
    auto open = [&](size_t c) {
      buf_ += "<c";
      if (named) buf_ += " r=\"" + CellRef(c, r + 1) + "\"";
      buf_ += " s=\"" + std::to_string(styles_.header_style[c]) + "\"";
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
  header_.xml = std::move(buf_);
  buf_.clear();
}

Status XlsxWriter::WritePart(std::string_view name, std::string_view content) {
  EC_RETURN_IF_ERROR(Check(zip_.BeginEntry(name)));
  EC_RETURN_IF_ERROR(Check(zip_.Write(content)));
  return Check(zip_.EndEntry());
}

std::string XlsxWriter::SheetHead(bool first) const {
  std::string x(kXmlDecl);
  x += "<worksheet xmlns=\"" + std::string(internal::kMainNs) + "\" xmlns:r=\"" +
       std::string(internal::kRelNs) + "\">";
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
  buf_ += header_.xml;
  return Status::Ok();
}

// Closes the sheet: its open runs, </sheetData>, the merges (header and
// data), the conditional formats over the sheet's data rows.
Status XlsxWriter::EndSheet() {
  runs_.CloseSheet(sheet_rows_);
  buf_ += "</sheetData>";
  EC_RETURN_IF_ERROR(WriteMerges());
  if (sheet_rows_ > 0) {
    int priority = 0;
    for (const internal::ConditionalFormat& cf : styles_.conditionals) {
      buf_ += "<conditionalFormatting sqref=\"" + CellRef(cf.col, first_data_row_) + ":" +
              CellRef(cf.col, first_data_row_ + sheet_rows_ - 1) + "\">" + cf.rule_head +
              std::to_string(++priority) + cf.rule_tail + "</conditionalFormatting>";
    }
  }
  buf_ += "</worksheet>";
  EC_RETURN_IF_ERROR(Check(zip_.Write(buf_)));
  buf_.clear();
  runs_.ClearSheet();
  return Check(zip_.EndEntry());
}

Status XlsxWriter::WriteMerges() {
  const int64_t count = header_.merge_count + runs_.count();
  if (count == 0) return Status::Ok();
  buf_ += "<mergeCells count=\"" + std::to_string(count) + "\">" + header_.merges;
  EC_RETURN_IF_ERROR(
      runs_.AppendMergeCells(letters_, first_data_row_, &buf_, [this] { return FlushIfFull(); }));
  buf_ += "</mergeCells>";
  return Status::Ok();
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
  const bool merging = !runs_.empty();
  if (merging) runs_.Mark(row, sheet_rows_);
  const size_t mark = buf_.size();
  Put(&buf_, "<row r=\"");
  AppendInt(sheet_rows_ + first_data_row_, &buf_);
  Put(&buf_, "\">");
  // Cells carry no r="A2" while the row has no hole (smaller and faster);
  // after a null every later cell names its column, since readers number
  // unnamed cells by counting.
  bool gap = false;
  for (size_t i = 0; i < row.size(); ++i) {
    if (merging && runs_.skip(i)) {
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
  if (merging) runs_.Commit(row, sheet_rows_);
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
    buf_ += "<c r=\"" + CellRef(i, row_number) + "\"" + styles_.total_style_attr[i];
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
  buf_ += styles_.style_attr[col];
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
  EC_RETURN_IF_ERROR(
      WritePart("xl/workbook.xml", internal::WorkbookXml(base_sheet_name_, sheets_)));
  EC_RETURN_IF_ERROR(WritePart("xl/_rels/workbook.xml.rels", internal::WorkbookRelsXml(sheets_)));
  EC_RETURN_IF_ERROR(WritePart("[Content_Types].xml", internal::ContentTypesXml(sheets_)));
  EC_RETURN_IF_ERROR(Check(zip_.Finish()));
  // Every sheet but the last is full (a new one starts only then).
  std::vector<int64_t> part_rows(sheets_ - 1, options_.rows_per_sheet);
  part_rows.push_back(sheet_rows_);
  return WriteSummary{.rows = rows_, .truncated_cells = truncated_, .part_rows = part_rows};
}

}  // namespace

std::unique_ptr<Writer> NewXlsxWriter(ByteSink* sink, const WriterOptions& options) {
  return std::make_unique<XlsxWriter>(sink, options);
}

}  // namespace export_center::render
