#pragma once

// The export_notification row as both its readers select it: the outbox's
// queue (sql_notification_outbox.cc) and the operators' dead-delivery list
// (sql_task_operations.cc), which joins the task and so names its columns.

#include <string>
#include <string_view>

#include "common/status.h"
#include "store/database.h"
#include "store/notification_outbox.h"

namespace export_center::store {

// The columns NotificationFromRow reads, in its order, each after `prefix`
// ("" or an alias such as "o.").
std::string NotificationColumns(std::string_view prefix);

StatusOr<NotificationEntry> NotificationFromRow(const Row& r);

}  // namespace export_center::store
