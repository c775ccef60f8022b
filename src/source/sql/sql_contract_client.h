#pragma once
// SqlContractClient: the center's side of the SQL contract
// (docs/sql-template-route.md#contract).
//
//   POST {base_url}/dispatch/sql|count|version|enrich?queryId=Q
//   X-Internal-Service-Token: <token>
//   body: the parameters object (enrich: {keyColumn, keys, columns, parameters})
//   -> {"code":"200","message":"success","data": …}
//
// Error classes (docs/sql-template-route.md#error-classes):
//   NotFound          HTTP/envelope 404: the scenario is not registered (terminal).
//   PermissionDenied  HTTP/envelope 401/403: token rejected (terminal; a
//                     security log line is written).
//   Unavailable       connection errors, timeouts, HTTP/envelope 5xx, 408, 429.
//   InvalidArgument   other 4xx, malformed envelope or data.
// Thread-safety: one client per attempt, one thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "http/http_client.h"
#include "registry/export_definition.h"
#include "source/options.h"
#include "task/language.h"
#include "task/table.h"

namespace export_center::source {

// One column of the contract: the typed column plus the enrichment flags.
struct ContractColumn {
  task::Column column;
  bool enrich = false;      // filled after the query, by callback or enrich SQL
  bool key_column = false;  // its values are the keys handed to the callback
  bool critical = false;    // an enrichment failure fails the task
};

// Enrichment by SQL (docs/sql-template-route.md#enrichment): one SELECT per
// group, rendered with the task's parameters plus `keys` (the distinct key
// values of the page), returning a column named `keyColumn` and the enriched
// columns it covers.
struct EnrichSqlDef {
  std::string group;
  std::string key_column;            // a column of the main query
  std::string sql;                   // template text
  std::vector<std::string> columns;  // enriched column keys it fills
};

struct SqlContract {
  std::string sql_template;
  std::vector<ContractColumn> columns;
  std::string order_by;
  // Result columns whose values together are unique in every result: pages
  // then seek past the last row instead of counting an OFFSET
  // (docs/sql-template-route.md#paging). Empty: none declared.
  std::vector<std::string> unique_key;
  std::string tenant;
  std::string schema;
  std::string version;         // int or string on the wire, kept as text
  std::string template_type;   // METADATA | EXCEL_TEMPLATE
  std::string excel_template;  // decoded bytes; empty unless EXCEL_TEMPLATE
  nlohmann::json param_schema;
  bool support_count_for_list = false;
  bool support_version = false;
  bool need_enrich = false;
  std::vector<EnrichSqlDef> enrich_sqls;

  std::vector<task::Column> TaskColumns() const;
};

// Parses the `data` of /dispatch/sql. InvalidArgument names the bad field
// (a column's options name the column). The columns' titles and labels are
// chosen in `languages` (task/language.h).
StatusOr<SqlContract> ParseSqlContract(const nlohmann::json& data,
                                       const task::Languages& languages = {});

struct EnrichRequest {
  std::string key_column;
  std::vector<nlohmann::json> keys;  // distinct, in first-seen order
  std::vector<std::string> columns;  // enriched column keys wanted
  nlohmann::json parameters;
};

class SqlContractClient {
 public:
  virtual ~SqlContractClient() = default;
  virtual StatusOr<SqlContract> GetSqlTemplate(const nlohmann::json& params) = 0;
  virtual StatusOr<int64_t> CountForList(const nlohmann::json& params) = 0;
  virtual StatusOr<std::string> GetVersion(const nlohmann::json& params) = 0;
  // One object per key, aligned by index; a length mismatch is InvalidArgument.
  virtual StatusOr<std::vector<nlohmann::json>> Enrich(const EnrichRequest& request) = 0;
};

struct SqlContractClientOptions {
  registry::ProviderService service;  // base_url and internal_token
  std::string query_id;
  ProviderClientOptions client;
  std::string log_context;  // "taskId=… exportType=…" for log lines
  // Called after every /dispatch/* call, success or not, with its duration
  // and outcome; app/ feeds the provider call metrics with it
  // (docs/observability.md#metrics). May be empty.
  std::function<void(int64_t duration_ms, StatusCode code)> on_call;
  // The language of the contract's titles and labels: the task's locale and
  // the definition's default language.
  task::Languages languages{};
};

// Its calls go through one client `http` opens for the service's base URL
// (not owned; REQUIRES: outlives the contract client): app/ hands the real
// one, tests a scripted fake (tests/fakes/scripted_http_client.h) or the real
// one on a local server.
std::unique_ptr<SqlContractClient> NewHttpSqlContractClient(const SqlContractClientOptions& options,
                                                            http::HttpClientFactory* http);

}  // namespace export_center::source
