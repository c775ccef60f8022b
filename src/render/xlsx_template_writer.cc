#include "render/xlsx_template_writer.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <variant>

#include "common/json_dump.h"
#include "render/cell_text.h"
#include "render/xlsx_cells.h"
#include "render/xlsx_template.h"
#include "render/zip_stream.h"

namespace export_center::render {
namespace {

using internal::PackagePart;
using internal::RowShift;
using internal::TemplateSheet;
using internal::Token;

constexpr size_t kFlushBytes = 64 * 1024;
constexpr int64_t kMaxRow = 1048576;
// Comments standing in for the streamed rows and the repeated merges while
// the rest of the sheet is serialized around them.
constexpr std::string_view kRowsMarker = "ec-list-rows-1b7e";
constexpr std::string_view kMergesMarker = "ec-list-merges-1b7e";
constexpr std::string_view kSharedStrings = "xl/sharedStrings.xml";
constexpr std::string_view kWorkbook = "xl/workbook.xml";

std::string Comment(std::string_view marker) { return "<!--" + std::string(marker) + "-->"; }

bool IsWorksheet(const std::string& name) {
  return name.rfind("xl/worksheets/", 0) == 0 && name.find('/', 14) == std::string::npos &&
         name.size() > 18 && name.compare(name.size() - 4, 4, ".xml") == 0;
}

std::string AttrEscape(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

std::string StyleAttr(const pugi::xml_node& cell) {
  const pugi::xml_attribute s = cell.attribute("s");
  return s ? " s=\"" + AttrEscape(s.value()) + "\"" : "";
}

// A single value from JSON: strings, integers, booleans and plain decimals
// keep their type; other numbers become text exactly as JSON spelled them.
task::CellValue SingleFromJson(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number()) {
    std::string text = v.dump();
    if (internal::IsDecimalText(text)) return task::Decimal{text};
    return text;
  }
  if (v.is_null()) return std::monostate{};
  return DumpTolerant(v);  // arrays and objects: their JSON text
}

// One cell of the list row, compiled once and emitted per record.
struct ListCell {
  enum Kind { kField, kMixed, kStatic } kind = kStatic;
  std::string letters;
  std::string style_attr;
  int field = -1;             // kField: the column index
  std::vector<Token> tokens;  // kMixed: literal text, singles and fields
  std::string static_tail;    // kStatic: the cell's XML after `<c`, without r=
};

// The template's {.field} list row, compiled once at Begin and written once
// per data row.
struct ListRow {
  int64_t row = 0;            // its row number in the template
  int64_t last_tail_row = 0;  // the template's last row below the list
  std::string attrs{};        // the row's attributes other than r
  std::vector<ListCell> cells{};
  std::vector<std::string> merges{};  // "A:C" column spans merged inside the row
};

class XlsxTemplateWriter final : public Writer {
 public:
  XlsxTemplateWriter(ByteSink* sink, const WriterOptions& options,
                     std::shared_ptr<const std::string> template_bytes, std::string singles_json)
      : options_(options),
        zip_(sink, ZipOptions{.deflate_level = options.deflate_level}),
        template_(std::move(template_bytes)),
        singles_json_(std::move(singles_json)) {}

  Status Begin(const std::vector<task::Column>& columns) override;
  Status WriteRow(const task::Row& row) override;
  StatusOr<WriteSummary> Finish() override;

 private:
  enum class State { kNew, kWriting, kDone };

  Status Check(Status s) {
    if (!s.ok() && status_.ok()) status_ = s;
    return s;
  }
  Status LoadTemplate();
  Status ParseSingles();
  Status CheckFields();
  Status CompileListRow();
  Status FillCells(TemplateSheet& sheet, int64_t min_row, int64_t max_row);
  Status WriteListHead();
  Status WriteListTail();
  Status ShiftTail(const RowShift& shift);
  void ShiftRefsAfterSheetData(const RowShift& shift);
  Status WriteMerges();
  Status WriteOtherParts();
  Status WriteXmlPart(const std::string& name, const std::string& xml);
  std::string TokensText(const std::vector<Token>& tokens, const task::Row* row);
  Status AppendListRow(const task::Row& row, int64_t r);
  void AppendBlankListRow();

  WriterOptions options_;
  ZipStreamWriter zip_;
  std::shared_ptr<const std::string> template_;
  std::string singles_json_;
  internal::LocalClock clock_;
  State state_ = State::kNew;
  Status status_;

