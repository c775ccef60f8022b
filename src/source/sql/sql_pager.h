#pragma once
// The sql-template source's three stages (docs/sql-template-route.md#paging),
// one class per thread that owns it, so the types say who owns what:
//
//   PreparedQuery  what the first NextPage worked out (sql_template_source.cc
//                  Prepare), immutable after it and shared by every stage;
//   SqlPager       the page statements — owned by the page-reading worker
//                  (ReadAhead "read_ahead"): its paging state (keyset seek,
//                  boundary, OFFSET fallback) is touched by no other thread;
//   PageEnricher   (page_enricher.h) each page's enriched cells — owned by
//                  the lookup worker ("lookup_ahead");
//   PageConverter  (page_converter.h) text to typed cells — the caller's.
//
// SqlTemplateSource only orchestrates: it prepares, starts the two workers
// and hands a page from one stage to the next.

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "source/sql/datasource/read_only_datasource.h"
#include "source/sql/keyset_paging.h"

namespace export_center::source {

// The rendered query and its paging plan. Immutable once built.
struct PreparedQuery {
  int64_t task_id = 0;   // for logs
  std::string query_id;  // for logs
  std::string schema;    // the contract's
  std::string sql;       // rendered, scanned, without a trailing ';'
  std::vector<nlohmann::json> bindings{};
  std::string order_by;  // validated, as the contract gave it
  // Paging (docs/sql-template-route.md#paging): by key when the order holds
  // a unique key (order non-empty), else by OFFSET.
  std::vector<OrderTerm> order{};  // order_by plus the key's missing columns
  std::vector<int> order_index{};  // result index of each term
  std::vector<bool> nullable{};    // per term: the pre-flight count found a NULL
  size_t result_width = 0;         // result columns
  int batch_size = 500;
};

// A statement and the values it binds.
struct PageStatement {
  std::string sql;
  std::vector<nlohmann::json> params{};
};

// A page's rows as the database gave them, and whether it had more after them.
struct FetchedPage {
  ResultSet raw;
  bool has_more = false;
};

// Runs the page statements, one ReadPage per page, in order. Not
// thread-safe: after construction, one thread (the page-reading worker).
class SqlPager {
 public:
  // The datasource must outlive the pager.
  SqlPager(std::shared_ptr<const PreparedQuery> query, ReadOnlyDatasource* datasource);
  SqlPager(const SqlPager&) = delete;
  SqlPager& operator=(const SqlPager&) = delete;

  // The first page statement exactly as the first ReadPage sends it (for
  // plan advice). Later pages differ only by the key seek's boundary (or
  // the OFFSET), which plans the same way. Before the first ReadPage.
  PageStatement FirstPage() const;

  // One page statement: the rows and, by key, the boundary the next page
  // seeks from — all it needs of this page, so the next can run while this
  // one is still enriched and converted.
  StatusOr<FetchedPage> ReadPage();

 private:
  struct KeysetBreak {
    bool boundary_twin = false;  // the last exported row's tuple came twice
    std::string reason;
  };
  StatusOr<FetchedPage> FetchKeysetRows();
  StatusOr<FetchedPage> FetchOffsetRows();
  std::optional<KeysetBreak> KeysetBroken(const ResultSet& raw) const;
  StatusOr<FetchedPage> LeaveKeyset(const KeysetBreak& why);
  std::vector<std::optional<std::string>> TupleOf(
      const std::vector<std::optional<std::string>>& row) const;
  std::string OffsetSql() const;

  const std::shared_ptr<const PreparedQuery> query_;
  ReadOnlyDatasource* const datasource_;
  std::optional<KeysetQuery> keyset_;                     // while paging by key
  std::vector<std::optional<std::string>> boundary_;      // last exported row's order tuple
  std::vector<nlohmann::json> boundary_params_;           // the same, to bind
  std::vector<std::optional<std::string>> boundary_row_;  // the whole last exported row
  // After keyset paging gave up (LeaveKeyset): OFFSET pages ordered by every
  // column, from db_offset_, skipping once a row exported already.
  bool order_by_every_column_ = false;
  int64_t db_offset_ = 0;  // rows the OFFSET pages have read past
  std::optional<std::vector<std::optional<std::string>>> skip_once_;
  int64_t rows_read_ = 0;  // rows the page statements have delivered so far
};

}  // namespace export_center::source
