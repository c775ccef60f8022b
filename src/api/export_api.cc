#include "api/export_api.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "api/auth.h"
#include "api/create_request.h"
#include "api/download_audit.h"
#include "api/download_center_page.h"
#include "api/download_token.h"
#include "api/download_util.h"
#include "api/envelope.h"
#include "api/events_ticket.h"
#include "api/file_governance.h"
#include "api/openapi_document.h"
#include "api/query_params.h"
#include "api/request_log.h"
#include "api/route.h"
#include "api/strict_json.h"
#include "api/task_events.h"
#include "api/task_json.h"
#include "common/build_info.h"
#include "common/digest.h"
#include "common/ids.h"
#include "common/time_format.h"
#include "common/utf8.h"
#include "http/router.h"
#include "identity/token_verifier.h"
#include "usecase/access.h"
#include "usecase/create.h"
#include "usecase/file_password.h"
#include "usecase/task_actions.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;
using http::HttpRequest;
using http::HttpResponse;
using Request = http::HttpRequest;
using Response = http::HttpResponse;

constexpr char kRequestIdHeader[] = "X-Request-Id";

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Base(const char* suffix) { return std::string(kApiBase) + suffix; }

// ?status=: one state, or several separated by commas (the page's "failed"
// tab asks for FAILED,STALE,INCONSISTENT), or QUEUED / RETRYING: PENDING
// tasks not yet attempted / waiting for an automatic retry.
Status ParseStatusFilter(const std::string& text, store::TaskCatalog::ListQuery* q) {
  if (text == "QUEUED" || text == "RETRYING") {
    q->retrying = text == "RETRYING";
    return Status::Ok();
  }
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = std::min(text.find(',', start), text.size());
    std::string one = text.substr(start, comma - start);
    auto state = task::ParseTaskState(one);
    if (!state) return InvalidArgument("unknown status " + one);
    q->any_status.push_back(*state);
    start = comma + 1;
  }
  return Status::Ok();
}

json DefinitionToJson(const registry::ExportDefinition& def) {
  json params = json::array();
  for (const auto& p : def.parameters) {
    params.push_back({{"name", p.name},
                      {"type", p.type},
                      {"title", p.title},
                      {"required", p.required},
                      {"allowed", p.allowed}});
  }
  return {{"exportType", def.name},
          {"title", def.title},
          {"formats", {"XLSX", "CSV"}},
          {"parameters", std::move(params)}};
}

}  // namespace

// The route handlers; one per endpoint, each short, all answering through
// the envelope helpers.
class ExportApi::Handlers {
 public:
  explicit Handlers(ExportApi& api);

  HttpResponse Handle(HttpRequest& req);
  HttpResponse Reject(const HttpRequest& req, int status);

 private:
  using Endpoint = void (Handlers::*)(const Request&, const Principal&, Response&);
  // ---- plumbing ----
  // The one authenticated route shape: the prologue `route.needs` names,
  // then the handler; a library exception ends as a 500 envelope.
  void Add(Route route);
  Route Row(const char* method, std::string pattern, Endpoint fn,
            RouteNeeds needs = RouteNeeds::kCaller);
  void NoRoute(const Request& req, const http::Router::Match& match, Response& res) const;
  void Log(const Request& req, const Response& res,
           std::chrono::steady_clock::time_point start) const;
  StatusOr<Principal> Authenticate(const Request& req) const;
  std::shared_ptr<const registry::RegistrySnapshot> Snapshot() const;
  // The envelope of a create or export again: the task and `deduplicated`;
  // a full key derivation 503 with Retry-After.
  void WriteCreated(Response& res, const StatusOr<usecase::CreateResult>& created) const;

