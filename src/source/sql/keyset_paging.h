#pragma once
// Keyset (seek) paging for the sql-template route
// (docs/sql-template-route.md#paging).
//
// A page after the first continues from the last row of the page before:
//   SELECT * FROM (<sql>) _t WHERE <order tuple> >= <that row's tuple>
//   ORDER BY <order> LIMIT ?
// so each page costs its own rows; OFFSET re-reads (and re-sorts) every row
// before the page, which makes a whole export quadratic. The order must be
// total: it holds a unique key (TotalOrder appends one).
//
// The comparison is not strict: the row the last page ended with comes back
// first and the caller skips it. Seeing that tuple twice proves the key was
// not unique after all — the caller then pages on by OFFSET instead of
// silently skipping a row.
//
// NULLs: a term may hold NULL only if `nullable` says so (the pre-flight
// count found one); its comparison then places NULL where the database sorts
// it (OrderingTraits::nulls_first). A NULL in a term built as not nullable is
// for the caller to notice (the tuple it binds back says so).
//
// Thread-compatible: one attempt, one thread.

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "source/sql/datasource/read_only_datasource.h"

namespace export_center::source {

struct OrderTerm {
  std::string column;  // a result label, as ValidateOrderBy spelt it
  bool descending = false;
};

// Parses an ORDER BY clause ValidateOrderBy returned ("a DESC, b").
std::vector<OrderTerm> ParseOrderBy(std::string_view validated);
// "a DESC, b": the clause for a list of terms.
std::string FormatOrderBy(const std::vector<OrderTerm>& order);

// `order` with every `key` column it lacks appended ascending (matched
// case-insensitively): a total order when the key is unique, with ties of
// `order` broken by the key.
std::vector<OrderTerm> TotalOrder(std::vector<OrderTerm> order,
                                  const std::vector<std::string>& key);

class KeysetQuery {
 public:
  // `inner_sql`: the rendered template; `nullable[i]`: order[i] may hold
  // NULL. REQUIRES: order non-empty, nullable.size() == order.size().
  KeysetQuery(std::string inner_sql, std::vector<OrderTerm> order, std::vector<bool> nullable,
              OrderingTraits traits);

  // `SELECT * FROM (<sql>) _t ORDER BY … LIMIT ?`
  const std::string& first_page() const { return first_page_; }

  // The statement of the page that starts at the row whose order-term
  // values are `boundary` (one per term, null for NULL), and the values it
  // binds after the template's own and before the LIMIT. Each text is built
  // once per pattern of NULLs in the boundary, so an attempt normally sends
  // one statement text for every page.
  struct Page {
    const std::string* sql;  // owned by this object
    std::vector<nlohmann::json> params;
  };
  Page From(const std::vector<nlohmann::json>& boundary);

 private:
  struct Built {
    std::string sql;
    std::vector<size_t> terms;  // the boundary value each `?` binds, in order
  };
  Built Build(const std::vector<bool>& null_at) const;

  std::string inner_sql_;
  std::vector<OrderTerm> order_;
  std::vector<bool> nullable_;
  OrderingTraits traits_;
  std::string first_page_;
  std::map<std::vector<bool>, Built> built_;  // by the boundary's NULL pattern
};

}  // namespace export_center::source
