#pragma once
// CellPreview: a typed cell as the text a reader of the finished file sees,
// for the export preview (docs/http-api.md#post-export-previews--preview).
//
// Built from the writers' own helpers (cell_text.h), applied in the writers'
// order (docs/xlsx.md#cells), so a preview cannot drift from the file:
//   STRING            cleaned (invalid UTF-8 → U+FFFD, XML-forbidden
//                     characters dropped), then the formula guard ('=1+1),
//                     and for XLSX cut at 32 767 UTF-16 units
//   INTEGER, DECIMAL  the exact digits
//   BOOLEAN           TRUE | FALSE
//   DATE              yyyy-MM-dd
//   DATETIME          yyyy-MM-dd HH:mm:ss in the export's time zone
//   null              "" (an empty CSV field, no XLSX cell)
// This is the CSV field as a CSV reader returns it; an XLSX cell holds the
// same value with its type (a number, a date) instead of the text.
// Not thread-safe: one preview, one thread.

#include <string>

#include "common/status.h"
#include "render/cell_text.h"
#include "task/table.h"
#include "task/task.h"

namespace export_center::render {

class CellPreview {
 public:
  // InvalidArgument when `timezone` is unknown (the writers refuse it too).
  static StatusOr<CellPreview> Create(const std::string& timezone, task::FileFormat format);

  // InvalidArgument for a DATE that is not a calendar date, as the writers.
  StatusOr<std::string> Text(const task::CellValue& value);

 private:
  CellPreview() = default;
  std::string GuardedText(std::string_view text);

  internal::LocalClock clock_;
  bool cut_at_xlsx_limit_ = false;
  std::string scratch_;
};

}  // namespace export_center::render
