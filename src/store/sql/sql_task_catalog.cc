// SqlTaskCatalog (sql_roles.h), the TaskCatalog role (task_catalog.h): create, read, list,
// changes, cancel, manual retry, download audit.

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/utf8.h"
#include "store/sql/sql_roles.h"

namespace export_center::store::sql {

StatusOr<int64_t> SqlTaskCatalog::DatabaseNowMs() {
  EC_ASSIGN_OR_RETURN(Rows rows, db_->Query(Sql("SELECT {NOW}")));
  return rows.at(0).Int(0);
}
// ---- create -----------------------------------------------------------------

StatusOr<std::optional<Task>> SqlTaskCatalog::FindDuplicate(Connection& c, const NewTask& t,
                                                            int window_seconds) {
  // A password makes its own file: never handed an existing task, nor is a
  // plain create handed an encrypted one.
  if (window_seconds <= 0 || t.file_key) return std::optional<Task>();
  EC_ASSIGN_OR_RETURN(
      Rows rows,
      c.Query(Sql(std::string("SELECT ") + kTaskColumns +
                  " FROM export_task WHERE requested_by = ? AND export_type = ?"
                  " AND params_hash = ? AND format = ? AND tenant_id = ? AND app_code = ?"
                  " AND locale = ? AND file_encrypted = 0 AND status IN " +
                  kActive +
                  " AND requested_at >= {NOW} - ? ORDER BY requested_at DESC, id DESC LIMIT 1"),
              {t.requested_by, t.export_type, t.params_hash, task::ToString(t.format), t.tenant_id,
               task::ToString(t.app_code), t.locale, int64_t{window_seconds} * 1000}));
  if (rows.empty()) return std::optional<Task>();
  EC_ASSIGN_OR_RETURN(Task found, TaskFromRow(rows[0]));
  return std::optional<Task>(std::move(found));
}

Status SqlTaskCatalog::CheckActiveLimits(Connection& c, const NewTask& t,
                                         const CreateLimits& limits) {
  if (limits.max_active_per_user > 0) {
    EC_ASSIGN_OR_RETURN(Rows rows, c.Query(std::string("SELECT COUNT(*) FROM export_task"
                                                       " WHERE tenant_id = ? AND requested_by = ?"
                                                       " AND status IN ") +
                                               kActive,
                                           {t.tenant_id, t.requested_by}));
    int64_t n = rows.at(0).Int(0);
    if (n >= limits.max_active_per_user) {
      return LimitExceeded("you already have " + std::to_string(n) +
                           " active export tasks; wait for one to finish");
    }
  }
  if (limits.max_active_per_type > 0) {
    // Global per type: the limit protects the business service behind it.
    EC_ASSIGN_OR_RETURN(Rows rows, c.Query(std::string("SELECT COUNT(*) FROM export_task"
                                                       " WHERE export_type = ? AND status IN ") +
                                               kActive,
                                           {t.export_type}));
    int64_t n = rows.at(0).Int(0);
    if (n >= limits.max_active_per_type) {
      return LimitExceeded("export type " + t.export_type + " already has " + std::to_string(n) +
                           " active tasks; try again in a few minutes");
    }
  }
  return Status::Ok();
}

StatusOr<CreateResult> SqlTaskCatalog::CreateTask(const NewTask& nt, const CreateLimits& limits) {
  EC_RETURN_IF_ERROR(EnsureIdNode());
  CreateResult result;
  Status status = Write([&](Connection& c) -> Status {
    // Every create serialises on this one row (docs/task-lifecycle.md#creating-a-task):
    // the duplicate check and the COUNTs below cannot be passed by two creators at once.
    EC_ASSIGN_OR_RETURN(Rows guard, c.Query(Sql("SELECT name FROM export_task_guard"
                                                " WHERE name = 'GLOBAL_CREATE'{FOR_UPDATE}")));
    if (guard.empty()) return Internal("guard row GLOBAL_CREATE is missing; run migrate");
    EC_ASSIGN_OR_RETURN(std::optional<Task> dup,
                        FindDuplicate(c, nt, limits.dedupe_window_seconds));
    if (dup) {
      result = {std::move(*dup), true};
      return Status::Ok();
    }
    EC_RETURN_IF_ERROR(CheckActiveLimits(c, nt, limits));
    const int64_t id = NewId();
    EC_RETURN_IF_ERROR(
        c.Exec(Sql("INSERT INTO export_task (id, tenant_id, app_code, requested_by, export_type,"
                   " task_name, format, parameters_json, params_hash, status, processed_rows,"
                   " dispatch_version, attempt_count, max_attempts, next_retry_at,"
                   " cancel_requested, contract_version, download_count, requested_at,"
                   " updated_at, column_policy_json, locale, file_encrypted, file_key_id,"
                   " file_key_wrapped)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'PENDING', 0, 1, 0, ?, {NOW}, 0, ?, 0,"
                   " {NOW}, {NOW}, ?, ?, ?, ?, ?)"),
               {id, nt.tenant_id, task::ToString(nt.app_code), nt.requested_by, nt.export_type,
                nt.task_name, task::ToString(nt.format), nt.parameters_json, nt.params_hash,
                nt.max_attempts, nt.contract_version, ColumnPolicyText(nt.column_policy), nt.locale,
                int64_t{nt.file_key ? 1 : 0},
                nt.file_key ? std::optional<std::string>(nt.file_key->key_id) : std::nullopt,
                nt.file_key ? std::optional<std::string>(nt.file_key->sealed) : std::nullopt})
            .status());
    EC_ASSIGN_OR_RETURN(Task created, ReadExistingTask(c, id));
    EC_RETURN_IF_ERROR(transitions_.Created(c, created, nt.trace_id, {{"by", nt.requested_by}}));
    result = {std::move(created), false};
    return Status::Ok();
  });
  if (!status.ok()) return status;
  return result;
}

StatusOr<Task> SqlTaskCatalog::GetTask(int64_t task_id) {
  Task t;
  EC_RETURN_IF_ERROR(db_->WithConnection([&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(t, ReadExistingTask(c, task_id));
    return Status::Ok();
  }));
  return t;
}

StatusOr<TaskStore::ListPage> SqlTaskCatalog::ListTasks(const ListQuery& q) {
  const PageStatements page = TaskListStatements(q);
  ListPage out;
  EC_RETURN_IF_ERROR(Read([&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(out, ReadNewestTasks(c, d_, page, q.size));
    return Status::Ok();
  }));
  return out;
}

StatusOr<std::vector<Task>> SqlTaskCatalog::ListChangedTasks(const ChangeQuery& q) {
  const Statement changes = ChangeStatement(q, false);
  std::vector<Task> out;
  EC_RETURN_IF_ERROR(Read([&](Connection& c) -> Status {
    out.clear();
    EC_ASSIGN_OR_RETURN(Rows rows, c.Query(Sql(changes.sql), changes.params));
    for (const Row& r : rows) {
      EC_ASSIGN_OR_RETURN(Task t, TaskFromRow(r));
      out.push_back(std::move(t));
    }
    return Status::Ok();
  }));
  return out;
}

StatusOr<std::vector<TaskStore::ChangeKey>> SqlTaskCatalog::ListChangeKeys(const ChangeQuery& q) {
  const Statement keys = ChangeStatement(q, true);
  EC_ASSIGN_OR_RETURN(Rows rows, db_->Query(Sql(keys.sql), keys.params));
  std::vector<ChangeKey> out;
  out.reserve(rows.size());
  for (const Row& r : rows) out.push_back({r.Int(0), r.Int(1)});
  return out;
}

StatusOr<TaskState> SqlTaskCatalog::RequestCancel(int64_t task_id) {
  EC_RETURN_IF_ERROR(EnsureIdNode());  // ids of the notification rows
  TaskState result = TaskState::kPending;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(std::optional<Task> t, ReadTask(c, task_id, true));
    if (!t) return NotFound("export task " + std::to_string(task_id) + " does not exist");
    if (t->status == TaskState::kPending) {
      TransitionChange cancel;
      cancel.task_id = task_id;
      cancel.from = {TaskState::kPending};
      cancel.to = TaskState::kCancelled;
      cancel.set = "completed_at = {NOW}";
      cancel.event = TaskEventKind::kCancelRequested;
      cancel.details = {{"state", "PENDING"}};
      EC_ASSIGN_OR_RETURN(std::optional<Task> cancelled, transitions_.Apply(c, cancel));
      if (!cancelled) return Unavailable("task changed while cancelling; retry");
      result = TaskState::kCancelled;
      return Status::Ok();
    }
    if (t->status == TaskState::kRunning) {
      // The worker checks the flag at every page and ends CANCELLED itself.
      EC_RETURN_IF_ERROR(c.Exec(Sql("UPDATE export_task SET cancel_requested = 1,"
                                    " updated_at = {NOW} WHERE id = ? AND status = 'RUNNING'"),
                                {task_id})
                             .status());
      EC_RETURN_IF_ERROR(RecordEvent(c, task_id, t->dispatch_version,
                                     TaskEventKind::kCancelRequested, {{"state", "RUNNING"}}));
      result = TaskState::kRunning;
      return Status::Ok();
    }
    return Conflict("the task is " + std::string(task::ToString(t->status)) +
                    "; only pending or running tasks can be cancelled");
  }));
  return result;
}

