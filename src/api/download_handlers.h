#pragma once
// The downloads' routes (docs/http-api.md#downloads), the ones that hand out
// a file: GET /export-tasks/{id}/download (the caller's, real HTTP
// statuses), POST /export-tasks/{id}/download-url (signs a link),
// GET /downloads/{id} (the signed link: the link is the grant) and
// GET /download-audit. Every answer that hands out the file is audited
// (RecordDownload). Shares HandlerDeps with the other families
// (handler_deps.h).

#include <string>
#include <vector>

#include "api/file_governance.h"
#include "api/handler_deps.h"
#include "api/route.h"
#include "common/status.h"
#include "store/task_catalog.h"
#include "task/task.h"

namespace export_center::api {

class DownloadHandlers {
 public:
  explicit DownloadHandlers(const HandlerDeps& deps) : deps_(deps) {}

  std::vector<Route> Routes();

 private:
  void Download(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res);
  void CreateDownloadUrl(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res);
  void SignedDownload(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res);
  void DownloadAudit(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res);
  // `who` names the caller and the route (DIRECT or SIGNED_LINK) for the audit row.
  void StreamTask(const http::HttpRequest& req, http::HttpResponse& res, const task::Task& t,
                  store::DownloadRecord who);
  void RedirectToStore(const http::HttpRequest& req, http::HttpResponse& res, const task::Task& t,
                       const std::string& url, store::DownloadRecord who);
  void RecordDownload(const http::HttpRequest& req, const http::HttpResponse& res,
                      const task::Task& t, store::DownloadRecord who, const char* served_by);
  // The export type's required-permission, checked again at every download
  // and signing (docs/http-api.md#permission-re-check). PermissionDenied when
  // the caller lacks it or the type is no longer registered.
  StatusOr<std::string> RecheckTypePermission(const Principal& p, const task::Task& t) const;
  // The governed columns `t`'s file shows wider than a reader holding `holds`
  // may see (api/file_governance.h); empty when it may be handed out, and when
  // the type is gone (RecheckTypePermission refuses that).
  std::vector<std::string> ColumnsWiderFor(const task::Task& t, const HoldsPermission& holds) const;
  // The 403 of a file wider than its reader's columns, offering export again:
  // the real status on the download routes, HTTP 200 on download-url.
  void RefuseWiderFile(http::HttpResponse& res, int http_status, const task::Task& t,
                       const std::vector<std::string>& columns) const;

  const HandlerDeps& deps_;
};

}  // namespace export_center::api
