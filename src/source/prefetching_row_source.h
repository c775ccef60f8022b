#pragma once
// PrefetchingRowSource: a RowSource wrapper that fetches the next page while
// the caller writes the current one — a bounded prefetch of one page, so the
// business service (or the replica) and the writer work at the same time
// instead of taking turns.
//
// The inner source runs on one worker thread the wrapper owns, one NextPage
// at a time; the caller never calls it. A page with has_more starts the next
// fetch at once; an error or the last page starts nothing. So at most two
// pages are alive: the one the caller writes and the one being fetched.
//
// What the caller still decides between pages — abort, lease, cancellation,
// the size cap — it decides as before: the prefetched page is simply dropped
// when the caller stops. Destroying the wrapper waits for a fetch in flight
// (bounded by the inner source's own timeouts).
//
// columns() and excel_template() are copied after the first page, and
// terminal_state()/failure_code() are read only after a failed page, when no
// fetch is in flight: the caller never reads the inner source while the
// worker runs it. Thread-compatible like any RowSource: one caller thread.

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "source/row_source.h"

namespace export_center::source {

class PrefetchingRowSource : public RowSource {
 public:
  explicit PrefetchingRowSource(std::unique_ptr<RowSource> inner);
  ~PrefetchingRowSource() override;
  PrefetchingRowSource(const PrefetchingRowSource&) = delete;
  PrefetchingRowSource& operator=(const PrefetchingRowSource&) = delete;

  // RowSource:
  const std::vector<task::Column>& columns() const override { return columns_; }
  StatusOr<Page> NextPage() override;
  std::optional<task::TaskState> terminal_state() const override;
  std::optional<std::string> failure_code() const override;
  std::shared_ptr<const std::string> excel_template() const override { return excel_template_; }
  // The inner source's: thread-safe, also while the worker waits in it.
  void Interrupt(const Status& reason) override { inner_->Interrupt(reason); }

 private:
  void RequestFetch();
  StatusOr<Page> TakeFetched();
  void Work();

  std::unique_ptr<RowSource> inner_;  // NextPage on worker_ only

  Mutex mu_;
  CondVar cv_;
  bool fetch_requested_ GUARDED_BY(mu_) = false;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::optional<StatusOr<Page>> fetched_ GUARDED_BY(mu_);

  // The caller's thread only.
  bool first_ = true;
  bool finished_ = false;
  std::vector<task::Column> columns_;
  std::shared_ptr<const std::string> excel_template_;
  std::thread worker_;
};

// Wraps `inner` unless it is null.
std::unique_ptr<RowSource> WithPrefetch(std::unique_ptr<RowSource> inner);

}  // namespace export_center::source
