#include "app/export_center_app.h"

#include <openssl/crypto.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <filesystem>

#include "api/export_api.h"
#include "app/backends.h"
#include "attempt/export_preview.h"
#include "common/file_key_ring.h"
#include "common/ids.h"
#include "common/periodic_worker.h"
#include "common/thread_guard.h"
#include "dispatch/consumer.h"
#include "dispatch/dlq_handler.h"
#include "dispatch/outbox_publisher.h"
#include "dispatch/reconciler.h"
#include "http/beast/beast_http_server.h"
#include "http/httplib/httplib_http_client.h"
#include "metrics/metrics.h"
#include "notify/notification_publisher.h"
#include "registry/config_watcher.h"
#include "registry/registry.h"
#include "render/file_encryption.h"
#include "subscription/scheduler.h"
#include "usecase/subscription_runner.h"

namespace export_center::app {
namespace {

// How the components report: each observer interface beside its component,
// all implemented here on the process's metrics (and, for the reconciler's
// re-dispatch, the publisher's wake-up). Every method is thread-safe, as
// ExportMetrics is.
class MetricsObservers : public attempt::AttemptObserver,
                         public dispatch::ReconcilerObserver,
                         public dispatch::DlqObserver,
                         public notify::NotificationObserver {
 public:
  MetricsObservers(metrics::ExportMetrics* metrics, dispatch::OutboxPublisher* publisher)
      : metrics_(metrics), publisher_(publisher) {}

  // attempt::AttemptObserver
  void FirstStarted(const task::Task& task, double wait_seconds) override {
    metrics_->TaskWait(task.tenant_id, wait_seconds);
  }
  void AttemptEnded(const task::Task& task, attempt::AttemptEnd end, double seconds) override {
    metrics_->AttemptDuration(task.export_type, seconds);
    if (attempt::IsFinal(end)) {
      metrics_->TaskCompleted(task.export_type, std::string(attempt::ToString(end)));
    }
  }

  // dispatch::ReconcilerObserver
  void Redispatched() override { publisher_->Wake(); }
  void ActionTaken(const std::string& action, int count) override {
    metrics_->ReconcilerAction(action, count);
  }
  void TaskEnded(const std::string& type, const std::string& status) override {
    metrics_->TaskCompleted(type, status);
  }
  void StorageBytes(int64_t bytes) override { metrics_->SetStorageBytes(bytes); }

  // dispatch::DlqObserver
  void DeadLetterReceived() override { metrics_->DlqMessage(); }

  // notify::NotificationObserver
  void DeliveryAttempted(const std::string& receiver, notify::DeliveryResult result) override {
    metrics_->NotificationDelivery(receiver, std::string(notify::ToString(result)));
  }

 private:
  metrics::ExportMetrics* const metrics_;
  dispatch::OutboxPublisher* const publisher_;
};

}  // namespace

// Owned parts, in construction order (destroyed in reverse).
struct ExportCenterApp::Components {
  std::unique_ptr<metrics::ExportMetrics> metrics;
  std::unique_ptr<store::TaskStore> store;
  std::unique_ptr<storage::ExportStorage> storage;
  std::unique_ptr<registry::Registry> registry;
  std::unique_ptr<dispatch::CommandChannel> channel;
  std::unique_ptr<dispatch::OutboxPublisher> publisher;
  std::unique_ptr<MetricsObservers> observers;  // outlives every component that reports
  std::unique_ptr<dispatch::Consumer> consumer;
  std::unique_ptr<dispatch::Reconciler> reconciler;
  std::unique_ptr<dispatch::DlqHandler> dlq;
  std::unique_ptr<attempt::ExportPreviewer> previewer;   // outlives the API that calls it
  std::unique_ptr<usecase::SourceRoutes> source_routes;  // the same
  std::unique_ptr<notify::NotificationPublisher> notifier;
  // The subscriptions' duty (docs/subscriptions.md#the-scheduler): the
  // runner creates through the same use case as the API.
  std::unique_ptr<usecase::CreateSlotRunner> slot_runner;
  std::unique_ptr<subscription::SubscriptionScheduler> scheduler;
  std::unique_ptr<PeriodicWorker> subscriptions;
  std::unique_ptr<api::ExportApi> api;
  std::unique_ptr<registry::ConfigWatcher> watcher;
};

namespace {

// Password-protected files (docs/configuration.md#password-protected-files-file-password): the
// create derives the file key material from the password (render/) and wraps
// it under the current key-encryption key; the password goes no further.
std::function<StatusOr<WrappedFileKey>(std::string_view)> MakeFileKeySealer(
    std::shared_ptr<const FileKeyRing> ring) {
  if (ring == nullptr || !ring->CanWrap()) return nullptr;
  return [ring](std::string_view password) -> StatusOr<WrappedFileKey> {
    EC_ASSIGN_OR_RETURN(std::string material, render::DeriveFileKeyMaterial(password));
    StatusOr<WrappedFileKey> wrapped = ring->Wrap(material);
    OPENSSL_cleanse(material.data(), material.size());
    return wrapped;
  };
}

attempt::AttemptDeps MakeAttemptDeps(const config::AppConfig& config, ExportCenterApp* /*unused*/,
                                     store::TaskStore* store, storage::ExportStorage* storage,
                                     registry::Registry* registry, metrics::ExportMetrics* metrics,
                                     attempt::AttemptObserver* observer,
                                     std::shared_ptr<const FileKeyRing> file_keys) {
  attempt::AttemptDeps deps;
  deps.file_keys = std::move(file_keys);
  deps.store = store;
  deps.storage = storage;
  deps.registry = registry;
  const std::string instance = config.instance_id;
  deps.make_source = MakeRowSourceFactory(
      http::HttplibClientFactory(), config.provider, metrics, config.datasources,
      [store, instance](const task::Task& task, const std::string& version) {
        return store->PinContractVersion({task.id, task.dispatch_version, instance}, version);
      });
  deps.make_writer = MakeWriterFactory();
  deps.consumer = config.consumer;
  deps.limits = config.limits;
  deps.deflate_level = config.render.deflate_level;
  deps.instance = config.instance_id;
  deps.observer = observer;
  return deps;
}

// One round of the subscriptions' duty: the scheduler's round, its figures
// counted; and, at most every ten minutes, the run history past
// `history-days` pruned in small batches.
std::function<PeriodicWorker::Next()> SubscriptionRound(
    subscription::SubscriptionScheduler* scheduler, store::SubscriptionLedger* ledger,
    metrics::SubscriptionMetrics* metrics, int history_days) {
  auto last_prune = std::make_shared<std::chrono::steady_clock::time_point>();
  return [=]() {
    StatusOr<subscription::RoundFigures> round = scheduler->RunRound();
    if (!round.ok()) {
      spdlog::warn("subscriptions: the round ended early: {}", round.status().ToString());
    } else {
      metrics->Runs("fired", round->fired);
      metrics->Runs("created", round->created);
      metrics->Runs("deferred", round->deferred + round->gave_up);
      metrics->Runs("skipped", round->skipped);
      metrics->Runs("failed", round->failed);
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - *last_prune >= std::chrono::minutes(10)) {
      *last_prune = now;
      auto db_now = ledger->DatabaseNowMs();
      if (db_now.ok()) {
        const int64_t before = *db_now - int64_t{history_days} * 86'400'000;
        for (int batch = 0; batch < 20; ++batch) {
          auto pruned = ledger->PruneRuns(before, 500);
          if (!pruned.ok() || *pruned < 500) break;
        }
      }
    }
    return PeriodicWorker::Next::Interval();
  };
}

http::HttpServerOptions HttpOptions(const api::ServerOptions& s,
                                    const task::LimitsOptions& limits) {
  http::HttpServerOptions o;
  o.host = s.host;
  o.port = s.port;
  o.worker_threads = s.threads;
  o.io_threads = s.io_threads;
  o.header_timeout = std::chrono::seconds(s.header_timeout_seconds);
  o.body_timeout = std::chrono::seconds(s.body_timeout_seconds);
  o.idle_timeout = std::chrono::seconds(s.keep_alive_timeout_seconds);
  o.send_timeout = std::chrono::seconds(s.send_timeout_seconds);
  o.max_connections = s.max_connections;
  o.max_connections_per_address = s.max_connections_per_address;
  o.max_body_bytes = static_cast<uint64_t>(limits.max_body_bytes);
  return o;
}

// Each connection is a file descriptor: lift the soft limit to the hard one
// so server.max-connections is not cut short by a shell's default of 1024.
void RaiseFileLimit(int max_connections) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  if (lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) getrlimit(RLIMIT_NOFILE, &lim);
  }
  // Databases, storage and logs need descriptors too.
  constexpr rlim_t kReserve = 256;
  const rlim_t needed = static_cast<rlim_t>(max_connections) + kReserve;
  if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < needed) {
    spdlog::warn(
        "open-file limit {} is below server.max-connections {} + {}; accepting may "
        "fail before the cap is reached",
        static_cast<uint64_t>(lim.rlim_cur), max_connections, kReserve);
  }
}

}  // namespace

