#pragma once
// PrefetchingRowSource: a RowSource wrapper that fetches the next page while
// the caller writes the current one — a bounded prefetch of one page, so the
// business service (or the replica) and the writer work at the same time
// instead of taking turns.
//
// The inner source runs on the worker of a ReadAhead (common/read_ahead.h),
// one NextPage at a time; the caller never calls it. A page with has_more
// starts the next fetch at once; an error or the last page starts nothing.
// So at most two pages are alive: the one the caller writes and the one being
// fetched.
//
// What the caller decides between pages — abort, lease, cancellation, the
// size cap — it decides on the page it holds: the prefetched page is simply
// dropped when the caller stops. Destroying the wrapper waits for a fetch in
// flight (bounded by the inner source's own timeouts).
//
// The source's facts are read without racing the worker: columns() is
// copied after the first page (the next fetch starts only after the copy),
// and the SourceFacts travel on the first page itself, which facts() answers
// while the pages go on; once they are over (the last one, or an error)
// nothing is in flight and columns() and facts() are the inner source's
// (RowSourceWrapper) — a failure's facts exist only then.
// Thread-compatible like any RowSource: one caller thread.

#include <memory>
#include <vector>

#include "common/read_ahead.h"
#include "source/row_source_wrapper.h"

namespace export_center::source {

class PrefetchingRowSource : public RowSourceWrapper {
 public:
  explicit PrefetchingRowSource(std::unique_ptr<RowSource> inner);

  // RowSource:
  const std::vector<task::Column>& columns() const override;
  StatusOr<Page> NextPage() override;
  // The first page's while the pages go on (no failure's facts: a failure
  // then is the caller's — the writer's, the size cap's — and the inner
  // source may be mid-fetch); the inner source's once they are over.
  SourceFacts facts() const override;

 private:
  // The caller's thread only.
  bool started_ = false;
  bool first_ = true;
  bool finished_ = false;
  std::vector<task::Column> columns_;
  SourceFacts facts_;  // the first page's

  ReadAhead<Page> ahead_;  // last: stopped before the members above go
};

// Wraps `inner` unless it is null.
std::unique_ptr<RowSource> WithPrefetch(std::unique_ptr<RowSource> inner);

}  // namespace export_center::source
