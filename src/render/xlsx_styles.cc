// styles.xml and the column styles of xlsx_styles.h: which xf each data,
// header and totals cell uses, and the conditional formats of highlighted
// columns with their dxfs.
#include "render/xlsx_styles.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <utility>

#include "render/cell_text.h"
#include "render/xlsx_cells.h"
#include "render/xlsx_parts.h"

namespace export_center::render::internal {
namespace {

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

// A formula's text literal: "..." with quotes doubled.
std::string FormulaText(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// Data cells: the number format, alignment and wrap (merged columns centred
// vertically, as EasyExcel shows a merged group). Headers: bold, the header
// colours, centred when the header has several rows.
void AddColumnStyles(const std::vector<task::Column>& columns, int header_rows, StyleTable* styles,
                     WorkbookStyles* out) {
  const bool grouped = header_rows > 1;
  for (const task::Column& c : columns) {
    const std::string format = ColumnFormat(c);
    const StyleTable::Xf data{.num_fmt = styles->NumFmt(format),
                              .align = c.style.align,
                              .vcenter = c.merge != task::MergeMode::kNone,
                              .wrap = c.style.wrap};
    const int xf = data == StyleTable::Xf{} ? 0 : styles->XfFor(data);
    out->style_attr.push_back(xf == 0 ? "" : " s=\"" + std::to_string(xf) + "\"");
    StyleTable::Xf total = data;
    if (c.total == task::TotalKind::kAvg && c.type == task::ColumnType::kInteger) {
      const int scale = std::clamp(c.scale, 0, 10);
      total.num_fmt = styles->NumFmt(scale == 0 ? "0" : "0." + std::string(scale, '0'));
    }
    const int total_xf = styles->XfFor(total);
    out->total_style_attr.push_back(total_xf == 0 ? "" : " s=\"" + std::to_string(total_xf) + "\"");
    StyleTable::Xf head{.font = 1};
    if (!c.style.header_font.empty()) head.font = styles->BoldFont(c.style.header_font);
    if (!c.style.header_fill.empty()) head.fill = styles->SolidFill(c.style.header_fill);
    if (grouped) {
      head.align = task::Align::kCenter;
      head.vcenter = true;
    }
    out->header_style.push_back(styles->XfFor(head));
  }
}

// One rule per highlighted column, its dxf in styles.xml. The formula is
// relative to the first data cell, which is the same row on every sheet.
void AddConditionals(const std::vector<task::Column>& columns, int64_t first_data_row,
                     StyleTable* styles, WorkbookStyles* out) {
  for (size_t i = 0; i < columns.size(); ++i) {
    const task::Column& c = columns[i];
    const task::Highlight& h = c.highlight;
    if (h.op == task::HighlightOp::kNone || h.values.empty()) continue;
    const bool numeric = c.labels.empty() && (c.type == task::ColumnType::kInteger ||
                                              c.type == task::ColumnType::kDecimal);
    auto literal = [&](const std::string& v) { return numeric ? v : FormulaText(v); };
    const int dxf = styles->Dxf(h.fill, h.font);
    ConditionalFormat cf{.col = i};
    std::string formula;
    if (h.op == task::HighlightOp::kIn) {
      const std::string first = ColumnLetters(i) + std::to_string(first_data_row);
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
    out->conditionals.push_back(std::move(cf));
  }
}

}  // namespace

WorkbookStyles BuildWorkbookStyles(const std::vector<task::Column>& columns, int header_rows,
                                   int64_t first_data_row) {
  WorkbookStyles out;
  StyleTable styles;
  AddColumnStyles(columns, header_rows, &styles, &out);
  AddConditionals(columns, first_data_row, &styles, &out);
  out.xml = styles.Xml();
  return out;
}

}  // namespace export_center::render::internal
