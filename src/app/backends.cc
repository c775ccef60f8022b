#include "app/backends.h"

#include <algorithm>
#include <set>

#include "dispatch/embedded_command_channel.h"
#include "http/httplib/httplib_http_client.h"
#include "render/writer.h"
#include "render/xlsx_template_writer.h"
#include "source/provider/provider_batch_source.h"
#include "source/sql/datasource/sqlite/sqlite_datasource.h"
#include "source/sql/sql_contract_client.h"
#include "source/sql/sql_template_source.h"
#include "storage/local_export_storage.h"
#include "store/sqlite/sqlite_task_store.h"
#ifdef EXPORT_CENTER_WITH_POSTGRES
#include "source/sql/datasource/postgres/postgres_datasource.h"
#include "store/postgres/postgres_task_store.h"
#endif
#ifdef EXPORT_CENTER_WITH_MYSQL
#include "source/sql/datasource/mysql/mysql_datasource.h"
#include "store/mysql/mysql_task_store.h"
#endif
#ifdef EXPORT_CENTER_WITH_S3
#include "storage/s3/s3_export_storage.h"
#endif
#ifdef EXPORT_CENTER_WITH_ROCKETMQ
#include "dispatch/rocketmq/rocketmq_command_channel.h"
#include "dispatch/rocketmq/rocketmq_setup.h"
#endif

