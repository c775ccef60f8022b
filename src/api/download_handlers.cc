#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "api/download_audit.h"
#include "api/download_token.h"
#include "api/download_util.h"
#include "api/envelope.h"
#include "api/handler_deps.h"
#include "api/query_params.h"
#include "common/time_format.h"
#include "common/utf8.h"
#include "usecase/access.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;
using Request = http::HttpRequest;
using Response = http::HttpResponse;

}  // namespace

std::vector<Route> DownloadHandlers::Routes() {
  const std::string one = "/export-tasks/{id}";
  return {
      FamilyRoute(this, "GET", one + "/download", &DownloadHandlers::Download,
                  RouteNeeds::kCallerHttpStatus),
      FamilyRoute(this, "POST", one + "/download-url", &DownloadHandlers::CreateDownloadUrl),
      // The link is the grant.
      FamilyRoute(this, "GET", "/downloads/{id}", &DownloadHandlers::SignedDownload,
                  RouteNeeds::kNothing),
      FamilyRoute(this, "GET", "/download-audit", &DownloadHandlers::DownloadAudit),
  };
}

// ---- downloads -----------------------------------------------------------------

void DownloadHandlers::Download(const Request& req, const Principal& p, Response& res) {
  auto t = usecase::LoadVisibleTask(*deps_.api->store, p, req.PathParam(0));
  if (!t.ok()) return WriteHttpStatus(res, t.status());
  auto permission = RecheckTypePermission(p, *t);
  if (!permission.ok()) return WriteHttpStatus(res, permission.status());
  auto wider = ColumnsWiderFor(*t, [&p](const std::string& perm) { return p.HasPerm(perm); });
  if (!wider.empty()) return RefuseWiderFile(res, 403, *t, wider);
  store::DownloadRecord who;
  who.user = p.user;
  who.tenant_id = p.tenant;
  who.app_code = p.app;
  who.via = "DIRECT";
  StreamTask(req, res, *t, std::move(who));
}

void DownloadHandlers::CreateDownloadUrl(const Request& req, const Principal& p, Response& res) {
  auto t = usecase::LoadVisibleTask(*deps_.api->store, p, req.PathParam(0));
  if (!t.ok()) return WriteStatus(res, t.status());
  if (t->status != task::TaskState::kSucceeded) {
    return WriteStatus(res, Conflict("task " + std::to_string(t->id) + " is " +
                                     std::string(task::ToString(t->status)) +
                                     "; only a SUCCEEDED task has a file to download"));
  }
  auto permission = RecheckTypePermission(p, *t);
  if (!permission.ok()) return WriteStatus(res, permission.status());
  // The link carries the signer's right to the file's columns: a file wider
  // than the signer's own is not signed at all.
  const HoldsPermission holds = [&p](const std::string& perm) { return p.HasPerm(perm); };
  auto wider = ColumnsWiderFor(*t, holds);
  if (!wider.empty()) return RefuseWiderFile(res, 200, *t, wider);
  DownloadGrant grant{t->id, p.tenant, p.user,
                      NowMs() + int64_t{deps_.api->auth.download_url_ttl_seconds} * 1000,
                      *permission};
  if (const registry::ExportDefinition* def = deps_.Snapshot()->Find(t->export_type)) {
    grant.column_permissions = HeldColumnPermissions(*def, holds);
  }
  std::string base = deps_.api->server.public_base_url;
  if (base.empty())
    base = "http://" + deps_.api->server.host + ":" + std::to_string(deps_.api->server.port);
  while (!base.empty() && base.back() == '/') base.pop_back();
  WriteSuccess(res, {{"url", base + ApiPath("/downloads/") +
                                 SignDownloadGrant(deps_.download_secret, grant)},
                     {"expiresAt", FormatIsoMillis(grant.expires_at_ms)}});
}

