#pragma once
// TaskCatalog: the tasks as the API sees them — create, read, list, follow
// changes, cancel, retry by hand, and the download audit (docs/store.md,
// docs/http-api.md). TaskReader is the one read every role shares.
//
// Thread-safety: every method may be called from any thread concurrently.
// Each method is one transaction (or one statement) and is safe to retry after
// an Unavailable error: conditional updates make repeats harmless.
// Codes: Unavailable for connection/lock/serialization trouble, NotFound for a
// missing task, Internal for broken invariants.

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/task_event.h"
#include "task/task.h"

namespace export_center::store {

// ---- create -----------------------------------------------------------------

struct NewTask {
  std::string tenant_id;
  task::AppCode app_code = task::AppCode::kPlatform;
  std::string requested_by;
  std::string export_type;
  std::string task_name;
  task::FileFormat format = task::FileFormat::kXlsx;
  std::string parameters_json;  // canonical
  std::string params_hash;
  int32_t max_attempts = 3;
  std::optional<std::string> contract_version;
  std::string trace_id;
  // Governed columns decided at create; stored, read back on every attempt.
  task::ColumnPolicy column_policy;
  // The requester's language (task::Task::locale); part of the duplicate
  // check, since another language writes another file.
  std::string locale{};
  // A password-protected file: the wrapped file key material (the task is
  // then `encrypted`). Such a task is never deduplicated, nor a plain create
  // onto it: each password makes its own file.
  std::optional<WrappedFileKey> file_key{};
};

struct CreateLimits {
  int dedupe_window_seconds = 60;
  int max_active_per_user = 3;
  int max_active_per_type = 5;
};

struct CreateResult {
  task::Task task;
  bool deduplicated = false;  // an existing active task was returned
};

// ---- pages of history (docs/http-api.md#paging) -------------------------------

// Where a newest-first page continues: the sort key of the last row of the
// page before — (requested_at, id) of a task, (downloaded_at, id) of an audit
// row. The next page holds the rows strictly older than it.
struct PageKey {
  int64_t at = 0;
  int64_t id = 0;
  bool operator==(const PageKey&) const = default;
};

// Totals are exact up to this many rows; beyond it a list says "at least
// this many" (total_is_exact false), so no page load counts a whole history.
inline constexpr int64_t kExactTotalBound = 10000;

// ---- downloads (docs/http-api.md#download-audit) ------------------------------

// One answer that handed out file bytes or a URL to them (200, 206, or a 302
// to a presigned URL; docs/http-api.md#download-audit): the who, how and from
// where of its audit row.
struct DownloadRecord {
  int64_t task_id = 0;
  std::string tenant_id;
  task::AppCode app_code = task::AppCode::kPlatform;
  std::string user;         // the token's sub, or the signer of a signed link
  std::string export_type;  // copied so the audit survives the task row
  std::string via;          // DIRECT | SIGNED_LINK
  std::string served_by;    // STREAM | PRESIGNED_REDIRECT
  std::string client_address;
  std::string user_agent;  // cut to 512 bytes at a character boundary
  std::string request_id;
};

// What RecordDownload did.
enum class DownloadCount {
  kCounted,       // download_count+1 and one audit row written
  kWithinWindow,  // the window already held a row of this task and user: nothing written
};

struct DownloadAuditEntry {
  int64_t id = 0;
  DownloadRecord record;
  int64_t downloaded_at = 0;  // epoch ms, database clock
};

struct DownloadAuditQuery {
  std::string tenant_id;  // always scoped to one tenant and app
  task::AppCode app_code = task::AppCode::kPlatform;
  std::optional<int64_t> task_id;
  std::optional<std::string> user;
  std::optional<int64_t> from_ms;  // inclusive
  std::optional<int64_t> to_ms;    // exclusive
  int page = 1;                    // from 1; ignored with `after`
  int size = 20;                   // 1..100
  std::optional<PageKey> after;    // keyset: rows older than this key
};

struct DownloadAuditPage {
  std::vector<DownloadAuditEntry> records;  // newest first
  int64_t total = 0;                        // at most kExactTotalBound
  bool total_is_exact = true;               // false: more rows than `total`
  std::optional<PageKey> next;              // the last row's key when more follow
};

// The one read every role needs (the API, the attempt, the reconciler). A
// virtual base of the roles, so a store implementing several has one GetTask.
class TaskReader {
 public:
  virtual ~TaskReader() = default;
  // NotFound when the task does not exist. Read-only; safe to retry.
  virtual StatusOr<task::Task> GetTask(int64_t task_id) = 0;
};

// Used by api/ (export API, task events).
class TaskCatalog : public virtual TaskReader {
 public:
  // Current database time in epoch ms (for display and tests; never compared in C++).
  virtual StatusOr<int64_t> DatabaseNowMs() = 0;

  // In one transaction holding the guard row: returns an active task of the
  // same user, type and params_hash created within the dedupe window
  // (deduplicated=true); else LimitExceeded when the user or the type has too
  // many active tasks; else inserts the task (PENDING, version 1) and its
  // outbox row (PENDING, due now).
  virtual StatusOr<CreateResult> CreateTask(const NewTask& task, const CreateLimits& limits) = 0;