ExportCenterApp::ExportCenterApp(config::AppConfig config)
    : config_(std::move(config)), c_(std::make_unique<Components>()) {}

ExportCenterApp::~ExportCenterApp() { Stop(); }

StatusOr<std::unique_ptr<ExportCenterApp>> ExportCenterApp::Create(config::AppConfig config) {
  std::unique_ptr<ExportCenterApp> app(new ExportCenterApp(std::move(config)));
  const config::AppConfig& cfg = app->config_;
  Components& c = *app->c_;
  c.metrics = std::make_unique<metrics::ExportMetrics>();
  EC_ASSIGN_OR_RETURN(std::shared_ptr<const FileKeyRing> file_keys,
                      FileKeyRing::Create(cfg.auth.file_key_encryption_key,
                                          cfg.auth.file_key_encryption_previous_keys));
  config::TemplateInspector inspect_template = MakeTemplateInspector();
  EC_ASSIGN_OR_RETURN(auto snapshot, config::LoadRegistry(cfg.path, inspect_template));
  // A reload re-reads the file and validates all of it, as a restart would.
  c.registry = std::make_unique<registry::Registry>(
      std::move(snapshot), [inspect_template](const std::string& path) {
        return config::LoadRegistryForReload(path, inspect_template);
      });
  if (cfg.database.kind == "sqlite") {
    // A fresh checkout has no var/: create the database's folder.
    std::error_code ignored;
    std::filesystem::create_directories(
        std::filesystem::path(cfg.database.sqlite.path).parent_path(), ignored);
  }
  EC_ASSIGN_OR_RETURN(c.store, OpenTaskStore(cfg.database));
  EC_ASSIGN_OR_RETURN(c.storage, OpenExportStorage(cfg.storage));
  dispatch::ChannelOptions channel_options = cfg.channel;
  channel_options.rocketmq.on_undecodable_skipped = [m = c.metrics.get()] {
    m->RocketMqUndecodableSkipped();
  };
  EC_ASSIGN_OR_RETURN(c.channel, OpenCommandChannel(channel_options));

  c.publisher = std::make_unique<dispatch::OutboxPublisher>(c.store.get(), c.channel.get(),
                                                            cfg.publisher, cfg.instance_id);
  dispatch::OutboxPublisher* publisher = c.publisher.get();
  metrics::ExportMetrics* metrics = c.metrics.get();
  c.observers = std::make_unique<MetricsObservers>(metrics, publisher);
  c.consumer = std::make_unique<dispatch::Consumer>(
      c.channel.get(), MakeAttemptDeps(cfg, app.get(), c.store.get(), c.storage.get(),
                                       c.registry.get(), metrics, c.observers.get(), file_keys));
  c.reconciler = std::make_unique<dispatch::Reconciler>(c.store.get(), c.storage.get(),
                                                        cfg.reconciler, c.observers.get());
  c.dlq = std::make_unique<dispatch::DlqHandler>(c.store.get(), c.channel.get(), c.observers.get());
  // Rows are written whenever receivers are configured, even where this
  // process's notifier is off: another instance delivers them.
  c.store->SetNotificationRoutes(notify::RoutesOf(cfg.notifications));
  for (const notify::WebhookReceiver& r : cfg.notifications.receivers) {
    metrics->DeclareNotificationReceiver(r.id);
  }
  c.notifier = std::make_unique<notify::NotificationPublisher>(
      &c.store->notifications(), cfg.notifications, cfg.instance_id, http::HttplibClientFactory(),
      c.observers.get());

  api::ExportApi::Deps deps;
  deps.store = c.store.get();
  deps.operations = c.store.get();
  deps.storage = c.storage.get();
  deps.registry = c.registry.get();
  deps.server = cfg.server;
  deps.auth = cfg.auth;
  deps.jwks_fetcher = http::HttplibClientFactory();
  deps.limits = cfg.limits;
  deps.on_task_created = [publisher] { publisher->Wake(); };
  deps.on_created = [metrics](const std::string& type) { metrics->TaskCreated(type); };
  c.previewer = std::make_unique<attempt::ExportPreviewer>(
      MakePreviewSourceFactory(http::HttplibClientFactory(), cfg.provider, c.metrics.get(),
                               cfg.datasources, cfg.preview.timeout_seconds),
      cfg.preview);
  c.source_routes = MakeSourceRoutes(http::HttplibClientFactory(), cfg.provider, c.previewer.get());
  deps.source_routes = c.source_routes.get();
  deps.preview_options = cfg.preview;
  deps.seal_file_password = MakeFileKeySealer(file_keys);
  ExportCenterApp* self = app.get();
  deps.metrics_text = [self] { return self->MetricsText(); };
  if (cfg.subscriptions.enabled) {
    store::SubscriptionLedger* ledger = &c.store->subscriptions();
    usecase::SlotRunnerDeps runner;
    runner.ledger = ledger;
    runner.snapshot = [registry = c.registry.get()] { return registry->Current(); };
    runner.create.store = c.store.get();
    runner.create.limits = cfg.limits;
    runner.create.routes = c.source_routes.get();
    runner.create.on_created = [publisher, metrics](const std::string& type) {
      publisher->Wake();
      metrics->TaskCreated(type);
    };
    c.slot_runner = std::make_unique<usecase::CreateSlotRunner>(std::move(runner));
    subscription::SchedulerOptions options;
    options.instance = cfg.instance_id;
    options.catch_up_window_ms = int64_t{cfg.subscriptions.catch_up_window_seconds} * 1000;
    options.max_consecutive_failures = cfg.subscriptions.max_consecutive_failures;
    c.scheduler =
        std::make_unique<subscription::SubscriptionScheduler>(ledger, c.slot_runner.get(), options);
    c.subscriptions = std::make_unique<PeriodicWorker>(
        PeriodicWorker::Options{"subscriptions",
                                std::chrono::milliseconds(cfg.subscriptions.poll_interval_ms),
                                PeriodicWorker::FirstRound::kAtOnce},
        SubscriptionRound(c.scheduler.get(), ledger, &metrics->subscriptions(),
                          cfg.subscriptions.history_days));
    deps.subscriptions.ledger = ledger;
    deps.subscriptions.options = cfg.subscriptions;
    deps.subscriptions.mail = &cfg.mail;
    deps.subscriptions.on_run_now = [worker = c.subscriptions.get()] { worker->Wake(); };
  }
  EC_ASSIGN_OR_RETURN(c.api, api::ExportApi::Create(std::move(deps)));
  // Definitions hot-reload on file change (and on SIGHUP, see commands.cc).
  c.watcher = std::make_unique<registry::ConfigWatcher>(c.registry.get(), cfg.path,
                                                        std::chrono::seconds(2));
  return app;
}

