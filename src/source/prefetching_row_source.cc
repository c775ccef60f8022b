#include "source/prefetching_row_source.h"

#include <utility>

#include "common/thread_guard.h"

namespace export_center::source {

PrefetchingRowSource::PrefetchingRowSource(std::unique_ptr<RowSource> inner)
    : inner_(std::move(inner)) {}

PrefetchingRowSource::~PrefetchingRowSource() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    cv_.SignalAll();
  }
  if (worker_.joinable()) worker_.join();
}

StatusOr<Page> PrefetchingRowSource::NextPage() {
  if (finished_) return Internal("NextPage called after the last page or an error");
  if (!worker_.joinable()) {
    worker_ = StartWorkerThread("prefetch", [this] { Work(); });
    RequestFetch();
  }
  StatusOr<Page> page = TakeFetched();
  if (page.ok() && first_) {
    // Copied before the next fetch starts: the caller reads these while
    // the worker runs the inner source.
    columns_ = inner_->columns();
    excel_template_ = inner_->excel_template();
    first_ = false;
  }
  if (!page.ok() || !page->has_more) {
    finished_ = true;
    return page;
  }
  RequestFetch();
  return page;
}

// Only after a failed page: no fetch is in flight then.
std::optional<task::TaskState> PrefetchingRowSource::terminal_state() const {
  return inner_->terminal_state();
}

std::optional<std::string> PrefetchingRowSource::failure_code() const {
  return inner_->failure_code();
}

void PrefetchingRowSource::RequestFetch() {
  MutexLock lock(&mu_);
  fetch_requested_ = true;
  cv_.SignalAll();
}

StatusOr<Page> PrefetchingRowSource::TakeFetched() {
  MutexLock lock(&mu_);
  while (!fetched_) cv_.Wait(&mu_);
  StatusOr<Page> page = std::move(*fetched_);
  fetched_.reset();
  return page;
}

void PrefetchingRowSource::Work() {
  while (true) {
    {
      MutexLock lock(&mu_);
      while (!fetch_requested_ && !stopping_) cv_.Wait(&mu_);
      if (stopping_) return;
      fetch_requested_ = false;
    }
    StatusOr<Page> page = RunGuardedOnce("prefetch", [this] { return inner_->NextPage(); });
    MutexLock lock(&mu_);
    fetched_.emplace(std::move(page));
    cv_.SignalAll();
  }
}

std::unique_ptr<RowSource> WithPrefetch(std::unique_ptr<RowSource> inner) {
  if (inner == nullptr) return inner;
  return std::make_unique<PrefetchingRowSource>(std::move(inner));
}

}  // namespace export_center::source
