#pragma once
// Provider SDK: serve the export center's cursor-batch contract
// (docs/provider-contract.md) from a business service.
//
//   POST /internal/exports/v1/{TYPE}/batches
//   X-Internal-Service-Token: <token>
//   {taskId, tenantId, appCode, requestedBy, dispatchVersion, parameters,
//    cursor, snapshotToken, limit}
//   -> {"code":"200","message":"success","data":{schemaVersion, schemaHash,
//       snapshotToken, columns, rows, nextCursor, hasMore, totalRows}}
//
// A business service implements one BatchProvider per export type and calls
// RegisterBatchProviders on its httplib::Server. The SDK checks the token in
// constant time, parses the request strictly, routes by type, computes the
// schemaHash from Columns() and writes the envelope; the provider only reads
// data. The SDK depends on nothing of the center: a business service needs
// only sdk/, cpp-httplib, nlohmann_json and OpenSSL.
//
// Provider duties the SDK cannot check: filter by request.tenant_id and
// request.app_code (never by tenant fields in parameters), narrow MERCHANT
// requests to request.requested_by's data scope, stay read-only.

#include <httplib.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sdk/refusal_log.h"
#include "sdk/row_writer.h"
#include "sdk/secret_check.h"
#include "sdk/snapshot_token.h"
#include "sdk/wire_values.h"

namespace export_center::sdk {

inline constexpr char kTokenHeader[] = "X-Internal-Service-Token";
inline constexpr char kBatchPathPrefix[] = "/internal/exports/v1/";

struct BatchRequest {
  std::string export_type;  // from the path
  int64_t task_id = 0;
  std::string tenant_id;
  std::string app_code;  // PLATFORM | MERCHANT
  std::string requested_by;
  int64_t dispatch_version = 1;
  nlohmann::json parameters = nlohmann::json::object();
  std::optional<std::string> cursor;          // null on the first batch
  std::optional<std::string> snapshot_token;  // null on the first batch
  int limit = 500;                            // at most this many rows
};

struct BatchResponse {
  std::optional<std::string> snapshot_token;  // set on the first batch
  std::vector<nlohmann::json> rows;           // objects keyed by column key
  // The cheaper way (row_writer.h): the rows written straight as JSON text
  // over Columns(). When set, `rows` must stay empty.
  std::optional<RowWriter> written;
  std::optional<std::string> next_cursor;  // required when has_more
  bool has_more = false;
  std::optional<int64_t> total_rows;  // estimate for progress; may be omitted
};

// A refusal. `code` is the envelope code and HTTP status: 400 bad parameters
// or snapshot token, 403 not allowed, 404 unknown, 500/503 transient.
struct ProviderError {
  int code = 400;
  std::string message;
};

// Either a value or a ProviderError.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}              // NOLINT: implicit by design
  Result(ProviderError error) : v_(std::move(error)) {}  // NOLINT: implicit by design
  bool ok() const { return std::holds_alternative<T>(v_); }
  const T& value() const { return std::get<T>(v_); }
  T& value() { return std::get<T>(v_); }
  const ProviderError& error() const { return std::get<ProviderError>(v_); }

 private:
  std::variant<T, ProviderError> v_;
};

// One export type. Fetch may be called from several server threads at once.
class BatchProvider {
 public:
  virtual ~BatchProvider() = default;
  virtual std::string ExportType() const = 0;  // e.g. CUSTOMER_LIST
  virtual std::vector<Column> Columns() const = 0;
  // Reads at most request.limit rows after request.cursor. Read-only.
  virtual Result<BatchResponse> Fetch(const BatchRequest& request) = 0;
};

struct ProviderServerOptions {
  size_t max_request_bytes = 64 * 1024;
  int max_limit = 5000;
  // Where refused calls (missing or wrong token) are logged, at most one line
  // per 10 s (RefusalLog); null: stderr.
  RefusalLog::Sink refusal_log;
};

// Routes POST /internal/exports/v1/{TYPE}/batches on `server` to the provider
// whose ExportType() is TYPE. Throws std::invalid_argument, before routing
// anything, when `token` is empty, shorter than kMinInternalTokenBytes or an
// unresolved `${...}` placeholder (RequireSecret). Also turns on TCP_NODELAY,
// which batch round trips need, and keeps a connection open for many batches
// (the center reuses one per export).
void RegisterBatchProviders(httplib::Server& server, std::string token,
                            std::vector<std::shared_ptr<BatchProvider>> providers,
                            ProviderServerOptions options = {});

// Keep-alive for the center's calls: many requests per connection, idle
// connections closed after a few seconds (each holds a server thread).
// RegisterBatchProviders and RegisterSqlScenarios call it.
inline constexpr size_t kKeepAliveRequests = 10000;
inline constexpr time_t kKeepAliveSeconds = 5;
void KeepConnections(httplib::Server& server);

// Exposed for tests and for services with their own router.
bool TokenMatches(std::string_view expected, std::string_view given);
// The check both contracts make first: true when `req` carries `token`;
// otherwise answers 401, logs the refusal to `log` (method, path, peer, and
// whether the header was missing or wrong, never its value) and returns false.
bool AdmitCaller(std::string_view token, const httplib::Request& req, httplib::Response& res,
                 RefusalLog& log);
Result<BatchRequest> ParseBatchRequest(std::string_view export_type, std::string_view body,
                                       int max_limit);
std::string SuccessEnvelope(const std::vector<Column>& columns, const BatchRequest& request,
                            const BatchResponse& response);
std::string ErrorEnvelope(int code, std::string_view message);

}  // namespace export_center::sdk
