#pragma once
// What the API's handler families share. The API's endpoints are rows of one
// route table (api/route.h); each family of routes is a small class of its
// own over this one struct, which ExportApi builds once:
//
//   TaskActionHandlers  (task_action_handlers.cc)  create, retry, export again, cancel;
//   TaskReadHandlers    (task_read_handlers.cc)    the list, one task, its timeline,
//                                                  the task event stream and its tickets;
//   DownloadHandlers    (download_handlers.cc)     the direct and the signed download,
//                                                  the signing of links, the audit;
//   SubscriptionHandlers (subscription_handlers.cc) the subscriptions and their
//                                                  console rows;
//   ExportApi::Handlers (export_api.cc)            the table itself, authentication, the
//                                                  access log; export types, the preview,
//                                                  /healthz, /readyz, /metrics, the page.
//
// The families are declared below, after what they share.
//
// Every handler parses, calls a use case (src/usecase/) and writes the
// envelope; the handlers run on the server's worker threads and share no
// mutable state.

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/export_api.h"
#include "api/file_governance.h"
#include "api/route.h"
#include "common/status.h"
#include "http/http_request.h"
#include "http/http_response.h"
#include "identity/principal.h"
#include "registry/registry.h"
#include "store/task_catalog.h"
#include "task/task.h"
#include "usecase/create.h"
#include "usecase/subscriptions.h"
#include "usecase/task_actions.h"

namespace export_center::identity {
class TokenVerifier;
}  // namespace export_center::identity

namespace export_center::api {

using identity::Principal;

class TaskEventHub;
class EventsTickets;

inline constexpr char kRequestIdHeader[] = "X-Request-Id";

struct HandlerDeps {
  const ExportApiDeps* api = nullptr;                 // the wiring (export_api.h); never null
  const identity::TokenVerifier* verifier = nullptr;  // null when the auth config is unusable
  std::string download_secret{};                      // signs and opens download links
  EventsTickets* tickets = nullptr;                   // POST /export-tasks/events-ticket
  TaskEventHub* events = nullptr;                     // GET /export-tasks/events
  usecase::CreateDeps create{};                       // create and export again
  usecase::TaskActionDeps actions{};                  // retry, cancel, export again
  usecase::SubscriptionDeps subscriptions{};          // the subscriptions' use cases

  std::shared_ptr<const registry::RegistrySnapshot> Snapshot() const {
    return api->registry->Current();
  }
};

// kApiBase + suffix: the full path of one of the API's routes.
inline std::string ApiPath(const std::string& suffix) { return std::string(kApiBase) + suffix; }

inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Every handler's shape (RouteHandler's, as a member function): a family
// declares its handlers as `Endpoint Name;`.
using Endpoint = void(const http::HttpRequest& req, const Principal& p, http::HttpResponse& res);

// A family's row of the route table: `pattern` relative to kApiBase, the
// handler one of the family's Endpoints.
template <class Family>
Route FamilyRoute(Family* family, const char* method, const std::string& pattern,
                  Endpoint Family::*fn, RouteNeeds needs = RouteNeeds::kCaller) {
  return Route{method, ApiPath(pattern), needs,
               [family, fn](const http::HttpRequest& req, const Principal& p,
                            http::HttpResponse& res) { (family->*fn)(req, p, res); }};
}

// What every family is: its rows (Routes) over the shared deps.
class HandlerFamily {
 public:
  explicit HandlerFamily(const HandlerDeps& deps) : deps_(deps) {}

 protected:
  const HandlerDeps& deps_;
};

// The task actions' routes (docs/http-api.md): POST /export-tasks (create),
// and on one task POST /retry, /export-again and /cancel. Each parses the
// request, calls its use case (usecase/create.h, usecase/task_actions.h)
// and writes the envelope.
class TaskActionHandlers : public HandlerFamily {
 public:
  using HandlerFamily::HandlerFamily;
  // The family's rows, each needing a verified caller.
  std::vector<Route> Routes();

 private:
  // The handlers (Endpoint, above).
  Endpoint CreateTask, Retry, ExportAgain, Cancel;
};

// The task reads' routes (docs/http-api.md): GET /export-tasks (the list),
// GET /export-tasks/{id} and its /timeline, and the task event stream —
// POST /export-tasks/events-ticket and GET /export-tasks/events, which
// authenticates itself (a ticket or the Authorization header).
class TaskReadHandlers : public HandlerFamily {
 public:
  using HandlerFamily::HandlerFamily;
  // The family's rows; the event stream's needs no verified bearer token.
  std::vector<Route> Routes();

 private:
  // The handlers (Endpoint, above).
  Endpoint ListTasks, GetTask, Timeline, EventsTicket, TaskEvents;
  StatusOr<nlohmann::json> DoList(const http::HttpRequest& req, const Principal& p);
};

// The downloads' routes (docs/http-api.md#downloads), the ones that hand out
// a file: GET /export-tasks/{id}/download (the caller's, real HTTP
// statuses), POST /export-tasks/{id}/download-url (signs a link),
// GET /downloads/{id} (the signed link: the link is the grant) and
// GET /download-audit. Every answer that hands out the file is audited
// (RecordDownload).
class DownloadHandlers : public HandlerFamily {
 public:
  using HandlerFamily::HandlerFamily;
  std::vector<Route> Routes();

 private:
  // The handlers (Endpoint, above).
  Endpoint Download, CreateDownloadUrl, SignedDownload, DownloadAudit;
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
};

// The subscriptions' routes (docs/http-api.md#subscriptions): POST and GET
// /subscriptions, GET, PUT and DELETE /subscriptions/{id}, its /pause,
// /resume, /run and /runs; and the console's GET /operator/subscriptions
// with its /pause and /resume. Each parses, calls its use case
// (usecase/subscriptions.h) and writes the envelope. No rows when no ledger
// is wired (subscriptions disabled).
class SubscriptionHandlers : public HandlerFamily {
 public:
  using HandlerFamily::HandlerFamily;
  std::vector<Route> Routes();

 private:
  // The handlers (Endpoint, above).
  Endpoint Create, List, Get, Edit, Delete, Pause, Resume, RunNow, Runs, ConsoleList, ConsolePause,
      ConsoleResume;
};

}  // namespace export_center::api
