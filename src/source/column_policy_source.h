#pragma once
// ColumnPolicySource: a RowSource wrapper that applies a task's column policy
// (task/column_policy.h) to the columns and every row of the source it wraps,
// before any writer or preview sees them — the one place where governed
// columns are omitted, masked or hashed, for both routes and the preview
// (docs/configuration.md#column-governance-columns).
//
// A failure of the inner source that quotes a value of a governed column
// (Status::quoted_value: a cell that does not parse) comes out with the value
// replaced by kWithheldValue, so the value never leaves through a message.
//
// The columns are bound after the first page (only then does a source know
// them); everything else is the inner source's (RowSourceWrapper).
// Thread-compatible like any RowSource; Interrupt is the inner source's and
// thread-safe.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "source/row_source_wrapper.h"
#include "task/column_policy.h"

namespace export_center::source {

// What a governed column's quoted value becomes in a failure's message.
inline constexpr char kWithheldValue[] = "[withheld: a governed column]";

class ColumnPolicySource : public RowSourceWrapper {
 public:
  ColumnPolicySource(std::unique_ptr<RowSource> inner, task::ColumnPolicy policy);

  // RowSource:
  const std::vector<task::Column>& columns() const override;
  StatusOr<Page> NextPage() override;

 private:
  Status Withheld(const Status& failed) const;

  const task::ColumnPolicy policy_;
  std::optional<task::ColumnPolicyApplier> applier_;  // after the first page
};

// Wraps `inner` when `policy` has decisions; otherwise returns it as it is.
std::unique_ptr<RowSource> WithColumnPolicy(std::unique_ptr<RowSource> inner,
                                            task::ColumnPolicy policy);

}  // namespace export_center::source
