#pragma once
// XlsxSplitWriter (`split: files`): rows go to several .xlsx files of at most
// options.rows_per_file data rows each, all inside one .zip, with a
// manifest.json naming each file and its row count.
//
// Each inner file is a complete XlsxWriter workbook (header on every file,
// sheets split as usual) streamed straight into a *stored* entry of the
// outer ZIP: the inner file is deflated already, so a second deflate would
// cost time for < 1 % (docs/xlsx.md). The outer sink sees every byte as it
// is made, so the size cap applies to the .zip in flight. Entries:
//   {stem}_001.xlsx, {stem}_002.xlsx, ... then manifest.json:
//   {"files": [{"name": "..", "rows": N}, ...], "rows": total, "rowsPerFile": R}
// No rows: one file with the header only.

#include <memory>

#include "common/byte_sink.h"
#include "render/writer.h"

namespace export_center::render {

// `sink` is not owned and must outlive the writer. options.rows_per_file is
// clamped to 1..1 048 575 x 16 (0 means 1 048 575).
std::unique_ptr<Writer> NewXlsxSplitWriter(ByteSink* sink, const WriterOptions& options);

}  // namespace export_center::render
