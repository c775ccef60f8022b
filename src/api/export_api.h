#pragma once
// ExportApi: the HTTP API of export-center (SPEC §5, docs/http-api.md).
//
// Registers every route on a cpp-httplib Server: the task endpoints under
// /api/platform/v1/files, the two download endpoints (real HTTP statuses),
// /healthz, /readyz, /metrics and the download-center page at /. It also
// installs the error handler (unknown route 404, wrong method 405, body over
// limits.max_body_bytes 413, all with the envelope), the body-size limit and a
// request logger (request id, method, path, status; never tokens or
// parameters).
//
// Talks only to seams: TaskStore, ExportStorage, Registry. Thread-safe: the
// handlers run on httplib's worker threads and share no mutable state.
//
// Wiring (src/app):
//   api::ExportApi::Deps deps;
//   deps.store = store.get(); deps.storage = storage.get(); deps.registry = &registry;
//   deps.server = cfg.server; deps.auth = cfg.auth; deps.limits = cfg.limits;
//   deps.on_task_created = [&] { publisher.Wake(); };
//   deps.on_created = [&](const std::string& type) { metrics.TaskCreated(type); };
//   deps.metrics_text = [&] { return metrics.Render(); };
//   EC_ASSIGN_OR_RETURN(auto api, api::ExportApi::Create(std::move(deps)));
//   httplib::Server http; api->Register(http); http.listen(cfg.server.host, cfg.server.port);

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <httplib.h>

#include "api/options.h"
#include "common/status.h"
#include "registry/registry.h"
#include "storage/export_storage.h"
#include "store/task_store.h"
#include "task/limits.h"

namespace export_center::api {

class TokenVerifier;

inline constexpr char kApiBase[] = "/api/platform/v1/files";

struct ExportApiDeps {
  store::TaskStore* store = nullptr;           // not owned; outlives the server
  storage::ExportStorage* storage = nullptr;   // not owned
  registry::Registry* registry = nullptr;      // not owned
  ServerOptions server;                        // public_base_url for signed URLs, threads
  AuthOptions auth;
  task::LimitsOptions limits;
  // Called after a task was created (not deduplicated) or manually retried:
  // wakes the outbox publisher so the command goes out at once. Optional.
  std::function<void()> on_task_created;
  // Metrics hook: one call per newly created task with its export type. Optional.
  std::function<void(const std::string& type)> on_created;
  // sql-template types: fetches the business contract's version so the task
  // records it at create (seed 002 §6: compared at execution → STALE).
  // Arguments: definition, snapshot, canonical parameters, tenant, app code,
  // user. Optional; returns nullopt for provider types. A failure does not
  // fail the create: the task records no version and the check is skipped.
  std::function<StatusOr<std::optional<std::string>>(
      const registry::ExportDefinition&, const registry::RegistrySnapshot&, const std::string&,
      const std::string&, task::AppCode, const std::string&)>
      contract_version;
  // Prometheus text exposition for /metrics. Optional (empty body if unset).
  std::function<std::string()> metrics_text;
};

class ExportApi {
 public:
  using Deps = ExportApiDeps;

  // Never fails; an unusable auth config (no key, unreadable PEM) is kept in
  // init_status() and makes every authenticated request answer 500.
  explicit ExportApi(Deps deps);
  // Like the constructor, but returns the init_status() error instead.
  static StatusOr<std::unique_ptr<ExportApi>> Create(Deps deps);
  ~ExportApi();
  ExportApi(const ExportApi&) = delete;
  ExportApi& operator=(const ExportApi&) = delete;

  const Status& init_status() const { return init_status_; }

  // Installs routes, handlers and limits on `server`. Call once before listen.
  // `server` must not outlive this object.
  void Register(httplib::Server& server);

 private:
  class Handlers;

  Deps deps_;
  Status init_status_;
  std::unique_ptr<TokenVerifier> verifier_;
  std::string download_secret_;
  std::unique_ptr<Handlers> handlers_;
};

}  // namespace export_center::api
