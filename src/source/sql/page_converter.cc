#include "source/sql/page_converter.h"

#include <utility>

#include "source/sql/database_value.h"

namespace export_center::source {

StatusOr<std::vector<task::Row>> PageConverter::Convert(const ResultSet& raw,
                                                        Enrichment::PageCells cells) {
  std::vector<task::Row> rows;
  rows.reserve(raw.rows.size());
  for (size_t i = 0; i < raw.rows.size(); ++i) {
    EC_ASSIGN_OR_RETURN(task::Row row,
                        ConvertRow(raw.rows[i], rows_ + static_cast<int64_t>(i) + 1));
    rows.push_back(std::move(row));
  }
  Enrichment::Fill(std::move(cells), &rows);
  rows_ += static_cast<int64_t>(rows.size());
  if (rows_ > max_rows_) {
    return LimitExceeded("export exceeds the max-rows limit of " + std::to_string(max_rows_));
  }
  return rows;
}

StatusOr<task::Row> PageConverter::ConvertRow(const std::vector<std::optional<std::string>>& raw,
                                              int64_t n) const {
  task::Row row;
  row.reserve(plan_.size());
  for (const auto& p : plan_) {
    if (p.result_index < 0 || static_cast<size_t>(p.result_index) >= raw.size()) {
      row.emplace_back();
      continue;
    }
    auto v = ParseDatabaseValue(p.contract.column, raw[p.result_index], timezone_);
    if (!v.ok()) return v.status().WithContext("row " + std::to_string(n));
    row.push_back(std::move(v).value());
  }
  return row;
}

}  // namespace export_center::source
