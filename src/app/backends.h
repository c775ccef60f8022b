#pragma once
// The one file that names concrete backends
// (docs/conventions.md#backends-are-named-only-in-app). Each Open*/Check*
// maps its section's `kind` to a backend factory, one `if` per kind:
// database sqlite|postgres|mysql, storage local|s3, channel
// embedded|rocketmq, datasource sqlite|postgres|mysql. A kind this build
// leaves out (EXPORT_CENTER_WITH_POSTGRES, _MYSQL, _S3, _ROCKETMQ OFF) is
// InvalidArgument ("... is not built in"). Per task, the row-source factory
// picks provider or sql-template by the definition's `source`, and the writer
// factory switches on the format: xlsx (metadata layout, template fill or
// split zip by the definition's keys) or csv (gzip inside).

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "attempt/export_attempt.h"
#include "attempt/export_preview.h"
#include "config/registry_yaml.h"
#include "dispatch/command_channel.h"
#include "dispatch/options.h"
#include "http/http_client.h"
#include "metrics/metrics.h"
#include "source/options.h"
#include "storage/export_storage.h"
#include "storage/storage_options.h"
#include "store/database_options.h"
#include "store/task_store.h"
#include "usecase/source_routes.h"

namespace export_center::source {
class ReadOnlyDatasource;  // source/sql/datasource/read_only_datasource.h
}  // namespace export_center::source

namespace export_center::app {

StatusOr<std::unique_ptr<store::TaskStore>> OpenTaskStore(const store::DatabaseOptions& config);
StatusOr<std::unique_ptr<storage::ExportStorage>> OpenExportStorage(
    const storage::StorageOptions& config);
StatusOr<std::unique_ptr<dispatch::CommandChannel>> OpenCommandChannel(
    const dispatch::ChannelOptions& config);
// `export-center check`: whether the configured storage and command channel
// would work, changing nothing (but the one marker object an S3 check writes
// and deletes: storage::CheckS3ExportStorage). A line saying what was found;
// the backend's error otherwise. A local root that does not exist yet is
// not created.
StatusOr<std::string> CheckExportStorage(const storage::StorageOptions& config);
// embedded: nothing to reach. rocketmq: dispatch::CheckRocketMq.
StatusOr<std::string> CheckCommandChannel(const dispatch::ChannelOptions& config);
// The read-only datasource `ds` names (config `datasources:`); no I/O yet
// for sqlite and postgres, a connect for mysql.
StatusOr<std::shared_ptr<source::ReadOnlyDatasource>> OpenDatasource(
    const source::DatasourceOptions& ds);
// `export-center rocketmq init`: creates the channel's topics and groups on the
// cluster `config` names (docs/deploy.md#export-center-rocketmq-init), printing
// a line per step to `report`. InvalidArgument unless channel.kind is rocketmq
// (and the build has it).
Status InitCommandChannel(const dispatch::ChannelOptions& config,
                          const std::function<void(const std::string&)>& report);
// `metrics` may be null. `datasources` are the read-only databases the
// sql-template route may page (config `datasources:`).
// `pin_contract_version(task, version)` records a sql-template task's
// contract version at its first attempt when create could not
// (store::TaskStore::PinContractVersion); may be empty for provider-only use.
using PinContractVersionFn =
    std::function<StatusOr<std::string>(const task::Task&, const std::string&)>;
// The sources' calls to business services go through clients `http` opens
// (not owned; REQUIRES: outlives every source made), here and below.
attempt::RowSourceFactory MakeRowSourceFactory(
    http::HttpClientFactory* http, const source::ProviderClientOptions& config,
    metrics::ExportMetrics* metrics,
    const std::map<std::string, source::DatasourceOptions>& datasources = {},
    PinContractVersionFn pin_contract_version = {});
// The row sources of previews (attempt::ExportPreviewer): MakeRowSourceFactory
// with the same config, its client timeouts capped at `timeout_seconds` + 1 s, and
// a sql-template contract version taken as is — a preview has no task to pin
// it on, and a version can only be stale against an earlier one.
attempt::RowSourceFactory MakePreviewSourceFactory(
    http::HttpClientFactory* http, const source::ProviderClientOptions& config,
    metrics::ExportMetrics* metrics,
    const std::map<std::string, source::DatasourceOptions>& datasources, int timeout_seconds);
// The use cases' SourceRoutes (usecase/source_routes.h) over the two routes:
// a sql-template type's contract version fetched at create
// (POST /dispatch/version, short timeouts; nullopt for provider types), and
// the preview read by `previewer` (not owned; outlives the routes), whose
// sources MakePreviewSourceFactory caps.
std::unique_ptr<usecase::SourceRoutes> MakeSourceRoutes(http::HttpClientFactory* http,
                                                        const source::ProviderClientOptions& config,
                                                        attempt::ExportPreviewer* previewer);
attempt::WriterFactory MakeWriterFactory();
// Checks a definition's XLSX template with the template writer's own reader,
// so a template it could not fill is refused when the registry is read.
config::TemplateInspector MakeTemplateInspector();

}  // namespace export_center::app
