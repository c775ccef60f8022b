#include "api/task_json.h"

#include "common/time_format.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;

json OptionalTime(const std::optional<int64_t>& ms) {
  return ms ? json(FormatIsoMillis(*ms)) : json(nullptr);
}

json OptionalInt64(const std::optional<int64_t>& v) {
  return v ? json(std::to_string(*v)) : json(nullptr);
}

json OptionalString(const std::optional<std::string>& v) { return v ? json(*v) : json(nullptr); }

json ParametersObject(const std::string& text) {
  // Stored parameters are canonical JSON written by this API; anything else
  // (hand-edited rows) is shown as an empty object rather than failing the list.
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return parsed.is_object() ? parsed : json::object();
}

// The file's manifest, or null for a task without a file (or one that
// succeeded before manifests were recorded). A part is a sheet of an XLSX, or
// a file of a split .zip; a CSV is one part.
json Manifest(const task::Task& t) {
  if (!t.file_sha256) return nullptr;
  const bool sheets = t.format == task::FileFormat::kXlsx && t.content_type &&
                      *t.content_type == task::ContentType(task::FileFormat::kXlsx);
  json parts = json::array();
  for (int64_t rows : t.part_rows) {
    parts.push_back({{"kind", sheets ? "SHEET" : "FILE"}, {"rows", std::to_string(rows)}});
  }
  return {{"sha256", *t.file_sha256},
          {"sizeBytes", OptionalInt64(t.size_bytes)},
          {"rows", OptionalInt64(t.total_rows)},
          {"parts", parts},
          {"encrypted", t.encrypted}};
}

}  // namespace

json ColumnPolicyToApiJson(const task::ColumnPolicy& policy) {
  json columns = json::array();
  for (const task::ColumnDecision& d : policy.decisions) {
    columns.push_back({{"key", d.key}, {"action", std::string(task::ToString(d.action))}});
  }
  return {{"masked", policy.masked()}, {"omitted", policy.omitted()}, {"columns", columns}};
}

std::optional<int> ProgressPercent(const task::Task& task) {
  if (task.status == task::TaskState::kSucceeded) return 100;
  if (!task.total_rows || *task.total_rows <= 0) return std::nullopt;
  int64_t pct = task.processed_rows * 100 / *task.total_rows;
  return static_cast<int>(pct < 0 ? 0 : (pct > 100 ? 100 : pct));
}

// What a task's reader is told of a failed send of its command: the
// channel's own text stays with the operators.
constexpr char kClassifiedSendError[] =
    "the command channel did not accept the command at first; it was sent again";

json TaskEventToJson(const store::TaskEvent& e, const TimelineReader& reader) {
  json details = json::parse(e.details_json, nullptr, /*allow_exceptions=*/false);
  if (!details.is_object()) details = json::object();
  if (e.kind == store::TaskEventKind::kDownloaded && !reader.names_downloaders) {
    details.erase("user");
  }
  if (e.kind == store::TaskEventKind::kCommandSent && !reader.raw_errors &&
      details.contains("lastError")) {
    details["lastError"] = kClassifiedSendError;
  }
  if (!reader.raw_errors) details.erase(store::kOperatorOnlyDetail);
  return {{"id", std::to_string(e.id)},
          {"kind", std::string(store::ToString(e.kind))},
          {"dispatchVersion", e.dispatch_version},
          {"at", FormatIsoMillis(e.at)},
          {"details", std::move(details)}};
}

json TaskToJson(const task::Task& t) {
  auto progress = ProgressPercent(t);
  return {
      {"id", std::to_string(t.id)},
      {"exportType", t.export_type},
      {"taskName", t.task_name},
      {"format", std::string(task::ToString(t.format))},
      {"locale", t.locale},
      {"status", std::string(task::ToString(t.status))},
      {"parameters", ParametersObject(t.parameters_json)},
      {"processedRows", std::to_string(t.processed_rows)},
      {"totalRows", OptionalInt64(t.total_rows)},
      {"progress", progress ? json(*progress) : json(nullptr)},
      {"fileName", OptionalString(t.file_name)},
      {"sizeBytes", OptionalInt64(t.size_bytes)},
      {"manifest", Manifest(t)},
      {"columnPolicy", ColumnPolicyToApiJson(t.column_policy)},
      {"encrypted", t.encrypted},
      {"failureCode", OptionalString(t.failure_code)},
      {"failureMessage", OptionalString(t.failure_message)},
      {"attemptCount", t.attempt_count},
      {"maxAttempts", t.max_attempts},
      {"dispatchVersion", t.dispatch_version},
      {"cancelRequested", t.cancel_requested},
      {"downloadCount", std::to_string(t.downloads.count)},
      {"lastDownloadedAt", OptionalTime(t.downloads.last_at)},
      {"requestedAt", FormatIsoMillis(t.requested_at)},
      {"startedAt", OptionalTime(t.started_at)},
      {"completedAt", OptionalTime(t.completed_at)},
      {"expiresAt", OptionalTime(t.expires_at)},
  };
}

}  // namespace export_center::api
