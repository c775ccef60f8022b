// The SQL store's timeline (docs/task-lifecycle.md#the-timeline): the one
// recorder of events, called inside the transaction of the change it records
// (for a state change by TaskTransitions, store/sql/task_transitions.h), the
// per-task cap, the progress sampling, and the timeline read.

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/json_dump.h"
#include "common/time_format.h"
#include "common/utf8.h"
#include "store/sql/sql_roles.h"

namespace export_center::store {

namespace {

struct KindName {
  TaskEventKind kind;
  std::string_view name;
};
constexpr KindName kKindNames[] = {
    {TaskEventKind::kCreated, "CREATED"},
    {TaskEventKind::kCommandSent, "COMMAND_SENT"},
    {TaskEventKind::kCommandResent, "COMMAND_RESENT"},
    {TaskEventKind::kClaimed, "CLAIMED"},
    {TaskEventKind::kProgress, "PROGRESS"},
    {TaskEventKind::kRetryScheduled, "RETRY_SCHEDULED"},
    {TaskEventKind::kLeaseRecovered, "LEASE_RECOVERED"},
    {TaskEventKind::kCancelRequested, "CANCEL_REQUESTED"},
    {TaskEventKind::kQuarantined, "QUARANTINED"},
    {TaskEventKind::kFinished, "FINISHED"},
    {TaskEventKind::kManualRetry, "MANUAL_RETRY"},
    {TaskEventKind::kDownloaded, "DOWNLOADED"},
    {TaskEventKind::kExpired, "EXPIRED"},
};

}  // namespace

std::string_view ToString(TaskEventKind kind) {
  for (const KindName& k : kKindNames) {
    if (k.kind == kind) return k.name;
  }
  return "UNKNOWN";
}

std::optional<TaskEventKind> ParseTaskEventKind(std::string_view text) {
  for (const KindName& k : kKindNames) {
    if (k.name == text) return k.kind;
  }
  return std::nullopt;
}

namespace sql {
namespace {

// The events a cap never drops: how the task began and how it ended.
bool IsKept(TaskEventKind kind) {
  return kind == TaskEventKind::kCreated || kind == TaskEventKind::kFinished ||
         kind == TaskEventKind::kQuarantined || kind == TaskEventKind::kExpired;
}

// IsKept's kinds as an SQL list, "('CREATED', ...)": one definition of them.
const std::string& KeptKindsSql() {
  static const std::string list = [] {
    std::string out;
    for (const KindName& k : kKindNames) {
      if (!IsKept(k.kind)) continue;
      out += out.empty() ? "('" : ", '";
      out.append(k.name).push_back('\'');
    }
    return out + ")";
  }();
  return list;
}

// Tenths of the total reached by `rows`; -1 when the total is unknown.
int64_t Decile(int64_t rows, std::optional<int64_t> total) {
  if (!total || *total <= 0) return -1;
  return std::min<int64_t>(10, rows * 10 / *total);
}

}  // namespace

std::string ShortText(const std::string& text) { return utf8::Excerpt(text, kMaxEventTextBytes); }

// At the cap, a kept event makes room by removing the oldest ordinary one
// (or, when only kept ones are left, the oldest but the first); an ordinary
// event is dropped. Counted under the caller's transaction: every caller has
// changed (so locked) the task's row or its command's row first, so two
// writers of one task rarely overshoot, and never by more than one each.
StatusOr<bool> SqlStoreCore::MakeRoomForEvent(Connection& c, int64_t task_id, TaskEventKind kind) {
  EC_ASSIGN_OR_RETURN(
      Rows count, c.Query("SELECT COUNT(*) FROM export_task_event WHERE task_id = ?", {task_id}));
  if (count.at(0).Int(0) < kMaxEventsPerTask) return true;
  if (!IsKept(kind)) return false;
  EC_ASSIGN_OR_RETURN(Rows oldest, c.Query(Sql("SELECT id FROM export_task_event WHERE task_id = ?"
                                               " AND kind NOT IN " +
                                               KeptKindsSql() + " ORDER BY created_at, id LIMIT 1"),
                                           {task_id}));
  if (oldest.empty()) {
    EC_ASSIGN_OR_RETURN(oldest, c.Query("SELECT id FROM export_task_event WHERE task_id = ?"
                                        " AND kind <> 'CREATED' ORDER BY created_at, id LIMIT 1",
                                        {task_id}));
  }
  if (oldest.empty()) return false;
  EC_RETURN_IF_ERROR(
      c.Exec("DELETE FROM export_task_event WHERE id = ?", {oldest[0].Int(0)}).status());
  return true;
}

Status SqlStoreCore::RecordEvent(Connection& c, int64_t task_id, int32_t version,
                                 TaskEventKind kind, const nlohmann::json& details) {
  EC_ASSIGN_OR_RETURN(bool room, MakeRoomForEvent(c, task_id, kind));
  if (!room) return Status::Ok();
  const std::string text = details.is_object() ? DumpTolerant(details) : std::string("{}");
  return c
      .Exec(Sql("INSERT INTO export_task_event (id, task_id, dispatch_version, kind,"
                " details_json, created_at) VALUES (?, ?, ?, ?, ?, {NOW})"),
            {NewId(), task_id, version, std::string(ToString(kind)), text})
      .status();
}

// One checkpoint per tenth of the total (or per kProgressEventIntervalMs when
// the total is unknown or moves slowly), at most kMaxProgressEventsPerAttempt
// per attempt: a task of a million rows read page by page writes ten or so.
Status SqlStoreCore::RecordProgress(Connection& c, const Attempt& a, int64_t rows,
                                    std::optional<int64_t> total) {
  EC_ASSIGN_OR_RETURN(Rows last,
                      c.Query(Sql("SELECT details_json, {NOW} - created_at,"
                                  " (SELECT COUNT(*) FROM export_task_event p"
                                  " WHERE p.task_id = ? AND p.dispatch_version = ?"
                                  " AND p.kind = 'PROGRESS')"
                                  " FROM export_task_event WHERE task_id = ?"
                                  " AND dispatch_version = ? AND kind = 'PROGRESS'"
                                  " ORDER BY created_at DESC, id DESC LIMIT 1"),
                              {a.task_id, a.dispatch_version, a.task_id, a.dispatch_version}));
  if (!last.empty()) {
    if (last[0].Int(2) >= kMaxProgressEventsPerAttempt) return Status::Ok();
    nlohmann::json before = nlohmann::json::parse(last[0].Text(0), nullptr, false);
    const int64_t before_rows =
        before.is_object() && before.contains("rows") && before["rows"].is_number_integer()
            ? before["rows"].get<int64_t>()
            : 0;
    const bool next_tenth = Decile(rows, total) > Decile(before_rows, total);
    const bool interval_passed = last[0].Int(1) >= kProgressEventIntervalMs;
    if (!next_tenth && !interval_passed) return Status::Ok();
  }
  nlohmann::json details = {{"rows", rows}};
  if (total) details["total"] = *total;
  return RecordEvent(c, a.task_id, a.dispatch_version, TaskEventKind::kProgress, details);
}

StatusOr<std::vector<TaskEvent>> SqlTaskCatalog::ListTaskEvents(int64_t task_id) {
  EC_ASSIGN_OR_RETURN(Rows rows, db_->Query(Sql("SELECT id, task_id, dispatch_version, kind,"
                                                " details_json, created_at FROM export_task_event"
                                                " WHERE task_id = ? ORDER BY created_at, id"
                                                " LIMIT ?"),
                                            {task_id, int64_t{2 * kMaxEventsPerTask}}));
  std::vector<TaskEvent> out;
  out.reserve(rows.size());
  for (const Row& r : rows) {
    std::optional<TaskEventKind> kind = ParseTaskEventKind(r.Text(3));
    if (!kind) continue;  // written by a newer binary during a rolling upgrade
    out.push_back({r.Int(0), r.Int(1), static_cast<int32_t>(r.Int(2)), *kind, r.Text(4), r.Int(5)});
  }
  return out;
}

}  // namespace sql
}  // namespace export_center::store
