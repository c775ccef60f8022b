// The row mapping shared by the SQL store's files (sql_store_core.h).

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/utf8.h"
#include "store/sql/sql_store_core.h"

namespace export_center::store::sql {
namespace {

std::optional<OutboxStatus> ParseOutboxStatus(const std::string& text) {
  for (auto s : {OutboxStatus::kPending, OutboxStatus::kClaimed, OutboxStatus::kSent,
                 OutboxStatus::kQuarantined}) {
    if (ToString(s) == text) return s;
  }
  return std::nullopt;
}

// part_rows is a JSON array of counts ("[1048575,12]"); anything else reads as
// no parts, so a hand-edited row cannot fail every read of its task.
std::vector<int64_t> PartRowsFromText(const std::optional<std::string>& text) {
  std::vector<int64_t> rows;
  if (!text) return rows;
  const nlohmann::json parsed = nlohmann::json::parse(*text, nullptr, false);
  if (!parsed.is_array()) return rows;
  for (const auto& n : parsed) {
    if (!n.is_number_integer()) return {};
    rows.push_back(n.get<int64_t>());
  }
  return rows;
}

}  // namespace

std::optional<std::string> ColumnPolicyText(const task::ColumnPolicy& policy) {
  if (policy.empty()) return std::nullopt;
  return task::ColumnPolicyToJson(policy);
}

std::string PartRowsText(const std::vector<int64_t>& part_rows) {
  return nlohmann::json(part_rows).dump();
}

std::string Truncate(const std::string& text) { return utf8::Excerpt(text, kMaxMessageBytes); }

std::optional<std::string> DetailText(const FailureText& failure) {
  if (failure.detail.empty()) return std::nullopt;
  return Truncate(failure.detail);
}

StatusOr<TaskCatalog::ListPage> ReadNewestTasks(Connection& c, const Dialect& d,
                                                const PageStatements& page, int size) {
  TaskCatalog::ListPage out;
  EC_ASSIGN_OR_RETURN(Rows count, c.Query(d.Expand(page.count.sql), page.count.params));
  BoundTotal(count.at(0).Int(0), &out.total, &out.total_is_exact);
  EC_ASSIGN_OR_RETURN(Rows rows, c.Query(d.Expand(page.rows.sql), page.rows.params));
  const size_t limit = static_cast<size_t>(std::clamp(size, 1, 100));
  for (const Row& r : rows) {
    if (out.records.size() == limit) {
      out.next = PageKey{out.records.back().requested_at, out.records.back().id};
      break;
    }
    EC_ASSIGN_OR_RETURN(Task t, TaskFromRow(r));
    out.records.push_back(std::move(t));
  }
  return out;
}

void BoundTotal(int64_t counted, int64_t* total, bool* exact) {
  *exact = counted <= kExactTotalBound;
  *total = std::min(counted, kExactTotalBound);
}

StatusOr<Task> TaskFromRow(const Row& r) {
  if (r.size() < kTaskColumnCount) return Internal("export_task row has too few columns");
  Task t;
  t.id = r.Int(kId);
  t.tenant_id = r.Text(kTenant);
  auto app = task::ParseAppCode(r.Text(kAppCode));
  auto format = task::ParseFileFormat(r.Text(kFormat));
  auto status = task::ParseTaskState(r.Text(kStatus));
  if (!app || !format || !status) {
    return Internal("export_task " + std::to_string(t.id) +
                    " has an unknown app_code, format or status");
  }
  t.app_code = *app;
  t.requested_by = r.Text(kRequestedBy);
  t.export_type = r.Text(kExportType);
  t.task_name = r.Text(kTaskName);
  t.format = *format;
  t.parameters_json = r.Text(kParams);
  t.params_hash = r.Text(kParamsHash);
  t.status = *status;
  t.file_name = r.OptText(kFileName);
  t.object_key = r.OptText(kObjectKey);
  t.content_type = r.OptText(kContentType);
  t.size_bytes = r.OptInt(kSizeBytes);
  t.total_rows = r.OptInt(kTotalRows);
  t.processed_rows = r.Int(kProcessedRows);
  t.failure_code = r.OptText(kFailureCode);
  t.failure_message = r.OptText(kFailureMessage);
  t.dispatch_version = static_cast<int32_t>(r.Int(kVersion));
  t.attempt_count = static_cast<int32_t>(r.Int(kAttemptCount));
  t.max_attempts = static_cast<int32_t>(r.Int(kMaxAttempts));
  t.next_retry_at = r.Int(kNextRetryAt);
  t.lease.owner = r.OptText(kLeaseOwner);
  t.lease.until = r.OptInt(kLeaseUntil);
  t.lease.last_heartbeat_at = r.OptInt(kHeartbeat);
  t.execution_deadline_at = r.OptInt(kDeadline);
  t.cancel_requested = r.Int(kCancelRequested) != 0;
  t.contract_version = r.OptText(kContractVersion);
  t.downloads.count = r.Int(kDownloadCount);
  t.downloads.last_at = r.OptInt(kLastDownloadedAt);
  t.requested_at = r.Int(kRequestedAt);
  t.started_at = r.OptInt(kStartedAt);
  t.completed_at = r.OptInt(kCompletedAt);
  t.expires_at = r.OptInt(kExpiresAt);
  t.updated_at = r.Int(kUpdatedAt);
  t.file_sha256 = r.OptText(kFileSha256);
  t.part_rows = PartRowsFromText(r.OptText(kPartRows));
  auto policy = task::ColumnPolicyFromJson(r.OptText(kColumnPolicy).value_or(""));
  if (!policy.ok()) {
    return Internal("export_task " + std::to_string(t.id) + ": " + policy.status().message());
  }
  t.column_policy = std::move(policy).value();
  t.failure_detail = r.OptText(kFailureDetail);
  t.locale = r.Text(kLocale);
  t.encrypted = r.Int(kFileEncrypted) != 0;
  std::optional<std::string> key_id = r.OptText(kFileKeyId);
  std::optional<std::string> wrapped = r.OptText(kFileKeyWrapped);
  if (key_id && wrapped) t.file_key = WrappedFileKey{*key_id, *wrapped};
  return t;
}

StatusOr<OutboxEntry> OutboxFromRow(const Row& r) {
  OutboxEntry e;
  e.id = r.Int(0);
  e.event_id = r.Text(1);
  e.task_id = r.Int(2);
  e.dispatch_version = static_cast<int32_t>(r.Int(3));
  e.payload_json = r.Text(4);
  auto status = ParseOutboxStatus(r.Text(5));
  if (!status) return Internal("export_outbox " + std::to_string(e.id) + " has an unknown status");
  e.status = *status;
  e.attempt_count = static_cast<int32_t>(r.Int(6));
  e.next_retry_at = r.Int(7);
  e.lease_owner = r.OptText(8);
  e.lease_until = r.OptInt(9);
  e.sent_at = r.OptInt(10);
  e.last_error = r.OptText(11);
  e.created_at = r.Int(12);
  return e;
}

}  // namespace export_center::store::sql
