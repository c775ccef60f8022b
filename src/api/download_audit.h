#pragma once
// The download audit as the API shows it (docs/http-api.md#download-audit):
// the admin query's parameters and the JSON of one audit row. The rows are
// written by the download endpoints through TaskCatalog::RecordDownload.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "api/auth.h"
#include "common/status.h"
#include "http/http_request.h"
#include "store/task_catalog.h"

namespace export_center::api {

// Reads the download audit of the caller's tenant and app.
inline constexpr std::string_view kAuditReadPermission = "platform:audit:read";

// Parses "2024-05-01T08:30:00Z" or "2024-05-01T08:30:00.123Z" (UTC only) into
// epoch ms; nullopt for anything else, including impossible dates.
std::optional<int64_t> ParseIsoMillis(std::string_view text);

// taskId, user, from, to, page, size of GET /download-audit, scoped to the
// caller's tenant and app. InvalidArgument names the offending parameter.
StatusOr<store::DownloadAuditQuery> ParseDownloadAuditQuery(const http::HttpRequest& req,
                                                            const Principal& caller);

nlohmann::json DownloadAuditEntryToJson(const store::DownloadAuditEntry& entry);

// A header value fit for the audit row: printable ASCII kept, anything else
// (controls, bytes of other encodings) becomes '?', cut to `max_bytes`.
// User agents are ASCII by RFC 9110; this keeps a hostile one from breaking
// the row or the JSON that shows it.
std::string PrintableAscii(std::string_view text, size_t max_bytes);

}  // namespace export_center::api
