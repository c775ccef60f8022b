#pragma once
// SqlTemplateSource: the sql-template route (docs/sql-template-route.md).
//
// On the first NextPage it fetches the contract (/dispatch/sql), checks the
// queryId is enabled, the tenant, the declared parameters against the
// definition's (param_schema.h) and the contract version (→ STALE), renders
// the MyBatis template with the task's parameters, scans the SQL, describes
// it (labels, a primary key among them), validates orderBy against the
// result columns, picks the unique key (contract uniqueKey, else that primary
// key), plans enrichment, and runs the pre-flight counts (derived COUNT(*) vs
// /dispatch/count, one back-off re-check; strict → INCONSISTENT, lenient →
// warning) and the max-rows check, and asks the datasource for the plan of
// the first page statement (plan advice: a task-log warning per table the
// plan reads far beyond a page; never fails the attempt). Then every NextPage runs one page on a
// fresh read-only connection — by key (keyset_paging.h:
// `WHERE <order tuple> >= <last row's> ORDER BY … LIMIT ?`) when a unique
// key is known, else `ORDER BY <orderBy> LIMIT ? OFFSET ?` — converts the
// text values with the contract's column types and enriches the page
// (callback or enrich SQL; the first page's enrich statements are planned
// once, with its keys, before they run). After the last page the exported row count, and a
// second derived count, must equal the pre-flight count (rows added or
// removed mid-export): strict → INCONSISTENT, lenient → warning.
//
// Template parameters: the task's parameters, then tenantId, appCode and
// requestedBy from the task, overriding any user-supplied keys of those
// names, so `#{tenantId}` in a business template is always the caller's.
//
// `${}` may read only values a user cannot choose freely
// (docs/sql-template.md#what--may-read): before anything runs, the main
// template and every enrich SQL are checked against UntrustedParameters, and
// one `${}` over a user-typed value fails the attempt permanently with
// the failure code UNSAFE_TEMPLATE (SourceFacts::failure_code in facts()) —
// no SQL is sent to the datasource.
//
// The pages run in three stages, one class per thread that owns it
// (sql_pager.h): SqlPager (the page statements), PageEnricher (the lookups),
// PageConverter (the caller's); this source prepares and orchestrates.
//
// Error classes as RowSource: contract 5xx/timeouts and datasource
// connection trouble are Unavailable; everything else is permanent. Not
// thread-safe: one attempt, one thread.

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "source/row_source.h"
#include "source/sql/database_value.h"  // ParseDatabaseValue: how the cells are read
#include "source/sql/datasource/read_only_datasource.h"
#include "source/sql/sql_contract_client.h"
#include "source/sql/template_safety.h"  // UntrustedParameters, TemplateParameters

namespace export_center::registry {
struct RegistrySnapshot;
}  // namespace export_center::registry

namespace export_center::source {

struct SqlTemplateSourceOptions {
  std::string export_type;  // for logs
  std::string query_id;
  // The queryIds the registered sql-template definitions name, enabled or
  // not: disabling a type stops new tasks, not queued ones
  // (docs/task-lifecycle.md#when-definition-values-take-effect).
  std::set<std::string> registered_query_ids;
  int64_t task_id = 0;
  std::string tenant_id;
  task::AppCode app_code = task::AppCode::kPlatform;
  std::string requested_by;
  std::string parameters_json = "{}";
  std::optional<std::string> contract_version;  // recorded at create
  // Records the contract's version on the task when none was recorded at
  // create and returns the version now recorded (TaskStore::PinContractVersion),
  // so a versioned contract is pinned before the first page runs.
  std::function<StatusOr<std::string>(const std::string& version)> pin_contract_version;
  bool strict = true;  // definition `consistency`
  int batch_size = 500;
  int64_t max_rows = 200000;
  std::string timezone = "Asia/Shanghai";  // for DATETIME values without an offset
  int count_recheck_backoff_ms = 1000;     // replica lag allowance (docs/sql-template-route.md)
  // The definition's: for the ${} rule and to check the contract's paramSchema against.
  std::vector<registry::ParameterSpec> parameter_specs;
  // The deadline of each plan asked for plan advice
  // (docs/sql-template-route.md#plan-advice); past it the advice is skipped.
  int plan_timeout_ms = 2000;
};

// The failure code of an attempt whose contract puts a user-typed value into
// the SQL through `${}`.
inline constexpr char kUnsafeTemplateCode[] = "UNSAFE_TEMPLATE";

// No I/O until the first NextPage. Takes ownership of the client; the
// datasource may be shared.
std::unique_ptr<RowSource> NewSqlTemplateSource(const SqlTemplateSourceOptions& options,
                                                std::unique_ptr<SqlContractClient> client,
                                                std::shared_ptr<ReadOnlyDatasource> datasource);

// The queryIds of every registered sql-template definition, enabled or not.
std::set<std::string> RegisteredQueryIds(const registry::RegistrySnapshot& snapshot);

// Builds the options from the registry entry and the task.
SqlTemplateSourceOptions MakeSqlTemplateSourceOptions(const registry::ExportDefinition& definition,
                                                      const task::Task& task,
                                                      std::set<std::string> registered_query_ids);

}  // namespace export_center::source
