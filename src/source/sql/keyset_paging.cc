#include "source/sql/keyset_paging.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "common/ascii.h"

namespace export_center::source {
namespace {

// Builds the text of one predicate, recording which boundary value each
// `?` binds.
class Writer {
 public:
  Writer(const std::vector<OrderTerm>& order, const std::vector<bool>& nullable,
         const std::vector<bool>& null_at, OrderingTraits traits)
      : order_(order), nullable_(nullable), null_at_(null_at), traits_(traits) {}

  // The rows at or after the boundary in the order: a leading range on
  // the first term (so a planner can seek an index), then the
  // lexicographic chain. Row values where the database turns them into a
  // range and nothing can be NULL.
  std::string AtOrAfter() {
    if (RowValuesApply()) return RowValues();
    if (order_.size() == 1) return AtOrAfter(0);
    std::string range = AtOrAfter(0);  // binds first: the text reads left to right
    return range + " AND " + Chain(0);
  }

  std::vector<size_t> TakeTerms() { return std::move(terms_); }

 private:
  bool Nullable(size_t i) const { return nullable_[i] || null_at_[i]; }

  // NULL comes after every value in this term's direction.
  bool NullsAfter(size_t i) const {
    return order_[i].descending ? traits_.nulls_first : !traits_.nulls_first;
  }

  bool RowValuesApply() const {
    if (!traits_.row_value_ranges || order_.size() < 2) return false;
    for (size_t i = 0; i < order_.size(); ++i) {
      if (Nullable(i) || order_[i].descending != order_[0].descending) return false;
    }
    return true;
  }

  std::string RowValues() {
    std::string columns, values;
    for (size_t i = 0; i < order_.size(); ++i) {
      columns += (i ? ", " : "") + order_[i].column;
      values += i ? ", ?" : "?";
      terms_.push_back(i);
    }
    return "(" + columns + ") " + (order_[0].descending ? "<=" : ">=") + " (" + values + ")";
  }

  std::string Bound(size_t i, bool strict) {
    terms_.push_back(i);
    const char* op =
        order_[i].descending ? (strict ? " < ?" : " <= ?") : (strict ? " > ?" : " >= ?");
    std::string text = order_[i].column + op;
    if (Nullable(i) && NullsAfter(i)) return "(" + text + " OR " + order_[i].column + " IS NULL)";
    return text;
  }

  // Strictly after the boundary in term i.
  std::string After(size_t i) {
    if (!null_at_[i]) return Bound(i, /*strict=*/true);
    return NullsAfter(i) ? "1 = 0" : order_[i].column + " IS NOT NULL";
  }

  // At or after the boundary in term i.
  std::string AtOrAfter(size_t i) {
    if (!null_at_[i]) return Bound(i, /*strict=*/false);
    return NullsAfter(i) ? order_[i].column + " IS NULL" : "1 = 1";
  }

  std::string Equal(size_t i) {
    if (null_at_[i]) return order_[i].column + " IS NULL";
    terms_.push_back(i);
    return order_[i].column + " = ?";
  }

  // (t_i after) OR (t_i equal AND chain(i+1)); the last term at-or-after.
  std::string Chain(size_t i) {
    if (i + 1 == order_.size()) return AtOrAfter(i);
    std::string after = After(i);
    std::string equal = Equal(i);
    std::string rest = Chain(i + 1);
    return "(" + after + " OR (" + equal + " AND " + rest + "))";
  }

  const std::vector<OrderTerm>& order_;
  const std::vector<bool>& nullable_;
  const std::vector<bool>& null_at_;
  OrderingTraits traits_;
  std::vector<size_t> terms_;
};

}  // namespace

std::vector<OrderTerm> ParseOrderBy(std::string_view validated) {
  std::vector<OrderTerm> out;
  size_t b = 0;
  while (b < validated.size()) {
    size_t e = validated.find(',', b);
    if (e == std::string_view::npos) e = validated.size();
    std::string_view segment = validated.substr(b, e - b);
    while (!segment.empty() && segment.front() == ' ') segment.remove_prefix(1);
    while (!segment.empty() && segment.back() == ' ') segment.remove_suffix(1);
    OrderTerm term;
    size_t space = segment.find(' ');
    term.column = std::string(segment.substr(0, space));
    term.descending =
        space != std::string_view::npos && EqualsIgnoreCaseAscii(segment.substr(space + 1), "DESC");
    if (!term.column.empty()) out.push_back(std::move(term));
    b = e + 1;
  }
  return out;
}

std::string FormatOrderBy(const std::vector<OrderTerm>& order) {
  std::string out;
  for (const auto& term : order) {
    if (!out.empty()) out += ", ";
    out += term.column + (term.descending ? " DESC" : "");
  }
  return out;
}

std::vector<OrderTerm> TotalOrder(std::vector<OrderTerm> order,
                                  const std::vector<std::string>& key) {
  for (const auto& column : key) {
    bool present = std::any_of(order.begin(), order.end(), [&](const OrderTerm& t) {
      return EqualsIgnoreCaseAscii(t.column, column);
    });
    if (!present) order.push_back({column, false});
  }
  return order;
}

KeysetQuery::KeysetQuery(std::string inner_sql, std::vector<OrderTerm> order,
                         std::vector<bool> nullable, OrderingTraits traits)
    : inner_sql_(std::move(inner_sql)),
      order_(std::move(order)),
      nullable_(std::move(nullable)),
      traits_(traits) {
  first_page_ =
      "SELECT * FROM (" + inner_sql_ + ") _t ORDER BY " + FormatOrderBy(order_) + " LIMIT ?";
}

KeysetQuery::Built KeysetQuery::Build(const std::vector<bool>& null_at) const {
  Writer writer(order_, nullable_, null_at, traits_);
  Built built;
  built.sql = "SELECT * FROM (" + inner_sql_ + ") _t WHERE " + writer.AtOrAfter() + " ORDER BY " +
              FormatOrderBy(order_) + " LIMIT ?";
  built.terms = writer.TakeTerms();
  return built;
}

KeysetQuery::Page KeysetQuery::From(const std::vector<nlohmann::json>& boundary) {
  std::vector<bool> null_at(order_.size());
  for (size_t i = 0; i < order_.size(); ++i) null_at[i] = boundary[i].is_null();
  auto it = built_.find(null_at);
  if (it == built_.end()) it = built_.emplace(null_at, Build(null_at)).first;
  Page page{&it->second.sql, {}};
  page.params.reserve(it->second.terms.size());
  for (size_t term : it->second.terms) page.params.push_back(boundary[term]);
  return page;
}

}  // namespace export_center::source