  struct ListQuery {
    std::string tenant_id;
    task::AppCode app_code = task::AppCode::kPlatform;
    std::optional<std::string> requested_by;  // nullopt: the whole tenant
    std::optional<task::TaskState> status;
    std::optional<std::string> export_type;
    // Any of these states (empty: any); applied besides `status`.
    std::vector<task::TaskState> any_status;
    // PENDING tasks only: true = already attempted (retrying), false = not yet (queued).
    std::optional<bool> retrying;
    // task_name contains this text (case-insensitive for ASCII; % and _ are literal).
    std::optional<std::string> name_contains;
    int page = 1;                  // from 1; ignored with `after`
    int size = 20;                 // 1..100
    std::optional<PageKey> after;  // keyset: tasks older than this (requested_at, id)
  };
  // One page, newest first (requested_at, id), read through an index in
  // that order; the total is counted through it too, over at most
  // kExactTotalBound + 1 rows.
  struct ListPage {
    std::vector<task::Task> records;  // newest first
    int64_t total = 0;                // at most kExactTotalBound
    bool total_is_exact = true;       // false: more tasks than `total`
    std::optional<PageKey> next;      // the last record's key when more follow
  };
  virtual StatusOr<ListPage> ListTasks(const ListQuery& query) = 0;

  // Tasks changed after a point of the database clock, for live task events
  // (docs/http-api.md#get-export-tasksevents--task-events), oldest change
  // first — ordered by the change key (updated_at, id) — at most `limit`.
  // Without after_id: updated_at > updated_after_ms. With after_id: keyset
  // paging, (updated_at, id) > (updated_after_ms, after_id), so a reader
  // pages through any number of changes of one millisecond by passing the
  // last key it got. With up_to: only keys <= *up_to. Limited to one tenant
  // and app (and user) when tenant_id is set. Served by the export_task
  // (updated_at, id) index. Read-only; safe to retry.
  struct ChangeKey {
    int64_t updated_at = 0;
    int64_t id = 0;
    auto operator<=>(const ChangeKey&) const = default;
  };
  struct ChangeQuery {
    int64_t updated_after_ms = 0;
    std::optional<int64_t> after_id;
    std::optional<ChangeKey> up_to;
    std::optional<std::string> tenant_id;
    task::AppCode app_code = task::AppCode::kPlatform;
    std::optional<std::string> requested_by;
    int limit = 500;  // 1..10000
  };
  virtual StatusOr<std::vector<task::Task>> ListChangedTasks(const ChangeQuery& query) = 0;
  // The same changes as ListChangedTasks, only their keys: an index-only
  // read, for the task events' look-back for late commits.
  virtual StatusOr<std::vector<ChangeKey>> ListChangeKeys(const ChangeQuery& query) = 0;

  // PENDING → CANCELLED at once (returns the new state); RUNNING → sets
  // cancel_requested (state stays RUNNING). Other states: Conflict.
  virtual StatusOr<task::TaskState> RequestCancel(int64_t task_id) = 0;

  // From FAILED/CANCELLED/INCONSISTENT (task::CanManualRetry; a STALE task is
  // exported again as a new task instead): PENDING, version+1,
  // attempt_count=0, next_retry_at=now, cancel_requested=0, result cleared,
  // new outbox row — one transaction. Other states: Conflict; an encrypted
  // task too, since its wrapped file key was erased when it ended (export it
  // again with a new password).
  virtual StatusOr<task::Task> ManualRetry(int64_t task_id, const std::string& trace_id) = 0;

  // Audits one answer that handed out the file, once per (task, user) and
  // window: one transaction that locks the task row, and unless an audit row
  // of the same task and user is younger than `window_seconds` (database
  // clock), adds download_count+1, last_downloaded_at=now and one
  // export_download_audit row (kCounted); kWithinWindow when the window
  // already held a row (nothing written). The row lock makes concurrent
  // calls for one (task, user) count once: a download manager's parallel
  // ranges are one download. window_seconds <= 0 counts every call.
  // NotFound (and no row) when the task is gone. Safe to retry after
  // Unavailable within the window (a repeat finds the first row).
  virtual StatusOr<DownloadCount> RecordDownload(const DownloadRecord& download,
                                                 int window_seconds) = 0;
  // The audit rows of one tenant and app matching the filters, newest first.
  virtual StatusOr<DownloadAuditPage> ListDownloadAudit(const DownloadAuditQuery& query) = 0;

  // The timeline of one task (docs/task-lifecycle.md#the-timeline), oldest
  // first: at most kMaxEventsPerTask events (a few more only while writers
  // race). Empty for a task that does not exist (the caller checks the task
  // and its permission first). Read-only; safe to retry.
  virtual StatusOr<std::vector<TaskEvent>> ListTaskEvents(int64_t task_id) = 0;
};

}  // namespace export_center::store
