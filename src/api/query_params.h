#pragma once
// Query parameters shared by the API's paged lists (the task list, the
// download audit): docs/http-api.md#value-conventions.

#include "common/status.h"
#include "http/http_request.h"

namespace export_center::api {

// `page` (1..1000000) and `size` (1..100), digits only without a leading zero.
// An absent parameter leaves its value as it is; a malformed one is
// InvalidArgument naming it.
Status ReadPageParams(const http::HttpRequest& req, int* page, int* size);

}  // namespace export_center::api
