#include "store/notification_outbox.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/time_format.h"

namespace export_center::store {
namespace {

using nlohmann::json;

bool EmptyOrContains(const std::vector<std::string>& list, const std::string& value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}

json OptTime(const std::optional<int64_t>& ms) { return ms ? json(FormatIsoMillis(*ms)) : json(); }
json OptText(const std::optional<std::string>& text) { return text ? json(*text) : json(); }
json OptInt(const std::optional<int64_t>& v) { return v ? json(*v) : json(); }

}  // namespace

bool IsNotifiedEnd(task::TaskState state) {
  using task::TaskState;
  switch (state) {
    case TaskState::kSucceeded:
    case TaskState::kFailed:
    case TaskState::kCancelled:
    case TaskState::kExpired:
    case TaskState::kStale:
    case TaskState::kInconsistent:
      return true;
    case TaskState::kPending:
    case TaskState::kRunning:
      return false;
  }
  return false;
}

bool RouteMatches(const NotificationRoute& route, const task::Task& t) {
  if (!IsNotifiedEnd(t.status)) return false;
  if (!route.events.empty() &&
      std::find(route.events.begin(), route.events.end(), t.status) == route.events.end()) {
    return false;
  }
  return EmptyOrContains(route.export_types, t.export_type) &&
         EmptyOrContains(route.users, t.requested_by) &&
         EmptyOrContains(route.tenants, t.tenant_id);
}

std::string EncodeTaskEndedEvent(const task::Task& t, const std::string& event_id,
                                 int64_t occurred_at_ms) {
  // Ids as strings: a JavaScript receiver cannot hold a 64-bit id as a number.
  // No parameters, no object key, no download link: a receiver that wants the
  // file asks the API with its own credentials.
  json task = {
      {"taskId", std::to_string(t.id)},
      {"tenantId", t.tenant_id},
      {"appCode", std::string(task::ToString(t.app_code))},
      {"requestedBy", t.requested_by},
      {"exportType", t.export_type},
      {"taskName", t.task_name},
      {"format", std::string(task::ToString(t.format))},
      {"status", std::string(task::ToString(t.status))},
      {"dispatchVersion", t.dispatch_version},
      {"fileName", OptText(t.file_name)},
      {"sizeBytes", OptInt(t.size_bytes)},
      {"fileSha256", OptText(t.file_sha256)},
      {"encrypted", t.encrypted},
      {"totalRows", OptInt(t.total_rows)},
      {"failureCode", OptText(t.failure_code)},
      {"failureMessage", OptText(t.failure_message)},
      {"requestedAt", FormatIsoMillis(t.requested_at)},
      {"startedAt", OptTime(t.started_at)},
      {"completedAt", OptTime(t.completed_at)},
      {"expiresAt", OptTime(t.expires_at)},
  };
  json event = {
      {"schemaVersion", 1},
      {"eventId", event_id},
      {"eventType", "export.task.ended"},
      {"occurredAt", FormatIsoMillis(occurred_at_ms)},
      {"task", std::move(task)},
  };
  return event.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string_view ToString(NotificationStatus status) {
  switch (status) {
    case NotificationStatus::kPending:
      return "PENDING";
    case NotificationStatus::kClaimed:
      return "CLAIMED";
    case NotificationStatus::kDelivered:
      return "DELIVERED";
    case NotificationStatus::kDead:
      return "DEAD";
  }
  return "PENDING";
}

}  // namespace export_center::store
