#include "api/openapi_document.h"

namespace export_center::api {

std::string_view OpenApiDocument() { return OpenApiFiles().front().bytes; }

}  // namespace export_center::api
