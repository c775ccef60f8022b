#pragma once
// CreateRequest: the body of POST /export-tasks, checked — shared by create
// and the preview (docs/http-api.md#post-export-tasks--create,
// #post-export-previews--preview) so the two accept exactly the same requests.

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "api/auth.h"
#include "common/status.h"
#include "http/http_server.h"
#include "registry/registry.h"
#include "task/limits.h"
#include "task/task.h"

namespace export_center::api {

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
  // `filePassword`, checked (api/file_password.h); "" for a plain file. The
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

// Checks the Content-Type, the strict JSON body, the type (known, enabled,
// app scope and permission of `principal`), format, taskName, locale and
// parameters; decides the column policy from the permissions of `principal`,
// and the language from the body, Accept-Language or the definition
// (CreateRequest::locale).
// InvalidArgument (400) or PermissionDenied (403) with a message naming the
// offending field.
StatusOr<CreateRequest> ParseCreateRequest(
    const http::HttpRequest& req, const Principal& principal,
    std::shared_ptr<const registry::RegistrySnapshot> snapshot, const task::LimitsOptions& limits);

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

// The first language tag of an Accept-Language header ("zh-CN,zh;q=0.9" →
// "zh-CN"), or "" when it has none of the shape task::IsLocaleTag takes ("*",
// empty, garbage): a header is a hint, never a reason to refuse.
std::string FirstAcceptLanguageTag(std::string_view header);

}  // namespace export_center::api
