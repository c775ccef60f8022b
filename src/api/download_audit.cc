#include "api/download_audit.h"

#include <algorithm>
#include <ctime>
#include <regex>

#include "api/query_params.h"
#include "api/task_json.h"
#include "common/ids.h"
#include "common/time_format.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;

StatusOr<std::optional<int64_t>> TimeParam(const http::HttpRequest& req, const char* name) {
  if (!req.HasQuery(name)) return std::optional<int64_t>();
  auto ms = ParseIsoMillis(req.Query(name));
  if (!ms) {
    return InvalidArgument(std::string(name) +
                           " must be an ISO-8601 UTC time such as 2024-05-01T08:30:00.000Z");
  }
  return std::optional<int64_t>(*ms);
}

}  // namespace

std::optional<int64_t> ParseIsoMillis(std::string_view text) {
  static const std::regex kIso(R"((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.(\d{3}))?Z)");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(text.begin(), text.end(), m, kIso)) return std::nullopt;
  std::tm tm{};
  tm.tm_year = std::stoi(m[1].str()) - 1900;
  tm.tm_mon = std::stoi(m[2].str()) - 1;
  tm.tm_mday = std::stoi(m[3].str());
  tm.tm_hour = std::stoi(m[4].str());
  tm.tm_min = std::stoi(m[5].str());
  tm.tm_sec = std::stoi(m[6].str());
  const int millis = m[8].matched ? std::stoi(m[8].str()) : 0;
  std::tm normalized = tm;
  const int64_t secs = timegm(&normalized);
  // timegm rolls 2024-02-30 over into March: refuse what it had to normalise.
  if (normalized.tm_mday != tm.tm_mday || normalized.tm_mon != tm.tm_mon ||
      normalized.tm_hour != tm.tm_hour || normalized.tm_min != tm.tm_min ||
      normalized.tm_sec != tm.tm_sec) {
    return std::nullopt;
  }
  return secs * 1000 + millis;
}

StatusOr<store::DownloadAuditQuery> ParseDownloadAuditQuery(const http::HttpRequest& req,
                                                            const Principal& caller) {
  store::DownloadAuditQuery q;
  q.tenant_id = caller.tenant;
  q.app_code = caller.app;
  if (req.HasQuery("taskId")) {
    q.task_id = ParseId(req.Query("taskId"));
    if (!q.task_id) return InvalidArgument("taskId must be a task id (1-19 digits)");
  }
  if (req.HasQuery("user")) {
    std::string user = req.Query("user");
    if (user.empty() || user.size() > 128) return InvalidArgument("user must be 1-128 bytes");
    q.user = user;
  }
  EC_ASSIGN_OR_RETURN(q.from_ms, TimeParam(req, "from"));
  EC_ASSIGN_OR_RETURN(q.to_ms, TimeParam(req, "to"));
  if (q.from_ms && q.to_ms && *q.from_ms > *q.to_ms) {
    return InvalidArgument("from must not be after to");
  }
  EC_RETURN_IF_ERROR(ReadPageParams(req, &q.page, &q.size));
  EC_ASSIGN_OR_RETURN(q.after, ReadPageCursor(req));
  return q;
}

json DownloadAuditEntryToJson(const store::DownloadAuditEntry& e) {
  const store::DownloadRecord& r = e.record;
  return {{"id", std::to_string(e.id)},
          {"taskId", std::to_string(r.task_id)},
          {"exportType", r.export_type},
          {"tenantId", r.tenant_id},
          {"appCode", std::string(task::ToString(r.app_code))},
          {"user", r.user},
          {"via", r.via},
          {"servedBy", r.served_by},
          {"clientAddress", r.client_address},
          {"userAgent", r.user_agent},
          {"requestId", r.request_id},
          {"downloadedAt", FormatIsoMillis(e.downloaded_at)}};
}

std::string PrintableAscii(std::string_view text, size_t max_bytes) {
  std::string out(text.substr(0, max_bytes));
  for (char& c : out) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return out;
}

}  // namespace export_center::api
