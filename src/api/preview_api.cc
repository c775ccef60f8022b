#include "api/preview_api.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "api/create_request.h"
#include "api/envelope.h"
#include "api/task_json.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;

// The options the type offers for a result over max-rows, for the page to
// show beside "narrow the filter": CSV unless CSV was asked already, SPLIT
// when the type writes XLSX as a .zip of smaller files (`split: files`).
json Suggestions(const registry::ExportDefinition& def, task::FileFormat format) {
  json out = json::array();
  if (format != task::FileFormat::kCsv) out.push_back("CSV");
  if (def.rows_per_file > 0) out.push_back("SPLIT");
  return out;
}

json PlanAdviceJson(const std::vector<task::PlanAdvice>& advice) {
  json out = json::array();
  for (const auto& a : advice) {
    json item = {{"statement", a.statement},
                 {"table", a.table},
                 {"plan", a.plan},
                 {"predicate", a.predicate},
                 {"indexColumns", a.index_columns},
                 {"suggestedIndex", a.suggested_index}};
    if (a.estimated_rows) item["estimatedRows"] = Int64String(*a.estimated_rows);
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace

json PreviewToJson(const registry::ExportDefinition& def, task::FileFormat format,
                   const task::PreviewTable& table, const task::ColumnPolicy& policy) {
  json columns = json::array();
  int header_rows = 1;
  for (const auto& c : table.columns) {
    // The header path top first, as the file's header rows show it
    // (docs/xlsx.md#grouped-headers): the page draws the same grouping.
    json path = c.title_groups;
    path.push_back(c.title);
    header_rows = std::max(header_rows, task::TitleDepth(c));
    columns.push_back({{"key", c.key},
                       {"title", c.title},
                       {"titlePath", std::move(path)},
                       {"type", task::ToString(c.type)}});
  }
  const bool exceeds = table.row_count > def.max_rows;
  return {{"exportType", def.name},
          {"columns", std::move(columns)},
          {"headerRows", header_rows},
          {"rows", table.rows},
          {"rowCount", {{"value", Int64String(table.row_count)}, {"exact", table.row_count_exact}}},
          {"maxRows", Int64String(def.max_rows)},
          {"exceedsMaxRows", exceeds},
          {"suggestions", exceeds ? Suggestions(def, format) : json::array()},
          {"planAdvice", PlanAdviceJson(table.plan_advice)},
          {"columnPolicy", ColumnPolicyToApiJson(policy)}};
}

PreviewApi::PreviewApi(PreviewFn preview, task::PreviewOptions options, task::LimitsOptions limits)
    : preview_(std::move(preview)), limits_(limits), limiter_(options.per_user_per_minute) {}

void PreviewApi::Handle(const http::HttpRequest& req, const Principal& principal,
                        std::shared_ptr<const registry::RegistrySnapshot> snapshot,
                        http::HttpResponse& res) {
  auto data = DoPreview(req, principal, std::move(snapshot));
  if (data.ok()) return WriteSuccess(res, std::move(data).value());
  // A slow or unavailable data service is worth a precise message, not the
  // generic "temporarily unavailable" of other 500s: the person can narrow
  // the filter. The previewer's messages are classified already, as the
  // task's failure message would be (attempt/export_preview.h).
  if (data.status().code() == StatusCode::kDeadlineExceeded ||
      data.status().code() == StatusCode::kUnavailable) {
    spdlog::warn("preview request {}: {}", res.Header("X-Request-Id"), data.status().ToString());
    return WriteEnvelope(res, 200, ErrorEnvelope(500, data.status().message()));
  }
  WriteStatus(res, data.status());
}

StatusOr<json> PreviewApi::DoPreview(const http::HttpRequest& req, const Principal& p,
                                     std::shared_ptr<const registry::RegistrySnapshot> snapshot) {
  EC_ASSIGN_OR_RETURN(CreateRequest request,
                      ParseCreateRequest(req, p, std::move(snapshot), limits_));
  EC_ASSIGN_OR_RETURN(task::PreviewTable table,
                      usecase::PreviewExport(preview_, limiter_, p, request));
  json data = PreviewToJson(*request.definition, request.format, table, request.column_policy);
  data["locale"] = request.locale;
  return data;
}

}  // namespace export_center::api
