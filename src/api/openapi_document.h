#pragma once
// The OpenAPI 3.1 document of the whole HTTP API, served at GET /openapi.json.
// Its source is docs/openapi.json in the repository; the build embeds it
// (cmake/EmbedText.cmake), so the binary serves exactly the reviewed file.

#include <string_view>

namespace export_center::api {

// The document's bytes (UTF-8 JSON); static storage, never fails.
std::string_view OpenApiDocument();

}  // namespace export_center::api
