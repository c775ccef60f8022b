#include "source/labelling_source.h"

#include <utility>

namespace export_center::source {

LabellingSource::LabellingSource(std::unique_ptr<RowSource> inner,
                                 std::vector<task::LabelOverride> overrides)
    : RowSourceWrapper(std::move(inner)), overrides_(std::move(overrides)) {}

const std::vector<task::Column>& LabellingSource::columns() const {
  return columns_ ? *columns_ : inner()->columns();
}

StatusOr<Page> LabellingSource::NextPage() {
  EC_ASSIGN_OR_RETURN(Page page, inner()->NextPage());
  if (!labeler_) {
    std::vector<task::Column> columns = inner()->columns();
    EC_RETURN_IF_ERROR(task::ApplyLabelOverrides(overrides_, &columns));
    labeler_.emplace(columns);
    columns_ = std::move(columns);
  }
  if (labeler_->empty()) {
    rows_ += static_cast<int64_t>(page.rows.size());
    return page;
  }
  for (task::Row& row : page.rows) {
    EC_RETURN_IF_ERROR(labeler_->Apply(++rows_, &row));
  }
  return page;
}

std::unique_ptr<RowSource> WithLabels(std::unique_ptr<RowSource> inner,
                                      std::vector<task::LabelOverride> overrides) {
  if (inner == nullptr) return inner;
  return std::make_unique<LabellingSource>(std::move(inner), std::move(overrides));
}

}  // namespace export_center::source
