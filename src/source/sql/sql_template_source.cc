#include "source/sql/sql_template_source.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>
#include <utility>

#include "common/ascii.h"
#include "common/read_ahead.h"
#include "common/thread_guard.h"
#include "registry/registry.h"
#include "source/sql/enrichment.h"
#include "source/sql/keyset_paging.h"
#include "source/sql/page_converter.h"
#include "source/sql/page_enricher.h"
#include "source/sql/param_schema.h"
#include "source/sql/sql_pager.h"
#include "source/sql/sql_template/sql_scanner.h"
#include "source/sql/sql_template/sql_template.h"

namespace export_center::source {
namespace {

using nlohmann::json;

// The orchestration (sql_pager.h names the stages and who owns each): the
// first NextPage prepares — on the caller's thread, with the members below
// up to columns_ — then every NextPage hands a page from the pager's worker
// to the enricher's to the converter here.
class SqlTemplateSource : public RowSource {
 public:
  SqlTemplateSource(SqlTemplateSourceOptions options, std::unique_ptr<SqlContractClient> client,
                    std::shared_ptr<ReadOnlyDatasource> datasource)
      : options_(std::move(options)),
        client_(std::move(client)),
        datasource_(std::move(datasource)) {}

  const std::vector<task::Column>& columns() const override { return columns_; }
  // The enricher's advice is read once its first lookup was handed over
  // (it adds none after), or once it failed.
  SourceFacts facts() const override {
    SourceFacts facts = facts_;
    if (stages_.enricher) {
      const auto& enrich = stages_.enricher->advice();
      facts.plan_advice.insert(facts.plan_advice.end(), enrich.begin(), enrich.end());
    }
    return facts;
  }
  // The datasource's statements (a contract call ends at its own timeout).
  void Interrupt(const Status& reason) override { datasource_->Interrupt(reason); }

  StatusOr<Page> NextPage() override {
    if (done_) return Internal("NextPage called after the last page");
    if (!prepared_) {
      Status s = Prepare();
      if (!s.ok()) {
        spdlog::warn("sql-template prepare failed taskId={} exportType={} queryId={}: {}",
                     options_.task_id, options_.export_type, options_.query_id, s.ToString());
        return s;
      }
      prepared_ = true;
    }
    return FetchPage();
  }

 private:
  Status Prepare();
  Status CheckContract();
  Status CheckDollars();
  StatusOr<std::string> RecordedContractVersion();
  Status ResolveColumns(const std::vector<std::string>& result_columns);
  Status PlanEnrichment();
  Status PlanPaging(const QueryDescription& description);
  StatusOr<std::vector<std::string>> DeclaredUniqueKey(
      const std::vector<std::string>& labels) const;
  Status CheckCounts();
  struct Counts {
    StatusOr<int64_t> derived = Internal("not counted");
    StatusOr<int64_t> list = Internal("not counted");
  };
  Counts CountBoth();
  StatusOr<int64_t> DerivedCount(std::vector<bool>* nullable = nullptr);
  StatusOr<Page> FetchPage();
  // A page as the lookup stage hands it on: its rows and enriched cells.
  struct LookedUp {
    FetchedPage fetched;
    Enrichment::PageCells cells;
  };
  StatusOr<LookedUp> LookUpNextPage();
  Status CheckFinalCount();
  StatementAdviser Adviser() const;
  Status Terminal(task::TaskState state, Status status) {
    facts_.terminal_state = state;
    return status;
  }
  Status Unsafe(const UnsafeTemplateUse& unsafe);

  const SqlTemplateSourceOptions options_;
  const std::unique_ptr<SqlContractClient> client_;
  const std::shared_ptr<ReadOnlyDatasource> datasource_;

  // Prepare's, on the caller's thread before the first page: what it works
  // out on the way to the query and the stages, and hands on to them.
  struct Preparation {
    json params{};
    sql_template::RenderOptions render_options{};  // the names ${} may not read
    SqlContract contract{};
    std::map<std::string, int> result_index{};  // lower-case result label → index
    std::vector<ColumnPlan> plan{};             // handed to the converter and the enrichment
    std::unique_ptr<Enrichment> enrichment{};   // handed to the enricher
  };
  Preparation prep_;
  // Filled by Prepare, read-only after it: shared with the pager.
  std::shared_ptr<PreparedQuery> query_ = std::make_shared<PreparedQuery>();
  std::vector<task::Column> columns_;

