#pragma once
// ExportApi: the HTTP API of export-center (docs/http-api.md).
//
// An http::HttpService: routes the task endpoints under
// /api/platform/v1/files, the export preview (preview_api.h), the two
// download endpoints (real HTTP statuses),
// /healthz, /readyz, /metrics and the download-center page at /. It answers
// unknown routes 404 and wrong methods 405, and gives the envelope to the
// server's own refusals (body over limits.max_body_bytes 413, malformed 400,
// header too large 431, over the connection caps 503). Every request is
// logged (request id, method, path, status; never tokens or parameters).
// Downloads are streamed: the server pulls the file chunk by chunk.
//
// Parse → call → envelope: each route is a row of one table (api/route.h)
// whose handler calls a use case (src/usecase/). The handlers come in
// families, each a small class over the one HandlerDeps (handler_deps.h):
// task actions, task reads, downloads; export_api.cc keeps the table. Talks only to seams:
// TaskCatalog (the store role of the API), ExportStorage, Registry,
// SourceRoutes, http::HttpServer. Thread-safe: the handlers run on the server's worker threads and
// share no mutable state.
//
// Wiring (src/app):
//   api::ExportApi::Deps deps;
//   deps.store = store.get(); deps.storage = storage.get(); deps.registry = &registry;
//   deps.server = cfg.server; deps.auth = cfg.auth; deps.limits = cfg.limits;
//   deps.on_task_created = [&] { publisher.Wake(); };
//   deps.on_created = [&](const std::string& type) { metrics.TaskCreated(type); };
//   deps.metrics_text = [&] { return metrics.Render(); };
//   EC_ASSIGN_OR_RETURN(auto api, api::ExportApi::Create(std::move(deps)));
//   auto server = http::NewBeastHttpServer(options, api.get()); server->Start();

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "api/operator_api.h"
#include "api/options.h"
#include "api/preview_api.h"
#include "common/file_key_ring.h"
#include "common/status.h"
#include "http/http_client.h"
#include "http/http_server.h"
#include "registry/registry.h"
#include "storage/export_storage.h"
#include "store/task_catalog.h"
#include "store/task_operations.h"
#include "task/limits.h"
#include "usecase/access.h"
#include "usecase/create.h"
#include "usecase/source_routes.h"
#include "usecase/subscriptions.h"

namespace export_center::identity {
class TokenVerifier;
}  // namespace export_center::identity

namespace export_center::api {

class TaskEventHub;
class EventsTickets;

inline constexpr char kApiBase[] = "/api/platform/v1/files";

// The access rules are the use cases' (usecase/access.h); the API names them.
using usecase::kDownloadAllPermission;

struct ExportApiDeps {
  store::TaskCatalog* store = nullptr;  // not owned; outlives the server
  // The operators' console (operator_api.h; not owned). Optional: unset, its
  // routes do not exist (404).
  store::TaskOperations* operations = nullptr;
  storage::ExportStorage* storage = nullptr;  // not owned
  registry::Registry* registry = nullptr;     // not owned
  ServerOptions server;                       // public_base_url for signed URLs, threads
  AuthOptions auth;
  // Fetches auth.jwks_url (not owned; the process's HttpClientFactory).
  // Needed only when a JWKS URL is configured.
  http::HttpClientFactory* jwks_fetcher = nullptr;
  task::LimitsOptions limits;
  // Called after a task was created (not deduplicated) or manually retried:
  // wakes the outbox publisher so the command goes out at once. Optional.
  std::function<void()> on_task_created;
  // Metrics hook: one call per newly created task with its export type. Optional.
  std::function<void(const std::string& type)> on_created;
  // What the use cases ask of the source routes: the contract version at
  // create, the preview's rows (usecase/source_routes.h; not owned).
  // Optional: unset, no version is recorded and the preview reads `preview`.
  usecase::SourceRoutes* source_routes = nullptr;
  // Prometheus text exposition for /metrics. Optional (empty body if unset).
  std::function<std::string()> metrics_text;
  // POST /export-previews: reads a preview, in place of
  // source_routes->Preview (tests inject one). Optional: with neither, the
  // route answers 500.
  PreviewFn preview;
  task::PreviewOptions preview_options;  // rows, time limit, per-user rate
  // Password-protected files (docs/configuration.md#password-protected-files-file-password):
  // derives the file key material from a checked filePassword and wraps it
  // under the current key-encryption key (app/ joins
  // render::DeriveFileKeyMaterial and FileKeyRing::Wrap). Costly by design
  // (the password hash's spins), once per create. Unset, a create with a
  // filePassword answers 500.
  std::function<StatusOr<WrappedFileKey>(std::string_view password)> seal_file_password;
  // How many of those derivations run at once; a create finding them all
  // busy answers 503 with Retry-After (usecase::KeyDerivationGate).
  int file_key_derivations = usecase::kDefaultKeyDerivations;
  // The subscriptions (docs/http-api.md#subscriptions): app/ sets the
  // ledger, options, mail and the run-now hook; the registry's snapshot and
  // the limits are the API's own. No ledger: the routes do not exist (404).
  usecase::SubscriptionDeps subscriptions{};
};

class ExportApi : public http::HttpService {
 public:
  using Deps = ExportApiDeps;

  // Never fails; an unusable auth config (no key, unreadable PEM) is kept in
  // init_status() and makes every authenticated request answer 500.
  explicit ExportApi(Deps deps);
  // Like the constructor, but returns the init_status() error instead.
  static StatusOr<std::unique_ptr<ExportApi>> Create(Deps deps);
  ~ExportApi() override;
  ExportApi(const ExportApi&) = delete;
  ExportApi& operator=(const ExportApi&) = delete;

  const Status& init_status() const { return init_status_; }

  // http::HttpService. The server must not outlive this object.
  http::HttpResponse Handle(http::HttpRequest& request) override;
  http::HttpResponse Reject(const http::HttpRequest& request, int status) override;

 private:
  class Handlers;

  Deps deps_;
  Status init_status_;
  std::unique_ptr<identity::TokenVerifier> verifier_;
  std::string download_secret_;
  std::unique_ptr<TaskEventHub> events_;    // GET /export-tasks/events
  std::unique_ptr<EventsTickets> tickets_;  // POST /export-tasks/events-ticket
  std::unique_ptr<PreviewApi> preview_;
  std::unique_ptr<OperatorApi> operator_;  // null without deps_.operations
  std::unique_ptr<usecase::KeyDerivationGate> key_derivations_;
  std::unique_ptr<Handlers> handlers_;
};

}  // namespace export_center::api