  std::vector<task::Column> columns_;
  std::map<std::string, int> column_index_;
  std::map<std::string, task::CellValue> singles_;
  std::vector<PackagePart> parts_;
  std::vector<TemplateSheet> sheets_;
  TemplateSheet* list_sheet_ = nullptr;
  ListRow list_;
  bool formulas_shifted_ = false;

  int64_t rows_ = 0;
  int truncated_ = 0;
  std::string buf_;
  std::string scratch_;
};

Status XlsxTemplateWriter::LoadTemplate() {
  if (template_ == nullptr || template_->empty()) return InvalidArgument("template: no bytes");
  EC_ASSIGN_OR_RETURN(parts_, internal::ReadPackage(*template_));
  std::vector<std::string> shared_strings;  // only the sheets' loading reads them
  for (const PackagePart& p : parts_) {
    if (p.name != kSharedStrings) continue;
    EC_ASSIGN_OR_RETURN(std::string xml, internal::PartText(p));
    EC_ASSIGN_OR_RETURN(shared_strings, internal::ParseSharedStrings(xml));
  }
  sheets_.reserve(parts_.size());
  for (const PackagePart& p : parts_) {
    if (!IsWorksheet(p.name)) continue;
    EC_ASSIGN_OR_RETURN(std::string xml, internal::PartText(p));
    sheets_.emplace_back();
    EC_RETURN_IF_ERROR(internal::LoadSheet(p.name, xml, shared_strings, &sheets_.back()));
  }
  for (TemplateSheet& s : sheets_) {
    if (!s.list_row) continue;
    if (list_sheet_ != nullptr) {
      return InvalidArgument("template: both " + list_sheet_->part + " and " + s.part +
                             " hold {.field} list rows; only one list row is supported");
    }
    list_sheet_ = &s;
    list_.row = s.list_row_number;
  }
  if (list_sheet_ == nullptr) {
    return InvalidArgument(
        "template has no list row: put {.key} markers (one per column key) in one row");
  }
  return Status::Ok();
}

Status XlsxTemplateWriter::ParseSingles() {
  const auto json = nlohmann::json::parse(singles_json_.empty() ? "{}" : singles_json_, nullptr,
                                          /*allow_exceptions=*/false);
  if (!json.is_object()) return InvalidArgument("template: single values must be a JSON object");
  for (const auto& [name, value] : json.items()) singles_[name] = SingleFromJson(value);
  if (!singles_.count("exportedAt")) {
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    singles_["exportedAt"] = internal::ValueAsText(task::DateTime{now_ms}, &clock_);
  }
  singles_.erase("rowCount");  // always the writer's own count, set in Finish
  return Status::Ok();
}

// Every {.field} must name a column; rowCount cannot be above the list.
Status XlsxTemplateWriter::CheckFields() {
  std::set<std::string> unknown;
  for (const TemplateSheet& s : sheets_) {
    for (const auto& cell : s.cells) {
      for (const Token& t : cell.tokens) {
        if (t.kind == Token::kField && !column_index_.count(t.text)) unknown.insert(t.text);
        if (t.kind == Token::kSingle && t.text == "rowCount" && &s == list_sheet_ &&
            cell.row <= list_.row) {
          return InvalidArgument(
              "template: {rowCount} at " + internal::ColumnName(cell.col) +
              std::to_string(cell.row) + " is on or above the list row " +
              std::to_string(list_.row) +
              "; the count is known only at the end, so put it below the list or on another sheet");
        }
      }
    }
  }
  if (unknown.empty()) return Status::Ok();
  std::string names, keys;
  for (const auto& u : unknown) names += (names.empty() ? "{." : ", {.") + u + "}";
  for (const auto& c : columns_) keys += (keys.empty() ? "" : ", ") + c.key;
  return InvalidArgument("template list markers " + names +
                         " match no column of the export; the columns are: " + keys);
}

Status XlsxTemplateWriter::CompileListRow() {
  pugi::xml_node row = list_sheet_->list_row;
  for (pugi::xml_attribute a : row.attributes()) {
    if (std::string_view(a.name()) == "r") continue;
    list_.attrs += std::string(" ") + a.name() + "=\"" + AttrEscape(a.value()) + "\"";
  }
  for (pugi::xml_node c : row.children()) {
    if (internal::LocalName(c) != "c") continue;
    int col;
    int64_t r;
    if (!internal::ParseCellRef(c.attribute("r").value(), &col, &r)) {
      return InvalidArgument("template: list row " + std::to_string(list_.row) +
                             " has a cell without a reference (r=)");
    }
    ListCell cell;
    cell.letters = internal::ColumnName(col);
    cell.style_attr = StyleAttr(c);
    auto it = std::find_if(list_sheet_->cells.begin(), list_sheet_->cells.end(),
                           [&](const auto& p) { return p.node == c; });
    if (it == list_sheet_->cells.end()) {
      pugi::xml_document copy;
      pugi::xml_node n = copy.append_copy(c);
      n.remove_attribute("r");
      cell.static_tail = internal::NodeXml(n).substr(1 + std::string_view(c.name()).size());
    } else if (it->tokens.size() == 1 && it->tokens[0].kind == Token::kField) {
      cell.kind = ListCell::kField;
      cell.field = column_index_.at(it->tokens[0].text);
    } else {
      cell.kind = ListCell::kMixed;
      cell.tokens = it->tokens;
    }
    list_.cells.push_back(std::move(cell));
  }
  return Status::Ok();
}

std::string XlsxTemplateWriter::TokensText(const std::vector<Token>& tokens, const task::Row* row) {
  std::string text;
  for (const Token& t : tokens) {
    if (t.kind == Token::kText) {
      text += t.text;
    } else if (t.kind == Token::kField && row != nullptr) {
      text += internal::ValueAsText((*row)[column_index_.at(t.text)], &clock_);
    } else if (t.kind == Token::kSingle) {
      auto it = singles_.find(t.text);
      if (it != singles_.end()) text += internal::ValueAsText(it->second, &clock_);
    }
  }
  return text;
}

// Replaces the placeholder cells of rows [min_row, max_row] with their values.
Status XlsxTemplateWriter::FillCells(TemplateSheet& sheet, int64_t min_row, int64_t max_row) {
  static const task::Column kSingleColumn = [] {
    task::Column c;
    c.key = "single value";
    return c;
  }();
  for (auto& cell : sheet.cells) {
    if (cell.row < min_row || cell.row > max_row || !cell.node) continue;
    task::CellValue value;
    if (cell.tokens.size() == 1 && cell.tokens[0].kind == Token::kSingle) {
      auto it = singles_.find(cell.tokens[0].text);
      if (it != singles_.end()) value = it->second;
    } else {
      value = TokensText(cell.tokens, nullptr);
    }
    const std::string ref = cell.node.attribute("r").value();
    const std::string style = StyleAttr(cell.node);
    std::string xml;
    EC_RETURN_IF_ERROR(internal::AppendTypedCell(ref, style, value, kSingleColumn, &clock_,
                                                 &scratch_, &truncated_, &xml));
    if (xml.empty()) xml = "<c r=\"" + AttrEscape(ref) + "\"" + style + "/>";
    pugi::xml_document fragment;
    if (!fragment.load_buffer(xml.data(), xml.size(),
                              pugi::parse_default | pugi::parse_ws_pcdata)) {
      return Internal("template: generated cell XML does not parse");
    }
    pugi::xml_node parent = cell.node.parent();
    parent.insert_copy_after(fragment.first_child(), cell.node);
    parent.remove_child(cell.node);
    cell.node = pugi::xml_node();
  }
  return Status::Ok();
}

Status XlsxTemplateWriter::Begin(const std::vector<task::Column>& columns) {
  if (state_ != State::kNew) return Check(Internal("xlsx template: Begin called twice"));
  if (columns.empty()) return Check(InvalidArgument("xlsx template: no columns"));
  EC_RETURN_IF_ERROR(Check(clock_.Init(options_.timezone)));
  columns_ = columns;
  for (size_t i = 0; i < columns_.size(); ++i) column_index_[columns_[i].key] = static_cast<int>(i);
  EC_RETURN_IF_ERROR(Check(LoadTemplate()));
  EC_RETURN_IF_ERROR(Check(ParseSingles()));
  EC_RETURN_IF_ERROR(Check(CheckFields()));
  EC_RETURN_IF_ERROR(Check(CompileListRow()));
  EC_RETURN_IF_ERROR(Check(FillCells(*list_sheet_, 1, list_.row - 1)));
  state_ = State::kWriting;
  return Check(WriteListHead());
}

// Writes the list sheet up to the list row, which a marker replaces.
Status XlsxTemplateWriter::WriteListHead() {
  pugi::xml_node root = list_sheet_->doc->document_element();
  for (pugi::xml_node n = root.first_child(); n;) {
    pugi::xml_node next = n.next_sibling();
    // Precedes the streamed rows, whose count is unknown yet; optional.
    if (internal::LocalName(n) == "dimension") root.remove_child(n);
    n = next;
  }
  pugi::xml_node data = list_sheet_->sheet_data;
  for (pugi::xml_node row = list_sheet_->list_row.next_sibling(); row; row = row.next_sibling()) {
    list_.last_tail_row = std::max<int64_t>(list_.last_tail_row, row.attribute("r").as_llong(0));
  }
  for (auto& cell : list_sheet_->cells) {
    if (cell.row == list_.row) cell.node = pugi::xml_node();  // compiled; about to go
  }
  data.insert_child_before(pugi::node_comment, list_sheet_->list_row)
      .set_value(std::string(kRowsMarker).c_str());
  data.remove_child(list_sheet_->list_row);
  list_sheet_->list_row = pugi::xml_node();
  const std::string xml = internal::NodeXml(*list_sheet_->doc);
  const size_t at = xml.find(Comment(kRowsMarker));
  if (at == std::string::npos) return Internal("template: list marker lost");
  EC_RETURN_IF_ERROR(zip_.BeginEntry(list_sheet_->part));
  buf_.reserve(kFlushBytes * 2);
  buf_.assign(xml, 0, at);
  return Status::Ok();
}

Status XlsxTemplateWriter::AppendListRow(const task::Row& row, int64_t r) {
  const std::string number = std::to_string(r);
  buf_ += "<row r=\"";
  buf_ += number;
  buf_ += '"';
  buf_ += list_.attrs;
  buf_ += '>';
  std::string ref;
  for (const ListCell& cell : list_.cells) {
    ref.assign(cell.letters).append(number);
    const size_t before = buf_.size();
    if (cell.kind == ListCell::kStatic) {
      buf_ += "<c r=\"" + ref + "\"";
      buf_ += cell.static_tail;
      continue;
    }
    if (cell.kind == ListCell::kField) {
      EC_RETURN_IF_ERROR(internal::AppendTypedCell(ref, cell.style_attr, row[cell.field],
                                                   columns_[cell.field], &clock_, &scratch_,
                                                   &truncated_, &buf_));
    } else {
      static const task::Column kText = [] {
        task::Column c;
        c.key = "text";
        return c;
      }();
      EC_RETURN_IF_ERROR(internal::AppendTypedCell(ref, cell.style_attr,
                                                   TokensText(cell.tokens, &row), kText, &clock_,
                                                   &scratch_, &truncated_, &buf_));
    }
    // A null keeps the template's styled blank (borders, fills).
    if (buf_.size() == before && !cell.style_attr.empty()) {
      buf_ += "<c r=\"" + ref + "\"" + cell.style_attr + "/>";
    }
  }
  buf_ += "</row>";
  return Status::Ok();
}

Status XlsxTemplateWriter::WriteRow(const task::Row& row) {
  EC_RETURN_IF_ERROR(status_);
  if (state_ != State::kWriting) return Check(Internal("xlsx template: WriteRow out of order"));
  if (row.size() != columns_.size()) {
    return InvalidArgument("xlsx template: row has " + std::to_string(row.size()) + " values for " +
                           std::to_string(columns_.size()) + " columns");
  }
  const int64_t r = list_.row + rows_;
  const int64_t tail = list_.last_tail_row > list_.row ? list_.last_tail_row - list_.row : 0;
  if (r + tail > kMaxRow) {
    return Check(LimitExceeded("template: at most " +
                               std::to_string(kMaxRow - tail - list_.row + 1) +
                               " list rows fit on the sheet (Excel's 1 048 576 rows)"));
  }
  const size_t mark = buf_.size();
  Status s = AppendListRow(row, r);
  if (!s.ok()) {
    buf_.resize(mark);  // a bad value leaves no half row behind
    return s;
  }
  ++rows_;
  if (buf_.size() < kFlushBytes) return Status::Ok();
  EC_RETURN_IF_ERROR(Check(zip_.Write(buf_)));
  buf_.clear();
  return Status::Ok();
}

// Moves the rows below the list and re-points their formulas.
Status XlsxTemplateWriter::ShiftTail(const RowShift& shift) {
  pugi::xml_node data = list_sheet_->sheet_data;
  bool after = false;
  for (pugi::xml_node row = data.first_child(); row; row = row.next_sibling()) {
    if (row.type() == pugi::node_comment && kRowsMarker == row.value()) after = true;
    if (!after || internal::LocalName(row) != "row") continue;
    row.attribute("r").set_value(shift.Row(row.attribute("r").as_llong()));
    for (pugi::xml_node c : row.children()) {
      int col;
      int64_t r;
      if (internal::ParseCellRef(c.attribute("r").value(), &col, &r)) {
        c.attribute("r").set_value(
            (internal::ColumnName(col) + std::to_string(shift.Row(r))).c_str());
      }
      pugi::xml_node f = c.child("f");
      if (!f) continue;
      const std::string before = f.text().get();
      const std::string moved = internal::ShiftFormula(before, shift);
      if (pugi::xml_attribute ref = f.attribute("ref")) {
        ref.set_value(internal::ShiftRange(ref.value(), shift).c_str());
      }
      if (moved == before) continue;
      f.text().set(moved.c_str());
      c.remove_child("v");  // the cached result is stale; Excel recalculates on load
      formulas_shifted_ = true;
    }
  }
  for (auto& cell : list_sheet_->cells) {
    if (cell.node && cell.row > shift.list_row) cell.row = shift.Row(cell.row);
  }
  return Status::Ok();
}

void XlsxTemplateWriter::ShiftRefsAfterSheetData(const RowShift& shift) {
  pugi::xml_node root = list_sheet_->doc->document_element();
  std::vector<pugi::xml_node> dead;
  for (pugi::xml_node n : root.children()) {
    const std::string_view name = internal::LocalName(n);
    if (name == "mergeCells") {
      int kept = 0;
      for (pugi::xml_node m = n.first_child(); m;) {
        pugi::xml_node next = m.next_sibling();
        int c1, c2;
        int64_t r1, r2;
        const std::string ref = m.attribute("ref").value();
        const size_t colon = ref.find(':');
        if (colon != std::string::npos && internal::ParseCellRef(ref.substr(0, colon), &c1, &r1) &&
            internal::ParseCellRef(ref.substr(colon + 1), &c2, &r2) && r1 == list_.row &&
            r2 == list_.row) {
          // Merged inside the list row: repeated on every list row.
          list_.merges.push_back(internal::ColumnName(c1) + ":" + internal::ColumnName(c2));
          n.remove_child(m);
        } else {
          m.attribute("ref").set_value(internal::ShiftRange(ref, shift).c_str());
          ++kept;
        }
        m = next;
      }
      const int64_t total = kept + static_cast<int64_t>(list_.merges.size()) * shift.count;
      if (total == 0) {
        dead.push_back(n);  // an empty <mergeCells> is invalid
        continue;
      }
      n.append_child(pugi::node_comment).set_value(std::string(kMergesMarker).c_str());
      if (pugi::xml_attribute count = n.attribute("count")) count.set_value(total);
    } else if (name == "conditionalFormatting") {
      if (pugi::xml_attribute sq = n.attribute("sqref")) {
        sq.set_value(internal::ShiftSqref(sq.value(), shift).c_str());
      }
    } else if (name == "dataValidations") {
      for (pugi::xml_node v : n.children()) {
        if (pugi::xml_attribute sq = v.attribute("sqref")) {
          sq.set_value(internal::ShiftSqref(sq.value(), shift).c_str());
        }
      }
    } else if (name == "hyperlinks") {
      for (pugi::xml_node h : n.children()) {
        if (pugi::xml_attribute ref = h.attribute("ref")) {
          ref.set_value(internal::ShiftSqref(ref.value(), shift).c_str());
        }
      }
    } else if (name == "autoFilter") {
      if (pugi::xml_attribute ref = n.attribute("ref")) {
        ref.set_value(internal::ShiftRange(ref.value(), shift).c_str());
      }
    }
  }
  for (pugi::xml_node n : dead) root.remove_child(n);
}

// The list sheet from the marker on: shifted tail rows, merges, the rest.
Status XlsxTemplateWriter::WriteListTail() {
  // No records: the list row stays as a styled blank, so the layout, merges
  // and footer formulas (SUM over one empty row = 0) hold without a #REF!.
  if (rows_ == 0) AppendBlankListRow();
  const RowShift shift{list_.row, std::max<int64_t>(rows_, 1)};
  EC_RETURN_IF_ERROR(ShiftTail(shift));
  EC_RETURN_IF_ERROR(FillCells(*list_sheet_, 1, kMaxRow));  // only the tail's are left
  ShiftRefsAfterSheetData(shift);
  const std::string xml = internal::NodeXml(*list_sheet_->doc);
  const std::string rows_marker = Comment(kRowsMarker);
  const std::string merges_marker = Comment(kMergesMarker);
  size_t from = xml.find(rows_marker);
  if (from == std::string::npos) return Internal("template: list marker lost");
  from += rows_marker.size();
  const size_t merges = xml.find(merges_marker, from);
  buf_.append(xml, from, merges == std::string::npos ? std::string::npos : merges - from);
  if (merges != std::string::npos) {
    EC_RETURN_IF_ERROR(WriteMerges());
    buf_.append(xml, merges + merges_marker.size());
  }
  EC_RETURN_IF_ERROR(zip_.Write(buf_));
  buf_.clear();
  return zip_.EndEntry();
}

void XlsxTemplateWriter::AppendBlankListRow() {
  const std::string number = std::to_string(list_.row);
  buf_ += "<row r=\"" + number + "\"" + list_.attrs + ">";
  for (const ListCell& cell : list_.cells) {
    if (!cell.style_attr.empty())
      buf_ += "<c r=\"" + cell.letters + number + "\"" + cell.style_attr + "/>";
  }
  buf_ += "</row>";
}

// Merges inside the list row, once per list row, streamed like the rows.
Status XlsxTemplateWriter::WriteMerges() {
  for (int64_t k = 0; k < std::max<int64_t>(rows_, 1); ++k) {
    const std::string r = std::to_string(list_.row + k);
    for (const std::string& span : list_.merges) {
      const size_t colon = span.find(':');
      buf_ += "<mergeCell ref=\"" + span.substr(0, colon) + r + ":" + span.substr(colon + 1) + r +
              "\"/>";
    }
    if (buf_.size() >= kFlushBytes) {
      EC_RETURN_IF_ERROR(zip_.Write(buf_));
      buf_.clear();
    }
  }
  return Status::Ok();
}

Status XlsxTemplateWriter::WriteXmlPart(const std::string& name, const std::string& xml) {
  EC_RETURN_IF_ERROR(zip_.BeginEntry(name));
  EC_RETURN_IF_ERROR(zip_.Write(xml));
  return zip_.EndEntry();
}

// Sheets with single values are rewritten; workbook.xml too when formulas
// moved (full recalculation on load); every other part is copied as stored.
Status XlsxTemplateWriter::WriteOtherParts() {
  for (const PackagePart& part : parts_) {
    if (part.name == list_sheet_->part) continue;
    auto sheet = std::find_if(sheets_.begin(), sheets_.end(),
                              [&](const TemplateSheet& s) { return s.part == part.name; });
    if (sheet != sheets_.end() && !sheet->cells.empty()) {
      EC_RETURN_IF_ERROR(FillCells(*sheet, 1, kMaxRow));
      EC_RETURN_IF_ERROR(WriteXmlPart(part.name, internal::NodeXml(*sheet->doc)));
      continue;
    }
    if (part.name == kWorkbook && formulas_shifted_) {
      EC_ASSIGN_OR_RETURN(std::string xml, internal::PartText(part));
      pugi::xml_document doc;
      if (doc.load_buffer(xml.data(), xml.size(),
                          pugi::parse_default | pugi::parse_declaration | pugi::parse_ws_pcdata)) {
        pugi::xml_node root = doc.document_element();
        pugi::xml_node calc;
        for (pugi::xml_node n : root.children()) {
          if (internal::LocalName(n) == "calcPr") calc = n;
        }
        if (!calc) {
          pugi::xml_node after;
          for (pugi::xml_node n : root.children()) {
            const std::string_view name = internal::LocalName(n);
            if (name == "sheets" || name == "functionGroups" || name == "externalReferences" ||
                name == "definedNames") {
              after = n;
            }
          }
          calc = after ? root.insert_child_after("calcPr", after) : root.append_child("calcPr");
        }
        if (!calc.attribute("fullCalcOnLoad")) calc.append_attribute("fullCalcOnLoad");
        calc.attribute("fullCalcOnLoad").set_value("1");
        EC_RETURN_IF_ERROR(WriteXmlPart(part.name, internal::NodeXml(doc)));
        continue;
      }
    }
    EC_RETURN_IF_ERROR(
        zip_.AddRawEntry(part.name, part.method, part.crc, part.size, part.compressed));
  }
  return Status::Ok();
}

StatusOr<WriteSummary> XlsxTemplateWriter::Finish() {
  EC_RETURN_IF_ERROR(status_);
  if (state_ != State::kWriting) return Check(Internal("xlsx template: Finish without Begin"));
  state_ = State::kDone;
  singles_["rowCount"] = rows_;
  EC_RETURN_IF_ERROR(Check(WriteListTail()));
  EC_RETURN_IF_ERROR(Check(WriteOtherParts()));
  EC_RETURN_IF_ERROR(Check(zip_.Finish()));
  return WriteSummary{.rows = rows_, .truncated_cells = truncated_, .part_rows = {rows_}};
}

}  // namespace

const std::vector<std::string>& XlsxTemplateBuiltins() {
  static const std::vector<std::string> kBuiltins = {"taskName", "exportedAt", "rowCount"};
  return kBuiltins;
}

StatusOr<XlsxTemplateInfo> InspectXlsxTemplate(std::string_view template_bytes) {
  EC_ASSIGN_OR_RETURN(std::vector<PackagePart> parts, internal::ReadPackage(template_bytes));
  std::vector<std::string> shared;
  for (const PackagePart& p : parts) {
    if (p.name != kSharedStrings) continue;
    EC_ASSIGN_OR_RETURN(std::string xml, internal::PartText(p));
    EC_ASSIGN_OR_RETURN(shared, internal::ParseSharedStrings(xml));
  }
  XlsxTemplateInfo info;
  std::set<std::string> singles;
  bool has_workbook = false;
  for (const PackagePart& p : parts) {
    has_workbook = has_workbook || p.name == kWorkbook;
    if (!IsWorksheet(p.name)) continue;
    EC_ASSIGN_OR_RETURN(std::string xml, internal::PartText(p));
    TemplateSheet sheet;
    EC_RETURN_IF_ERROR(internal::LoadSheet(p.name, xml, shared, &sheet));
    if (sheet.list_row) {
      if (!info.list_sheet.empty()) {
        return InvalidArgument("template: both " + info.list_sheet + " and " + p.name +
                               " hold {.field} list rows; only one list row is supported");
      }
      info.list_sheet = p.name;
      info.list_row = sheet.list_row_number;
    }
    for (const auto& cell : sheet.cells) {
      for (const Token& t : cell.tokens) {
        if (t.kind == Token::kSingle) singles.insert(t.text);
        if (t.kind == Token::kField && cell.row == sheet.list_row_number &&
            std::find(info.list_fields.begin(), info.list_fields.end(), t.text) ==
                info.list_fields.end()) {
          info.list_fields.push_back(t.text);
        }
        if (t.kind == Token::kSingle && t.text == "rowCount" && sheet.list_row &&
            cell.row <= sheet.list_row_number) {
          return InvalidArgument("template: {rowCount} in " + p.name +
                                 " is on or above the list row; the count is known only at the "
                                 "end, so put it below the list or on another sheet");
        }
      }
    }
  }
  if (!has_workbook) return InvalidArgument("template has no xl/workbook.xml: not an .xlsx");
  if (info.list_sheet.empty()) {
    return InvalidArgument(
        "template has no list row: put {.key} markers (one per column key) in one row");
  }
  info.single_values.assign(singles.begin(), singles.end());
  return info;
}

std::unique_ptr<Writer> NewXlsxTemplateWriter(ByteSink* sink, const WriterOptions& options,
                                              std::shared_ptr<const std::string> template_bytes,
                                              std::string single_values_json) {
  return std::make_unique<XlsxTemplateWriter>(sink, options, std::move(template_bytes),
                                              std::move(single_values_json));
}

}  // namespace export_center::render
