#pragma once
// The timeline of one task (docs/task-lifecycle.md#the-timeline): every state
// change and dispatch event, one export_task_event row each, written by the
// store in the same transaction as the change it records.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace export_center::store {

// What happened. The names (ToString) are stored and served as they are:
// never rename one, only add.
enum class TaskEventKind {
  kCreated,          // the task and its first command were written
  kCommandSent,      // the publisher handed the command to the channel
  kCommandResent,    // the command was queued to be sent again; details.cause says why
  kClaimed,          // an instance started an attempt
  kProgress,         // a sampled checkpoint of the rows read
  kRetryScheduled,   // the attempt failed and a new version waits for its back-off
  kLeaseRecovered,   // the reconciler took the task back from a silent instance
  kCancelRequested,  // the user asked to stop
  kQuarantined,      // the dead-letter handler isolated a poison command
  kFinished,         // the task reached an end state (SUCCEEDED, FAILED, ...)
  kManualRetry,      // the user retried an ended task: a new version
  kDownloaded,       // a counted download of the file
  kExpired,          // the file was deleted after its retention
};
std::string_view ToString(TaskEventKind kind);
std::optional<TaskEventKind> ParseTaskEventKind(std::string_view text);

// Events of one task are capped (docs/task-lifecycle.md#the-timeline): at the
// cap an ordinary event is dropped, while a kept one (created, finished,
// quarantined, expired) replaces the oldest ordinary one.
inline constexpr int kMaxEventsPerTask = 200;
// Progress checkpoints of one attempt: at most this many, and at most one
// per tenth of the total rows or per kProgressEventIntervalMs.
inline constexpr int kMaxProgressEventsPerAttempt = 20;
inline constexpr int64_t kProgressEventIntervalMs = 30'000;

// The key of an event's details that only the operators' console shows
// (RETRY_SCHEDULED, FINISHED): the failure's full text, whose classified form
// the user sees under `cause` or `message`. Every reader serving a requester
// drops it (api/task_json.h).
inline constexpr char kOperatorOnlyDetail[] = "detail";

struct TaskEvent {
  int64_t id = 0;
  int64_t task_id = 0;
  int32_t dispatch_version = 0;  // the version the event belongs to
  TaskEventKind kind = TaskEventKind::kCreated;
  std::string details_json;  // a small JSON object; "{}" when there is nothing to add
  int64_t at = 0;            // epoch ms, database clock
};

}  // namespace export_center::store
