#pragma once
// LabellingSource: a RowSource wrapper that applies the value labels of the
// columns (task::ValueLabeler, docs/xlsx.md#value-labels-labels-labelmissing)
// to every row of the source it wraps — the one place labels are applied, on
// both routes, for an attempt and for the preview alike. It sits inside the
// column-policy wrapper (source/column_policy_source.h), so a governed column
// is masked after its label: a masked label stays masked, and a FAIL
// message's value of a governed column is withheld there.
//
// A definition's labels for columns its source sends raw (task::LabelOverride,
// already in the task's language) are merged over the source's columns after
// the first page; a merge the options refuse fails that page with
// InvalidArgument naming the column. Everything else is the inner source's
// (RowSourceWrapper).
// Thread-compatible like any RowSource; Interrupt is the inner source's.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "source/row_source_wrapper.h"
#include "task/column_options.h"

namespace export_center::source {

class LabellingSource : public RowSourceWrapper {
 public:
  LabellingSource(std::unique_ptr<RowSource> inner, std::vector<task::LabelOverride> overrides);

  // RowSource:
  const std::vector<task::Column>& columns() const override;
  StatusOr<Page> NextPage() override;

 private:
  const std::vector<task::LabelOverride> overrides_;
  std::optional<std::vector<task::Column>> columns_;  // after the first page
  std::optional<task::ValueLabeler> labeler_;         // after the first page
  int64_t rows_ = 0;                                  // data rows labelled so far
};

// Wraps `inner` in a LabellingSource. Cheap for a source without labels: the
// wrapper then only passes pages on.
std::unique_ptr<RowSource> WithLabels(std::unique_ptr<RowSource> inner,
                                      std::vector<task::LabelOverride> overrides);

}  // namespace export_center::source
