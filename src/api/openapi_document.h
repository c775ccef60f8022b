#pragma once
// The OpenAPI 3.1 document of the whole HTTP API, served at GET /openapi.json.
// Its source is docs/openapi.json in the repository; the build embeds it with
// cmake/EmbedFiles.cmake (as the page's files), so the binary serves exactly
// the reviewed file.

#include <span>
#include <string_view>

#include "api/download_center_page.h"  // EmbeddedFile

namespace export_center::api {

// The embedded files (generated): openapi.json alone.
std::span<const EmbeddedFile> OpenApiFiles();

// The document's bytes (UTF-8 JSON); static storage, never fails.
std::string_view OpenApiDocument();

}  // namespace export_center::api
