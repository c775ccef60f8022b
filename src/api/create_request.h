#pragma once
// The create request read from HTTP: POST /export-tasks and /export-previews
// (docs/http-api.md#post-export-tasks--create); the checks are the use case's
// (usecase/create_request.h).

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "http/http_server.h"
#include "identity/principal.h"
#include "registry/registry.h"
#include "task/limits.h"
#include "usecase/create_request.h"

namespace export_center::api {

using identity::Principal;
using usecase::CreateRequest;

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

// The first language tag of an Accept-Language header ("zh-CN,zh;q=0.9" →
// "zh-CN"), or "" when it has none of the shape task::IsLocaleTag takes ("*",
// empty, garbage): a header is a hint, never a reason to refuse.
std::string FirstAcceptLanguageTag(std::string_view header);

}  // namespace export_center::api