std::string ExportCenterApp::MetricsText() {
  auto gauges = c_->store->ReadGauges();
  if (gauges.ok()) {
    c_->metrics->SetOutboxGauges(gauges->outbox_pending,
                                 static_cast<double>(gauges->outbox_oldest_age_seconds),
                                 gauges->outbox_max_attempt);
    c_->metrics->SetTaskQueueAge(static_cast<double>(gauges->task_queue_age_seconds));
    std::vector<metrics::ExportMetrics::TenantLoad> load;
    for (const auto& t : gauges->tenants) load.push_back({t.tenant_id, t.queued, t.running});
    c_->metrics->SetTenantLoad(load);
  }
  c_->metrics->SetThreadFailures(ThreadFailureCounts());
  // export_storage_bytes is set by the reconciler's sweep: a scrape must not
  // walk the storage (nor, on local storage, delete stale temp files).
  return c_->metrics->Text();
}

Status ExportCenterApp::Start() {
  Components& c = *c_;
  EC_RETURN_IF_ERROR(c.store->Migrate());
  EC_RETURN_IF_ERROR(c.store->CheckGuardRow());

  RaiseFileLimit(config_.server.max_connections);
  http_ = http::NewBeastHttpServer(HttpOptions(config_.server, config_.limits), c.api.get());
  EC_RETURN_IF_ERROR(http_->Start());
  port_ = http_->port();

  if (config_.reconciler.enabled && config_.channel.kind == "embedded") {
    // The embedded channel lost its queue with the previous process.
    c.reconciler->ResendAfterRestart();
  }
  if (config_.consumer.enabled) {
    c.consumer->Start();
    c.dlq->Start();
  }
  if (config_.publisher.enabled) c.publisher->Start();
  if (config_.reconciler.enabled) c.reconciler->Start();
  if (config_.notifications.enabled && !config_.notifications.receivers.empty()) {
    c.notifier->Start();
  }
  if (c.subscriptions) c.subscriptions->Start();
  c.watcher->Start();
  started_ = true;
  spdlog::info("export-center {} started: database {}, channel {}, consumers {}, webhooks {}",
               config_.instance_id, config_.database.kind, config_.channel.kind,
               config_.consumer.enabled ? config_.consumer.concurrency : 0,
               config_.notifications.enabled ? config_.notifications.receivers.size() : 0);
  if (!config_.env_overrides.empty()) {
    std::string names;
    for (const std::string& name : config_.env_overrides)
      names += (names.empty() ? "" : ", ") + name;
    spdlog::info("settings from the environment: {}", names);
  }
  return Status::Ok();
}

void ExportCenterApp::Stop() {
  if (!started_) return;
  started_ = false;
  Components& c = *c_;
  c.watcher->Stop();
  // Stop claiming first; running exports get their grace period.
  c.consumer->Stop();
  c.publisher->Stop();
  c.reconciler->Stop();
  c.channel->Close();
  c.dlq->Stop();
  c.notifier->Stop();
  if (c.subscriptions) c.subscriptions->Stop();
  http_->Stop();
  spdlog::info("export-center {} stopped", config_.instance_id);
}

Status ExportCenterApp::ReloadRegistry() { return c_->registry->Reload(config_.path); }

std::string ExportCenterApp::FilePathOf(const std::string& task_id) const {
  auto id = ParseId(task_id);
  if (!id) return "";
  auto task = c_->store->GetTask(*id);
  if (!task.ok() || !task->object_key) return "";
  return std::filesystem::absolute(std::filesystem::path(config_.storage.root) / *task->object_key)
      .string();
}

}  // namespace export_center::app
