#pragma once
// Writer: turns typed rows into the bytes of one file, streaming.
//
// Backends: XlsxWriter (xlsx_writer.h), CsvWriter (csv_writer.h, optionally
// gzipped), XlsxTemplateWriter (xlsx_template_writer.h), XlsxSplitWriter
// (xlsx_split_writer.h). A writer appends to a ByteSink as it goes and keeps memory
// bounded whatever the row count; the sink enforces the file-size cap, so a
// LimitExceeded from any call means "stop now, the file is too big".
// Not thread-safe: one file, one thread.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/byte_sink.h"
#include "common/status.h"
#include "render/render_options.h"
#include "task/table.h"
#include "task/task.h"

namespace export_center::render {

struct WriterOptions {
  std::string sheet_name = "Sheet1";
  std::string timezone = "Asia/Shanghai";  // DATETIME cells are shown in this zone
  int max_column_width = 255;
  int64_t rows_per_sheet = 1048575;  // data rows per sheet, header excluded
  // zlib level 0..9 of XLSX entries (and of CSV when csv_gzip). Deflate is
  // most of the XLSX writer's cost: at 1 000 000 rows level 1 took 8.18 s
  // for 83.4 MB and level 6 24.49 s for 69.6 MB, i.e. 3.0x faster for a 20 %
  // larger file (bench/xlsx_bench.cc, measured in docs/xlsx.md#performance).
  int deflate_level = 1;
  // CSV only: gzip the file (`.csv.gz`, application/gzip) at deflate_level.
  bool csv_gzip = false;
  // XLSX only, definition `split: files`: > 0 makes a .zip of .xlsx files of
  // at most this many data rows each plus manifest.json (xlsx_split_writer.h).
  int64_t rows_per_file = 0;
  std::string split_file_stem = "export";  // inner names: {stem}_001.xlsx, ...
  // XLSX only, definition `template-file`: fill this .xlsx template instead of
  // the metadata-driven layout (xlsx_template_writer.h), with these single
  // values (JSON object: task parameters plus taskName).
  std::shared_ptr<const std::string> xlsx_template;
  std::string template_values_json;
  // Columns with a `total`: the totals row's label, in the first column
  // without a total ("" leaves it out). XLSX and CSV (docs/xlsx.md#totals).
  std::string totals_label = "Total";
  // Password-protected file (render/file_encryption.h): the key material
  // DeriveFileKeyMaterial made at create; nullptr writes a plain file. XLSX
  // becomes an Agile-encrypted workbook, CSV and split parts an AES zip
  // (render/encryption/encrypted_writers.h, docs/xlsx.md#encrypted-files).
  std::shared_ptr<const std::string> file_key_material{};
  // Where an encrypted XLSX spools its ciphertext (never plaintext) until
  // Finish; "" = the system's temporary directory (TMPDIR).
  std::string spool_directory{};
  // 9 or 12 forces the encrypted XLSX's compound-file sector size (0 = by size).
  int cfb_sector_shift_for_test{0};
};

// Which file a writer with these options makes, for the object key, the
// download name and the Content-Type: xlsx | csv | csv.gz | zip.
enum class OutputKind { kXlsx, kCsv, kCsvGzip, kZip };
OutputKind OutputKindFor(task::FileFormat format, const WriterOptions& options);
std::string_view FileExtension(OutputKind kind);  // "xlsx", "csv", "csv.gz", "zip"
std::string_view ContentType(OutputKind kind);

struct WriteSummary {
  int64_t rows = 0;
  int truncated_cells = 0;  // cells cut at 32 767 characters
  // Data rows of each part, in order: the sheets of an XLSX, the files of a
  // split .zip, the one part of a CSV. Recorded in the file's manifest.
  std::vector<int64_t> part_rows;
};

class Writer {
 public:
  virtual ~Writer() = default;
  // Must be called once, before any row.
  virtual Status Begin(const std::vector<task::Column>& columns) = 0;
  // REQUIRES: row.size() == columns.size().
  virtual Status WriteRow(const task::Row& row) = 0;
  // Writes the trailer. After Finish the sink holds a complete file.
  virtual StatusOr<WriteSummary> Finish() = 0;
};

// The writer of `format` these options ask for: XLSX (metadata-driven, split
// into a .zip, or a template fill) or CSV, wrapped for a password-protected
// file when options.file_key_material is set. `sink` is not owned and must
// outlive the writer. InvalidArgument for an unknown format.
StatusOr<std::unique_ptr<Writer>> NewWriter(task::FileFormat format, ByteSink* sink,
                                            const WriterOptions& options);

// Prefixes strings that a spreadsheet would read as a formula (= + - @ \t \r)
// with an apostrophe (docs/xlsx.md#cells).
std::string GuardFormula(std::string text);

}  // namespace export_center::render
