#include "source/datasource/read_only_datasource.h"

namespace export_center::source {

Status CheckSchemaName(std::string_view schema) {
  for (char c : schema) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '$';
    if (!ok) return InvalidArgument("schema name is not [A-Za-z0-9_$]+: " + std::string(schema));
  }
  return Status::Ok();
}

}  // namespace export_center::source
