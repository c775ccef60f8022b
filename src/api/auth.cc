#include "api/auth.h"

namespace export_center::api {

bool CanAccessTask(const Principal& principal, const task::Task& task) {
  if (task.tenant_id != principal.tenant || task.app_code != principal.app) return false;
  return task.requested_by == principal.user || principal.HasPerm(kDownloadAllPermission);
}

std::optional<std::string> ListableRequester(const Principal& principal) {
  if (principal.HasPerm(kDownloadAllPermission)) return std::nullopt;
  return principal.user;
}

bool CanSeeType(const Principal& principal, const registry::ExportDefinition& def) {
  return def.enabled && def.app_scope == principal.app &&
         (def.required_permission.empty() || principal.HasPerm(def.required_permission));
}

Status CheckCanRun(const Principal& principal, const registry::ExportDefinition& def) {
  if (!def.enabled) {
    return InvalidArgument("export type " + def.name + " is disabled and accepts no new tasks");
  }
  if (def.app_scope != principal.app) {
    return PermissionDenied("export type " + def.name + " is not available to " +
                            std::string(task::ToString(principal.app)) + " users");
  }
  if (!def.required_permission.empty() && !principal.HasPerm(def.required_permission)) {
    return PermissionDenied("exporting " + def.name + " requires permission " +
                            def.required_permission);
  }
  return Status::Ok();
}

Status CheckManualRetry(const task::Task& t, const registry::ExportDefinition* def) {
  if (def == nullptr) {
    return InvalidArgument("export type " + t.export_type + " is no longer registered");
  }
  if (!def->enabled) {
    return InvalidArgument("export type " + def->name + " is disabled and accepts no new tasks");
  }
  if (t.status == task::TaskState::kStale) {
    // A retry keeps the contract version the task recorded at create and
    // would end STALE again (docs/task-lifecycle.md#stale-and-inconsistent).
    return Conflict("task " + std::to_string(t.id) +
                    " is STALE: its query logic was upgraded after it was created, so a retry "
                    "would end STALE again; export again instead (POST /export-tasks/" +
                    std::to_string(t.id) + "/export-again)");
  }
  if (!task::CanManualRetry(t.status)) {
    return Conflict("task " + std::to_string(t.id) + " is " +
                    std::string(task::ToString(t.status)) +
                    "; only FAILED, CANCELLED or INCONSISTENT tasks can be retried");
  }
  return Status::Ok();
}

}  // namespace export_center::api
