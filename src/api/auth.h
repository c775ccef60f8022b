#pragma once
// The access rules (docs/http-api.md#access-rules): what a verified
// principal (identity/principal.h; token verification: identity/token_verifier.h)
// may do with a task or an export type.

#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "identity/principal.h"
#include "registry/export_definition.h"
#include "task/task.h"

namespace export_center::api {

// Grants read/download/retry/cancel on every task of the caller's tenant and app.
inline constexpr std::string_view kDownloadAllPermission = "platform:download:all";

// Who is calling (identity/principal.h).
using identity::Principal;

// ---- access rules ----------------------------------------------------------

// Tenant and app must match; the owner, or anyone with kDownloadAllPermission
// in that tenant and app. Callers answer NotFound otherwise, never revealing
// that the task exists.
bool CanAccessTask(const Principal& principal, const task::Task& task);

// The same rule as a list filter (task list, task events): the requester whose
// tasks the caller may list, or nullopt for the whole tenant and app.
std::optional<std::string> ListableRequester(const Principal& principal);

// Whether the type is offered to the caller: its app-scope equals the token's
// app_code and its required-permission (if any) is held. Disabled types are
// not offered.
bool CanSeeType(const Principal& principal, const registry::ExportDefinition& def);

// Creation and manual retry (docs/task-lifecycle.md#when-definition-values-take-effect):
// enabled (else InvalidArgument), app-scope (PermissionDenied), required-permission
// (PermissionDenied).
Status CheckCanRun(const Principal& principal, const registry::ExportDefinition& def);

// The state rules of a manual retry, the single one and each of a bulk one
// (docs/task-lifecycle.md#manual-retry): the type still registered
// (`def` non-null) and enabled (else InvalidArgument); a STALE task is
// exported again instead, and only FAILED, CANCELLED or INCONSISTENT tasks
// are retried (else Conflict).
Status CheckManualRetry(const task::Task& task, const registry::ExportDefinition* def);

}  // namespace export_center::api
