#include "source/sql/sql_pager.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

namespace export_center::source {

using nlohmann::json;

SqlPager::SqlPager(std::shared_ptr<const PreparedQuery> query, ReadOnlyDatasource* datasource)
    : query_(std::move(query)), datasource_(datasource) {
  if (!query_->order.empty()) {
    keyset_.emplace(query_->sql, query_->order, query_->nullable, datasource_->ordering());
  }
}

PageStatement SqlPager::FirstPage() const {
  PageStatement first{keyset_ ? keyset_->first_page() : OffsetSql(), query_->bindings};
  if (keyset_) {
    first.params.emplace_back(static_cast<int64_t>(query_->batch_size));
  } else {
    first.params.emplace_back(query_->batch_size);
    first.params.emplace_back(0);
  }
  return first;
}

StatusOr<FetchedPage> SqlPager::ReadPage() {
  EC_ASSIGN_OR_RETURN(FetchedPage fetched, keyset_ ? FetchKeysetRows() : FetchOffsetRows());
  const ResultSet& raw = fetched.raw;
  if (keyset_ && !raw.rows.empty()) {
    boundary_ = TupleOf(raw.rows.back());
    boundary_row_ = raw.rows.back();
    boundary_params_.clear();
    for (int index : query_->order_index) boundary_params_.push_back(raw.last_row_params[index]);
  }
  rows_read_ += static_cast<int64_t>(raw.rows.size());
  return fetched;
}

// The first page is the order's first `batch` rows. Every later page asks
// for one row more, from the last exported row on: that row comes back
// first and is dropped, so a full page still brings `batch` new rows. When
// it was deleted meanwhile, the page brings batch+1 rows: none is cut off,
// since last_row_params describe only the last one.
StatusOr<FetchedPage> SqlPager::FetchKeysetRows() {
  std::vector<json> params = query_->bindings;
  const std::string* sql = &keyset_->first_page();
  size_t limit = static_cast<size_t>(query_->batch_size);
  if (!boundary_.empty()) {
    KeysetQuery::Page from = keyset_->From(boundary_params_);
    sql = from.sql;
    params.insert(params.end(), from.params.begin(), from.params.end());
    ++limit;
  }
  params.emplace_back(static_cast<int64_t>(limit));
  EC_ASSIGN_OR_RETURN(ResultSet raw, datasource_->Query(*sql, params, query_->schema));
  if (raw.rows.size() > limit) return Internal("the datasource returned more rows than LIMIT");
  if (auto broken = KeysetBroken(raw)) return LeaveKeyset(*broken);
  const bool full = raw.rows.size() == limit;
  if (!boundary_.empty() && !raw.rows.empty() && TupleOf(raw.rows.front()) == boundary_) {
    raw.rows.erase(raw.rows.begin());  // the last row of the previous page
  }
  db_offset_ += static_cast<int64_t>(raw.rows.size());
  return FetchedPage{std::move(raw), full};
}

// Why the key cannot be trusted any more, or nullopt: the row the last page
// ended with has a twin (kBoundaryTwin: the next seek would skip it), two
// new rows share a tuple, or a term the pre-flight count found no NULL in
// holds one (the comparison built for it skips NULL rows).
std::optional<SqlPager::KeysetBreak> SqlPager::KeysetBroken(const ResultSet& raw) const {
  if (!raw.rows.empty() && raw.last_row_params.size() != raw.columns.size()) {
    return KeysetBreak{false, "the datasource did not return the last row's values to bind"};
  }
  std::vector<std::optional<std::string>> previous;
  for (size_t r = 0; r < raw.rows.size(); ++r) {
    auto tuple = TupleOf(raw.rows[r]);
    for (size_t i = 0; i < tuple.size(); ++i) {
      if (!tuple[i] && !query_->nullable[i]) {
        return KeysetBreak{false, "order column " + query_->order[i].column +
                                      " holds a NULL the pre-flight count did not find"};
      }
    }
    if (r > 0 && tuple == previous) {
      const bool twin = !boundary_.empty() && tuple == boundary_;
      return KeysetBreak{twin, "two rows share the order tuple: the key is not unique"};
    }
    previous = std::move(tuple);
  }
  return std::nullopt;
}

// Keyset paging stops being safe: OFFSET pages take over, ordered by every
// result column after the terms, so that ties fall the same way on every
// page. Every tuple exported so far was unique, hence the pages so far hold
// exactly the rows up to the boundary — except when the boundary itself
// has a twin: then OFFSET restarts at the boundary's group and the one row
// of it already exported is skipped when it comes again.
StatusOr<FetchedPage> SqlPager::LeaveKeyset(const KeysetBreak& why) {
  spdlog::warn(
      "sql-template taskId={} queryId={}: {}; paging by OFFSET from row {} on (slower; no row "
      "is lost)",
      query_->task_id, query_->query_id, why.reason, rows_read_ + 1);
  keyset_.reset();
  order_by_every_column_ = true;
  db_offset_ = rows_read_;
  if (why.boundary_twin) {
    db_offset_ = rows_read_ - 1;
    skip_once_ = boundary_row_;
  }
  return FetchOffsetRows();
}

std::vector<std::optional<std::string>> SqlPager::TupleOf(
    const std::vector<std::optional<std::string>>& row) const {
  std::vector<std::optional<std::string>> tuple;
  tuple.reserve(query_->order_index.size());
  for (int index : query_->order_index) tuple.push_back(row[index]);
  return tuple;
}

std::string SqlPager::OffsetSql() const {
  std::string sql = "SELECT * FROM (" + query_->sql + ") _t";
  std::string order = query_->order.empty() ? query_->order_by : FormatOrderBy(query_->order);
  if (order_by_every_column_) {
    // By position: a label need not be a plain identifier.
    for (size_t c = 0; c < query_->result_width; ++c) {
      bool in_order = std::find(query_->order_index.begin(), query_->order_index.end(),
                                static_cast<int>(c)) != query_->order_index.end();
      if (!in_order) order += ", " + std::to_string(c + 1);
    }
  }
  if (!order.empty()) sql += " ORDER BY " + order;
  return sql + " LIMIT ? OFFSET ?";
}

StatusOr<FetchedPage> SqlPager::FetchOffsetRows() {
  const std::string sql = OffsetSql();
  std::vector<json> params = query_->bindings;
  params.emplace_back(query_->batch_size);
  params.emplace_back(db_offset_);
  EC_ASSIGN_OR_RETURN(ResultSet raw, datasource_->Query(sql, params, query_->schema));
  if (raw.rows.size() > static_cast<size_t>(query_->batch_size)) {
    return Internal("the datasource returned more rows than LIMIT");
  }
  const bool full = raw.rows.size() == static_cast<size_t>(query_->batch_size);
  db_offset_ += static_cast<int64_t>(raw.rows.size());
  if (skip_once_) {
    auto again = std::find(raw.rows.begin(), raw.rows.end(), *skip_once_);
    if (again != raw.rows.end()) {
      raw.rows.erase(again);
      skip_once_.reset();
    }
  }
  return FetchedPage{std::move(raw), full};
}

}  // namespace export_center::source
