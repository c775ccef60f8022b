#include "source/sql/datasource/read_only_datasource.h"

namespace export_center::source {

Status CheckSchemaName(std::string_view schema) {
  for (char c : schema) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '$';
    if (!ok) return InvalidArgument("schema name is not [A-Za-z0-9_$]+: " + std::string(schema));
  }
  return Status::Ok();
}

StatusOr<QueryDescription> ReadOnlyDatasource::Describe(std::string_view sql,
                                                        const std::vector<nlohmann::json>& params,
                                                        std::string_view schema) {
  EC_ASSIGN_OR_RETURN(ResultSet probe,
                      Query("SELECT * FROM (" + std::string(sql) + ") _t LIMIT 0", params, schema));
  return QueryDescription{std::move(probe.columns), {}};
}

StatusOr<QueryPlan> ReadOnlyDatasource::Explain(std::string_view,
                                                const std::vector<nlohmann::json>&,
                                                std::string_view, int) {
  return InvalidArgument(std::string(kind()) + " datasource gives no query plans");
}

}  // namespace export_center::source
