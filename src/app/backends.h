#pragma once
// The only place that names concrete backends (STYLE §4, §5): config strings
// (sqlite|postgres, embedded, local, provider, xlsx|csv) map to factories in a
// plain switch.

#include <memory>

#include "config/config.h"
#include "dispatch/command_channel.h"
#include "dispatch/export_attempt.h"
#include "metrics/metrics.h"
#include "storage/export_storage.h"
#include "store/task_store.h"

namespace export_center::app {

StatusOr<std::unique_ptr<store::TaskStore>> OpenTaskStore(const config::DatabaseConfig& config);
StatusOr<std::unique_ptr<storage::ExportStorage>> OpenExportStorage(
    const config::StorageConfig& config);
StatusOr<std::unique_ptr<dispatch::CommandChannel>> OpenCommandChannel(
    const config::ChannelConfig& config);
// `metrics` may be null.
dispatch::RowSourceFactory MakeRowSourceFactory(const config::ProviderClientConfig& config,
                                                metrics::ExportMetrics* metrics);
dispatch::WriterFactory MakeWriterFactory();

}  // namespace export_center::app
