#include "render/writer.h"

#include "render/cell_text.h"

namespace export_center::render {

std::string GuardFormula(std::string text) {
  if (internal::NeedsFormulaGuard(text)) text.insert(text.begin(), '\'');
  return text;
}

OutputKind OutputKindFor(task::FileFormat format, const WriterOptions& options) {
  if (format == task::FileFormat::kCsv) {
    return options.csv_gzip ? OutputKind::kCsvGzip : OutputKind::kCsv;
  }
  // A template fills one workbook; split applies to the metadata-driven layout.
  if (options.rows_per_file > 0 && options.xlsx_template == nullptr) return OutputKind::kZip;
  return OutputKind::kXlsx;
}

std::string_view FileExtension(OutputKind kind) {
  switch (kind) {
    case OutputKind::kCsv:
      return "csv";
    case OutputKind::kCsvGzip:
      return "csv.gz";
    case OutputKind::kZip:
      return "zip";
    default:
      return "xlsx";
  }
}

std::string_view ContentType(OutputKind kind) {
  switch (kind) {
    case OutputKind::kCsv:
      return "text/csv; charset=utf-8";
    case OutputKind::kCsvGzip:
      return "application/gzip";
    case OutputKind::kZip:
      return "application/zip";
    default:
      return "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
  }
}

}  // namespace export_center::render
