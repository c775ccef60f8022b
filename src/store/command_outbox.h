#pragma once
// CommandOutbox: the export_outbox rows as the outbox publisher sees them
// (docs/dispatch.md#the-outbox-row) — a leased queue (store/leased_queue.h).
//
// Thread-safety: every method may be called from any thread; each is one
// statement or transaction, safe to retry after Unavailable.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/leased_queue.h"

namespace export_center::store {

enum class OutboxStatus { kPending, kClaimed, kSent, kQuarantined };
std::string_view ToString(OutboxStatus status);

struct OutboxEntry {
  int64_t id = 0;
  std::string event_id;
  int64_t task_id = 0;
  int32_t dispatch_version = 1;
  std::string payload_json;  // the encoded task::Command
  OutboxStatus status = OutboxStatus::kPending;
  int32_t attempt_count = 0;
  int64_t next_retry_at = 0;
  std::optional<std::string> lease_owner;
  std::optional<int64_t> lease_until;
  std::optional<int64_t> sent_at;
  std::optional<std::string> last_error;
  int64_t created_at = 0;
};

// Used by the outbox publisher.
class CommandOutbox {
 public:
  virtual ~CommandOutbox() = default;

  // Ids of up to `limit` PENDING rows due now, in fair order
  // (docs/dispatch.md#tenant-fairness): round-robin across tenants, and
  // across users inside a tenant; oldest first within each round.
  virtual StatusOr<std::vector<int64_t>> SelectDueOutbox(int limit) = 0;
  // Conditional PENDING → CLAIMED with lease and attempt_count+1; nullopt when
  // another instance won.
  virtual StatusOr<std::optional<OutboxEntry>> ClaimOutbox(int64_t outbox_id,
                                                           const std::string& instance,
                                                           int lease_seconds) = 0;
  // CLAIMED(by instance) → SENT, sent_at=now, lease cleared. kClaimLost if the lease was lost.
  virtual StatusOr<MarkOutcome> MarkOutboxSent(int64_t outbox_id, const std::string& instance) = 0;
  // CLAIMED(by instance) → PENDING, next_retry_at=now+backoff, last_error.
  virtual StatusOr<MarkOutcome> MarkOutboxFailed(int64_t outbox_id, const std::string& instance,
                                                 const std::string& error, int64_t backoff_ms) = 0;
  // Every row of a task, by version then id (tests, operators).
  virtual StatusOr<std::vector<OutboxEntry>> ListOutboxForTask(int64_t task_id) = 0;
};

}  // namespace export_center::store
