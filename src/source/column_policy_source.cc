#include "source/column_policy_source.h"

#include <utility>

namespace export_center::source {

ColumnPolicySource::ColumnPolicySource(std::unique_ptr<RowSource> inner, task::ColumnPolicy policy)
    : inner_(std::move(inner)), policy_(std::move(policy)) {}

const std::vector<task::Column>& ColumnPolicySource::columns() const {
  return applier_ ? applier_->Columns() : inner_->columns();
}

StatusOr<Page> ColumnPolicySource::NextPage() {
  EC_ASSIGN_OR_RETURN(Page page, inner_->NextPage());
  if (!applier_) applier_.emplace(policy_, inner_->columns());
  for (task::Row& row : page.rows) row = applier_->Apply(std::move(row));
  return page;
}

std::unique_ptr<RowSource> WithColumnPolicy(std::unique_ptr<RowSource> inner,
                                            task::ColumnPolicy policy) {
  if (inner == nullptr || policy.empty()) return inner;
  return std::make_unique<ColumnPolicySource>(std::move(inner), std::move(policy));
}

}  // namespace export_center::source
