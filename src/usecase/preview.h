#pragma once
// The preview use case (docs/http-api.md#post-export-previews--preview): the
// columns, first rows and row count a create request would export, read by
// what an attempt reads, for a task that is never stored. It creates no task,
// writes no file, counts toward no create limit, and is limited per user
// (tenant + user) to preview.per-user-per-minute requests.
//
// Thread-safe: PreviewRateLimiter is; PreviewExport is a plain function.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "common/mutex.h"
#include "common/status.h"
#include "identity/principal.h"
#include "registry/registry.h"
#include "task/preview.h"
#include "task/task.h"
#include "usecase/create_request.h"

namespace export_center::usecase {

// Reads the preview of a task that is never stored (SourceRoutes::Preview).
using PreviewFn = std::function<StatusOr<task::PreviewTable>(
    const task::Task&, std::shared_ptr<const registry::RegistrySnapshot>)>;

// At most `per_minute` admissions per key in each one-minute window. Fixed
// windows rather than a sliding log: one counter per user, and the whole map
// is dropped when the window turns, so memory is bounded by one minute's
// callers.
class PreviewRateLimiter {
 public:
  explicit PreviewRateLimiter(int per_minute) : per_minute_(per_minute) {}
  // Counts the request and returns true if the key has budget left.
  bool Admit(const std::string& key, std::chrono::steady_clock::time_point now);
  int per_minute() const { return per_minute_; }

 private:
  const int per_minute_;
  Mutex mu_;
  std::chrono::steady_clock::time_point window_start_ GUARDED_BY(mu_);
  std::unordered_map<std::string, int> counts_ GUARDED_BY(mu_);
};

// The preview of `request` (checked for `caller`, CheckCreateBody), the
// caller's budget counted first: LimitExceeded over it; Internal without a
// reader; the reader's own errors (DeadlineExceeded, Unavailable classified
// for the person, attempt/export_preview.h).
StatusOr<task::PreviewTable> PreviewExport(const PreviewFn& read, PreviewRateLimiter& limiter,
                                           const Principal& caller, const CreateRequest& request);

}  // namespace export_center::usecase
