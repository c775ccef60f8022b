#pragma once
// Task: one export request and its lifecycle (docs/task-lifecycle.md). The model only; no I/O.
//
//   PENDING -> RUNNING -> SUCCEEDED -> EXPIRED
//   RUNNING -> PENDING (auto retry, version+1) | FAILED | CANCELLED | STALE | INCONSISTENT
//   PENDING -> CANCELLED | FAILED (quarantine)
//   FAILED | CANCELLED | INCONSISTENT -> PENDING (manual retry, version+1)
//
// The edges are one data table, kTransitions below; the store changes a
// task's state only through store::sql::TaskTransitions, which refuses any
// pair not in it. A new state is a TaskState value, its name, its rows here
// and its arrival effects in store/sql/task_transitions.cc.
//
// All timestamps are epoch milliseconds written by the database's own clock.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/file_key_ring.h"
#include "task/column_policy.h"

namespace export_center::task {

enum class TaskState {
  kPending,
  kRunning,
  kSucceeded,
  kFailed,
  kCancelled,
  kExpired,
  kStale,
  kInconsistent,
};

std::string_view ToString(TaskState state);
std::optional<TaskState> ParseTaskState(std::string_view text);

// Active tasks count against the per-user and per-type limits.
bool IsActive(TaskState state);
// A manual retry is allowed from these states.
bool CanManualRetry(TaskState state);
// One edge of the lifecycle: a task in `from` may move to `to`.
struct Transition {
  TaskState from = TaskState::kPending;
  TaskState to = TaskState::kPending;
};

// THE transition table: every edge the store may take, and no other
// (tests/store/task_transitions_test.cc drives each one through the store
// and checks every other pair is refused).
inline constexpr std::array<Transition, 13> kTransitions = {{
    {TaskState::kPending, TaskState::kRunning},    // claim
    {TaskState::kPending, TaskState::kCancelled},  // cancel before a claim
    {TaskState::kPending, TaskState::kFailed},     // quarantine of a poison command
    {TaskState::kRunning, TaskState::kSucceeded},  // conditional commit
    {TaskState::kRunning, TaskState::kPending},    // automatic retry, lease recovery
    {TaskState::kRunning, TaskState::kFailed},
    {TaskState::kRunning, TaskState::kCancelled},
    {TaskState::kRunning, TaskState::kStale},
    {TaskState::kRunning, TaskState::kInconsistent},
    {TaskState::kSucceeded, TaskState::kExpired},  // the file's retention passed
    {TaskState::kFailed, TaskState::kPending},     // manual retry (CanManualRetry)
    {TaskState::kCancelled, TaskState::kPending},
    {TaskState::kInconsistent, TaskState::kPending},
}};

// Whether kTransitions has the edge from -> to.
bool IsAllowedTransition(TaskState from, TaskState to);

enum class FileFormat { kXlsx, kCsv };
std::string_view ToString(FileFormat format);
std::optional<FileFormat> ParseFileFormat(std::string_view text);  // "XLSX" | "CSV", upper case
std::string_view FileExtension(FileFormat format);                 // "xlsx" | "csv"
std::string_view ContentType(FileFormat format);

enum class AppCode { kPlatform, kMerchant };
std::string_view ToString(AppCode app);
std::optional<AppCode> ParseAppCode(std::string_view text);  // "PLATFORM" | "MERCHANT"

// The longest language tag Task::locale holds.
inline constexpr size_t kMaxLocaleLength = 35;
// Whether `tag` has the shape of a BCP 47 language tag as Task::locale stores
// it: 1..35 characters, subtags of 1-8 ASCII letters or digits joined by
// '-', the first of 2-8 letters ("zh-CN", "en", "zh-Hant-TW"). The shape
// only: "xx-YY" passes, no registry of languages is consulted.
bool IsLocaleTag(std::string_view tag);

// Who holds a RUNNING task's attempt and until when
// (docs/task-lifecycle.md): the columns lease_owner, lease_until and
// last_heartbeat_at of export_task. All unset when no attempt holds it.
struct TaskLease {
  std::optional<std::string> owner{};          // the instance running the attempt
  std::optional<int64_t> until{};              // the lease ends here unless renewed
  std::optional<int64_t> last_heartbeat_at{};  // the attempt's last renewal
};

// How often the task's file was fetched: the columns download_count and
// last_downloaded_at of export_task.
struct TaskDownloads {
  int64_t count{};
  std::optional<int64_t> last_at{};
};

struct Task {
  int64_t id = 0;
  std::string tenant_id;
  AppCode app_code = AppCode::kPlatform;
  std::string requested_by;
  std::string export_type;
  std::string task_name;
  FileFormat format = FileFormat::kXlsx;
  std::string parameters_json;  // canonical JSON of the parameters object
  // The requester's language (a BCP 47 tag such as "zh-CN" or "en"), recorded
  // at create so every attempt writes the same titles and labels; "" = the
  // definition's default language (docs/xlsx.md#languages).
  std::string locale{};
  std::string params_hash;  // sha256 hex of parameters_json (dedupe key)
  TaskState status = TaskState::kPending;

  // Result.
  std::optional<std::string> file_name;
  std::optional<std::string> object_key;
  std::optional<std::string> content_type;
  std::optional<int64_t> size_bytes;
  std::optional<int64_t> total_rows;
  // The file's manifest (docs/task-lifecycle.md#the-files-manifest): SHA-256
  // of the stored bytes (lower-case hex) and the data rows of each sheet or part.
  std::optional<std::string> file_sha256;
  std::vector<int64_t> part_rows;
  int64_t processed_rows = 0;
  std::optional<std::string> failure_code;
  std::optional<std::string> failure_message;
  // The operators' text of the same failure (the failure's full Status, with
  // governed values withheld as in every message): failure_message is what
  // the user sees, classified; this is shown only in the operators' console.
  std::optional<std::string> failure_detail;

  // Dispatch: attempts, back-off, lease and deadline (docs/task-lifecycle.md).
  int32_t dispatch_version = 1;
  int32_t attempt_count = 0;
  int32_t max_attempts = 3;
  int64_t next_retry_at = 0;
  TaskLease lease{};
  std::optional<int64_t> execution_deadline_at;
  bool cancel_requested = false;
  std::optional<std::string> contract_version;
  // What the requester may see of governed columns, decided at create
  // (task/column_policy.h); empty for a task that shows every column.
  ColumnPolicy column_policy;
  // A password-protected file (docs/configuration.md#password-protected-files-file-password):
  // the requester gave a filePassword at create. The password is never kept;
  // file_key is the key material derived from it, wrapped under a
  // key-encryption key (common/file_key_ring.h), so every attempt writes a
  // file the same password opens. Erased (nullopt) once the task has ended;
  // `encrypted` stays.
  bool encrypted{};
  std::optional<WrappedFileKey> file_key{};

  TaskDownloads downloads{};

  int64_t requested_at = 0;
  std::optional<int64_t> started_at;
  std::optional<int64_t> completed_at;
  std::optional<int64_t> expires_at;
  int64_t updated_at = 0;
};

}  // namespace export_center::task
