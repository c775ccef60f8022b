#pragma once
// CsvWriter: UTF-8 CSV with a BOM (so Excel detects the encoding), RFC 4180
// quoting, CRLF line ends, the same formula guard as XLSX (docs/xlsx.md#csv).
//
// Values: INTEGER and DECIMAL as their exact digits, BOOLEAN as TRUE/FALSE
// (Excel's own spelling, read back as booleans), DATE yyyy-MM-dd, DATETIME
// yyyy-MM-dd HH:mm:ss in options.timezone, null as an empty field. Strings
// are cleaned like XLSX cells (invalid UTF-8 replaced, C0 controls other than
// tab/CR/LF dropped) but never truncated. With options.csv_gzip the same
// bytes are gzipped on the way to the sink (the size cap then counts the
// compressed file). docs/xlsx.md has the details.

#include <memory>

#include "common/byte_sink.h"
#include "render/writer.h"

namespace export_center::render {

// `sink` is not owned and must outlive the writer.
std::unique_ptr<Writer> NewCsvWriter(ByteSink* sink, const WriterOptions& options);

}  // namespace export_center::render
