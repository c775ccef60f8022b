#pragma once
// The NotificationOutbox on the export_notification table (migration 3), in
// the same portable SQL as SqlTaskStore (docs/store.md#dialect-tokens).
// sql_notification_outbox.cc is the one writer of export_notification: the
// queue's own updates, the rows of a task's end (called by TaskTransitions
// through SqlTaskStore::NotifyEnded) and the operators' re-delivery.

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "store/database.h"
#include "store/notification_outbox.h"
#include "task/task.h"

namespace export_center::store {

std::unique_ptr<NotificationOutbox> NewSqlNotificationOutbox(std::shared_ptr<Database> db);

// Inside the caller's transaction, right after `t` reached an end state (t is
// read back in that transaction): one PENDING row, due now, per route that
// matches, all with one new event id. A repeat for the same (task, version,
// status, receiver) inserts nothing (unique key). Returns rows inserted.
StatusOr<int> InsertTaskEndedNotifications(Connection& c, const Dialect& d, const task::Task& t,
                                           const std::vector<NotificationRoute>& routes,
                                           const std::function<int64_t()>& new_id);

// Inside the caller's transaction: puts the DEAD row `id` back to PENDING,
// due now, with its attempts reset (the operators' re-delivery). Returns rows
// changed: 0 when the row is not DEAD any more.
StatusOr<int64_t> RequeueDeadNotification(Connection& c, const Dialect& d, int64_t id);

}  // namespace export_center::store
