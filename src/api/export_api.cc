#include "api/export_api.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "api/auth.h"
#include "api/download_center_page.h"
#include "api/envelope.h"
#include "api/events_ticket.h"
#include "api/handler_deps.h"
#include "api/openapi_document.h"
#include "api/request_log.h"
#include "api/route.h"
#include "api/task_events.h"
#include "common/build_info.h"
#include "common/digest.h"
#include "common/ids.h"
#include "http/router.h"
#include "identity/token_verifier.h"
#include "usecase/access.h"
#include "usecase/create.h"
#include "usecase/file_password.h"

namespace export_center::api {
namespace {

using json = nlohmann::json;
using http::HttpRequest;
using http::HttpResponse;
using Request = http::HttpRequest;
using Response = http::HttpResponse;

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

// The route table (api/route.h) and what every row shares: the prologue a
// row's `needs` names, the access log, a library exception ending as a 500
// envelope. It owns the handler families (handler_deps.h) and serves the
// routes of no family: export types, the preview, health, metrics, the page.
class ExportApi::Handlers {
 public:
  explicit Handlers(ExportApi& api);

  HttpResponse Handle(HttpRequest& req);
  HttpResponse Reject(const HttpRequest& req, int status);

 private:
  // ---- plumbing ----
  // The one authenticated route shape: the prologue `route.needs` names,
  // then the handler; a library exception ends as a 500 envelope.
  void Add(Route route);
  void NoRoute(const Request& req, const http::Router::Match& match, Response& res) const;
  void Log(const Request& req, const Response& res,
           std::chrono::steady_clock::time_point start) const;
  StatusOr<Principal> Authenticate(const Request& req) const;

  // ---- the routes of no family ----
  Endpoint ExportTypes, Preview, Healthz, Readyz, Metrics, OpenApi, Page;  // handler_deps.h
  bool MetricsCallerAllowed(const Request& req) const;

  ExportApi& api_;
  const Deps& deps_;
  const spdlog::level::level_enum access_log_level_;
  HandlerDeps shared_;  // what the families share; before them
  TaskActionHandlers actions_;
  TaskReadHandlers reads_;
  DownloadHandlers downloads_;
  SubscriptionHandlers subscriptions_;
  http::Router router_;
};

ExportApi::Handlers::Handlers(ExportApi& api)
    : api_(api),
      deps_(api.deps_),
      access_log_level_(spdlog::level::from_str(api.deps_.server.access_log_level)),
      actions_(shared_),
      reads_(shared_),
      downloads_(shared_),
      subscriptions_(shared_) {
  const Deps* deps = &deps_;
  shared_.api = deps;
  shared_.verifier = api.verifier_.get();
  shared_.download_secret = api.download_secret_;
  shared_.tickets = api.tickets_.get();
  shared_.events = api.events_.get();
  shared_.create.store = deps_.store;
  shared_.create.limits = deps_.limits;
  shared_.create.routes = deps_.source_routes;
  shared_.create.seal_file_password = deps_.seal_file_password;
  shared_.create.key_derivations = api.key_derivations_.get();
  shared_.create.on_created = [deps](const std::string& type) {
    if (deps->on_task_created) deps->on_task_created();
    if (deps->on_created) deps->on_created(type);
  };
  shared_.actions.store = deps_.store;
  shared_.actions.registry = deps_.registry;
  shared_.actions.on_requeued = deps_.on_task_created;
  shared_.subscriptions = deps_.subscriptions;
  shared_.subscriptions.limits = deps_.limits;
  shared_.subscriptions.snapshot = [registry = deps_.registry] { return registry->Current(); };
  // The families' rows, then the two of no family, the operators' console's,
  // and the public ones (probes, the page).
  for (std::vector<Route> rows :
       {actions_.Routes(), reads_.Routes(), downloads_.Routes(), subscriptions_.Routes()}) {
    for (Route& row : rows) Add(std::move(row));
  }
  auto own = [this](const char* method, std::string path, Endpoint Handlers::*fn,
                    RouteNeeds needs) {
    Add(Route{method, std::move(path), needs,
              [this, fn](auto& req, auto& p, auto& res) { (this->*fn)(req, p, res); }});
  };
  own("GET", ApiPath("/export-types"), &Handlers::ExportTypes, RouteNeeds::kCaller);
  own("POST", ApiPath("/export-previews"), &Handlers::Preview, RouteNeeds::kCaller);
  if (api.operator_) {
    for (Route route : api.operator_->Routes()) {
      route.pattern = ApiPath(route.pattern);
      Add(std::move(route));
    }
  }
  for (auto [path, fn] :
       {std::pair<const char*, Endpoint Handlers::*>{"/healthz", &Handlers::Healthz},
        {"/readyz", &Handlers::Readyz},
        {"/metrics", &Handlers::Metrics},
        {"/openapi.json", &Handlers::OpenApi},
        {"/", &Handlers::Page},
        {"/assets/{name}", &Handlers::Page}}) {
    own("GET", path, fn, RouteNeeds::kNothing);
  }
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

// ---- GET /export-types, /readyz ----------------------------------------------

void ExportApi::Handlers::ExportTypes(const Request& req, const Principal& p, Response& res) {
  json types = json::array();
  for (const auto& [name, def] : shared_.Snapshot()->definitions) {
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
  api_.preview_->Handle(req, p, shared_.Snapshot(), res);
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
