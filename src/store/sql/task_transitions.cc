#include "store/sql/task_transitions.h"

#include <array>
#include <string>
#include <utility>

#include "store/sql/sql_store_core.h"

namespace export_center::store::sql {
namespace {

using task::TaskState;

// What arriving in each state writes besides the UPDATE. A new state adds its row.
constexpr std::array<Arrival, 8> kArrivals = {{
    {TaskState::kPending, /*new_attempt=*/true, /*finished_event=*/false, /*notify=*/false},
    {TaskState::kRunning, false, false, false},
    {TaskState::kSucceeded, false, true, true},
    {TaskState::kFailed, false, true, true},
    {TaskState::kCancelled, false, true, true},
    // FINISHED was written when it SUCCEEDED; EXPIRED is its own event.
    {TaskState::kExpired, false, false, true},
    {TaskState::kStale, false, true, true},
    {TaskState::kInconsistent, false, true, true},
}};

StatusOr<task::Task> ReadBack(Connection& c, int64_t task_id) {
  EC_ASSIGN_OR_RETURN(
      Rows rows,
      c.Query(std::string("SELECT ") + kTaskColumns + " FROM export_task WHERE id = ?", {task_id}));
  if (rows.empty()) return Internal("export task " + std::to_string(task_id) + " vanished");
  return TaskFromRow(rows[0]);
}

// The FINISHED event's details: status, code, rows, bytes and duration.
nlohmann::json FinishedDetails(const task::Task& t) {
  nlohmann::json details = {{"status", task::ToString(t.status)}};
  if (t.failure_code) details["code"] = *t.failure_code;
  if (t.failure_message) details["message"] = ShortText(*t.failure_message);
  // The operators' text (kOperatorOnlyDetail), never the user's.
  if (t.failure_detail) details[kOperatorOnlyDetail] = *t.failure_detail;
  if (t.status == TaskState::kSucceeded) {
    details["rows"] = t.total_rows.value_or(t.processed_rows);
    if (t.size_bytes) details["bytes"] = *t.size_bytes;
  }
  if (t.started_at && t.completed_at) details["durationMs"] = *t.completed_at - *t.started_at;
  return details;
}

}  // namespace

const Arrival& ArrivalOf(TaskState state) {
  for (const Arrival& a : kArrivals) {
    if (a.state == state) return a;
  }
  return kArrivals[0];  // unreachable: every state has its row (task_transitions_test)
}

StatusOr<std::optional<task::Task>> TaskTransitions::Apply(Connection& c,
                                                           const TransitionChange& ch) {
  if (ch.from.empty()) return Internal("a transition needs its expected states");
  std::string states;
  SqlParams params = {std::string(task::ToString(ch.to))};
  for (TaskState from : ch.from) {
    if (!task::IsAllowedTransition(from, ch.to)) {
      return Internal("task " + std::to_string(ch.task_id) + ": " +
                      std::string(task::ToString(from)) + " -> " +
                      std::string(task::ToString(ch.to)) + " is not in the transition table");
    }
    states += states.empty() ? "'" : ", '";
    states += task::ToString(from);
    states += "'";
  }
  const Arrival& arrival = ArrivalOf(ch.to);
  std::string sql = "UPDATE export_task SET status = ?";
  if (arrival.new_attempt) sql += ", dispatch_version = dispatch_version + 1";
  if (!ch.set.empty()) sql += ", " + ch.set;
  params.insert(params.end(), ch.set_params.begin(), ch.set_params.end());
  sql += ", updated_at = {NOW} WHERE id = ? AND status IN (" + states + ")";
  params.emplace_back(ch.task_id);
  if (ch.version) {
    sql += " AND dispatch_version = ?";
    params.emplace_back(int64_t{*ch.version});
  }
  if (!ch.where.empty()) sql += " " + ch.where;
  params.insert(params.end(), ch.where_params.begin(), ch.where_params.end());

  EC_ASSIGN_OR_RETURN(int64_t n, c.Exec(d_.Expand(sql), params));
  if (n == 0) return std::optional<task::Task>();
  if (n != 1) return Internal("a transition changed " + std::to_string(n) + " task rows");

  EC_ASSIGN_OR_RETURN(task::Task after, ReadBack(c, ch.task_id));
  const int32_t left_version = after.dispatch_version - (arrival.new_attempt ? 1 : 0);
  if (arrival.new_attempt) EC_RETURN_IF_ERROR(effects_.InsertCommandOrFail(c, after, ch.trace_id));
  if (ch.event) {
    nlohmann::json details = ch.details.is_object() ? ch.details : nlohmann::json::object();
    if (ch.details_after) ch.details_after(after, &details);
    const int32_t at = ch.event_at_new_version ? after.dispatch_version : left_version;
    EC_RETURN_IF_ERROR(effects_.RecordEvent(c, ch.task_id, at, *ch.event, details));
  }
  if (arrival.finished_event) {
    EC_RETURN_IF_ERROR(effects_.RecordEvent(c, ch.task_id, after.dispatch_version,
                                            TaskEventKind::kFinished, FinishedDetails(after)));
  }
  if (arrival.notify) EC_RETURN_IF_ERROR(effects_.NotifyEnded(c, ch.task_id));
  return std::optional<task::Task>(std::move(after));
}

Status TaskTransitions::Created(Connection& c, const task::Task& created,
                                const std::string& trace_id, const nlohmann::json& details) {
  if (created.status != TaskState::kPending) {
    return Internal("a task is created PENDING, not " +
                    std::string(task::ToString(created.status)));
  }
  EC_RETURN_IF_ERROR(effects_.InsertCommandOrFail(c, created, trace_id));
  return effects_.RecordEvent(c, created.id, created.dispatch_version, TaskEventKind::kCreated,
                              details);
}

}  // namespace export_center::store::sql
