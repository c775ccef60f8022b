#pragma once
// FaultyTaskStore: forwards every call to a real TaskStore (TaskStoreWrapper),
// except the ones a test makes fail (a database error on one statement, which
// a real database cannot be told to produce on cue).

#include <atomic>
#include <optional>
#include <string>

#include "store/task_store_wrapper.h"

namespace export_center::dispatch {

class FaultyTaskStore : public store::TaskStoreWrapper {
 public:
  explicit FaultyTaskStore(store::TaskStore* inner) : TaskStoreWrapper(inner) {}

  // The next `n` calls of the method fail with Unavailable; -1: every call.
  std::atomic<int> failing_renewals{0};
  std::atomic<int> failing_quarantines{0};
  std::atomic<int> renew_calls{0};
  std::atomic<int> progress_calls{0};

  StatusOr<store::RenewOutcome> RenewLease(const store::Attempt& a, int lease_seconds) override {
    ++renew_calls;
    if (Fail(failing_renewals)) return Unavailable("database is restarting");
    return TaskStoreWrapper::RenewLease(a, lease_seconds);
  }
  StatusOr<store::ProgressOutcome> UpdateProgress(const store::Attempt& a, int64_t processed,
                                                  std::optional<int64_t> total) override {
    ++progress_calls;
    return TaskStoreWrapper::UpdateProgress(a, processed, total);
  }
  Status QuarantineCommand(int64_t id, int32_t version, const std::string& event_id,
                           const std::string& reason) override {
    if (Fail(failing_quarantines)) return Unavailable("database is restarting");
    return TaskStoreWrapper::QuarantineCommand(id, version, event_id, reason);
  }

 private:
  static bool Fail(std::atomic<int>& budget) {
    int left = budget.load();
    while (left != 0) {
      if (left < 0) return true;
      if (budget.compare_exchange_weak(left, left - 1)) return true;
    }
    return false;
  }
};

}  // namespace export_center::dispatch