  // ---- endpoints: parse → call a use case → envelope ----
  void CreateTask(const Request& req, const Principal& p, Response& res);
  void ListTasks(const Request& req, const Principal& p, Response& res);
  StatusOr<json> DoList(const Request& req, const Principal& p);
  void GetTask(const Request& req, const Principal& p, Response& res);
  void Timeline(const Request& req, const Principal& p, Response& res);
  void Download(const Request& req, const Principal& p, Response& res);
  void CreateDownloadUrl(const Request& req, const Principal& p, Response& res);
  void SignedDownload(const Request& req, const Principal& p, Response& res);
  // `who` names the caller and the route (DIRECT or SIGNED_LINK) for the audit row.
  void StreamTask(const Request& req, Response& res, const task::Task& t,
                  store::DownloadRecord who);
  void RedirectToStore(const Request& req, Response& res, const task::Task& t,
                       const std::string& url, store::DownloadRecord who);
  void RecordDownload(const Request& req, const Response& res, const task::Task& t,
                      store::DownloadRecord who, const char* served_by);
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
  void RefuseWiderFile(Response& res, int http_status, const task::Task& t,
                       const std::vector<std::string>& columns) const;
  void DownloadAudit(const Request& req, const Principal& p, Response& res);
  void Retry(const Request& req, const Principal& p, Response& res);
  void ExportAgain(const Request& req, const Principal& p, Response& res);
  void Cancel(const Request& req, const Principal& p, Response& res);
  void EventsTicket(const Request& req, const Principal& p, Response& res);
  void TaskEvents(const Request& req, const Principal& p, Response& res);
  void ExportTypes(const Request& req, const Principal& p, Response& res);
  void Preview(const Request& req, const Principal& p, Response& res);
  void Healthz(const Request& req, const Principal& p, Response& res);
  void Readyz(const Request& req, const Principal& p, Response& res);
  void Metrics(const Request& req, const Principal& p, Response& res);
  void OpenApi(const Request& req, const Principal& p, Response& res);
  void Page(const Request& req, const Principal& p, Response& res);
  bool MetricsCallerAllowed(const Request& req) const;

  ExportApi& api_;
  const Deps& deps_;
  const spdlog::level::level_enum access_log_level_;
  usecase::CreateDeps create_;
  usecase::TaskActionDeps actions_;
  http::Router router_;
};

ExportApi::Handlers::Handlers(ExportApi& api)
    : api_(api),
      deps_(api.deps_),
      access_log_level_(spdlog::level::from_str(api.deps_.server.access_log_level)) {
  create_.store = deps_.store;
  create_.limits = deps_.limits;
  create_.routes = deps_.source_routes;
  create_.seal_file_password = deps_.seal_file_password;
  create_.key_derivations = api.key_derivations_.get();
  create_.on_created = [this](const std::string& type) {
    if (deps_.on_task_created) deps_.on_task_created();
    if (deps_.on_created) deps_.on_created(type);
  };
  actions_.store = deps_.store;
  actions_.registry = deps_.registry;
  actions_.on_requeued = deps_.on_task_created;
  constexpr auto kNothing = RouteNeeds::kNothing;
  const std::string tasks = "/export-tasks", one = "/export-tasks/{id}";
  const std::vector<Route> rows = {
      Row("POST", tasks, &Handlers::CreateTask),
      Row("GET", tasks, &Handlers::ListTasks),
      // Before "/export-tasks/{id}" so that "events" is not read as an id.
      Row("GET", tasks + "/events", &Handlers::TaskEvents, kNothing),  // its own credential
      Row("POST", tasks + "/events-ticket", &Handlers::EventsTicket),
      Row("GET", one, &Handlers::GetTask),
      Row("GET", one + "/timeline", &Handlers::Timeline),
      Row("GET", one + "/download", &Handlers::Download, RouteNeeds::kCallerHttpStatus),
      Row("POST", one + "/download-url", &Handlers::CreateDownloadUrl),
      Row("POST", one + "/retry", &Handlers::Retry),
      Row("POST", one + "/export-again", &Handlers::ExportAgain),
      Row("POST", one + "/cancel", &Handlers::Cancel),
      Row("GET", "/export-types", &Handlers::ExportTypes),
      Row("POST", "/export-previews", &Handlers::Preview),
      Row("GET", "/downloads/{id}", &Handlers::SignedDownload, kNothing),  // the link is the grant
      Row("GET", "/download-audit", &Handlers::DownloadAudit),
  };
  for (const Route& row : rows) Add(row);
  if (api.operator_) {
    for (Route route : api.operator_->Routes()) {
      route.pattern = Base(route.pattern.c_str());
      Add(std::move(route));
    }
  }
  for (auto [path, fn] : {std::pair<const char*, Endpoint>{"/healthz", &Handlers::Healthz},
                          {"/readyz", &Handlers::Readyz},
                          {"/metrics", &Handlers::Metrics},
                          {"/openapi.json", &Handlers::OpenApi},
                          {"/", &Handlers::Page},
                          {"/assets/{name}", &Handlers::Page}}) {
    Add(Route{"GET", path, kNothing,
              [this, fn](auto& req, auto& p, auto& res) { (this->*fn)(req, p, res); }});
  }
}