StatusOr<Task> SqlTaskCatalog::ManualRetry(int64_t task_id, const std::string& trace_id) {
  EC_RETURN_IF_ERROR(EnsureIdNode());
  Task result;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    EC_ASSIGN_OR_RETURN(std::optional<Task> t, ReadTask(c, task_id, true));
    if (!t) return NotFound("export task " + std::to_string(task_id) + " does not exist");
    if (!task::CanManualRetry(t->status)) {
      return Conflict("the task is " + std::string(task::ToString(t->status)) +
                      "; only failed, cancelled or inconsistent tasks can be retried");
    }
    if (t->encrypted) {
      // Its wrapped file key was erased when it ended (NotifyEnded), and the
      // password was never kept: a new file needs a new password.
      return Conflict(
          "the task's file was password-protected and its key was erased when it ended; "
          "export it again with a new filePassword");
    }
    // A retry is a new execution attempt: version+1, counters and the previous
    // result cleared (docs/task-lifecycle.md#manual-retry).
    TransitionChange retry;
    retry.task_id = task_id;
    retry.from = {TaskState::kFailed, TaskState::kCancelled, TaskState::kInconsistent};
    retry.to = TaskState::kPending;
    retry.version = t->dispatch_version;
    retry.set =
        "attempt_count = 0, next_retry_at = {NOW}, cancel_requested = 0, failure_code = NULL,"
        " failure_message = NULL, failure_detail = NULL, processed_rows = 0, total_rows = NULL,"
        " started_at = NULL, completed_at = NULL, expires_at = NULL, file_name = NULL,"
        " object_key = NULL, content_type = NULL, size_bytes = NULL, file_sha256 = NULL,"
        " part_rows = NULL, lease_owner = NULL, lease_until = NULL,"
        " execution_deadline_at = NULL";
    retry.event = TaskEventKind::kManualRetry;
    retry.details = {{"from", task::ToString(t->status)}};
    retry.event_at_new_version = true;
    retry.trace_id = trace_id;
    EC_ASSIGN_OR_RETURN(std::optional<Task> retried, transitions_.Apply(c, retry));
    if (!retried) return Unavailable("task changed while retrying; retry");
    result = std::move(*retried);
    return Status::Ok();
  }));
  return result;
}

