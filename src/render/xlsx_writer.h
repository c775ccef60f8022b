#pragma once
// XlsxWriter: metadata-driven XLSX (docs/xlsx.md), streamed.
//
// Typed cells (numbers, booleans, dates as serial numbers with formats),
// inline strings, a bold frozen header repeated on every sheet, a new sheet
// every options.rows_per_sheet data rows. The workbook goes through a
// ZipStreamWriter straight into the sink: memory stays at one zlib stream and
// a row buffer whatever the row count, and the sink's size cap stops the
// export while it is written. File layout and cell rules: docs/xlsx.md.

#include <memory>

#include "common/byte_sink.h"
#include "render/writer.h"

namespace export_center::render {

// `sink` is not owned and must outlive the writer. An unknown
// options.timezone makes Begin fail with InvalidArgument.
std::unique_ptr<Writer> NewXlsxWriter(ByteSink* sink, const WriterOptions& options);

}  // namespace export_center::render