namespace export_center::app {

StatusOr<std::unique_ptr<store::TaskStore>> OpenTaskStore(const store::DatabaseOptions& config) {
  if (config.kind == "sqlite") return store::OpenSqliteTaskStore(config.sqlite.path);
  [[maybe_unused]] const store::SessionTimeouts timeouts{config.connect_timeout_ms,
                                                         config.statement_timeout_ms};
#ifdef EXPORT_CENTER_WITH_POSTGRES
  if (config.kind == "postgres") {
    return store::OpenPostgresTaskStore(config.postgres.url, config.pool_size, timeouts);
  }
#endif
#ifdef EXPORT_CENTER_WITH_MYSQL
  if (config.kind == "mysql") {
    return store::OpenMysqlTaskStore(config.mysql.url, config.pool_size, timeouts,
                                     config.mysql.tls);
  }
#endif
  std::string built_in = "sqlite";
#ifdef EXPORT_CENTER_WITH_POSTGRES
  built_in += ", postgres";
#endif
#ifdef EXPORT_CENTER_WITH_MYSQL
  built_in += ", mysql";
#endif
  return InvalidArgument("database.kind: " + config.kind +
                         " is not built in; allowed: " + built_in);
}

StatusOr<std::unique_ptr<storage::ExportStorage>> OpenExportStorage(
    const storage::StorageOptions& config) {
  if (config.kind == "local") return storage::NewLocalExportStorage(config.root);
#ifdef EXPORT_CENTER_WITH_S3
  if (config.kind == "s3") {
    return storage::NewS3ExportStorage(config.s3, http::HttplibClientFactory());
  }
#endif
  return InvalidArgument("storage.kind: " + config.kind + " is not built in; allowed: local" +
#ifdef EXPORT_CENTER_WITH_S3
                         ", s3"
#else
                         ""
#endif
  );
}

StatusOr<std::unique_ptr<dispatch::CommandChannel>> OpenCommandChannel(
    const dispatch::ChannelOptions& config) {
  if (config.kind == "embedded") return dispatch::NewEmbeddedCommandChannel(config.delivery_limit);
#ifdef EXPORT_CENTER_WITH_ROCKETMQ
  if (config.kind == "rocketmq") return dispatch::NewRocketMqCommandChannel(config);
#endif
  return InvalidArgument("channel.kind: " + config.kind + " is not built in; allowed: embedded" +
#ifdef EXPORT_CENTER_WITH_ROCKETMQ
                         ", rocketmq"
#else
                         ""
#endif
  );
}

Status InitCommandChannel(const dispatch::ChannelOptions& config,
                          const std::function<void(const std::string&)>& report) {
#ifdef EXPORT_CENTER_WITH_ROCKETMQ
  if (config.kind == "rocketmq") return dispatch::InitRocketMq(config, report);
#endif
  return InvalidArgument("channel.kind is " + config.kind +
                         ": only a rocketmq channel has topics and groups to create");
}

StatusOr<std::string> CheckExportStorage(const storage::StorageOptions& config) {
  if (config.kind == "local") return storage::CheckLocalExportRoot(config.root);
#ifdef EXPORT_CENTER_WITH_S3
  if (config.kind == "s3") {
    return storage::CheckS3ExportStorage(config.s3, http::HttplibClientFactory());
  }
#endif
  return OpenExportStorage(config).status();  // the opener's "not built in"
}

StatusOr<std::string> CheckCommandChannel(const dispatch::ChannelOptions& config) {
  if (config.kind == "embedded") return std::string("embedded: in this process, nothing to reach");
#ifdef EXPORT_CENTER_WITH_ROCKETMQ
  if (config.kind == "rocketmq") return dispatch::CheckRocketMq(config);
#endif
  return OpenCommandChannel(config).status();  // the opener's "not built in"
}

StatusOr<std::shared_ptr<source::ReadOnlyDatasource>> OpenDatasource(
    const source::DatasourceOptions& ds) {
  const source::DatasourceTimeouts timeouts{ds.connect_timeout_ms, ds.statement_timeout_ms};
  if (ds.kind == "sqlite") {
    return std::shared_ptr(source::NewSqliteDatasource(ds.sqlite_path, timeouts));
  }
#ifdef EXPORT_CENTER_WITH_POSTGRES
  if (ds.kind == "postgres") {
    return std::shared_ptr(source::NewPostgresDatasource(ds.url, timeouts));
  }
#endif
#ifdef EXPORT_CENTER_WITH_MYSQL
  if (ds.kind == "mysql") {
    EC_ASSIGN_OR_RETURN(auto mysql, source::NewMysqlDatasource(ds.url, timeouts, ds.tls));
    return std::shared_ptr<source::ReadOnlyDatasource>(std::move(mysql));
  }
#endif
  return InvalidArgument("datasource " + ds.name + ": kind " + ds.kind + " is not built in");
}

namespace {

StatusOr<std::unique_ptr<source::RowSource>> MakeSqlTemplateSource(
    http::HttpClientFactory* http, const source::ProviderClientOptions& client,
    metrics::ExportMetrics* metrics, const PinContractVersionFn& pin,
    const std::map<std::string, source::DatasourceOptions>& datasources, const task::Task& task,
    const registry::ExportDefinition& def, const registry::RegistrySnapshot& snapshot) {
  const registry::ProviderService* service = snapshot.FindService(def.service);
  if (service == nullptr) {
    return InvalidArgument("export type " + def.name + ": service " + def.service +
                           " is not in the allow-list");
  }
  auto ds = datasources.find(def.datasource);
  if (ds == datasources.end()) {
    return InvalidArgument("export type " + def.name + ": datasource " + def.datasource +
                           " is not configured");
  }
  EC_ASSIGN_OR_RETURN(auto datasource, OpenDatasource(ds->second));
  source::SqlContractClientOptions c{
      *service,
      def.query_id,
      client,
      "taskId=" + std::to_string(task.id) + " exportType=" + def.name,
      /*on_call=*/nullptr,
      registry::LanguagesFor(def, task)};
  if (metrics != nullptr) {
    // A contract call is the sql-template route's provider call: same metrics.
    c.on_call = [metrics, name = service->name, type = def.name](int64_t ms, StatusCode code) {
      metrics->ProviderRequest(name, type, static_cast<double>(ms) / 1000);
      if (code != StatusCode::kOk) metrics->ProviderFailure(name, type);
    };
  }
  source::SqlTemplateSourceOptions options =
      source::MakeSqlTemplateSourceOptions(def, task, source::RegisteredQueryIds(snapshot));
  if (pin) {
    options.pin_contract_version = [pin, task](const std::string& version) {
      return pin(task, version);
    };
  }
  return source::NewSqlTemplateSource(options, source::NewHttpSqlContractClient(c, http),
                                      std::move(datasource));
}

}  // namespace

attempt::RowSourceFactory MakeRowSourceFactory(
    http::HttpClientFactory* http, const source::ProviderClientOptions& client,
    metrics::ExportMetrics* metrics,
    const std::map<std::string, source::DatasourceOptions>& datasources,
    PinContractVersionFn pin_contract_version) {
  return [http, client, metrics, datasources, pin = std::move(pin_contract_version)](
             const task::Task& task, const registry::ExportDefinition& def,
             const registry::RegistrySnapshot& snapshot)
             -> StatusOr<std::unique_ptr<source::RowSource>> {
    if (def.source == registry::SourceKind::kSqlTemplate) {
      return MakeSqlTemplateSource(http, client, metrics, pin, datasources, task, def, snapshot);
    }
    const registry::ProviderService* service = snapshot.FindService(def.service);
    if (service == nullptr) {
      return InvalidArgument("export type " + def.name + ": provider service " + def.service +
                             " is not in the allow-list");
    }
    source::ProviderBatchOptions options =
        source::MakeProviderBatchOptions(*service, def, task, client);
    if (metrics != nullptr) {
      options.on_batch = [metrics, name = service->name](const source::ProviderBatchStats& s) {
        metrics->ProviderRequest(name, s.export_type, static_cast<double>(s.duration_ms) / 1000);
        if (s.code != StatusCode::kOk) metrics->ProviderFailure(name, s.export_type);
      };
    }
    return source::NewProviderBatchSource(options, http);
  };
}

attempt::RowSourceFactory MakePreviewSourceFactory(
    http::HttpClientFactory* http, const source::ProviderClientOptions& config,
    metrics::ExportMetrics* metrics,
    const std::map<std::string, source::DatasourceOptions>& datasources, int timeout_seconds) {
  // One second past the preview's own limit: the caller's clear "did not
  // finish" answer comes first, and the read still under way ends soon after.
  const int cap_ms = timeout_seconds * 1000 + 1000;
  source::ProviderClientOptions capped = config;
  capped.connect_timeout_ms = std::min(config.connect_timeout_ms, cap_ms);
  capped.read_timeout_ms = std::min(config.read_timeout_ms, cap_ms);
  // The same cap for each replica statement; a preview that answers at its
  // limit cancels its statement anyway (export_preview.h).
  std::map<std::string, source::DatasourceOptions> capped_datasources = datasources;
  for (auto& [name, ds] : capped_datasources) {
    ds.connect_timeout_ms = std::min(ds.connect_timeout_ms, cap_ms);
    ds.statement_timeout_ms = std::min(ds.statement_timeout_ms, cap_ms);
  }
  return MakeRowSourceFactory(
      http, capped, metrics, capped_datasources,
      [](const task::Task&, const std::string& version) { return StatusOr<std::string>(version); });
}

namespace {

class SourceRoutesOverSources final : public usecase::SourceRoutes {
 public:
  SourceRoutesOverSources(http::HttpClientFactory* http,
                          const source::ProviderClientOptions& config,
                          attempt::ExportPreviewer* previewer)
      : http_(http), quick_(config), previewer_(previewer) {
    // Create must stay fast even when the business service is slow: a short
    // timeout, and the create treats a failure as "no version recorded".
    quick_.connect_timeout_ms = std::min(config.connect_timeout_ms, 1000);
    quick_.read_timeout_ms = std::min(config.read_timeout_ms, 2000);
  }