void DownloadHandlers::SignedDownload(const Request& req, const Principal&, Response& res) {
  auto grant = OpenDownloadGrant(deps_.download_secret, req.PathParam(0));
  if (!grant.ok()) return WriteHttpStatus(res, grant.status());
  if (grant->expires_at_ms <= NowMs()) {
    return WriteHttpError(res, 410, "this download link has expired; request a new one");
  }
  auto t = deps_.api->store->GetTask(grant->task_id);
  if (!t.ok() && t.status().code() != StatusCode::kNotFound) {
    return WriteHttpStatus(res, t.status());
  }
  if (!t.ok() || t->tenant_id != grant->tenant) {
    return WriteHttpError(res, 404, "export task " + std::to_string(grant->task_id) + " not found");
  }
  // The signer held the type's permission when signing (checked there); the
  // link is refused if the type has since come to require another one.
  const registry::ExportDefinition* def = deps_.Snapshot()->Find(t->export_type);
  if (def == nullptr ||
      (!def->required_permission.empty() && def->required_permission != grant->permission)) {
    return WriteHttpError(res, 403,
                          "this download link no longer grants access to export type " +
                              t->export_type + "; request a new one");
  }
  // The signer's column policy, from the permissions the grant carries,
  // against the rules in force now.
  const std::vector<std::string>& held = grant->column_permissions;
  auto wider = ColumnsWiderFor(*t, [&held](const std::string& perm) {
    return std::find(held.begin(), held.end(), perm) != held.end();
  });
  if (!wider.empty()) return RefuseWiderFile(res, 403, *t, wider);
  store::DownloadRecord who;
  who.user = grant->user;
  who.tenant_id = grant->tenant;
  who.app_code = t->app_code;
  who.via = "SIGNED_LINK";
  StreamTask(req, res, *t, std::move(who));
}

StatusOr<std::string> DownloadHandlers::RecheckTypePermission(const Principal& p,
                                                              const task::Task& t) const {
  // Fails closed: a type removed from the registry names no permission, so
  // nobody's right to its files can be checked.
  const registry::ExportDefinition* def = deps_.Snapshot()->Find(t.export_type);
  if (def == nullptr) {
    return PermissionDenied("export type " + t.export_type +
                            " is no longer registered; its files cannot be downloaded");
  }
  if (!def->required_permission.empty() && !p.HasPerm(def->required_permission)) {
    return PermissionDenied("downloading " + t.export_type + " requires permission " +
                            def->required_permission);
  }
  return def->required_permission;
}

std::vector<std::string> DownloadHandlers::ColumnsWiderFor(const task::Task& t,
                                                           const HoldsPermission& holds) const {
  const registry::ExportDefinition* def = deps_.Snapshot()->Find(t.export_type);
  if (def == nullptr) return {};
  return ColumnsWiderThanReader(t, *def, holds);
}

void DownloadHandlers::RefuseWiderFile(Response& res, int http_status, const task::Task& t,
                                       const std::vector<std::string>& columns) const {
  spdlog::info(
      "download refused task_id={}: the file shows {} governed column(s) wider than the "
      "reader's request_id={}",
      t.id, columns.size(), res.Header(kRequestIdHeader));
  WriteEnvelope(
      res, http_status,
      ColumnsRefusalEnvelope(t, columns,
                             ApiPath("/export-tasks/") + std::to_string(t.id) + "/export-again"));
}

// ---- GET /download-audit ---------------------------------------------------------

void DownloadHandlers::DownloadAudit(const Request& req, const Principal& p, Response& res) {
  if (!p.HasPerm(kAuditReadPermission)) {
    return WriteStatus(res, PermissionDenied("the download audit requires permission " +
                                             std::string(kAuditReadPermission)));
  }
  auto q = ParseDownloadAuditQuery(req, p);
  if (!q.ok()) return WriteStatus(res, q.status());
  auto page = deps_.api->store->ListDownloadAudit(*q);
  if (!page.ok()) return WriteStatus(res, page.status());
  json records = json::array();
  for (const auto& e : page->records) records.push_back(DownloadAuditEntryToJson(e));
  json data = PageFields(page->total, page->total_is_exact, page->next, q->page, q->size);
  data["records"] = std::move(records);
  WriteSuccess(res, std::move(data));
}

