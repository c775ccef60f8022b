#pragma once
// Enrichment of the sql-template route (docs/sql-template-route.md#enrichment):
// the columns a contract marks `enrich` are filled after each page, by the
// contract's callback (/dispatch/enrich, one key column) or by its enrich
// SQL groups on the datasource, each key looked up once while recent pages
// still remember it. A critical column's failure fails the task; any other
// leaves its cells blank with one warning.
//
// Two steps, so that a page's lookups can run while the page before it is
// converted: Lookup asks for a page's keys and answers its enriched cells;
// Fill, which touches nothing of the Enrichment, puts them into the page's
// converted rows. Lookup is not thread-safe: one thread calls it, page after
// page in order (an enrich SQL may run its second half on a worker thread of
// its own, joined before Lookup returns).

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "source/sql/datasource/read_only_datasource.h"
#include "source/sql/sql_contract_client.h"
#include "task/table.h"

namespace export_center::source {

// A contract column and where the query returns it.
struct ColumnPlan {
  ContractColumn contract;
  int result_index = -1;  // -1 for enriched columns
};

class Enrichment {
 public:
  struct Context {
    int64_t task_id = 0;   // for logs
    std::string query_id;  // for logs
    int batch_size = 500;
    std::string timezone;             // for DATETIME values without an offset
    nlohmann::json params;            // the template parameters (TemplateParameters)
    std::set<std::string> untrusted;  // the main template's (UntrustedParameters)
  };

  // SQL mode when the contract gives enrichSqls (every marked column must be
  // covered by a group), else callback mode with one key column. `plan` is
  // the output columns in order; `result_index` maps a lower-case result
  // label to its index. InvalidArgument names a configuration error. The
  // client and datasource must outlive the result.
  static StatusOr<std::unique_ptr<Enrichment>> Plan(const SqlContract& contract,
                                                    std::vector<ColumnPlan> plan,
                                                    const std::map<std::string, int>& result_index,
                                                    Context context, SqlContractClient* client,
                                                    ReadOnlyDatasource* datasource);

  // The enriched cells of one page, in the order of its rows.
  struct PageCells {
    struct Part {                          // one callback, or one enrich SQL group
      std::vector<size_t> targets;         // output column indexes
      std::vector<bool> found;             // per row: its key had an answer
      std::vector<task::CellValue> cells;  // row-major, targets.size() per row
    };
    std::vector<Part> parts;  // a part that failed (non-critical) is left out: blank cells
  };

  // Looks up the keys of the page `raw` that recent pages did not ask about,
  // and answers every row's enriched cells. An error fails the task (a
  // critical column's enrichment failed, or its answer did not parse).
  StatusOr<PageCells> Lookup(const ResultSet& raw);

  // Puts a page's enriched cells into `rows`, the converted rows of the
  // page Lookup was given.
  static void Fill(PageCells cells, std::vector<task::Row>* rows);

  // The enrich SQL statements the page `raw` sends, one per group, rendered
  // with its keys and not run: what plan advice asks the datasource to plan
  // (docs/sql-template-route.md#plan-advice). A group whose SQL does not
  // render is left out (Enrich reports it). Empty in callback mode.
  struct Statement {
    std::string label;  // "enrich group <name>"
    std::string sql;
    std::vector<nlohmann::json> bindings;
  };
  std::vector<Statement> StatementsFor(const ResultSet& raw) const;

  class Cache;  // enriched values by key (enrichment.cc)
  struct GroupPlan;

  ~Enrichment();

 private:
  Enrichment(std::vector<ColumnPlan> plan, Context context, SqlContractClient* client,
             ReadOnlyDatasource* datasource, std::string schema);
  Status PlanGroups(const SqlContract& contract, const std::map<std::string, int>& result_index);
  StatusOr<PageCells> LookUpByCallback(const ResultSet& raw);
  StatusOr<std::vector<task::CellValue>> CallbackValues(const nlohmann::json& extra);
  StatusOr<PageCells> LookUpBySql(const ResultSet& raw);
  StatusOr<PageCells::Part> LookUpGroup(size_t group, const ResultSet& raw);
  StatusOr<std::vector<ResultSet>> QueryEnrichSql(const GroupPlan& g, nlohmann::json keys);
  StatusOr<ResultSet> RunEnrichSql(const GroupPlan& g, nlohmann::json keys) const;
  Status RememberEnriched(const GroupPlan& g, const std::vector<ResultSet>& answers,
                          const std::vector<std::string>& asked, Cache* cache);
  static PageCells::Part CellsOf(const ResultSet& raw, int key_index,
                                 const std::vector<size_t>& targets, const Cache& cache);
  Status EnrichFailed(const std::vector<size_t>& targets, const Status& cause);

  const std::vector<ColumnPlan> plan_;
  const Context context_;
  SqlContractClient* const client_;
  ReadOnlyDatasource* const datasource_;
  const std::string schema_;
  const std::set<std::string> enrich_untrusted_;  // EnrichUntrusted(context_.untrusted)
  int callback_key_index_ = -1;
  std::vector<size_t> callback_targets_;
  std::unique_ptr<Cache> callback_cache_;
  std::vector<GroupPlan> groups_;
  std::vector<Cache> group_caches_;  // one per group
  bool warned_enrich_ = false;
};

}  // namespace export_center::source
