#pragma once
// SQL contract SDK: serve the export center's sql-template route
// (docs/sql-template-route.md) from a business service.
//
//   POST /dispatch/sql?queryId=Q       body: parameters  -> data: SqlTemplateResult
//   POST /dispatch/count?queryId=Q     body: parameters  -> data: list count
//   POST /dispatch/version?queryId=Q   body: parameters  -> data: contract version
//   POST /dispatch/enrich?queryId=Q    body: {keyColumn, keys, columns, parameters}
//                                      -> data: one object per key, aligned by index
//   X-Internal-Service-Token: <token>; answers {"code":"200","message":…,"data":…}
//
// A business service implements one SqlScenario per queryId (what a Java
// service would declare as @Scenario beans) and calls RegisterSqlScenarios
// once; the SDK checks the token, routes by queryId and writes envelopes.
// Unknown queryId → 404 (terminal at the center), bad token → 401 (terminal +
// security alert), an exception or 5xx error from the scenario → 500 (the
// center retries).
//
// The parameters the center sends are the task's parameter snapshot plus
// tenantId, appCode and requestedBy set by the center from the task; the
// template must filter by #{tenantId} itself (the business side owns the SQL
// and its permission scope; docs/guarantees.md#tenant-isolation).

#include <httplib.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sdk/provider_server.h"
#include "sdk/wire_values.h"

namespace export_center::sdk {

inline constexpr char kDispatchPathPrefix[] = "/dispatch/";

struct SqlColumn {
  Column column;
  bool enrich = false;      // filled after the query (callback or enrich SQL)
  bool key_column = false;  // its values are the enrich callback's keys
  bool critical = false;    // an enrichment failure fails the export
};

// Enrichment by SQL (docs/sql-template-route.md#enrichment): a SELECT rendered
// with the parameters plus `keys`, returning `key_column` and the enriched
// `columns` it fills.
struct EnrichSqlDef {
  std::string group;
  std::string key_column;
  std::string sql;
  std::vector<std::string> columns;
};

struct SqlTemplateResult {
  // MyBatis <script> or plain SQL with #{} / ${}. ${} may read only values a
  // user cannot choose (server-bound ids, allowed-list parameters, numbers,
  // literals of the template such as a data-permission filter); one over a
  // free-text parameter makes the center refuse the contract, UNSAFE_TEMPLATE
  // (docs/sql-template.md#what--may-read). Check with `export-center sql
  // render --untrusted`.
  std::string sql_template;
  std::vector<SqlColumn> columns;
  std::string order_by;  // "col [ASC|DESC], …" over the result columns
  // Result columns whose values together are unique (usually the primary
  // key's). The center then pages by seeking past the last row instead of
  // by OFFSET, and breaks ties of order_by with them
  // (docs/sql-template-route.md#paging). Empty: the center looks for a
  // primary key among the result columns itself.
  std::vector<std::string> unique_key;
  std::string tenant;  // the tenant the answer is for (checked by the center)
  std::string schema;  // database/schema to switch to, [A-Za-z0-9_$]+
  int64_t version = 0;
  std::string template_type = "METADATA";  // METADATA | EXCEL_TEMPLATE
  std::string excel_template;              // raw .xlsx bytes (sent base64)
  nlohmann::json param_schema = nlohmann::json::object();
  bool support_count_for_list = false;
  bool support_version = false;
  bool need_enrich = false;
  std::vector<EnrichSqlDef> enrich_sqls;
};

struct SqlEnrichRequest {
  std::string key_column;
  std::vector<nlohmann::json> keys;  // distinct key values of one page
  std::vector<std::string> columns;  // enriched column keys wanted
  nlohmann::json parameters = nlohmann::json::object();
};

// One export scenario. Methods may be called from several server threads.
class SqlScenario {
 public:
  virtual ~SqlScenario() = default;
  virtual std::string QueryId() const = 0;
  virtual Result<SqlTemplateResult> GetSqlTemplate(const nlohmann::json& params) = 0;
  // The list page's own count (supportCountForList).
  virtual Result<int64_t> CountForList(const nlohmann::json& params) { return int64_t{0}; }
  // The contract version (supportVersion); must equal GetSqlTemplate's version.
  virtual Result<int64_t> GetVersion(const nlohmann::json& params) { return int64_t{0}; }
  // One object per key, in the keys' order (needEnrich).
  virtual Result<std::vector<nlohmann::json>> Enrich(const SqlEnrichRequest& request) {
    return std::vector<nlohmann::json>(request.keys.size(), nlohmann::json::object());
  }
};

struct SqlScenarioServerOptions {
  size_t max_request_bytes = 1024 * 1024;  // enrich bodies carry a page of keys
  // Where refused calls are logged, rate-limited (RefusalLog); null: stderr.
  RefusalLog::Sink refusal_log;
};

// Routes POST /dispatch/{sql,count,version,enrich}?queryId=… on `server`.
// Throws std::invalid_argument when `token` is empty, too short or an
// unresolved placeholder, as RegisterBatchProviders.
void RegisterSqlScenarios(httplib::Server& server, std::string token,
                          std::vector<std::shared_ptr<SqlScenario>> scenarios,
                          SqlScenarioServerOptions options = {});

// The `data` JSON of /dispatch/sql.
nlohmann::json SqlTemplateResultToJson(const SqlTemplateResult& result);

}  // namespace export_center::sdk