StatusOr<DownloadCount> SqlTaskCatalog::RecordDownload(const DownloadRecord& d,
                                                       int window_seconds) {
  EC_RETURN_IF_ERROR(EnsureIdNode());
  // The column widths are the limits; the API cuts first, this is the backstop.
  auto cut = [](const std::string& text, size_t bytes) {
    return std::string(utf8::TruncateBytes(text, bytes));
  };
  const std::string user = cut(d.user, 128);
  DownloadCount counted = DownloadCount::kWithinWindow;
  EC_RETURN_IF_ERROR(Write([&](Connection& c) -> Status {
    counted = DownloadCount::kWithinWindow;
    // The task row's lock serialises every audit of this task: a second
    // caller waits here and then sees the first one's committed row (every
    // write transaction reads committed data, docs/store.md), so parallel
    // ranges of one download count once.
    EC_ASSIGN_OR_RETURN(
        Rows task,
        c.Query(Sql("SELECT id, dispatch_version FROM export_task WHERE id = ?{FOR_UPDATE}"),
                {d.task_id}));
    if (task.empty()) {
      return NotFound("export task " + std::to_string(d.task_id) + " does not exist");
    }
    if (window_seconds > 0) {
      // One download: the same user, and either both with the user's own
      // token or from the same address. A signed link names its signer, not
      // whoever follows it, so a link followed from another address is a
      // download of its own, not swallowed by the signer's.
      const std::string same_reader = d.via == "DIRECT"
                                          ? " AND (via = 'DIRECT' OR client_address = ?)"
                                          : " AND client_address = ?";
      EC_ASSIGN_OR_RETURN(
          Rows seen,
          c.Query(Sql("SELECT COUNT(*) FROM export_download_audit"
                      " WHERE task_id = ? AND user_id = ? AND downloaded_at > {NOW} - ?" +
                      same_reader),
                  {d.task_id, user, int64_t{window_seconds} * 1000, cut(d.client_address, 64)}));
      if (!seen.empty() && seen[0].Int(0) > 0) return Status::Ok();
    }
    // updated_at too: the count is shown live (task events poll updated_at).
    EC_RETURN_IF_ERROR(c.Exec(Sql("UPDATE export_task SET download_count ="
                                  " download_count + 1, last_downloaded_at = {NOW},"
                                  " updated_at = {NOW} WHERE id = ?"),
                              {d.task_id})
                           .status());
    EC_RETURN_IF_ERROR(
        c.Exec(Sql("INSERT INTO export_download_audit (id, task_id, tenant_id, app_code, user_id,"
                   " export_type, via, served_by, client_address, user_agent, request_id,"
                   " downloaded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {NOW})"),
               {NewId(), d.task_id, cut(d.tenant_id, 64), task::ToString(d.app_code), user,
                cut(d.export_type, 128), d.via, d.served_by, cut(d.client_address, 64),
                cut(d.user_agent, 512), cut(d.request_id, 64)})
            .status());
    EC_RETURN_IF_ERROR(RecordEvent(c, d.task_id, static_cast<int32_t>(task[0].Int(1)),
                                   TaskEventKind::kDownloaded, {{"user", user}, {"via", d.via}}));
    counted = DownloadCount::kCounted;
    return Status::Ok();
  }));
  return counted;
}

