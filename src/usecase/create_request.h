#pragma once
// CreateRequest: what a create asks for, checked — one form for POST /export-tasks,
// export again, the preview and a subscription's run (docs/http-api.md#post-export-tasks--create,
// #post-export-previews--preview), so all accept exactly the same requests. The
// body is JSON, never an HTTP request: api/create_request.h reads one from HTTP.

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "identity/principal.h"
#include "registry/registry.h"
#include "task/limits.h"
#include "task/task.h"

namespace export_center::usecase {

using identity::Principal;

struct CreateRequest {
  std::shared_ptr<const registry::RegistrySnapshot> snapshot;
  const registry::ExportDefinition* definition = nullptr;  // points into `snapshot`
  task::FileFormat format = task::FileFormat::kXlsx;
  std::string task_name;
  std::string canonical_parameters;  // docs/http-api.md: the stored form
  // The governed columns the caller may not see in full, decided now from the
  // caller's permissions (docs/configuration.md#column-governance-columns).
  task::ColumnPolicy column_policy;
  // The requester's language recorded on the task (task::Task::locale):
  // `locale` of the body, else the first tag of Accept-Language, else the
  // definition's `locale`, else "" (ParseCreateRequest; export again copies
  // the old task's).
  std::string locale{};
  // `filePassword`, checked (usecase/file_password.h); "" for a plain file. The
  // create turns it into wrapped key material at once; never stored, logged
  // or echoed.
  std::string file_password{};
  // Why this requester must give one (FilePasswordRequiredBy); "" if not. The
  // create refuses a request without one (the preview writes no file).
  std::string file_password_required_by{};
};

// 400 when `request` lacks the filePassword its type or a governed column it
// shows in full requires; what create and export-again check before queueing.
Status CheckFilePasswordGiven(const CreateRequest& request);

// POST /export-tasks/{id}/export-again: the create request of `old` — its
// type, format, task name, locale and stored parameters — checked by `principal`
// exactly as a new create body is (type still registered and enabled, app
// scope and permission, parameters under the current definition), with
// `file_password` ("" for none) as its filePassword. The password of an
// encrypted task is not kept: exporting one again needs a new password
// (InvalidArgument without one) while its type takes one. Codes as
// ParseCreateRequest.
StatusOr<CreateRequest> ExportAgainRequest(
    const task::Task& old, const Principal& principal,
    std::shared_ptr<const registry::RegistrySnapshot> snapshot, const task::LimitsOptions& limits,
    const std::string& file_password = {});

// The checks of a parsed body, shared by both. `locale` is the body's own
// (task::IsLocaleTag, else InvalidArgument naming it) or "".
StatusOr<CreateRequest> CheckCreateBody(const nlohmann::json& body, const Principal& principal,
                                        std::shared_ptr<const registry::RegistrySnapshot> snapshot,
                                        const task::LimitsOptions& limits);

// taskName: 1-100 characters, not blank, no control or bidi characters.
Status CheckTaskName(const std::string& name);

}  // namespace export_center::usecase
