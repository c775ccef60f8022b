#include "source/prefetching_row_source.h"

#include <utility>

namespace export_center::source {

PrefetchingRowSource::PrefetchingRowSource(std::unique_ptr<RowSource> inner)
    : RowSourceWrapper(std::move(inner)),
      ahead_([this] { return this->inner()->NextPage(); }, "prefetch") {}

StatusOr<Page> PrefetchingRowSource::NextPage() {
  if (finished_) return Internal("NextPage called after the last page or an error");
  if (!started_) {
    ahead_.Start();
    started_ = true;
  }
  StatusOr<Page> page = ahead_.Take();
  if (page.ok() && first_) {
    // Copied before the next fetch starts: the caller reads these while
    // the worker runs the inner source.
    columns_ = inner()->columns();
    excel_template_ = inner()->excel_template();
    plan_advice_ = inner()->plan_advice();
    first_ = false;
  }
  if (!page.ok() || !page->has_more) {
    finished_ = true;
    return page;
  }
  ahead_.Start();
  return page;
}

// Nothing is in flight once the pages are over: the inner source's own
// facts, which may have grown since the first page (enrich statements' plan
// advice) or exist only after a failed first page.
const std::vector<task::Column>& PrefetchingRowSource::columns() const {
  return finished_ ? inner()->columns() : columns_;
}

std::shared_ptr<const std::string> PrefetchingRowSource::excel_template() const {
  return finished_ ? inner()->excel_template() : excel_template_;
}

std::vector<task::PlanAdvice> PrefetchingRowSource::plan_advice() const {
  return finished_ ? inner()->plan_advice() : plan_advice_;
}

std::optional<task::TaskState> PrefetchingRowSource::terminal_state() const {
  return finished_ ? inner()->terminal_state() : std::nullopt;
}

std::optional<std::string> PrefetchingRowSource::failure_code() const {
  return finished_ ? inner()->failure_code() : std::nullopt;
}

std::unique_ptr<RowSource> WithPrefetch(std::unique_ptr<RowSource> inner) {
  if (inner == nullptr) return inner;
  return std::make_unique<PrefetchingRowSource>(std::move(inner));
}

}  // namespace export_center::source
