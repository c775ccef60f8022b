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
    if (page->facts) facts_ = *page->facts;
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
// columns and facts, which may have grown since the first page or exist
// only after a failed one.
const std::vector<task::Column>& PrefetchingRowSource::columns() const {
  return finished_ ? inner()->columns() : columns_;
}

SourceFacts PrefetchingRowSource::facts() const { return finished_ ? inner()->facts() : facts_; }

std::unique_ptr<RowSource> WithPrefetch(std::unique_ptr<RowSource> inner) {
  if (inner == nullptr) return inner;
  return std::make_unique<PrefetchingRowSource>(std::move(inner));
}

}  // namespace export_center::source