  StatusOr<std::optional<std::string>> ContractVersionAtCreate(
      const registry::ExportDefinition& def, const registry::RegistrySnapshot& snapshot,
      const std::string& parameters_json, const identity::Principal& owner) override {
    if (def.source != registry::SourceKind::kSqlTemplate) return std::optional<std::string>();
    const registry::ProviderService* service = snapshot.FindService(def.service);
    if (service == nullptr) return InvalidArgument("service " + def.service + " is not allowed");
    EC_ASSIGN_OR_RETURN(auto params, source::TemplateParameters(parameters_json, owner.tenant,
                                                                owner.app, owner.user));
    auto client = source::NewHttpSqlContractClient(
        {*service, def.query_id, quick_, "at create", /*on_call=*/nullptr}, http_);
    EC_ASSIGN_OR_RETURN(std::string version, client->GetVersion(params));
    return std::optional<std::string>(std::move(version));
  }

  StatusOr<task::PreviewTable> Preview(
      const task::Task& task, std::shared_ptr<const registry::RegistrySnapshot> snapshot) override {
    return previewer_->Preview(task, std::move(snapshot));
  }

 private:
  http::HttpClientFactory* const http_;
  source::ProviderClientOptions quick_;
  attempt::ExportPreviewer* const previewer_;
};

}  // namespace

std::unique_ptr<usecase::SourceRoutes> MakeSourceRoutes(http::HttpClientFactory* http,
                                                        const source::ProviderClientOptions& config,
                                                        attempt::ExportPreviewer* previewer) {
  return std::make_unique<SourceRoutesOverSources>(http, config, previewer);
}

attempt::WriterFactory MakeWriterFactory() {
  // The options carry the definition's file keys (template-file, split,
  // csv-gzip) and a password-protected file's key material; render::NewWriter
  // picks the writer, render::OutputKindFor names the file it makes.
  return [](task::FileFormat format, ByteSink* sink,
            const render::WriterOptions& options) -> StatusOr<std::unique_ptr<render::Writer>> {
    return render::NewWriter(format, sink, options);
  };
}

config::TemplateInspector MakeTemplateInspector() {
  return [](std::string_view bytes) -> StatusOr<config::TemplateInfo> {
    EC_ASSIGN_OR_RETURN(render::XlsxTemplateInfo info, render::InspectXlsxTemplate(bytes));
    return config::TemplateInfo{std::move(info.single_values), render::XlsxTemplateBuiltins()};
  };
}

}  // namespace export_center::app
