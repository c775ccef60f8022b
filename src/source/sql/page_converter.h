#pragma once
// PageConverter: a page of database text to typed rows with the contract's
// column types (database_value.h), its enriched cells filled in — the
// sql-template source's last stage (sql_pager.h lists the three), the
// caller's thread's. Counts the rows it converted against max-rows.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "source/sql/datasource/read_only_datasource.h"
#include "source/sql/enrichment.h"
#include "task/table.h"

namespace export_center::source {

// Not thread-safe: one thread (the caller of NextPage).
class PageConverter {
 public:
  // `timezone`: for DATETIME values without an offset.
  PageConverter(std::vector<ColumnPlan> plan, std::string timezone, int64_t max_rows)
      : plan_(std::move(plan)), timezone_(std::move(timezone)), max_rows_(max_rows) {}

  // The rows of `raw` with `cells` filled in. A value that does not convert
  // fails naming its row (counted from the export's first); more rows than
  // max-rows so far is LimitExceeded.
  StatusOr<std::vector<task::Row>> Convert(const ResultSet& raw, Enrichment::PageCells cells);

  int64_t rows() const { return rows_; }  // converted so far

 private:
  StatusOr<task::Row> ConvertRow(const std::vector<std::optional<std::string>>& raw,
                                 int64_t n) const;

  const std::vector<ColumnPlan> plan_;
  const std::string timezone_;
  const int64_t max_rows_;
  int64_t rows_ = 0;
};

}  // namespace export_center::source
