#pragma once
// NotificationOutbox: the webhook notifications of ended tasks, waiting in the
// database until a notifier delivers them (docs/notifications.md).
//
// When a task reaches an end state (SUCCEEDED, FAILED, CANCELLED, EXPIRED,
// STALE, INCONSISTENT) the TaskStore writes one `export_notification` row per
// matching route IN THE SAME TRANSACTION as the state change, so an end that
// committed always has its notifications and a rolled-back one has none. The
// rows carry the payload, fixed at that moment, and an event id shared by the
// receivers of that one event (the receiver's idempotency key).
//
// A notifier claims due rows like the command outbox (both are a LeasedQueue,
// leased_queue.h): select due ids, then a conditional claim with a lease and attempt_count+1, so
// two instances never hold one row at once; a claim whose lease ran out (its instance died) may be
// taken again. 2xx → DELIVERED (never sent again); a failure → PENDING again
// with back-off, or DEAD once the attempts are used up.
//
// Thread-safety: every method may be called from any thread. Each is one
// statement or transaction, decided with the database clock, and safe to
// retry after Unavailable (conditional updates make repeats harmless).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/leased_queue.h"
#include "task/task.h"

namespace export_center::store {

// Which ended tasks one receiver is told about. An empty list matches all.
struct NotificationRoute {
  std::string receiver_id;
  std::vector<std::string> export_types;
  std::vector<std::string> users;    // the task's requested_by
  std::vector<std::string> tenants;  // the task's tenant_id
  std::vector<task::TaskState> events;
};

// Whether `state` ends a task, i.e. is notified.
bool IsNotifiedEnd(task::TaskState state);
// Whether `route` wants the end of `t` (t.status is the end state).
bool RouteMatches(const NotificationRoute& route, const task::Task& t);
// The JSON body sent for the end of `t` (docs/notifications.md#the-body).
// `occurred_at_ms` is the database time of the state change.
std::string EncodeTaskEndedEvent(const task::Task& t, const std::string& event_id,
                                 int64_t occurred_at_ms);

enum class NotificationStatus { kPending, kClaimed, kDelivered, kDead };
std::string_view ToString(NotificationStatus status);

struct NotificationEntry {
  int64_t id = 0;
  std::string event_id;
  std::string receiver_id;
  int64_t task_id = 0;
  int32_t dispatch_version = 0;
  std::string task_status;
  std::string payload_json;
  NotificationStatus status = NotificationStatus::kPending;
  int32_t attempt_count = 0;  // deliveries tried, this claim included
  int64_t next_retry_at = 0;
  std::optional<std::string> lease_owner;
  std::optional<int64_t> lease_until;
  std::optional<int64_t> delivered_at;
  std::optional<std::string> last_error;
  int64_t created_at = 0;
};

class NotificationOutbox {
 public:
  virtual ~NotificationOutbox() = default;

  // Ids of rows to deliver now, oldest due first: PENDING and due, or
  // CLAIMED with an expired lease (a notifier died holding it).
  virtual StatusOr<std::vector<int64_t>> SelectDueNotifications(int limit) = 0;
  // Conditional claim of one such row: CLAIMED by `instance` until now +
  // lease, attempt_count+1. nullopt when another instance won or the row is
  // no longer due.
  virtual StatusOr<std::optional<NotificationEntry>> ClaimNotification(int64_t id,
                                                                       const std::string& instance,
                                                                       int lease_seconds) = 0;
  // CLAIMED(by instance) → DELIVERED. kClaimLost: another instance took the
  // row after our lease ran out (nothing changed). Likewise for the two below.
  virtual StatusOr<MarkOutcome> MarkNotificationDelivered(int64_t id,
                                                          const std::string& instance) = 0;
  // CLAIMED(by instance) → PENDING, due at now + backoff, with the error.
  virtual StatusOr<MarkOutcome> MarkNotificationRetry(int64_t id, const std::string& instance,
                                                      const std::string& error,
                                                      int64_t backoff_ms) = 0;
  // CLAIMED(by instance) → DEAD with the error; never sent again.
  virtual StatusOr<MarkOutcome> MarkNotificationDead(int64_t id, const std::string& instance,
                                                     const std::string& error) = 0;
  // Every row of a task, oldest first (API, tests, operators).
  virtual StatusOr<std::vector<NotificationEntry>> ListNotificationsForTask(int64_t task_id) = 0;
  // Deletes up to `limit` DELIVERED rows delivered more than `older_than_seconds` ago.
  virtual StatusOr<int> PurgeDeliveredNotifications(int older_than_seconds, int limit) = 0;
};

}  // namespace export_center::store
