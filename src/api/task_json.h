#pragma once
// The JSON shape of a task as the API shows it (docs/http-api.md).
//
// 64-bit values (id, processedRows, totalRows, sizeBytes, downloadCount) are
// strings; times are ISO-8601 UTC with milliseconds ("2024-05-01T08:30:00.123Z")
// or null; 32-bit counters (attemptCount, maxAttempts, dispatchVersion) are
// numbers; progress is an integer percentage 0-100, or null while the total is
// unknown.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "store/task_event.h"
#include "task/task.h"

namespace export_center::api {

std::optional<int> ProgressPercent(const task::Task& task);
nlohmann::json TaskToJson(const task::Task& task);
// Who reads a timeline, which decides what its details show.
struct TimelineReader {
  // A holder of platform:audit:read: a DOWNLOADED event names its user.
  // Anyone else sees that the file was downloaded and how, not by whom.
  bool names_downloaders = false;
  // The operators' console: a COMMAND_SENT event's lastError as the channel
  // gave it, and a failure's full text (store::kOperatorOnlyDetail). The
  // task's reader gets a classified text instead, since the channel's text may
  // name hosts and brokers, and the failure's short message only.
  bool raw_errors = false;
};

// One event of a task's timeline (docs/http-api.md#get-export-tasksidtimeline--a-tasks-timeline):
// id as a string, kind, dispatchVersion, at (ISO-8601), details (the stored
// object, as `reader` may see it; an unreadable one is shown as {}).
nlohmann::json TaskEventToJson(const store::TaskEvent& event, const TimelineReader& reader = {});
// What the requester may not see of governed columns
// (docs/configuration.md#column-governance-columns): `{"masked": 2,
// "omitted": 1, "columns": [{"key": "mobile", "action": "mask"}, ...]}`;
// masked counts mask and hash. Zeros and [] when every column is shown.
nlohmann::json ColumnPolicyToApiJson(const task::ColumnPolicy& policy);

}  // namespace export_center::api