  // The caller's from the first page on.
  int64_t total_ = 0;  // the pre-flight count
  // Opened before the pre-flight count: when it proves nothing was committed
  // since, the count after the last page is known without running it.
  std::unique_ptr<CommitWatch> commit_watch_;
  // The template, the page statement's plan advice, a failure's facts; the
  // enricher's advice is added in facts().
  SourceFacts facts_;
  bool prepared_ = false;
  bool done_ = false;
  bool facts_delivered_ = false;  // on the first page
  std::optional<PageConverter> converter_;

  // The two stages ahead of the caller, each owned by its worker
  // (docs/sql-template-route.md#paging). Declared last, and the workers after
  // the stages they run: destroyed first, the lookup stage (which waits on
  // the reader) before the reader, both before the stages, so a statement in
  // flight ends before what it reads.
  struct Stages {
    std::unique_ptr<SqlPager> pager{};         // page_reader's worker's
    std::unique_ptr<PageEnricher> enricher{};  // lookup_ahead's worker's
    std::optional<ReadAhead<FetchedPage>> page_reader{};
    std::optional<ReadAhead<LookedUp>> lookup_ahead{};
  };
  Stages stages_;
};

Status SqlTemplateSource::Prepare() {
  EC_ASSIGN_OR_RETURN(prep_.params, TemplateParameters(options_.parameters_json, options_.tenant_id,
                                                       options_.app_code, options_.requested_by));
  EC_RETURN_IF_ERROR(
      sql_template::CheckQueryEnabled(options_.query_id, options_.registered_query_ids));
  EC_ASSIGN_OR_RETURN(prep_.contract, client_->GetSqlTemplate(prep_.params));
  EC_RETURN_IF_ERROR(CheckContract());
  prep_.render_options.untrusted = UntrustedParameters(prep_.params, options_.parameter_specs);
  EC_RETURN_IF_ERROR(CheckDollars());
  auto rendered =
      sql_template::RenderTemplate(prep_.contract.sql_template, prep_.params, prep_.render_options);
  if (!rendered.ok()) return rendered.status().WithContext("rendering the contract's sqlTemplate");
  EC_RETURN_IF_ERROR(sql_template::ScanSql(rendered->sql));
  query_->task_id = options_.task_id;
  query_->query_id = options_.query_id;
  query_->schema = prep_.contract.schema;
  query_->batch_size = options_.batch_size;
  query_->sql = StripTrailingSemicolon(rendered->sql);
  query_->bindings = std::move(rendered->bindings);
  // The result's labels (and a primary key among them) without reading rows.
  auto description = datasource_->Describe(query_->sql, query_->bindings, prep_.contract.schema);
  if (!description.ok()) return description.status().WithContext("describing the rendered SQL");
  EC_RETURN_IF_ERROR(ResolveColumns(description->columns));
  auto order_by = sql_template::ValidateOrderBy(prep_.contract.order_by, description->columns);
  if (!order_by.ok()) return order_by.status().WithContext("contract orderBy");
  query_->order_by = *order_by;
  EC_RETURN_IF_ERROR(PlanPaging(*description));
  EC_RETURN_IF_ERROR(PlanEnrichment());
  EC_RETURN_IF_ERROR(CheckCounts());
  // The stages, each with what it owns from now on.
  stages_.pager = std::make_unique<SqlPager>(query_, datasource_.get());
  stages_.enricher = std::make_unique<PageEnricher>(std::move(prep_.enrichment), Adviser());
  converter_.emplace(std::move(prep_.plan), options_.timezone, options_.max_rows);
  // docs/sql-template-route.md#plan-advice: the first page statement exactly
  // as the pager sends it.
  PageStatement first = stages_.pager->FirstPage();
  facts_.plan_advice = Adviser().Advise("page", first.sql, first.params);
  return Status::Ok();
}

StatementAdviser SqlTemplateSource::Adviser() const {
  return StatementAdviser({datasource_.get(), prep_.contract.schema, options_.plan_timeout_ms,
                           options_.batch_size, options_.task_id, options_.query_id});
}

// A declared uniqueKey wins; else a primary key the datasource found among
// the result columns. With either, pages seek by key and the order is made
// total with the key; without, pages count an OFFSET, and the task log says
// why the export is slower.
Status SqlTemplateSource::PlanPaging(const QueryDescription& description) {
  EC_ASSIGN_OR_RETURN(std::vector<std::string> key, DeclaredUniqueKey(description.columns));
  const char* origin = "the contract's uniqueKey";
  if (key.empty()) {
    key = description.primary_key;
    origin = "the primary key in the result";
  }
  if (key.empty()) {
    spdlog::warn(
        "sql-template taskId={} queryId={}: no unique key among the result columns (declare "
        "uniqueKey in the contract): paging by OFFSET, each page re-reads the rows before it{}",
        options_.task_id, options_.query_id,
        query_->order_by.empty() ? "; without an orderBy pages may overlap" : "");
    return Status::Ok();
  }
  query_->order = TotalOrder(ParseOrderBy(query_->order_by), key);
  for (const auto& term : query_->order)
    query_->order_index.push_back(prep_.result_index.at(ToLowerAscii(term.column)));
  spdlog::info("sql-template taskId={} queryId={}: paging by key ({}), order {}", options_.task_id,
               options_.query_id, origin, FormatOrderBy(query_->order));
  return Status::Ok();
}

StatusOr<std::vector<std::string>> SqlTemplateSource::DeclaredUniqueKey(
    const std::vector<std::string>& labels) const {
  std::vector<std::string> key;
  for (const auto& column : prep_.contract.unique_key) {
    auto it = std::find_if(labels.begin(), labels.end(), [&](const std::string& l) {
      return ToLowerAscii(l) == ToLowerAscii(column);
    });
    if (it == labels.end()) {
      return InvalidArgument("contract uniqueKey column " + column + " is not a result column");
    }
    key.push_back(*it);
  }
  return key;
}

Status SqlTemplateSource::CheckContract() {
  if (!prep_.contract.tenant.empty() && prep_.contract.tenant != options_.tenant_id) {
    return PermissionDenied("the contract answered for tenant " + prep_.contract.tenant +
                            ", not the task's tenant");
  }
  EC_RETURN_IF_ERROR(CheckSchemaName(prep_.contract.schema));
  if (prep_.contract.template_type == "EXCEL_TEMPLATE") {
    if (prep_.contract.excel_template.empty()) {
      return InvalidArgument("templateType EXCEL_TEMPLATE without an excelTemplate");
    }
    facts_.excel_template = std::make_shared<const std::string>(prep_.contract.excel_template);
  } else if (prep_.contract.template_type != "METADATA") {
    return InvalidArgument("templateType " + prep_.contract.template_type +
                           " is not supported; allowed: METADATA, EXCEL_TEMPLATE");
  }
  EC_ASSIGN_OR_RETURN(std::vector<std::string> undeclared,
                      CheckParamSchema(prep_.contract.param_schema, options_.parameter_specs));
  for (const std::string& advice : undeclared) {
    spdlog::warn("sql-template taskId={} queryId={}: {}; a user cannot give it", options_.task_id,
                 options_.query_id, advice);
  }
  if (prep_.contract.support_version) {
    EC_ASSIGN_OR_RETURN(std::string recorded, RecordedContractVersion());
    if (recorded != prep_.contract.version) {
      return Terminal(
          task::TaskState::kStale,
          InvalidArgument("the export's query logic was upgraded (contract version " + recorded +
                          " → " + prep_.contract.version + "); please export again"));
    }
  }
  return Status::Ok();
}

// docs/sql-template.md#what--may-read: every template of the contract, enrich
// SQL included, before any of them runs.
Status SqlTemplateSource::CheckDollars() {
  EC_ASSIGN_OR_RETURN(std::optional<UnsafeTemplateUse> found,
                      FindUnsafeTemplateUse(prep_.contract, prep_.render_options.untrusted));
  if (found) return Unsafe(*found);
  return Status::Ok();
}

// Permanent and loud: the contract, not this task, is at fault, and it would
// have let a user's text into the SQL.
Status SqlTemplateSource::Unsafe(const UnsafeTemplateUse& unsafe) {
  facts_.failure_code = kUnsafeTemplateCode;
  std::string message = "unsafe template (" + unsafe.where + "): " + unsafe.message;
  spdlog::error("SECURITY: sql-template taskId={} exportType={} queryId={} refused: {}",
                options_.task_id, options_.export_type, options_.query_id, message);
  return InvalidArgument(message);
}

// The version to compare with. A task whose version could not be fetched at
// create is pinned now, before any page, so a retry after an upgrade still
// ends STALE (docs/task-lifecycle.md#stale-and-inconsistent).
StatusOr<std::string> SqlTemplateSource::RecordedContractVersion() {
  if (options_.contract_version) return *options_.contract_version;
  if (!options_.pin_contract_version) {
    return Internal("no contract version was recorded for the task and none can be pinned");
  }
  auto pinned = options_.pin_contract_version(prep_.contract.version);
  if (!pinned.ok()) return pinned.status().WithContext("pinning the contract version");
  spdlog::info("sql-template taskId={} pinned contract version {} at its first attempt",
               options_.task_id, *pinned);
  return pinned;
}

Status SqlTemplateSource::ResolveColumns(const std::vector<std::string>& result_columns) {
  query_->result_width = result_columns.size();
  for (size_t i = 0; i < result_columns.size(); ++i) {
    prep_.result_index.emplace(ToLowerAscii(result_columns[i]), static_cast<int>(i));
  }
  for (const auto& c : prep_.contract.columns) {
    ColumnPlan p{c, -1};
    if (!c.enrich) {
      auto it = prep_.result_index.find(ToLowerAscii(c.column.key));
      if (it == prep_.result_index.end()) {
        return InvalidArgument("contract column " + c.column.key + " is not in the query result");
      }
      p.result_index = it->second;
    }
    prep_.plan.push_back(std::move(p));
    columns_.push_back(c.column);
  }
  return Status::Ok();
}

// docs/sql-template-route.md#enrichment (enrichment.h).
Status SqlTemplateSource::PlanEnrichment() {
  Enrichment::Context context;
  context.task_id = options_.task_id;
  context.query_id = options_.query_id;
  context.batch_size = options_.batch_size;
  context.timezone = options_.timezone;
  context.params = prep_.params;
  context.untrusted = prep_.render_options.untrusted;
  EC_ASSIGN_OR_RETURN(prep_.enrichment,
                      Enrichment::Plan(prep_.contract, prep_.plan, prep_.result_index,
                                       std::move(context), client_.get(), datasource_.get()));
  return Status::Ok();
}

// With keyset paging the same scan counts each order term's non-NULL values:
// a term without NULLs gets a plain comparison an index can serve.
StatusOr<int64_t> SqlTemplateSource::DerivedCount(std::vector<bool>* nullable) {
  std::string counts = "COUNT(*)";
  for (const auto& term : query_->order) counts += ", COUNT(" + term.column + ")";
  EC_ASSIGN_OR_RETURN(ResultSet rs,
                      datasource_->Query("SELECT " + counts + " FROM (" + query_->sql + ") _t",
                                         query_->bindings, prep_.contract.schema));
  int64_t n = 0;
  if (rs.rows.size() != 1 || rs.rows[0].size() != query_->order.size() + 1 || !rs.rows[0][0] ||
      !ParseDatabaseInt(*rs.rows[0][0], &n)) {
    return Internal("derived COUNT(*) returned no number");
  }
  if (nullable == nullptr) return n;
  nullable->assign(query_->order.size(), true);
  for (size_t i = 0; i < query_->order.size(); ++i) {
    int64_t non_null = 0;
    if (rs.rows[0][i + 1] && ParseDatabaseInt(*rs.rows[0][i + 1], &non_null))
      (*nullable)[i] = non_null != n;
  }
  return n;
}

// docs/sql-template-route.md#consistency-checks, check 3: the platform's own
// count of the template against the business list count, re-checked once
// after a back-off for replica lag.
Status SqlTemplateSource::CheckCounts() {
  commit_watch_ = datasource_->WatchCommits(prep_.contract.schema);
  if (!prep_.contract.support_count_for_list) {
    EC_ASSIGN_OR_RETURN(total_, DerivedCount(&query_->nullable));
  } else {
    Counts counts = CountBoth();
    EC_ASSIGN_OR_RETURN(total_, std::move(counts.derived));
    EC_ASSIGN_OR_RETURN(int64_t list, std::move(counts.list));
    if (list != total_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(options_.count_recheck_backoff_ms));
      counts = CountBoth();
      EC_ASSIGN_OR_RETURN(total_, std::move(counts.derived));
      EC_ASSIGN_OR_RETURN(list, std::move(counts.list));
    }
    if (list != total_) {
      std::string detail = "export count " + std::to_string(total_) +
                           " differs from the list count " + std::to_string(list);
      if (options_.strict) {
        spdlog::error("ALERT: sql-template inconsistent taskId={} queryId={}: {}", options_.task_id,
                      options_.query_id, detail);
        return Terminal(task::TaskState::kInconsistent, InvalidArgument(detail));
      }
      spdlog::warn("ALERT (lenient, continuing): sql-template taskId={} queryId={}: {}",
                   options_.task_id, options_.query_id, detail);
    }
  }
  if (total_ > options_.max_rows) {
    return LimitExceeded("the export has " + std::to_string(total_) +
                         " rows, more than the maximum of " + std::to_string(options_.max_rows));
  }
  return Status::Ok();
}

// Our count on the replica and the list's count on the business service at
// once: neither needs the other, and with a filter the page's index does not
// cover each walks the tenant's rows (a quarter of a second apiece at a
// million orders on SQLite), all before the first page. The list count runs
// on a thread of its own, the replica's here; both are bounded by their own
// timeouts, so the join is too.
SqlTemplateSource::Counts SqlTemplateSource::CountBoth() {
  Counts counts;
  std::thread list = StartWorkerThread("list_count", [&] {
    counts.list = RunGuardedOnce("list_count", [&] { return client_->CountForList(prep_.params); });
  });
  struct JoinOnExit {  // also when DerivedCount throws
    std::thread& thread;
    ~JoinOnExit() { thread.join(); }
  } join{list};
  counts.derived = DerivedCount(&query_->nullable);
  return counts;
}

// A pipeline of three, each a page apart: the page_reader worker runs the
// page statement of page k+2 (the pager), the lookup_ahead worker looks up the
// enriched cells of page k+1 (the enricher: a callback or enrich SQL, most
// of a page's time), and here page k is converted and filled (the
// converter) — while the attempt writes page k−1. A stage starts its next
// page only after one that has more and came without error, so a caller
// that stops (cancel, lease, size cap) leaves at most a page statement and
// a lookup to finish.
StatusOr<Page> SqlTemplateSource::FetchPage() {
  if (!stages_.lookup_ahead) {
    stages_.page_reader.emplace([pager = stages_.pager.get()] { return pager->ReadPage(); },
                                "read_ahead");
    stages_.page_reader->Start();
    stages_.lookup_ahead.emplace([this] { return LookUpNextPage(); }, "lookup_ahead");
    stages_.lookup_ahead->Start();
  }
  EC_ASSIGN_OR_RETURN(LookedUp looked_up, stages_.lookup_ahead->Take());
  if (looked_up.fetched.has_more) stages_.lookup_ahead->Start();
  Page page;
  page.has_more = looked_up.fetched.has_more;
  EC_ASSIGN_OR_RETURN(page.rows,
                      converter_->Convert(looked_up.fetched.raw, std::move(looked_up.cells)));
  if (!facts_delivered_) {
    // Complete now: the enrich statements were advised before this page's lookups.
    page.facts = facts();
    facts_delivered_ = true;
  }
  page.total_rows = total_;
  if (!page.has_more) {
    EC_RETURN_IF_ERROR(CheckFinalCount());
    done_ = true;
  }
  return page;
}

// On the lookup_ahead worker: the next page from the page_reader (starting the
// one after it) and its enriched cells.
StatusOr<SqlTemplateSource::LookedUp> SqlTemplateSource::LookUpNextPage() {
  EC_ASSIGN_OR_RETURN(FetchedPage fetched, stages_.page_reader->Take());
  if (fetched.has_more) stages_.page_reader->Start();
  EC_ASSIGN_OR_RETURN(Enrichment::PageCells cells, stages_.enricher->LookUp(fetched.raw));
  return LookedUp{std::move(fetched), std::move(cells)};
}

// Data that changed mid-export: OFFSET pages skip or repeat rows, key seeks
// miss a row added behind them or keep one removed. The traces: an exported
// total other than the pre-flight count, or a count after the last page
// other than the one before the first.
Status SqlTemplateSource::CheckFinalCount() {
  std::string detail;
  if (converter_->rows() != total_) {
    detail = "exported " + std::to_string(converter_->rows()) +
             " rows but the pre-flight count was " + std::to_string(total_) +
             ": the data changed during the export";
  } else {
    // A key seek does not trip over a row added or removed behind it, so
    // the exported total may still match: counting again tells — unless
    // the database proves nothing was committed since the first count, so
    // every statement read the same rows (on a quiet replica a full walk of
    // the filter saved, 0.1 s at a million orders).
    if (commit_watch_ && commit_watch_->NothingCommitted()) return Status::Ok();
    EC_ASSIGN_OR_RETURN(int64_t now, DerivedCount());
    if (now == total_) return Status::Ok();
    detail = "the query counted " + std::to_string(total_) + " rows before the export and " +
             std::to_string(now) + " after it: the data changed during the export";
  }
  if (options_.strict) {
    spdlog::error("ALERT: sql-template inconsistent taskId={} queryId={}: {}", options_.task_id,
                  options_.query_id, detail);
    return Terminal(task::TaskState::kInconsistent, InvalidArgument(detail));
  }
  spdlog::warn("ALERT (lenient, continuing): sql-template taskId={} queryId={}: {}",
               options_.task_id, options_.query_id, detail);
  return Status::Ok();
}

}  // namespace

