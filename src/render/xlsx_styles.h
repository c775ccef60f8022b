#pragma once
// styles.xml of XlsxWriter and the per-column styles that point into it: the
// number format, alignment and wrap of data cells, the header and totals
// cells, and each highlighted column's conditional format (docs/xlsx.md).
// Internal to render/.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "task/table.h"

namespace export_center::render::internal {

// One column's conditional format: the rule's XML after `sqref="..."`, split
// around its priority (numbered per sheet when the sheet is closed).
struct ConditionalFormat {
  size_t col = 0;
  std::string rule_head{};  // <cfRule ... priority="
  std::string rule_tail{};  // ">...</cfRule>
};

struct WorkbookStyles {
  std::string xml{};                            // styles.xml
  std::vector<std::string> style_attr{};        // data cells: ` s="N"` or "" per column
  std::vector<int> header_style{};              // xf of each column's header cell
  std::vector<std::string> total_style_attr{};  // the totals row's cells
  std::vector<ConditionalFormat> conditionals{};
};

// The styles of `columns` under `header_rows` header rows; conditional
// formulas refer to `first_data_row`, the same row on every sheet.
WorkbookStyles BuildWorkbookStyles(const std::vector<task::Column>& columns, int header_rows,
                                   int64_t first_data_row);

}  // namespace export_center::render::internal
