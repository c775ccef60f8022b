#include "render/writer.h"

#include "render/cell_text.h"
#include "render/csv_writer.h"
#include "render/encryption/encrypted_writers.h"
#include "render/xlsx_split_writer.h"
#include "render/xlsx_template_writer.h"
#include "render/xlsx_writer.h"

namespace export_center::render {

std::string GuardFormula(std::string text) {
  if (internal::NeedsFormulaGuard(text)) text.insert(text.begin(), '\'');
  return text;
}

StatusOr<std::unique_ptr<Writer>> NewWriter(task::FileFormat format, ByteSink* sink,
                                            const WriterOptions& options) {
  const bool encrypted = options.file_key_material != nullptr;
  switch (format) {
    case task::FileFormat::kXlsx: {
      // A split .zip encrypts each entry itself (WinZip AES, zip_stream.h).
      if (options.rows_per_file > 0 && options.xlsx_template == nullptr) {
        return NewXlsxSplitWriter(sink, options);
      }
      auto plain = [options](ByteSink* out) -> std::unique_ptr<Writer> {
        if (options.xlsx_template != nullptr) {
          return NewXlsxTemplateWriter(out, options, options.xlsx_template,
                                       options.template_values_json);
        }
        return NewXlsxWriter(out, options);
      };
      if (encrypted) return encryption::NewAgileEncryptedWriter(sink, options, plain);
      return plain(sink);
    }
    case task::FileFormat::kCsv:
      if (encrypted) return encryption::NewAesZipCsvWriter(sink, options);
      return NewCsvWriter(sink, options);  // gzip inside
  }
  return InvalidArgument("unknown file format");
}

OutputKind OutputKindFor(task::FileFormat format, const WriterOptions& options) {
  if (format == task::FileFormat::kCsv) {
    if (options.file_key_material != nullptr) return OutputKind::kZip;  // an AES zip
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