namespace {

StatusOr<DownloadAuditEntry> AuditFromRow(const Row& r) {
  DownloadAuditEntry e;
  e.id = r.Int(0);
  e.record.task_id = r.Int(1);
  e.record.tenant_id = r.Text(2);
  auto app = task::ParseAppCode(r.Text(3));
  if (!app)
    return Internal("export_download_audit " + std::to_string(e.id) + " has a bad app_code");
  e.record.app_code = *app;
  e.record.user = r.Text(4);
  e.record.export_type = r.Text(5);
  e.record.via = r.Text(6);
  e.record.served_by = r.Text(7);
  e.record.client_address = r.Text(8);
  e.record.user_agent = r.Text(9);
  e.record.request_id = r.Text(10);
  e.downloaded_at = r.Int(11);
  return e;
}

}  // namespace

StatusOr<DownloadAuditPage> SqlTaskCatalog::ListDownloadAudit(const DownloadAuditQuery& q) {
  const PageStatements page = AuditStatements(q);
  const size_t limit = static_cast<size_t>(std::clamp(q.size, 1, 100));
  DownloadAuditPage out;
  EC_RETURN_IF_ERROR(Read([&](Connection& c) -> Status {
    out = DownloadAuditPage();
    EC_ASSIGN_OR_RETURN(Rows count, c.Query(page.count.sql, page.count.params));
    BoundTotal(count.at(0).Int(0), &out.total, &out.total_is_exact);
    EC_ASSIGN_OR_RETURN(Rows rows, c.Query(page.rows.sql, page.rows.params));
    for (const Row& r : rows) {
      if (out.records.size() == limit) {
        out.next = PageKey{out.records.back().downloaded_at, out.records.back().id};
        break;
      }
      EC_ASSIGN_OR_RETURN(DownloadAuditEntry e, AuditFromRow(r));
      out.records.push_back(std::move(e));
    }
    return Status::Ok();
  }));
  return out;
}

}  // namespace export_center::store::sql
