#pragma once
// The media type of a JSON request body (docs/http-api.md, "POST /export-tasks — create").
// The body itself is read by common/strict_json.h (ParseStrictJson).

#include <string_view>

#include "common/status.h"
#include "common/strict_json.h"

namespace export_center::api {

// OK for "application/json" with optional parameters where a charset, if
// given, is UTF-8 (case-insensitive). InvalidArgument otherwise.
Status CheckJsonContentType(std::string_view content_type);

}  // namespace export_center::api
