#pragma once
// The merged runs of XlsxWriter's data rows: per merged column (and the
// mergeWithin parent of one) the run of equal values the current row
// continues or breaks, and the sheet's finished merges, kept compact until
// the sheet is closed (docs/xlsx.md#merged-runs). Internal to render/.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "task/table.h"

namespace export_center::render::internal {

class MergedRuns {
 public:
  // Tracks the merged columns of `columns` and their mergeWithin parents.
  void Build(const std::vector<task::Column>& columns);
  bool empty() const { return runs_.empty(); }

  // Before a row's cells are written: which runs the row breaks. `sheet_row`
  // is the row's 0-based data row in its sheet.
  void Mark(const task::Row& row, int64_t sheet_row);
  // Whether column `col`'s cell of the marked row continues a merged run
  // (the merge hides it).
  bool skip(size_t col) const { return skip_[col] != 0; }
  // After the row is written: the runs it broke start at it.
  void Commit(const task::Row& row, int64_t sheet_row);

  // Ends the sheet's open runs; `sheet_rows` data rows were written.
  void CloseSheet(int64_t sheet_rows);
  // The merges of the closed sheet.
  int64_t count() const;
  // Appends a <mergeCell> per merge (data rows numbered from
  // `first_data_row`), calling `flush` after each.
  Status AppendMergeCells(const std::vector<std::string>& letters, int64_t first_data_row,
                          std::string* out, const std::function<Status()>& flush) const;
  // Forgets the closed sheet's merges before the next sheet.
  void ClearSheet();

 private:
  // One tracked column. The sheet's merges of the column are kept as LEB128
  // varint pairs (rows since the previous merge's end, length - 2): a dense
  // run of 2 costs 2 bytes, so the list is at most 1 byte per data row.
  struct Run {
    size_t col = 0;
    int parent = -1;  // index in runs_ of the parent's Run, or -1
    bool merged = false;
    task::CellValue prev{};
    int64_t start = 0;  // sheet data row (0-based) of the open run's first row
    bool brk = false;   // the row being written starts a new run
    std::string list{};
    int64_t last_end = 0;  // sheet data row after the previous merge
    int64_t count = 0;
  };

  static void CloseRun(Run* run, int64_t last);

  std::vector<Run> runs_;
  std::vector<char> skip_;  // per column: this row's cell continues a merged run
};

}  // namespace export_center::render::internal