void DownloadHandlers::StreamTask(const Request& req, Response& res, const task::Task& t,
                                  store::DownloadRecord who) {
  const std::string id = std::to_string(t.id);
  if (t.status == task::TaskState::kExpired) {
    return WriteHttpError(res, 410, "the file of task " + id + " has expired");
  }
  if (t.status != task::TaskState::kSucceeded || !t.object_key) {
    return WriteHttpError(
        res, 409,
        "task " + id + " is " + std::string(task::ToString(t.status)) + "; its file is not ready");
  }
  std::string fallback = "export-" + id + "." + std::string(task::FileExtension(t.format));
  std::string name = utf8::SanitizeFileName(
      t.file_name.value_or(t.task_name + "." + std::string(task::FileExtension(t.format))),
      fallback);
  const storage::DownloadHeaders headers{
      ContentDisposition(name), t.content_type.value_or(std::string(task::ContentType(t.format)))};
  auto presigned = deps_.api->storage->PresignedGetUrl(*t.object_key, headers);
  if (!presigned.ok()) {
    spdlog::error("presigning the file of task {} failed: {}", t.id, presigned.status().ToString());
    return WriteHttpStatus(res, presigned.status());
  }
  if (*presigned) return RedirectToStore(req, res, t, **presigned, std::move(who));

  auto opened = deps_.api->storage->Open(*t.object_key);
  if (!opened.ok()) {
    if (opened.status().code() == StatusCode::kNotFound) {
      return WriteHttpError(res, 410, "the file of task " + id + " is no longer available");
    }
    spdlog::error("opening the file of task {} failed: {}", t.id, opened.status().ToString());
    return WriteHttpStatus(res, opened.status());
  }
  std::shared_ptr<storage::ObjectReader> reader = std::move(opened).value();
  const uint64_t size = reader->size();
  RangeDecision range = DecideRange(req.Header("Range"), size);
  if (range.kind == RangeDecision::kUnsatisfiable) {
    res.SetHeader("Content-Range", "bytes */" + std::to_string(size));
    return WriteHttpError(
        res, 416,
        "requested range not satisfiable; the file has " + std::to_string(size) + " bytes");
  }
  // Every answer that sends file bytes (200 or 206, any range) is audited;
  // the store counts it once per (task, user) and window, so a resumed or
  // parallel-range download is one download (docs/http-api.md#download-audit).
  // A HEAD sends headers only.
  if (req.method != "HEAD") RecordDownload(req, res, t, std::move(who), "STREAM");
  res.SetHeader("Content-Disposition", headers.content_disposition);
  res.SetHeader("Accept-Ranges", "bytes");
  // The digest of the whole file (the selected representation), on a 206 too,
  // so a client that resumed can check what it assembled (RFC 9530 §3).
  if (auto digest = t.file_sha256 ? ReprDigest(*t.file_sha256) : std::nullopt) {
    res.SetHeader("Repr-Digest", *digest);
  }
  res.SetHeader("Cache-Control", "private, no-store");
  res.SetHeader("X-Content-Type-Options", "nosniff");
  uint64_t offset = 0, length = size;
  res.status = 200;
  if (range.kind == RangeDecision::kPartial) {
    offset = range.offset, length = range.length;
    res.status = 206;
    res.SetHeader("Content-Range", "bytes " + std::to_string(offset) + "-" +
                                       std::to_string(offset + length - 1) + "/" +
                                       std::to_string(size));
  }
  res.SetStream(std::make_shared<ObjectBodySource>(std::move(reader), offset, t.id), length,
                headers.content_type);
}

// storage.s3.download: presigned (docs/storage.md#downloads). The caller is
// authorized already; the store serves the bytes (and any Range) itself from
// a URL that lives storage.s3.presign-ttl-seconds. The file is checked first
// so a file that is gone still answers 410 here, not the store's 404.
void DownloadHandlers::RedirectToStore(const Request& req, Response& res, const task::Task& t,
                                       const std::string& url, store::DownloadRecord who) {
  auto exists = deps_.api->storage->Exists(*t.object_key);
  if (!exists.ok()) {
    spdlog::error("checking the file of task {} failed: {}", t.id, exists.status().ToString());
    return WriteHttpStatus(res, exists.status());
  }
  if (!*exists) {
    return WriteHttpError(res, 410,
                          "the file of task " + std::to_string(t.id) + " is no longer available");
  }
  // The URL opens the whole object whatever this request's Range or method
  // (a HEAD too gets it): every redirect hands out the file and is audited.
  RecordDownload(req, res, t, std::move(who), "PRESIGNED_REDIRECT");
  res.status = 302;
  res.SetHeader("Location", url);
  res.SetHeader("Cache-Control", "private, no-store");
  res.SetHeader("Referrer-Policy", "no-referrer");
}

// The one place the download endpoints audit an answer that hands out the
// file. The store decides whether it is a new download (once per task, user
// and limits.download_audit_window_seconds). The file is served even when
// recording fails: the user's download beats the bookkeeping, and the failure
// is logged with the request id.
void DownloadHandlers::RecordDownload(const Request& req, const Response& res, const task::Task& t,
                                      store::DownloadRecord who, const char* served_by) {
  who.task_id = t.id;
  who.export_type = t.export_type;
  who.served_by = served_by;
  who.client_address = PrintableAscii(req.peer_address, 64);
  who.user_agent = PrintableAscii(req.Header("User-Agent"), 512);
  who.request_id = res.Header(kRequestIdHeader);
  auto counted =
      deps_.api->store->RecordDownload(who, deps_.api->limits.download_audit_window_seconds);
  if (!counted.ok()) {
    spdlog::warn("recording a download of task {} failed request_id={}: {}", t.id, who.request_id,
                 counted.status().ToString());
  }
}

}  // namespace export_center::api