std::unique_ptr<RowSource> NewSqlTemplateSource(const SqlTemplateSourceOptions& options,
                                                std::unique_ptr<SqlContractClient> client,
                                                std::shared_ptr<ReadOnlyDatasource> datasource) {
  return std::make_unique<SqlTemplateSource>(options, std::move(client), std::move(datasource));
}

std::set<std::string> RegisteredQueryIds(const registry::RegistrySnapshot& snapshot) {
  std::set<std::string> ids;
  for (const auto& [name, def] : snapshot.definitions) {
    if (def.source == registry::SourceKind::kSqlTemplate) ids.insert(def.query_id);
  }
  return ids;
}

SqlTemplateSourceOptions MakeSqlTemplateSourceOptions(const registry::ExportDefinition& definition,
                                                      const task::Task& task,
                                                      std::set<std::string> registered_query_ids) {
  SqlTemplateSourceOptions o;
  o.export_type = definition.name;
  o.query_id = definition.query_id;
  o.registered_query_ids = std::move(registered_query_ids);
  o.task_id = task.id;
  o.tenant_id = task.tenant_id;
  o.app_code = task.app_code;
  o.requested_by = task.requested_by;
  o.parameters_json = task.parameters_json.empty() ? "{}" : task.parameters_json;
  o.contract_version = task.contract_version;
  o.strict = definition.consistency != "lenient";
  o.batch_size = definition.batch_size;
  o.max_rows = definition.max_rows;
  o.timezone = definition.timezone;
  o.parameter_specs = definition.parameters;
  return o;
}

}  // namespace export_center::source