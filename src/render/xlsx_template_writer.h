#pragma once
// XLSX template fill (docs/xlsx.md#template-fill-template-file): the business
// supplies an .xlsx whose cells hold `{name}` single values and `{.field}` list
// markers; the center streams one row per record in place of the list row and
// keeps everything else.
//
// Template rules (docs/xlsx.md "Template fill" has the details):
//   - Exactly one row in the whole workbook holds `{.field}` markers: the
//     list row. A cell that is exactly `{.field}` gets the typed value of the
//     column whose key is `field`; a cell mixing text and markers gets text.
//     Other cells of the list row (static text, styled blanks) repeat on every
//     list row. The template cell's style (s=) is kept on every list row.
//   - `{name}` is a single value: a task parameter, `taskName`, `exportedAt`
//     (yyyy-MM-dd HH:mm:ss in the export's time zone) or `rowCount` (rows
//     written; only known at the end, so it may appear below the list row or
//     on another sheet, never above the list row on the list sheet).
//   - Rows below the list shift down; merged cells, conditional formats, data
//     validations, hyperlinks and the auto-filter follow (a range ending on the
//     list row grows to the last list row; a merge inside the list row repeats
//     per row). Formulas below the list are re-pointed the same way, so a
//     footer `=SUM(C5:C5)` becomes `=SUM(C5:C100004)`; Excel recalculates on load.
//   - `<dimension>` of the list sheet is dropped (it precedes the streamed rows,
//     whose count is unknown; it is optional). Every other part of the package
//     (styles, other sheets without placeholders, images, ...) is copied byte
//     for byte, compressed bytes included.
// Placeholders that do not match the columns are InvalidArgument at Begin.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/byte_sink.h"
#include "render/writer.h"

namespace export_center::render {

struct XlsxTemplateInfo {
  std::vector<std::string> single_values;  // names of `{name}` placeholders
  std::vector<std::string> list_fields;    // keys of `{.field}` markers, in column order
  std::string list_sheet;                  // the part holding the list row
  int64_t list_row = 0;                    // its 1-based row number
};

// Built-in single values every template may use.
const std::vector<std::string>& XlsxTemplateBuiltins();  // taskName, exportedAt, rowCount

// Reads a template and lists its placeholders; for validation at config load.
// InvalidArgument, clearly worded, when the bytes are not a readable .xlsx, no
// row or more than one row holds `{.field}` markers, or `{rowCount}` sits
// above the list row on the list sheet.
StatusOr<XlsxTemplateInfo> InspectXlsxTemplate(std::string_view template_bytes);

// `sink` is not owned and must outlive the writer. `template_bytes` is the
// .xlsx (shared, read only). `single_values_json` is a JSON object of single
// values (task parameters plus taskName; exportedAt and rowCount are added
// unless present); invalid JSON or a non-object makes Begin fail.
// options.deflate_level applies to the parts the writer rewrites.
std::unique_ptr<Writer> NewXlsxTemplateWriter(ByteSink* sink, const WriterOptions& options,
                                              std::shared_ptr<const std::string> template_bytes,
                                              std::string single_values_json);

}  // namespace export_center::render