Route ExportApi::Handlers::Row(const char* method, std::string pattern, Endpoint fn,
                               RouteNeeds needs) {
  return Route{method, Base(pattern.c_str()), needs,
               [this, fn](const Request& req, const Principal& p, Response& res) {
                 (this->*fn)(req, p, res);
               }};
}

void ExportApi::Handlers::Add(Route route) {
  router_.Add(
      route.method, route.pattern,
      [this, needs = route.needs, h = std::move(route.handler)](const Request& req, Response& res) {
        try {
          if (needs == RouteNeeds::kNothing) return h(req, Principal{}, res);
          auto p = Authenticate(req);
          if (p.ok()) return h(req, *p, res);
          if (needs == RouteNeeds::kCallerHttpStatus) return WriteHttpStatus(res, p.status());
          WriteStatus(res, p.status());
        } catch (const std::exception& e) {
          // Library exceptions stop here; the client sees the envelope, the log the cause.
          std::string request_id = res.Header(kRequestIdHeader);
          spdlog::error("request {} failed: {}", request_id, e.what());
          res = Response();
          res.SetHeader(kRequestIdHeader, request_id);
          WriteHttpError(res, 500, "internal error; please contact support");
        }
      });
}

HttpResponse ExportApi::Handlers::Handle(HttpRequest& req) {
  const auto start = std::chrono::steady_clock::now();
  Response res;
  res.SetHeader(kRequestIdHeader, AcceptRequestId(req.Header(kRequestIdHeader)));
  http::Router::Match match = router_.Find(req.method, req.path);
  if (match.handler != nullptr) {
    req.path_params = std::move(match.params);
    (*match.handler)(req, res);
  } else {
    NoRoute(req, match, res);
  }
  Log(req, res, start);
  return res;
}

HttpResponse ExportApi::Handlers::Reject(const HttpRequest& req, int status) {
  Response res;
  res.SetHeader(kRequestIdHeader, AcceptRequestId(req.Header(kRequestIdHeader)));
  WriteHttpError(res, status, RejectMessage(status, deps_.limits.max_body_bytes));
  Log(req, res, std::chrono::steady_clock::now());
  return res;
}

void ExportApi::Handlers::NoRoute(const Request& req, const http::Router::Match& match,
                                  Response& res) const {
  if (match.allowed.empty()) {
    return WriteHttpError(res, 404, "no such endpoint: " + LoggablePath(req.path));
  }
  std::string allow;
  for (const auto& m : match.allowed) allow += (allow.empty() ? "" : ", ") + m;
  res.SetHeader("Allow", allow);
  WriteHttpError(res, 405, "method " + req.method + " is not allowed here; use " + allow);
}

void ExportApi::Handlers::Log(const Request& req, const Response& res,
                              std::chrono::steady_clock::time_point start) const {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  start)
                .count();
  const std::string& request_id = res.Header(kRequestIdHeader);
  spdlog::log(access_log_level_, "http request_id={} method={} path={} status={} code={} ms={}",
              request_id.empty() ? "-" : request_id, req.method.empty() ? "-" : req.method,
              req.path.empty() ? "-" : LoggablePath(req.path), res.status, EnvelopeCodeOf(res), ms);
}

StatusOr<Principal> ExportApi::Handlers::Authenticate(const Request& req) const {
  if (!api_.verifier_) {
    spdlog::error("authentication is not configured: {}", api_.init_status_.ToString());
    return Internal("authentication is not configured");
  }
  return api_.verifier_->Authenticate(req.Header("Authorization"));
}

std::shared_ptr<const registry::RegistrySnapshot> ExportApi::Handlers::Snapshot() const {
  return deps_.registry->Current();
}

// ---- POST /export-tasks ------------------------------------------------------

void ExportApi::Handlers::CreateTask(const Request& req, const Principal& p, Response& res) {
  auto request = ParseCreateRequest(req, p, Snapshot(), deps_.limits);
  if (!request.ok()) return WriteStatus(res, request.status());
  WriteCreated(res, usecase::CreateTask(create_, p, *request, res.Header(kRequestIdHeader)));
}

