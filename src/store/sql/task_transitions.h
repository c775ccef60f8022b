#pragma once
// TaskTransitions: the one function that changes a task's state (issue 47;
// leveldb's VersionSet::LogAndApply is the model). Every UPDATE of
// export_task.status in the store is a TaskTransitions::Apply inside the
// caller's transaction; Apply
//   1. refuses a pair that task::kTransitions (task/task.h) does not have,
//   2. issues the one conditional UPDATE (expected states, dispatch version,
//      the caller's extra conditions and column changes) and reports whether
//      it changed the row,
//   3. then writes what arriving in the new state means (kArrivals in
//      task_transitions.cc): a new dispatch version and its command row for
//      PENDING, the change's own timeline event, the FINISHED event of an end
//      state and its notification rows (which also erase the file key).
// A new state: a TaskState value and its rows in task::kTransitions, and its
// arrival row in task_transitions.cc. A new event: a TaskEventKind
// (store/task_event.h) passed as TransitionChange::event. Nothing else to
// remember at the call site.

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/database.h"
#include "store/dialect.h"
#include "store/task_event.h"
#include "task/task.h"

namespace export_center::store::sql {

// One change of one task's state, as its caller knows it.
struct TransitionChange {
  int64_t task_id = 0;
  // The states the task may be in (WHERE status IN ...); each pair with `to`
  // must be in task::kTransitions.
  std::vector<task::TaskState> from;
  task::TaskState to = task::TaskState::kPending;
  // AND dispatch_version = ? when set.
  std::optional<int32_t> version;
  // Column changes besides status, dispatch_version and updated_at
  // ("col = ?, col2 = {NOW}", dialect tokens allowed), and their values.
  std::string set;
  SqlParams set_params;
  // More conditions ("AND lease_owner = ?"), and their values.
  std::string where;
  SqlParams where_params;
  // The change's own timeline event (CLAIMED, RETRY_SCHEDULED, ...), written
  // before the FINISHED event an end state adds; none when unset.
  std::optional<TaskEventKind> event;
  nlohmann::json details = nlohmann::json::object();
  // Adds details known only after the update (the attempt number, the time
  // of the next attempt), from the row as the change left it.
  std::function<void(const task::Task& after, nlohmann::json* details)> details_after;
  // The event is recorded at the version the task left, unless this is set
  // (a manual retry records it at the new version).
  bool event_at_new_version = false;
  // The trace id of the command row a change to PENDING writes; empty: a new one.
  std::string trace_id;
};

class TaskTransitions {
 public:
  // The writes a transition makes besides its own UPDATE, implemented by the
  // store's shared core (ids, the timeline's cap, the notification routes).
  class Effects {
   public:
    virtual ~Effects() = default;
    // One timeline event, within the per-task cap (task_event.h).
    virtual Status RecordEvent(Connection& c, int64_t task_id, int32_t version, TaskEventKind kind,
                               const nlohmann::json& details) = 0;
    // The command row of `pending` (PENDING at its dispatch_version); a row
    // that exists already is a broken invariant.
    virtual Status InsertCommandOrFail(Connection& c, const task::Task& pending,
                                       const std::string& trace_id) = 0;
    // An end state reached: the wrapped file key erased and the notification
    // rows of the routes in force written (docs/notifications.md).
    virtual Status NotifyEnded(Connection& c, int64_t task_id) = 0;
  };

  TaskTransitions(const Dialect& dialect, Effects& effects) : d_(dialect), effects_(effects) {}

  // Applies `change` inside the caller's transaction `c`. Returns the task as
  // the change left it, or nullopt when the conditional UPDATE matched no row
  // (the caller decides whether that is a lost race, a conflict or nothing).
  // An edge missing from task::kTransitions is an Internal error, before any SQL.
  StatusOr<std::optional<task::Task>> Apply(Connection& c, const TransitionChange& change);

  // A task just inserted PENDING (CreateTask): its first command row and its
  // CREATED event, as a change to PENDING would write them.
  Status Created(Connection& c, const task::Task& created, const std::string& trace_id,
                 const nlohmann::json& details);

 private:
  const Dialect& d_;
  Effects& effects_;
};

// What arriving in `state` writes (task_transitions.cc): exposed for the tests.
struct Arrival {
  task::TaskState state = task::TaskState::kPending;
  bool new_attempt = false;     // dispatch_version + 1 and its command row
  bool finished_event = false;  // the FINISHED event, read back from the row
  bool notify = false;          // Effects::NotifyEnded
};
const Arrival& ArrivalOf(task::TaskState state);

}  // namespace export_center::store::sql
