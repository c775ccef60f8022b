#pragma once
// ColumnTotal: the exact value of one column's `total` (SUM, COUNT, MIN, MAX,
// AVG), accumulated row by row with integer arithmetic on the cells' decimal
// digits: no binary floating point, so 0.10 + 0.20 is 0.30. Used by the XLSX
// writer (the totals row's cached value) and the CSV writer (its totals row).
//
// Exactness: values are held as a 128-bit integer at the largest scale seen
// (a column's DECIMAL scale is 0..10, so 10^38 / 10^10 leaves 28 integer
// digits for a sum). An overflow makes Text() return nothing, and the writer
// then writes the formula without a cached value. AVG is sum / count rounded
// half away from zero to `scale` digits (Excel's ROUND, which the XLSX
// formula applies too). Cells that are not INTEGER or DECIMAL values (null,
// text) are skipped, as Excel's SUM/COUNT/MIN/MAX/AVERAGE skip them.

#include <cstdint>
#include <optional>
#include <string>

#include "task/table.h"

namespace export_center::render::internal {

class ColumnTotal {
 public:
  // `scale`: digits after the point of the result (the column's scale for
  // DECIMAL, 0 for INTEGER; AVG rounds to it).
  ColumnTotal(task::TotalKind kind, int scale) : kind_(kind), scale_(scale) {}
  // The total `column` asks for: at the column's scale (0..10) for DECIMAL
  // and for AVG, at scale 0 for the other totals of an INTEGER column.
  static ColumnTotal For(const task::Column& column);

  void Add(const task::CellValue& value);
  // The exact result as decimal text ("1234.50"), or nullopt when it is not
  // defined (AVG of no values) or overflowed.
  std::optional<std::string> Text() const;
  int64_t count() const { return count_; }
  task::TotalKind kind() const { return kind_; }

 private:
  struct Exact {
    __int128 v = 0;
    int scale = 0;
  };
  static bool Parse(const std::string& digits, Exact* out);
  static bool Rescale(Exact* x, int scale);

  void AddExact(Exact x);

  task::TotalKind kind_;
  int scale_;
  int64_t count_ = 0;
  bool overflow_ = false;
  Exact acc_;  // sum, or the min / max so far
};

}  // namespace export_center::render::internal