void ExportApi::Handlers::WriteCreated(Response& res,
                                       const StatusOr<usecase::CreateResult>& created) const {
  if (usecase::IsKeyDerivationBusy(created.status())) {
    res.SetHeader("Retry-After", std::to_string(usecase::kKeyDerivationRetryAfterSeconds));
    return WriteHttpError(res, 503, created.status().message());
  }
  if (!created.ok()) return WriteStatus(res, created.status());
  json data = TaskToJson(created->task);
  data["deduplicated"] = created->deduplicated;
  WriteSuccess(res, std::move(data));
}

// ---- GET /export-tasks -------------------------------------------------------

void ExportApi::Handlers::ListTasks(const Request& req, const Principal& p, Response& res) {
  auto data = DoList(req, p);
  if (!data.ok()) return WriteStatus(res, data.status());
  WriteSuccess(res, std::move(data).value());
}

StatusOr<json> ExportApi::Handlers::DoList(const Request& req, const Principal& p) {
  store::TaskCatalog::ListQuery q;
  q.tenant_id = p.tenant;
  q.app_code = p.app;
  q.requested_by = usecase::ListableRequester(p);
  if (req.HasQuery("status")) EC_RETURN_IF_ERROR(ParseStatusFilter(req.Query("status"), &q));
  if (req.HasQuery("name")) {
    std::string name = req.Query("name");
    if (utf8::CountCodePoints(name) > 100) return InvalidArgument("name filter is too long");
    if (!name.empty()) q.name_contains = std::move(name);
  }
  if (req.HasQuery("exportType")) {
    std::string type = req.Query("exportType");
    if (type.empty() || type.size() > 128) return InvalidArgument("invalid exportType filter");
    q.export_type = type;
  }
  EC_RETURN_IF_ERROR(ReadPageParams(req, &q.page, &q.size));
  EC_ASSIGN_OR_RETURN(q.after, ReadPageCursor(req));
  EC_ASSIGN_OR_RETURN(auto page, deps_.store->ListTasks(q));
  json records = json::array();
  for (const auto& t : page.records) records.push_back(TaskToJson(t));
  json data = PageFields(page.total, page.total_is_exact, page.next, q.page, q.size);
  data["records"] = std::move(records);
  return data;
}

// ---- GET /export-tasks/{id} --------------------------------------------------

void ExportApi::Handlers::GetTask(const Request& req, const Principal& p, Response& res) {
  auto t = usecase::LoadVisibleTask(*deps_.store, p, req.PathParam(0));
  if (!t.ok()) return WriteStatus(res, t.status());
  WriteSuccess(res, TaskToJson(*t));
}

// ---- GET /export-tasks/{id}/timeline ------------------------------------------
// Whoever may read the task may read its timeline: the same LoadVisibleTask.

void ExportApi::Handlers::Timeline(const Request& req, const Principal& p, Response& res) {
  auto t = usecase::LoadVisibleTask(*deps_.store, p, req.PathParam(0));
  if (!t.ok()) return WriteStatus(res, t.status());
  auto events = deps_.store->ListTaskEvents(t->id);
  if (!events.ok()) return WriteStatus(res, events.status());
  json out = json::array();
  const TimelineReader reader{.names_downloaders = p.HasPerm(kAuditReadPermission)};
  for (const store::TaskEvent& e : *events) out.push_back(TaskEventToJson(e, reader));
  WriteSuccess(res, {{"taskId", std::to_string(t->id)},
                     {"status", task::ToString(t->status)},
                     {"events", std::move(out)},
                     {"limit", store::kMaxEventsPerTask}});
}

// ---- downloads -----------------------------------------------------------------

void ExportApi::Handlers::Download(const Request& req, const Principal& p, Response& res) {
  auto t = usecase::LoadVisibleTask(*deps_.store, p, req.PathParam(0));
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

void ExportApi::Handlers::CreateDownloadUrl(const Request& req, const Principal& p, Response& res) {
  auto t = usecase::LoadVisibleTask(*deps_.store, p, req.PathParam(0));
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
                      NowMs() + int64_t{deps_.auth.download_url_ttl_seconds} * 1000, *permission};
  if (const registry::ExportDefinition* def = Snapshot()->Find(t->export_type)) {
    grant.column_permissions = HeldColumnPermissions(*def, holds);
  }
  std::string base = deps_.server.public_base_url;
  if (base.empty()) base = "http://" + deps_.server.host + ":" + std::to_string(deps_.server.port);
  while (!base.empty() && base.back() == '/') base.pop_back();
  WriteSuccess(
      res, {{"url", base + Base("/downloads/") + SignDownloadGrant(api_.download_secret_, grant)},
            {"expiresAt", FormatIsoMillis(grant.expires_at_ms)}});
}

