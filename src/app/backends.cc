#include "app/backends.h"

#include "dispatch/embedded_command_channel.h"
#include "render/csv_writer.h"
#include "render/xlsx_writer.h"
#include "source/provider_batch_source.h"
#include "storage/local_export_storage.h"
#include "store/sqlite/sqlite_task_store.h"
#ifdef EXPORT_CENTER_WITH_POSTGRES
#include "store/postgres/postgres_task_store.h"
#endif

namespace export_center::app {

StatusOr<std::unique_ptr<store::TaskStore>> OpenTaskStore(const config::DatabaseConfig& config) {
  if (config.kind == "sqlite") return store::OpenSqliteTaskStore(config.sqlite_path);
#ifdef EXPORT_CENTER_WITH_POSTGRES
  if (config.kind == "postgres") {
    return store::OpenPostgresTaskStore(config.postgres_url, config.pool_size);
  }
#endif
  return InvalidArgument("database.kind: " + config.kind + " is not built in; allowed: sqlite" +
#ifdef EXPORT_CENTER_WITH_POSTGRES
                         ", postgres"
#else
                         ""
#endif
  );
}

StatusOr<std::unique_ptr<storage::ExportStorage>> OpenExportStorage(
    const config::StorageConfig& config) {
  if (config.kind == "local") return storage::NewLocalExportStorage(config.root);
  return InvalidArgument("storage.kind: " + config.kind + " is not supported; allowed: local");
}

StatusOr<std::unique_ptr<dispatch::CommandChannel>> OpenCommandChannel(
    const config::ChannelConfig& config) {
  if (config.kind == "embedded") return dispatch::NewEmbeddedCommandChannel(config.delivery_limit);
  return InvalidArgument("channel.kind: " + config.kind + " is not supported; allowed: embedded");
}

dispatch::RowSourceFactory MakeRowSourceFactory(const config::ProviderClientConfig& client,
                                                metrics::ExportMetrics* metrics) {
  return [client, metrics](const task::Task& task, const registry::ExportDefinition& def,
                  const registry::RegistrySnapshot& snapshot)
             -> StatusOr<std::unique_ptr<source::RowSource>> {
    if (def.source != registry::SourceKind::kProvider) {
      return InvalidArgument("export type " + def.name + ": source sql-template is not available yet");
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
    return source::NewProviderBatchSource(options);
  };
}

dispatch::WriterFactory MakeWriterFactory() {
  return [](task::FileFormat format, ByteSink* sink, const render::WriterOptions& options)
             -> StatusOr<std::unique_ptr<render::Writer>> {
    switch (format) {
      case task::FileFormat::kXlsx: return render::NewXlsxWriter(sink, options);
      case task::FileFormat::kCsv: return render::NewCsvWriter(sink, options);
    }
    return InvalidArgument("unknown file format");
  };
}

}  // namespace export_center::app
