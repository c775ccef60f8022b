#pragma once
// The use cases on one existing task, as its caller (docs/http-api.md,
// docs/task-lifecycle.md#manual-retry): read it, retry it, cancel it, export
// it again. Each looks the task up by the access rules (usecase/access.h):
// a task the caller may not see answers exactly like a missing one.
//
// Thread-safe: plain functions over the store seam and a registry snapshot.

#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "identity/principal.h"
#include "registry/registry.h"
#include "store/task_catalog.h"
#include "task/task.h"
#include "usecase/create.h"

namespace export_center::usecase {

// InvalidArgument for an id that is not 1-19 digits; NotFound unless the task
// exists and `caller` may see it (CanAccessTask).
StatusOr<task::Task> LoadVisibleTask(store::TaskCatalog& store, const Principal& caller,
                                     const std::string& id_text);

struct TaskActionDeps {
  store::TaskCatalog* store = nullptr;     // not owned
  registry::Registry* registry = nullptr;  // not owned
  // Called after a task was queued again (wakes the outbox publisher). Optional.
  std::function<void()> on_requeued{};
};

// A manual retry: the type's permission and `enabled` checked again
// (CheckCanRun), then CheckManualRetry; the task is queued again with
// `trace_id` on its new command.
StatusOr<task::Task> RetryTask(const TaskActionDeps& deps, const Principal& caller,
                               const std::string& id_text, const std::string& trace_id);

// Asks a PENDING or RUNNING task to stop; the task as it is after the request.
// Conflict naming the state for any other.
StatusOr<task::Task> CancelTask(const TaskActionDeps& deps, const Principal& caller,
                                const std::string& id_text);

// A new task with the old one's type, format, name, locale and parameters,
// created by `caller` exactly as a new create is (ExportAgainRequest, then
// CreateTask): the way out of STALE, and "export again" for any task that has
// ended (Conflict while it is active). `file_password`: the new password of a
// protected file ("" for none) as the caller's request gave it, or why it
// could not be read — answered after the task's own checks.
StatusOr<CreateResult> ExportAgain(const CreateDeps& create, const TaskActionDeps& deps,
                                   const Principal& caller, const std::string& id_text,
                                   const StatusOr<std::string>& file_password,
                                   const std::string& trace_id);

}  // namespace export_center::usecase