void ExportApi::Handlers::SignedDownload(const Request& req, const Principal&, Response& res) {
  auto grant = OpenDownloadGrant(api_.download_secret_, req.PathParam(0));
  if (!grant.ok()) return WriteHttpStatus(res, grant.status());
  if (grant->expires_at_ms <= NowMs()) {
    return WriteHttpError(res, 410, "this download link has expired; request a new one");
  }
  auto t = deps_.store->GetTask(grant->task_id);
  if (!t.ok() && t.status().code() != StatusCode::kNotFound) {
    return WriteHttpStatus(res, t.status());
  }
  if (!t.ok() || t->tenant_id != grant->tenant) {
    return WriteHttpError(res, 404, "export task " + std::to_string(grant->task_id) + " not found");
  }
  // The signer held the type's permission when signing (checked there); the
  // link is refused if the type has since come to require another one.
  const registry::ExportDefinition* def = Snapshot()->Find(t->export_type);
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

StatusOr<std::string> ExportApi::Handlers::RecheckTypePermission(const Principal& p,
                                                                 const task::Task& t) const {
  // Fails closed: a type removed from the registry names no permission, so
  // nobody's right to its files can be checked.
  const registry::ExportDefinition* def = Snapshot()->Find(t.export_type);
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

std::vector<std::string> ExportApi::Handlers::ColumnsWiderFor(const task::Task& t,
                                                              const HoldsPermission& holds) const {
  const registry::ExportDefinition* def = Snapshot()->Find(t.export_type);
  if (def == nullptr) return {};
  return ColumnsWiderThanReader(t, *def, holds);
}

void ExportApi::Handlers::RefuseWiderFile(Response& res, int http_status, const task::Task& t,
                                          const std::vector<std::string>& columns) const {
  spdlog::info(
      "download refused task_id={}: the file shows {} governed column(s) wider than the "
      "reader's request_id={}",
      t.id, columns.size(), res.Header(kRequestIdHeader));
  WriteEnvelope(res, http_status,
                ColumnsRefusalEnvelope(
                    t, columns, Base("/export-tasks/") + std::to_string(t.id) + "/export-again"));
}

// ---- GET /download-audit ---------------------------------------------------------

void ExportApi::Handlers::DownloadAudit(const Request& req, const Principal& p, Response& res) {
  if (!p.HasPerm(kAuditReadPermission)) {
    return WriteStatus(res, PermissionDenied("the download audit requires permission " +
                                             std::string(kAuditReadPermission)));
  }
  auto q = ParseDownloadAuditQuery(req, p);
  if (!q.ok()) return WriteStatus(res, q.status());
  auto page = deps_.store->ListDownloadAudit(*q);
  if (!page.ok()) return WriteStatus(res, page.status());
  json records = json::array();
  for (const auto& e : page->records) records.push_back(DownloadAuditEntryToJson(e));
  json data = PageFields(page->total, page->total_is_exact, page->next, q->page, q->size);
  data["records"] = std::move(records);
  WriteSuccess(res, std::move(data));
}

void ExportApi::Handlers::StreamTask(const Request& req, Response& res, const task::Task& t,
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
  auto presigned = deps_.storage->PresignedGetUrl(*t.object_key, headers);
  if (!presigned.ok()) {
    spdlog::error("presigning the file of task {} failed: {}", t.id, presigned.status().ToString());
    return WriteHttpStatus(res, presigned.status());
  }
  if (*presigned) return RedirectToStore(req, res, t, **presigned, std::move(who));

  auto opened = deps_.storage->Open(*t.object_key);
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
void ExportApi::Handlers::RedirectToStore(const Request& req, Response& res, const task::Task& t,
                                          const std::string& url, store::DownloadRecord who) {
  auto exists = deps_.storage->Exists(*t.object_key);
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
void ExportApi::Handlers::RecordDownload(const Request& req, const Response& res,
                                         const task::Task& t, store::DownloadRecord who,
                                         const char* served_by) {
  who.task_id = t.id;
  who.export_type = t.export_type;
  who.served_by = served_by;
  who.client_address = PrintableAscii(req.peer_address, 64);
  who.user_agent = PrintableAscii(req.Header("User-Agent"), 512);
  who.request_id = res.Header(kRequestIdHeader);
  auto counted = deps_.store->RecordDownload(who, deps_.limits.download_audit_window_seconds);
  if (!counted.ok()) {
    spdlog::warn("recording a download of task {} failed request_id={}: {}", t.id, who.request_id,
                 counted.status().ToString());
  }
}

// ---- retry / cancel ------------------------------------------------------------

void ExportApi::Handlers::Retry(const Request& req, const Principal& p, Response& res) {
  auto t = usecase::RetryTask(actions_, p, req.PathParam(0), res.Header(kRequestIdHeader));
  if (!t.ok()) return WriteStatus(res, t.status());
  WriteSuccess(res, TaskToJson(*t));
}

// ---- POST /export-tasks/{id}/export-again (usecase::ExportAgain) ---------------
namespace {

// The optional body of export-again: {"filePassword": "..."}, the new
// password of a file that was password-protected (the old one is not kept).
// No body: none.
StatusOr<std::string> ExportAgainPassword(const Request& req) {
  if (req.body.empty()) return std::string();
  EC_RETURN_IF_ERROR(CheckJsonContentType(req.Header("Content-Type")));
  EC_ASSIGN_OR_RETURN(json body, ParseStrictJson(req.body));
  if (!body.is_object()) return InvalidArgument("the request body must be a JSON object");
  for (const auto& [key, value] : body.items()) {
    if (key != "filePassword") return InvalidArgument("unknown field " + key);
  }
  auto found = body.find("filePassword");
  if (found == body.end() || found->is_null()) return std::string();
  if (!found->is_string()) return InvalidArgument("filePassword must be a string");
  return found->get<std::string>();
}

}  // namespace

void ExportApi::Handlers::ExportAgain(const Request& req, const Principal& p, Response& res) {
  WriteCreated(res, usecase::ExportAgain(create_, actions_, p, req.PathParam(0),
                                         ExportAgainPassword(req), res.Header(kRequestIdHeader)));
}

void ExportApi::Handlers::Cancel(const Request& req, const Principal& p, Response& res) {
  auto t = usecase::CancelTask(actions_, p, req.PathParam(0));
  if (!t.ok()) return WriteStatus(res, t.status());
  WriteSuccess(res, TaskToJson(*t));
}

// ---- GET /export-tasks/events (docs/http-api.md#get-export-tasksevents--task-events)
// ---------------------

// A single-use ticket for one connect of the event stream (api/events_ticket.h):
// EventSource cannot send the Authorization header, and a bearer token in the
// URL would be logged by every proxy on the way.
void ExportApi::Handlers::EventsTicket(const Request& req, const Principal& p, Response& res) {
  auto ticket = api_.tickets_->Issue(p, NowMs());
  if (!ticket.ok()) {
    if (ticket.status().code() == StatusCode::kLimitExceeded) res.SetHeader("Retry-After", "5");
    return WriteStatus(res, ticket.status());
  }
  res.SetHeader("Cache-Control", "no-store");
  WriteSuccess(res, {{"ticket", *ticket},
                     {"expiresInSeconds", api_.tickets_->ttl().count()},
                     {"eventsPath", Base("/export-tasks/events")}});
}

namespace {

// The stream's caller: the Authorization header, or a ticket in ?ticket=. A
// bearer token in the query (?access_token=, accepted before tickets) is
// refused, so that no client keeps putting one where proxies log it. A ticket
// is redeemed only once `hub` has room for its principal, so a refused
// connect spends no nonce.
StatusOr<Principal> EventsCaller(const Request& req, const identity::TokenVerifier& verifier,
                                 EventsTickets& tickets, TaskEventHub& hub) {
  if (req.HasQuery("access_token")) {
    return Unauthenticated(
        "a bearer token in the URL is refused; POST /export-tasks/events-ticket and connect with "
        "?ticket=");
  }
  std::string authorization = req.Header("Authorization");
  if (authorization.empty() && req.HasQuery("ticket")) {
    return tickets.Redeem(req.Query("ticket"), NowMs(),
                          [&hub](const Principal& p) { return hub.CheckCapacity(p); });
  }
  return verifier.Authenticate(authorization);
}

// A refused connect as a real HTTP status (EventSource stops only on a
// non-200 answer): over a cap 429 (per user) or 503 (the instance), each with
// Retry-After and the cap's own message; a bad credential 401.
void WriteStreamRefusal(Response& res, const Status& status) {
  switch (status.code()) {
    case StatusCode::kLimitExceeded:
      res.SetHeader("Retry-After", "30");
      return WriteHttpError(res, 429, status.message());
    case StatusCode::kUnavailable:
      res.SetHeader("Retry-After", "30");
      return WriteHttpError(res, 503, status.message());
    default:
      return WriteHttpStatus(res, status);
  }
}

}  // namespace

void ExportApi::Handlers::TaskEvents(const Request& req, const Principal&, Response& res) {
  if (!api_.verifier_) return WriteHttpStatus(res, Internal("authentication is not configured"));
  auto p = EventsCaller(req, *api_.verifier_, *api_.tickets_, *api_.events_);
  if (!p.ok()) return WriteStreamRefusal(res, p.status());
  std::optional<int64_t> last_event_id;
  std::string last = req.Header("Last-Event-ID");
  if (last.empty()) last = req.Query("lastEventId");
  if (auto id = ParseId(last)) last_event_id = *id;  // anything else: start from now
  Status room = api_.events_->CheckCapacity(*p);
  if (!room.ok()) return WriteStreamRefusal(res, room);
  auto source = api_.events_->Subscribe(*p, last_event_id);
  if (!source.ok()) {
    spdlog::warn("task events: subscribing failed: {}", source.status().ToString());
    res.SetHeader("Retry-After", "30");
    return WriteHttpError(res, 503, "task events are unavailable; the page falls back to polling");
  }
  res.SetHeader("Cache-Control", "no-cache");
  res.SetHeader("X-Accel-Buffering", "no");  // a buffering proxy would hold the events
  res.SetLive(std::move(source).value(), "text/event-stream; charset=utf-8");
}

// ---- GET /export-types, /readyz ----------------------------------------------

void ExportApi::Handlers::ExportTypes(const Request& req, const Principal& p, Response& res) {
  json types = json::array();
  for (const auto& [name, def] : Snapshot()->definitions) {
    if (!usecase::CanSeeType(p, def)) continue;
    json type = DefinitionToJson(def);
    // NONE | OPTIONAL | REQUIRED for this caller: a governed column it sees
    // in full may require one (docs/configuration.md#password-protected-files-file-password).
    type["filePassword"] = usecase::FilePasswordPolicyName(
        def, task::DecideColumnPolicy(def.column_rules,
                                      [&p](const std::string& perm) { return p.HasPerm(perm); }));
    types.push_back(std::move(type));
  }
  WriteSuccess(res, std::move(types));
}

// Open unless auth.metrics-bearer-token is set; then only that bearer token.
bool ExportApi::Handlers::MetricsCallerAllowed(const Request& req) const {
  const std::string& token = deps_.auth.metrics_bearer_token;
  return token.empty() || SecureEquals(req.Header("Authorization"), "Bearer " + token);
}

void ExportApi::Handlers::Preview(const Request& req, const Principal& p, Response& res) {
  api_.preview_->Handle(req, p, Snapshot(), res);
}

void ExportApi::Handlers::Healthz(const Request&, const Principal&, Response& res) {
  WriteSuccess(res, {{"status", "UP"},
                     {"version", std::string(build_info::Version())},
                     {"commit", std::string(build_info::Commit())}});
}

void ExportApi::Handlers::Metrics(const Request& req, const Principal&, Response& res) {
  if (!MetricsCallerAllowed(req)) {
    res.SetHeader("WWW-Authenticate", "Bearer");
    return WriteHttpError(res, 401,
                          "metrics need Authorization: Bearer <auth.metrics-bearer-token>");
  }
  // Cheap and without side effects: counters plus a few gauge queries; the
  // storage gauge is kept by the reconciler.
  res.SetContent(deps_.metrics_text ? deps_.metrics_text() : std::string(),
                 "text/plain; version=0.0.4; charset=utf-8");
}

void ExportApi::Handlers::OpenApi(const Request&, const Principal&, Response& res) {
  res.SetHeader("Cache-Control", "no-cache");
  res.SetContent(std::string(OpenApiDocument()), "application/json");
}

void ExportApi::Handlers::Page(const Request& req, const Principal&, Response& res) {
  ServePage(req, res, deps_.server.page_frame_ancestors);
}

void ExportApi::Handlers::Readyz(const Request&, const Principal&, Response& res) {
  auto now = deps_.store->DatabaseNowMs();
  if (now.ok()) return WriteSuccess(res, {{"status", "READY"}});
  spdlog::warn("readiness check failed: {}", now.status().ToString());
  // Probes read the HTTP status, so "not ready" must not be a 200; like every
  // answer with a real HTTP status, the envelope's code is that status.
  WriteHttpError(res, 503, "not ready: the database does not answer; please retry shortly");
}

// ---- ExportApi -----------------------------------------------------------------

ExportApi::ExportApi(Deps deps) : deps_(std::move(deps)) {
  auto verifier = identity::TokenVerifier::Create(deps_.auth, deps_.jwks_fetcher);
  if (verifier.ok()) {
    verifier_ = std::move(verifier).value();
  } else {
    init_status_ = verifier.status();
  }
  download_secret_ = deps_.auth.download_url_secret;
  if (download_secret_.empty()) {
    // Without a shared secret, links only work on the instance that signed them.
    unsigned char random[32];
    if (!SecureRandomBytes(random, sizeof random)) {
      init_status_ =
          Internal("no random bytes for the download-URL secret; set auth.download-url-secret");
      return;
    }
    download_secret_.assign(reinterpret_cast<char*>(random), sizeof random);
    spdlog::warn(
        "auth.download_url_secret is not set; signed download URLs are valid only on "
        "this instance until it restarts");
  }
  TaskEventsOptions events;
  events.max_streams = deps_.server.events_max_streams;
  events.max_streams_per_user = deps_.server.events_max_streams_per_user;
  events.poll_interval = std::chrono::milliseconds(deps_.server.events_poll_interval_ms);
  events_ = std::make_unique<TaskEventHub>(deps_.store, events);
  EventsTicketOptions tickets;
  tickets.ttl = std::chrono::seconds(std::clamp(deps_.server.events_ticket_ttl_seconds, 1, 30));
  tickets.max_per_user = static_cast<size_t>(std::max(1, deps_.server.events_tickets_per_user));
  tickets.max_redeemed = static_cast<size_t>(std::max(1, deps_.server.events_tickets_max_redeemed));
  tickets_ = std::make_unique<EventsTickets>(download_secret_, tickets);
  PreviewFn read_preview = deps_.preview;
  if (!read_preview && deps_.source_routes != nullptr) {
    read_preview = [routes = deps_.source_routes](
                       const task::Task& t,
                       std::shared_ptr<const registry::RegistrySnapshot> snapshot) {
      return routes->Preview(t, std::move(snapshot));
    };
  }
  preview_ =
      std::make_unique<PreviewApi>(std::move(read_preview), deps_.preview_options, deps_.limits);
  key_derivations_ = std::make_unique<usecase::KeyDerivationGate>(deps_.file_key_derivations);
  if (deps_.operations != nullptr) {
    OperatorApiDeps operator_deps;
    operator_deps.operations = deps_.operations;
    operator_deps.catalog = deps_.store;
    operator_deps.registry = deps_.registry;
    operator_deps.on_task_created = deps_.on_task_created;
    operator_ = std::make_unique<OperatorApi>(std::move(operator_deps));
  }
  handlers_ = std::make_unique<Handlers>(*this);
}

StatusOr<std::unique_ptr<ExportApi>> ExportApi::Create(Deps deps) {
  auto api = std::make_unique<ExportApi>(std::move(deps));
  if (!api->init_status().ok()) return api->init_status();
  return api;
}

ExportApi::~ExportApi() = default;

HttpResponse ExportApi::Handle(HttpRequest& request) { return handlers_->Handle(request); }

HttpResponse ExportApi::Reject(const HttpRequest& request, int status) {
  return handlers_->Reject(request, status);
}

}  // namespace export_center::api
