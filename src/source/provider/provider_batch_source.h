#pragma once
// ProviderBatchSource: the provider route (docs/provider-contract.md).
//
// Pulls an export's rows from a business service in cursor batches:
//   POST {base_url}{path}   X-Internal-Service-Token: <token>
//   {taskId, tenantId, appCode, requestedBy, dispatchVersion, parameters,
//    cursor, snapshotToken, limit}
// and expects the envelope {code, message, data} whose data is
//   {schemaVersion, schemaHash, snapshotToken, columns[], rows[], nextCursor,
//    hasMore, totalRows}.
//
// Every answer is treated as untrusted input. Error classes:
//   Unavailable       connection errors, timeouts, HTTP 5xx / 408 / 429,
//                     envelope code 5xx, hasMore with a missing or
//                     non-advancing nextCursor (transient: retry the attempt).
//   PermissionDenied  HTTP or envelope 401/403 (token rejected).
//   NotFound          HTTP or envelope 404 (no such export type).
//   InvalidArgument   other 4xx, malformed envelope or data, a body over the
//                     size limit, a schemaHash or column change, a cell that
//                     does not parse (naming row, column and value).
//   LimitExceeded     the export would pass max_rows.
// Not thread-safe: one attempt, one thread (RowSource contract).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "http/http_client.h"
#include "registry/export_definition.h"
#include "source/options.h"
#include "source/row_source.h"
#include "task/language.h"

namespace export_center::source {

// What one batch call cost; handed to the optional metrics hook.
struct ProviderBatchStats {
  std::string export_type;
  int64_t duration_ms = 0;
  int64_t response_bytes = 0;
  int rows = 0;
  StatusCode code = StatusCode::kOk;
};

struct ProviderBatchOptions {
  registry::ProviderService service;  // base_url and internal_token
  std::string path;                   // e.g. /internal/exports/v1/CUSTOMER_LIST/batches
  std::string export_type;            // for logs and metrics

  // The task the attempt serves.
  int64_t task_id = 0;
  std::string tenant_id;
  task::AppCode app_code = task::AppCode::kPlatform;
  std::string requested_by;
  int32_t dispatch_version = 1;
  std::string parameters_json = "{}";
  // The language of the columns' titles and labels (task/language.h): the
  // task's locale and the definition's default language.
  task::Languages languages{};

  int batch_size = 500;       // `limit` of each call; more rows is a provider error
  int64_t max_rows = 200000;  // the export fails before passing this many rows
  ProviderClientOptions client;

  // Optional: called once per batch call, on the calling thread.
  std::function<void(const ProviderBatchStats&)> on_batch;
};

// Builds the options for one attempt from the registry entry and the task.
ProviderBatchOptions MakeProviderBatchOptions(const registry::ProviderService& service,
                                              const registry::ExportDefinition& definition,
                                              const task::Task& task,
                                              const ProviderClientOptions& client);

// Same, with the attempt's batch size and row cap taken from `request`
// (REQUIRES: request.task is set).
ProviderBatchOptions MakeProviderBatchOptions(const registry::ProviderService& service,
                                              const registry::ExportDefinition& definition,
                                              const SourceRequest& request,
                                              const ProviderClientOptions& client);

// Returns a source that performs no I/O until the first NextPage. Its calls
// go through a client `http` opens for the service's base URL (not owned;
// REQUIRES: outlives the source): app/ hands the real one, tests a scripted
// fake (tests/fakes/scripted_http_client.h) or the real one on a local server.
std::unique_ptr<RowSource> NewProviderBatchSource(const ProviderBatchOptions& options,
                                                  http::HttpClientFactory* http);

}  // namespace export_center::source
