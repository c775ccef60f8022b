#include "usecase/task_actions.h"

#include <spdlog/spdlog.h>

#include "common/ids.h"
#include "usecase/access.h"

namespace export_center::usecase {

StatusOr<task::Task> LoadVisibleTask(store::TaskCatalog& store, const Principal& caller,
                                     const std::string& id_text) {
  auto id = ParseId(id_text);
  if (!id) return InvalidArgument("task id must be 1-19 digits without leading zeros");
  auto task = store.GetTask(*id);
  // Someone else's task looks exactly like a missing one.
  if ((!task.ok() && task.status().code() == StatusCode::kNotFound) ||
      (task.ok() && !CanAccessTask(caller, *task))) {
    return NotFound("export task " + id_text + " not found");
  }
  return task;
}

StatusOr<task::Task> RetryTask(const TaskActionDeps& deps, const Principal& caller,
                               const std::string& id_text, const std::string& trace_id) {
  EC_ASSIGN_OR_RETURN(task::Task t, LoadVisibleTask(*deps.store, caller, id_text));
  // Permission and `enabled` are checked again at manual retry
  // (docs/task-lifecycle.md#when-definition-values-take-effect).
  auto snapshot = deps.registry->Current();
  const registry::ExportDefinition* def = snapshot->Find(t.export_type);
  if (def == nullptr) {
    return InvalidArgument("export type " + t.export_type + " is no longer registered");
  }
  EC_RETURN_IF_ERROR(CheckCanRun(caller, *def));
  EC_RETURN_IF_ERROR(CheckManualRetry(t, def));
  EC_ASSIGN_OR_RETURN(task::Task retried, deps.store->ManualRetry(t.id, trace_id));
  spdlog::info("task retried task_id={} exportType={} tenantId={} dispatchVersion={}", retried.id,
               retried.export_type, retried.tenant_id, retried.dispatch_version);
  if (deps.on_requeued) deps.on_requeued();
  return retried;
}

StatusOr<task::Task> CancelTask(const TaskActionDeps& deps, const Principal& caller,
                                const std::string& id_text) {
  EC_ASSIGN_OR_RETURN(task::Task t, LoadVisibleTask(*deps.store, caller, id_text));
  auto state = deps.store->RequestCancel(t.id);
  if (!state.ok()) {
    if (state.status().code() != StatusCode::kConflict) return state.status();
    return Conflict("task " + std::to_string(t.id) + " is " +
                    std::string(task::ToString(t.status)) +
                    "; only PENDING or RUNNING tasks can be cancelled");
  }
  spdlog::info("task cancel requested task_id={} state={}", t.id, task::ToString(*state));
  return deps.store->GetTask(t.id);
}

StatusOr<CreateResult> ExportAgain(const CreateDeps& create, const TaskActionDeps& deps,
                                   const Principal& caller, const std::string& id_text,
                                   const StatusOr<std::string>& file_password,
                                   const std::string& trace_id) {
  EC_ASSIGN_OR_RETURN(task::Task old, LoadVisibleTask(*deps.store, caller, id_text));
  if (task::IsActive(old.status)) {
    return Conflict("task " + std::to_string(old.id) + " is " +
                    std::string(task::ToString(old.status)) +
                    "; export it again once it has ended");
  }
  if (!file_password.ok()) return file_password.status();
  EC_ASSIGN_OR_RETURN(
      CreateRequest request,
      ExportAgainRequest(old, caller, deps.registry->Current(), create.limits, *file_password));
  EC_ASSIGN_OR_RETURN(CreateResult created, CreateTask(create, caller, request, trace_id));
  spdlog::info("task exported again task_id={} from_task_id={}", created.task.id, old.id);
  return created;
}

}  // namespace export_center::usecase
