#include "source/column_policy_source.h"

#include <utility>

namespace export_center::source {

ColumnPolicySource::ColumnPolicySource(std::unique_ptr<RowSource> inner, task::ColumnPolicy policy)
    : RowSourceWrapper(std::move(inner)), policy_(std::move(policy)) {}

const std::vector<task::Column>& ColumnPolicySource::columns() const {
  return applier_ ? applier_->Columns() : inner()->columns();
}

// A message about a governed column names the column, never its value: the
// failure message, the preview's answer, the timeline, the webhook and the
// log all read the Status this returns.
Status ColumnPolicySource::Withheld(const Status& failed) const {
  const auto& quoted = failed.quoted_value();
  if (!quoted) return failed;
  for (const task::ColumnDecision& d : policy_.decisions) {
    if (d.key == quoted->column) return failed.WithoutQuotedValue(kWithheldValue);
  }
  return failed;
}

StatusOr<Page> ColumnPolicySource::NextPage() {
  StatusOr<Page> next = inner()->NextPage();
  if (!next.ok()) return Withheld(next.status());
  Page page = std::move(next).value();
  if (!applier_) applier_.emplace(policy_, inner()->columns());
  for (task::Row& row : page.rows) row = applier_->Apply(std::move(row));
  return page;
}

std::unique_ptr<RowSource> WithColumnPolicy(std::unique_ptr<RowSource> inner,
                                            task::ColumnPolicy policy) {
  if (inner == nullptr || policy.empty()) return inner;
  return std::make_unique<ColumnPolicySource>(std::move(inner), std::move(policy));
}

}  // namespace export_center::source
